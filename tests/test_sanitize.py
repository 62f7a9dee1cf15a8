"""Parsing compute-sanitizer's reports (canned text; the GPU tests run the real tool)."""

from grader import sanitize

MEMCHECK = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at write_wild(float *)+0x70 in solutions/illegal_address.cu:14
=========     by thread (0,0,0) in block (0,0,0)
=========     Address 0x7f0000000000 is out of bounds
=========
========= ERROR SUMMARY: 1 error
"""

RACECHECK = """========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at matmul_tiled(const float *, const float *, float *, int, int, int)+0x120 in solutions/missing_sync.cu:22
=========     and Read access at matmul_tiled(const float *, const float *, float *, int, int, int)+0x2b0 in solutions/missing_sync.cu:26 [1024 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
"""


def test_memcheck_finding_names_the_users_line():
    (finding,) = sanitize.parse("memcheck", MEMCHECK, "solutions/illegal_address.cu")
    assert finding.what == "Invalid __global__ write of size 4 bytes"
    assert finding.where == ("solutions/illegal_address.cu:14",)
    assert str(finding).startswith("memcheck: Invalid __global__ write")


def test_racecheck_finding_names_both_lines():
    (finding,) = sanitize.parse("racecheck", RACECHECK, "solutions/missing_sync.cu")
    assert finding.what == "race between a write and a read of shared memory"
    assert finding.where == ("solutions/missing_sync.cu:22", "solutions/missing_sync.cu:26")


def test_aftermath_of_a_finding_is_dropped():
    text = MEMCHECK.replace("=========\n========= ERROR SUMMARY", "========= Program hit cudaErrorLaunchFailure (error 719) "
                            "due to \"unspecified launch failure\" on CUDA API call to cudaDeviceSynchronize.\n"
                            "=========\n========= ERROR SUMMARY")
    findings = sanitize.parse("memcheck", text, "solutions/illegal_address.cu")
    assert [f.what for f in findings] == ["Invalid __global__ write of size 4 bytes"]


def test_clean_output_has_no_findings():
    assert sanitize.parse("memcheck", "========= ERROR SUMMARY: 0 errors\n", "x.cu") == []
