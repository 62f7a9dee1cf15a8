"""End-to-end grading on a real GPU: every corpus file gets its verdict, and the grader survives."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import pipeline, timing
from grader.results import Mode
from grader.verdict import Verdict

from conftest import NAIVE, SUBMISSIONS, corpus, expectation, graded_with, read, text_source

pytestmark = pytest.mark.gpu

CORPUS = corpus("cuda")


def _grade(path: Path, challenge, backend, cache: Path, mode: Mode = Mode.RUN, seed: int = 7):
    options = pipeline.Options(mode, seed, cache)
    return pipeline.grade(read(path, f"solutions/{path.name}"), challenge, backend, options)


@pytest.mark.parametrize("entry", CORPUS, ids=[f.id for f in CORPUS])
def test_corpus_verdict(entry, challenge_named, cuda_backend, tmp_path):
    path = entry.path
    verdict, message = expectation(path)
    report = _grade(path, challenge_named(entry.slug), cuda_backend, tmp_path, graded_with(path))
    assert report.verdict is Verdict[verdict], report.message
    if message:
        assert message.lower() in report.message.lower(), report.message


def test_legacy_warp_synchronous_code_is_accepted_with_the_emulators_warning(challenge_named, cuda_backend, tmp_path):
    """The GPU cannot see this race (the emulator's verdict is RACE); its report says what CUDA promises."""
    report = _grade(SUBMISSIONS / "reduction" / "legacy_warp_synchronous.cu", challenge_named("reduction"),
                    cuda_backend, tmp_path)
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert any("warp-synchronous" in note and "legacy_warp_synchronous.cu:14" in note for note in report.build.notes)


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


def test_work_left_running_on_a_side_stream_is_timed_end_to_end(matmul, cuda_backend, tmp_path):
    """The end event is queued as solve returns, on the default stream; a kernel on a non-blocking stream
    escapes the events, but not the clocks around the whole sample (the worker's, which waits for the
    device, and the grader's): the kernel's time is counted, ACCEPTED, within 10% of the plain naive kernel's."""
    path = Path(__file__).resolve().parent / "hostile" / "side_stream_left_running.cu"
    options = pipeline.Options(Mode.SUBMIT, 11, tmp_path, timing_budget_s=0.3, time_baseline=False)
    report = pipeline.grade(read(path, "side_stream.cu"), matmul, cuda_backend, options)
    assert report.verdict is Verdict.ACCEPTED, report.message
    honest = pipeline.grade(read(NAIVE, "naive.cu"), matmul, cuda_backend, options)
    for side, plain in zip(report.performance, honest.performance):
        assert side.timing.timed_by is not timing.TimedBy.EVENTS, side.timing
        assert side.stats.median_ms >= plain.stats.median_ms / 1.1, (side.stats.median_ms, plain.stats.median_ms)


FORGER = Path(__file__).resolve().parent / "hostile" / "forges_timing_in_the_worker.cu"


def test_a_worker_rewritten_to_report_a_third_of_the_time_is_caught(matmul, cuda_backend, tmp_path):
    options = pipeline.Options(Mode.SUBMIT, 11, tmp_path, timing_budget_s=0.3, time_baseline=False)
    report = pipeline.grade(read(FORGER, "forger.cu"), matmul, cuda_backend, options)
    assert report.verdict is Verdict.IMPOSSIBLE_TIMING, report.message
    assert "rewriting the worker's answers" in report.message


def test_a_forgery_within_reach_gains_at_most_ten_percent(matmul, cuda_backend, tmp_path):
    """Both of the worker's clocks scaled to 0.8: not evidence enough for a verdict (a busy host can slow
    the channel), so the grader's clock counts: within 10% of the honest kernel's time (3% run to run)."""
    options = pipeline.Options(Mode.SUBMIT, 11, tmp_path, timing_budget_s=0.5, time_baseline=False)
    subtle = FORGER.read_text().replace("FORGED_SHARE = 0.3;", "FORGED_SHARE = 0.8;")
    assert subtle != FORGER.read_text()
    forged = pipeline.grade(text_source(subtle, "forger.cu"), matmul, cuda_backend, options)
    honest = pipeline.grade(read(NAIVE, "naive.cu"), matmul, cuda_backend, options)
    assert forged.verdict is Verdict.ACCEPTED and honest.verdict is Verdict.ACCEPTED, forged.message
    for f, h in zip(forged.performance, honest.performance):
        assert f.timing.timed_by is timing.TimedBy.GRADER_CLOCK, f.timing
        assert f.stats.median_ms >= h.stats.median_ms / (timing.FORGERY_GAIN * 1.03), (f.stats.median_ms, h.stats.median_ms)
