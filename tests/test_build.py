"""nvcc diagnostics mapping (canned logs) and real builds of the corpus's build-time failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import build, sandbox, source as sources
from grader.verdict import Verdict

from conftest import LEVELS, NAIVE, SUBMISSIONS, expectation

PROTOTYPE = "void solve(const float* A, const float* B, float* C, int M, int N, int K)"


def request(source: Path, cache: Path, display: str | None = None, timeout_s: float = 120,
            box: sandbox.Sandbox | None = None) -> build.BuildRequest:
    toolchain = build.toolchain(9, 0)
    text = sources.read(source, display or f"solutions/{source.name}")
    return build.BuildRequest(text, PROTOTYPE, "solve", toolchain, cache, timeout_s, box)


# --------------------------------------------------------------------------- canned logs

def test_parses_the_front_end_format():
    log = ('solutions/mine.cu(16): error: identifier "scale" is undefined\n'
           '          acc += scale * A[n];\n                 ^\n'
           'solutions/mine.cu(3): warning #177-D: variable "x" was declared but never referenced\n'
           '1 error detected in the compilation of "solutions/mine.cu".\n')
    found = build.parse_diagnostics(log)
    assert found[0] == build.Diagnostic("error", 'identifier "scale" is undefined', "solutions/mine.cu", 16)
    assert str(found[0]) == 'solutions/mine.cu:16: error: identifier "scale" is undefined'
    assert found[1].severity == "warning" and found[1].line == 3
    assert len(found) == 2


def test_parses_host_compiler_ptxas_and_linker_messages():
    log = ("solutions/mine.cu:12:5: error: expected ';' before '}' token\n"
           "ptxas error   : Entry function '_Z1kv' uses too much shared data (0x10000 bytes, 0xc000 max)\n"
           "/usr/bin/ld: solution.o: in function `solve':\n"
           "tmpxft.cudafe1.cpp:(.text+0x3e): undefined reference to `cublasSgemm_v2'\n")
    gcc, ptxas, ld = build.parse_diagnostics(log)
    assert (gcc.path, gcc.line, gcc.column) == ("solutions/mine.cu", 12, 5)
    assert ptxas.message.startswith("ptxas: Entry function") and ptxas.severity == "error"
    assert ld.message == "undefined reference to `cublasSgemm_v2'"


def _classify(log: str):
    return build.classify_failure(build.parse_diagnostics(log), log, "solve", PROTOTYPE)


def test_user_errors_come_before_interface_errors():
    status, message = _classify("x.cu(4): error: expected a \";\"\n"
                                f'{build.EPILOGUE_NAME}(2): error: more than one instance of overloaded function "solve" has "C" linkage\n')
    assert status is build.BuildStatus.COMPILE_ERROR and message.startswith("x.cu:4: error")


def test_library_calls_are_an_interface_error():
    status, message = _classify("foo.cpp:(.text+0x3e): undefined reference to `cublasSgemm_v2'\n")
    assert status is build.BuildStatus.INTERFACE_ERROR
    assert "cublasSgemm_v2" in message and "not allowed" in message


def test_arch_flags_pick_arch_specific_targets_where_they_exist():
    assert build.arch_flags(9, 0) == ("-gencode=arch=compute_90a,code=sm_90a",)
    assert build.arch_flags(8, 6) == ("-gencode=arch=compute_86,code=sm_86",)


def test_translation_unit_points_diagnostics_at_the_user_file():
    unit = build.translation_unit("int x;\n", 'my "dir"/a\\b\nc.cu', PROTOTYPE)
    assert unit.startswith('#line 1 "my ?dir?/a?b?c.cu"\nint x;\n'), "a quote or newline cannot end the directive"
    assert f'extern "C" {PROTOTYPE};' in unit and build.SYNC_SYMBOL in unit


# --------------------------------------------------------------------------- real nvcc

BUILD_FAILURES = [p for p in sorted(SUBMISSIONS.glob("*.cu"))
                  if expectation(p)[0] in ("COMPILE_ERROR", "INTERFACE_ERROR")]


@pytest.mark.nvcc
@pytest.mark.parametrize("path", BUILD_FAILURES, ids=[p.stem for p in BUILD_FAILURES])
def test_corpus_build_failures(path, tmp_path):
    verdict, message = expectation(path)
    result = build.build(request(path, tmp_path))
    assert result.status.value == Verdict[verdict].value, result.message
    if message:
        assert message.lower() in result.message.lower(), result.message
    assert str(tmp_path) not in result.message, "no temporary paths in what the user reads"


EMULATOR_CANNOT_RUN = [p for p in LEVELS if expectation(p, "emulator")[0] == "UNSUPPORTED"]


@pytest.mark.nvcc
@pytest.mark.parametrize("path", EMULATOR_CANNOT_RUN, ids=[p.stem for p in EMULATOR_CANNOT_RUN])
def test_levels_the_emulator_cannot_run_build_for_an_h100(path, tmp_path):
    """CI has no GPU and the emulator runs no PTX: these references are at least built, for sm_90a."""
    result = build.build(request(path, tmp_path, f"levels/{path.name}"))
    assert result.status is build.BuildStatus.OK, result.message
    assert "solve" in build.exported_functions(result.artifact)


@pytest.mark.nvcc
def test_builds_are_cached_by_content(tmp_path):
    source = tmp_path / "naive.cu"
    source.write_text(NAIVE.read_text())
    first = build.build(request(source, tmp_path / "cache"))
    assert first.status is build.BuildStatus.OK and not first.cached
    assert "solve" in build.exported_functions(first.artifact)
    again = build.build(request(source, tmp_path / "cache"))
    assert again.cached and again.artifact == first.artifact
    source.write_text(source.read_text() + "\n// changed\n")
    changed = build.build(request(source, tmp_path / "cache"))
    assert not changed.cached and changed.artifact != first.artifact
    assert not list((tmp_path / "cache" / "builds").glob(".tmp-*")), "no half-written builds left behind"


@pytest.mark.nvcc
def test_compile_time_limit(tmp_path):
    result = build.build(request(NAIVE, tmp_path, timeout_s=0.01))
    assert result.status is build.BuildStatus.COMPILE_ERROR
    assert "longer than 0.01 s" in result.message


@pytest.mark.nvcc
def test_a_cached_build_changed_after_publish_is_built_again(tmp_path):
    """The cache is the grader's: an artifact whose bytes differ from the hash recorded at publish
    (replaced by an unsandboxed run, or damaged) is never loaded."""
    first = build.build(request(NAIVE, tmp_path))
    assert first.status is build.BuildStatus.OK and not first.cached
    first.artifact.chmod(0o755)
    first.artifact.write_bytes(first.artifact.read_bytes() + b"tampered")
    again = build.build(request(NAIVE, tmp_path))
    assert again.status is build.BuildStatus.OK and not again.cached
    assert b"tampered" not in again.artifact.read_bytes()


@pytest.mark.nvcc
@pytest.mark.parametrize("name", ['with "quote".cu', "with\nnewline.cu", "back\\slash.cu"])
def test_a_path_with_quotes_or_newlines_compiles_and_is_named_in_diagnostics(tmp_path, name):
    good = tmp_path / "good.cu"
    good.write_text(NAIVE.read_text())
    assert build.build(request(good, tmp_path / "cache", display=f"solutions/{name}")).status is build.BuildStatus.OK
    bad = tmp_path / "bad.cu"
    bad.write_text(NAIVE.read_text() + "\nint broken = ;\n")
    result = build.build(request(bad, tmp_path / "cache", display=f"solutions/{name}"))
    assert result.status is build.BuildStatus.COMPILE_ERROR
    assert result.diagnostics and result.diagnostics[0].path == f"solutions/{name}", result.log


@pytest.mark.nvcc
def test_compiler_output_is_capped(tmp_path):
    flood = tmp_path / "flood.cu"
    flood.write_text(NAIVE.read_text() + "".join(f'\n#warning "{i:06d} {"x" * 200}"' for i in range(3000)))
    result = build.build(request(flood, tmp_path))
    assert len(result.log) < build.MAX_LOG_BYTES + 200 and "more bytes of compiler output not shown" in result.log


def test_compilers_get_a_clean_environment_and_hard_limits(tmp_path, monkeypatch):
    """No variable of the teacher's shell outside the allow-list reaches a compiler; its limits
    cannot be raised from inside (hard = soft)."""
    monkeypatch.setenv("GRADER_TEST_SECRET", "s3cr3t-env-value")
    script = tmp_path / "probe.sh"
    script.write_text("#!/bin/sh\nenv\nulimit -H -v; ulimit -S -t; ulimit -H -t\n")
    script.chmod(0o755)
    tool = build.run_tool((str(script),), tmp_path, 7.0)
    assert tool.returncode == 0, tool.log
    assert "s3cr3t-env-value" not in tool.log and "PATH=" in tool.log
    soft_cpu, hard_cpu = tool.log.strip().splitlines()[-2:]
    assert soft_cpu == hard_cpu == "8"
    assert not (tmp_path / ".tmp").exists() or not any((tmp_path / ".tmp").iterdir())


@pytest.mark.nvcc
@pytest.mark.skipif(not sandbox.make(sandbox.SandboxMode.AUTO, []).active, reason="bubblewrap cannot run here")
@pytest.mark.parametrize("header, use", [
    ("cub/cub.cuh", "cub::DeviceReduce::Sum(nullptr, bytes, A, C, M * K);"),
    ("thrust/device_ptr.h", "thrust::device_ptr<const float> p(A); (void)p;"),
])
def test_cub_and_thrust_are_not_visible_to_a_submission(header, use, tmp_path):
    """Header-only libraries leave nothing undefined at link time, so the rule against library code
    is kept by the compile's box: their folders are empty there, and the message says why."""
    source = tmp_path / "library.cu"
    source.write_text(f"#include <{header}>\n#include <cstddef>\n"
                      'extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {\n'
                      f"    size_t bytes = 0; (void)bytes;\n    {use}\n}}\n")
    result = build.build(request(source, tmp_path / "cache", box=sandbox.make(sandbox.SandboxMode.AUTO, [])))
    assert result.status is build.BuildStatus.COMPILE_ERROR, result.message
    assert header in result.message and "CUB and Thrust are library code" in result.message


@pytest.mark.nvcc
def test_leetgpu_older_files_include_solve_h(tmp_path):
    """`#include "solve.h"` and a solve without extern "C": the header the grader writes beside the
    compile declares the entry point with C linkage, so the definition exports `solve`."""
    result = build.build(request(SUBMISSIONS / "old_leetgpu_solve_h.cu", tmp_path))
    assert result.status is build.BuildStatus.OK, result.message
