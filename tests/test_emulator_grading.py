"""End-to-end grading through the CPU emulator: real .cu files compiled, run, checked, verdicts
asserted. This is what CI exercises of the whole pipeline (CI has no GPU)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import pipeline
from grader.results import CaseKind, Mode
from grader.verdict import Verdict

from conftest import NAIVE, SUBMISSIONS, corpus, expectation

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

CORPUS = corpus("emulator")


@pytest.fixture(scope="module")
def emulator():
    from grader.emulator.backend import EmulatorBackend
    return EmulatorBackend()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("emulator-cache")


def grade(path: Path, challenge, backend, cache: Path, mode: Mode = Mode.RUN, seed: int = 7):
    return pipeline.grade(path, f"solutions/{path.name}", challenge, backend, pipeline.Options(mode, seed, cache))


@pytest.mark.parametrize("path", CORPUS, ids=[p.stem for p in CORPUS])
def test_corpus_verdict(path, matmul, emulator, cache):
    verdict, message = expectation(path, "emulator")
    report = grade(path, matmul, emulator, cache)
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-2000:])
    if message:
        assert message.lower() in report.message.lower(), report.message


def test_accepted_cases_ran_in_both_orders_on_every_shape(matmul, emulator, cache):
    report = grade(NAIVE, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED
    assert len(report.cases) == len(matmul.functional) + matmul.randomized.count + 1
    assert {c.kind for c in report.cases} == {CaseKind.FUNCTIONAL, CaseKind.RANDOMIZED, CaseKind.RECHECK}
    assert report.environment.backend == "emulator" and report.performance == ()


def test_submit_through_the_emulator_reports_no_timings(matmul, emulator, cache):
    report = grade(NAIVE, matmul, emulator, cache, Mode.SUBMIT)
    assert report.verdict is Verdict.ACCEPTED and report.performance == ()


def test_crash_hang_then_correct_in_one_process(matmul, emulator, cache):
    assert grade(SUBMISSIONS / "illegal_address.cu", matmul, emulator, cache).verdict is Verdict.RUNTIME_ERROR
    assert grade(SUBMISSIONS / "divergent_sync.cu", matmul, emulator, cache).verdict is Verdict.RUNTIME_ERROR
    assert grade(NAIVE, matmul, emulator, cache).verdict is Verdict.ACCEPTED


def test_inline_assembly_is_unsupported_with_its_line(matmul, emulator, cache, tmp_path):
    source = tmp_path / "asm.cu"
    source.write_text(NAIVE.read_text().replace(
        "    float acc = 0.0f;",
        '    float acc = 0.0f;\n    unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));'))
    line = next(i for i, text in enumerate(source.read_text().splitlines(), 1) if "asm volatile" in text)
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.UNSUPPORTED
    assert f"asm.cu:{line}" in report.message and "run on a GPU" in report.message


def test_legacy_volatile_warp_code_gets_a_note(matmul, emulator, cache, tmp_path):
    source = tmp_path / "volatile.cu"
    source.write_text(NAIVE.read_text().replace(
        "    float acc = 0.0f;", "    __shared__ float s[32];\n    volatile float* vs = s; (void)vs;\n    float acc = 0.0f;"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED
    assert any("warp-synchronous" in n for n in report.build.notes)


def test_launch_with_too_many_threads_is_a_runtime_error(matmul, emulator, cache, tmp_path):
    source = tmp_path / "big_block.cu"
    source.write_text(NAIVE.read_text().replace("constexpr int BLOCK = 16;", "constexpr int BLOCK = 33;"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "cudaErrorInvalidValue" in report.message and "1089 threads per block" in report.message


def test_stray_writes_inside_the_output_are_named_as_such_not_as_a_missing_barrier(matmul, emulator, cache, tmp_path):
    # One column too many, except on the last row: each stray write lands inside C (on the first
    # element of the next row), so no guard sees it; the result depends on which thread writes last.
    source = tmp_path / "stray_inside.cu"
    text = (SUBMISSIONS / "missing_column_check.cu").read_text()
    source.write_text(text.replace("if (row < M) {", "if (row < M && (col < K || (col == K && row < M - 1))) {"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.RACE, report.message
    assert "no kernel wrote shared memory" in report.message and "bounds check" in report.message
    assert "__syncthreads() is probably missing" not in report.message


def test_a_missing_barrier_is_still_named_as_one(matmul, emulator, cache):
    report = grade(SUBMISSIONS / "missing_sync.cu", matmul, emulator, cache)
    assert report.verdict is Verdict.RACE
    assert "__syncthreads() is probably missing" in report.message and "no kernel wrote" not in report.message


def test_the_emulated_call_limit_grows_with_the_shape_from_measured_speed(matmul, emulator, cache):
    small = emulator.call_limit(matmul, {"M": 1, "N": 1, "K": 1}, cache)
    large = emulator.call_limit(matmul, {"M": 1536, "N": 21, "K": 1536}, cache)
    assert small.seconds == pytest.approx(matmul.limits.case_s, rel=0.01)
    assert large.seconds > 2 * matmul.limits.case_s
    speed = emulator.speed(cache, matmul.limits.compile_s)
    assert speed.measured and 0 < speed.thread_s < 1e-4 and 0 < speed.flop_s < 1e-6
    assert "one warp per output element" in large.why and "measured speed" in large.why

