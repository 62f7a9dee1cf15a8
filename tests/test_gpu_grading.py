"""End-to-end grading on a real GPU: every corpus file gets its verdict, and the grader survives."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import pipeline
from grader.results import Mode
from grader.verdict import Verdict

from conftest import NAIVE, SUBMISSIONS, corpus, expectation, read

pytestmark = pytest.mark.gpu

CORPUS = corpus("cuda")


def _grade(path: Path, challenge, backend, cache: Path, mode: Mode = Mode.RUN, seed: int = 7):
    options = pipeline.Options(mode, seed, cache)
    return pipeline.grade(read(path, f"solutions/{path.name}"), challenge, backend, options)


@pytest.mark.parametrize("entry", CORPUS, ids=[f.id for f in CORPUS])
def test_corpus_verdict(entry, challenge_named, cuda_backend, tmp_path):
    path = entry.path
    verdict, message = expectation(path)
    report = _grade(path, challenge_named(entry.slug), cuda_backend, tmp_path)
    assert report.verdict is Verdict[verdict], report.message
    if message:
        assert message.lower() in report.message.lower(), report.message


def test_crash_then_correct_submission_in_one_process(matmul, cuda_backend, tmp_path):
    crashed = _grade(SUBMISSIONS / "illegal_address.cu", matmul, cuda_backend, tmp_path)
    assert crashed.verdict is Verdict.RUNTIME_ERROR
    hung = _grade(SUBMISSIONS / "infinite_loop.cu", matmul, cuda_backend, tmp_path)
    assert hung.verdict is Verdict.TIMEOUT
    after = _grade(NAIVE, matmul, cuda_backend, tmp_path)
    assert after.verdict is Verdict.ACCEPTED, after.message
    assert all(c.verdict is Verdict.ACCEPTED for c in after.cases)


def test_submit_times_the_naive_kernel(matmul, cuda_backend, tmp_path):
    report = pipeline.grade(read(NAIVE, "naive.cu"), matmul, cuda_backend,
                            pipeline.Options(Mode.SUBMIT, 11, tmp_path, timing_budget_s=0.5))
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert len(report.performance) == len(matmul.performance)
    for perf in report.performance:
        assert perf.stats.reps >= 3 and perf.stats.median_ms > 0
        assert perf.baseline is not None and 0 < perf.percent_of_baseline < 100
    kinds = {c.kind.value for c in report.cases}
    assert {"functional", "randomized", "timed", "recheck"} <= kinds


def test_work_left_running_on_a_side_stream_is_not_timed_and_the_timing_is_rejected(matmul, cuda_backend, tmp_path):
    """The end event is queued as solve returns, on the default stream, and the device is awaited only
    after it (so the host's synchronization is not timed). A kernel on a non-blocking stream escapes the
    events: correct results, but a median of almost nothing against a worker's clock that waited for
    every call, so the timing is rejected (the roofline or the wall-clock check, whichever sees it first)."""
    path = Path(__file__).resolve().parent / "hostile" / "side_stream_left_running.cu"
    report = pipeline.grade(read(path, "side_stream.cu"), matmul, cuda_backend,
                            pipeline.Options(Mode.SUBMIT, 11, tmp_path, timing_budget_s=0.3, time_baseline=False))
    assert report.verdict is Verdict.IMPOSSIBLE_TIMING, report.message
    assert all(c.verdict is Verdict.ACCEPTED for c in report.cases), report.message
