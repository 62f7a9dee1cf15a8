"""The spec's element types, inouts, float values, extent expressions and exact checks, graded end to end
in the CPU emulator on a test challenge that uses them all (tests/challenges/kit_mix), and the same
values through the GPU backend's case preparation where a GPU is present (tests/test_gpu_grading.py
grades the real challenges that use them)."""

from __future__ import annotations

import shutil
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from grader import case as cases
from grader import check, pipeline, spec
from grader.results import Mode
from grader.verdict import Verdict

from conftest import expectation, read

TESTS = Path(__file__).resolve().parent
SUBMISSIONS = sorted((TESTS / "submissions" / "kit_mix").glob("*.cu"))


@pytest.fixture(scope="module")
def kit_mix() -> spec.Challenge:
    return spec.load(TESTS / "challenges", "kit_mix")


def test_the_spec_reads_every_new_feature(kit_mix):
    x, y, flags, counts = kit_mix.params[:4]
    assert (x.ctype.element.name, y.role, flags.ctype.dtype, counts.check) == \
        ("half", spec.Role.INOUT, np.dtype(np.uint8), spec.Check.EXACT)
    assert y.check is spec.Check.TOLERANCE
    assert counts.extent({"N": 33, "W": 32}) == (2,)
    assert kit_mix.dims == ("N", "W") and [p.name for p in kit_mix.scalars] == ["alpha", "beta"]
    assert [p.name for p in kit_mix.outputs] == ["y", "counts"] and [p.name for p in kit_mix.inputs] == ["x", "flags"]
    assert kit_mix.valid({"N": 3, "W": 4}) == "breaks require: W <= N"
    assert kit_mix.functional[1].values == {"alpha": 0.5}
    assert "alpha" in kit_mix.prototype() and "const half* x" in kit_mix.prototype()


def test_random_shapes_meet_the_requirements(kit_mix):
    shapes = cases.random_shapes(kit_mix.randomized, kit_mix.dims, kit_mix.reference, 11, kit_mix.valid)
    assert shapes and all(s.dims["W"] <= s.dims["N"] for s in shapes)


def test_float_values_are_drawn_per_case_unless_fixed(kit_mix):
    rng = np.random.default_rng(3)
    drawn = cases.arguments(kit_mix, kit_mix.functional[0], rng)
    assert -2.0 <= drawn["alpha"] <= 2.0 and drawn["beta"] == 1.0 and drawn["alpha"] == float(np.float32(drawn["alpha"]))
    fixed = cases.arguments(kit_mix, kit_mix.functional[2], rng)
    assert fixed["beta"] == 0.0


def test_bfloat16_and_half_round_trip_through_their_storage():
    element = spec.ELEMENTS["__nv_bfloat16"]
    values = np.array([1.5, -3.25, 1e30, 2.0 ** -130], np.float64).astype(element.dtype)
    stored = values.view(element.storage)
    assert stored.dtype == np.uint16 and np.array_equal(stored.view(element.dtype).astype(np.float64),
                                                        values.astype(np.float64))
    assert spec.c_type("const __half*").element.name == "half"
    assert spec.canonical_type("const unsigned char*") == "const uint8_t*"
    assert spec.c_type("__nv_bfloat16*").element.dtype == np.dtype(ml_dtypes.bfloat16)


def test_exact_and_multiset_checks_say_what_differs():
    got, expected = np.array([3, 1, 2], np.int32), np.array([1, 2, 3], np.int64)
    assert not check.compare_exact("h", got, expected).passed
    assert check.compare_exact("h", got, expected, ordered=False).passed
    off = check.compare_exact("h", np.array([1, 2, 2], np.int32), expected, ordered=False)
    assert not off.passed and off.bad_count == 1 and "sorted" in check.describe(off, None)
    nan = check.compare_exact("v", np.array([np.nan]), np.array([np.nan]))
    assert not nan.passed  # a NaN equals nothing


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("path", SUBMISSIONS, ids=[p.stem for p in SUBMISSIONS])
def test_graded_in_the_emulator(kit_mix, path, tmp_path_factory):
    from grader.backends.emulator import EmulatorBackend
    verdict, message = expectation(path, "emulator")
    options = pipeline.Options(Mode.RUN, 5, tmp_path_factory.getbasetemp() / "kit-cache")
    report = pipeline.grade(read(path, path.name), kit_mix, EmulatorBackend(), options)
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-2000:])
    if message:
        assert message in report.message


@pytest.mark.gpu
@pytest.mark.parametrize("path", SUBMISSIONS, ids=[p.stem for p in SUBMISSIONS])
def test_graded_on_a_gpu(kit_mix, path, cuda_backend, tmp_path_factory):
    """The same files through the GPU's buffers (half and uint8 device memory, the inout given its value
    again before the re-check after timing), submitted so the timed path runs too."""
    verdict, message = expectation(path, "cuda")
    options = pipeline.Options(Mode.SUBMIT, 5, tmp_path_factory.getbasetemp() / "kit-gpu-cache", 0.2)
    report = pipeline.grade(read(path, path.name), kit_mix, cuda_backend, options)
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-2000:])
    if message:
        assert message in report.message
