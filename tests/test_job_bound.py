"""The bound on a whole grading job (issue 25): a correct solve that sleeps just under each call's limit
is stopped by the job's bound with TIMEOUT, and every case after it is skipped. Graded with the matmul
challenge's limits made small (a call 2 s, the job 6 s), so each test takes seconds, not the minutes
the real limits would allow."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from grader import build, pipeline, report as reports
from grader.backends.emulator import LIMIT_SLACK, EmulatorBackend, Speed
from grader.results import JobLimit, Mode, public, public_json, to_json
from grader.spec import Challenge
from grader.verdict import Verdict

from conftest import NAIVE, SUBMISSIONS, expectation, read, text_source

SLEEPER = SUBMISSIONS / "slow" / "sleeps_each_call.cu"
SLEEP_S = 1.5
CASE_S, JOB_S = 2.0, 6.0
GRACE_S = 3.0
"""What a job may take past its bound: stopping the worker, then the report."""


def small(challenge: Challenge, job_s: float = JOB_S, shapes: int = 4) -> Challenge:
    """The challenge with small limits, its first few functional shapes and no randomized ones: the
    emulator's bound grows with the shapes, and tiny ones keep it near job_s."""
    limits = dataclasses.replace(challenge.limits, case_s=CASE_S, job_s=job_s)
    randomized = dataclasses.replace(challenge.randomized, count=0)
    return dataclasses.replace(challenge, limits=limits, functional=challenge.functional[:shapes],
                               randomized=randomized)


def assert_stopped_by_the_job_bound(report, job_s: float) -> None:
    assert report.verdict is Verdict.TIMEOUT, (report.message, report.worker_output[-2000:])
    assert "whole job" in report.message and "not only each call" in report.message, report.message
    assert "did not finish within" not in report.message, "the per-call limit's message is another"
    assert report.job_limit is not None and report.job_limit.seconds >= job_s
    assert report.wall_s <= report.job_limit.seconds + GRACE_S, (report.wall_s, report.job_limit)
    verdicts = [c.verdict for c in report.cases] + [p.verdict for p in report.performance]
    stopped = verdicts.index(Verdict.TIMEOUT)
    assert all(v.passed for v in verdicts[:stopped]), verdicts
    assert verdicts[stopped + 1:] and all(v is Verdict.SKIPPED for v in verdicts[stopped + 1:]), verdicts


STALLER = SUBMISSIONS / "slow" / "stalls_in_constructor.cu"


def test_the_sleeping_file_says_what_it_expects():
    assert expectation(SLEEPER) == ("TIMEOUT", "whole job")
    assert SLEEPER not in SUBMISSIONS.glob("*.cu"), "the corpus grades tests/submissions/*.cu with the real limits"


# --------------------------------------------------------------------------- the emulator (CI)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("job-bound-cache")


@pytest.fixture(scope="module")
def emulator(cache):
    """Its speed measured (and its runtime built) first: that is the grader's work, outside the bound,
    but inside the report's wall time, which the tests compare with the bound."""
    if shutil.which("g++") is None:
        pytest.skip("the emulator needs g++")
    backend = EmulatorBackend()
    backend.speed(cache, 120.0)
    return backend


def test_a_library_that_never_finishes_loading_is_stopped_by_the_job_bound(matmul, emulator, cache):
    """A constructor that stalls holds the worker's start, whose own limit is 120 s: the job's bound
    cuts the start too."""
    report = pipeline.grade(read(STALLER, "solutions/stalls_in_constructor.cu"), small(matmul), emulator,
                            pipeline.Options(Mode.RUN, 7, cache))
    assert report.verdict is Verdict.TIMEOUT, report.message
    assert expectation(STALLER)[1] in report.message and "whole job" in report.message, report.message
    assert report.wall_s <= report.job_limit.seconds + GRACE_S, (report.wall_s, report.job_limit)


def test_a_solve_sleeping_under_each_call_limit_is_stopped_by_the_job_bound_in_the_emulator(matmul, emulator, cache):
    challenge = small(matmul)
    report = pipeline.grade(read(SLEEPER, "solutions/sleeps_each_call.cu"), challenge, emulator,
                            pipeline.Options(Mode.RUN, 7, cache))
    assert_stopped_by_the_job_bound(report, JOB_S)
    calls = len(challenge.functional) + 1  # and the re-check, each in both thread orders
    assert 2 * calls * SLEEP_S > report.job_limit.seconds, "the test must need the bound: every call is in time"
    assert report.job_limit.shape_dependent and "emulator" in report.job_limit.why


def test_in_emulation_a_job_may_wait_no_longer_than_the_gpus_bound(matmul, emulator, cache):
    """The emulator's bound grows with its allowance for slow kernels on every shape (an hour and more for
    a large challenge), which a sleeping solve would otherwise use up: waiting (a call whose worker used
    almost no CPU) counts against the GPU's bound instead. Here every functional shape, a 3 s allowance."""
    limits = dataclasses.replace(matmul.limits, case_s=CASE_S, job_s=3.0)
    challenge = dataclasses.replace(matmul, limits=limits, randomized=dataclasses.replace(matmul.randomized, count=0))
    report = pipeline.grade(read(SLEEPER, "solutions/sleeps_each_call.cu"), challenge, emulator,
                            pipeline.Options(Mode.RUN, 7, cache))
    assert report.job_limit.seconds > 5 * limits.job_s, "the whole job's bound alone would let it sleep on"
    assert report.wall_s < report.job_limit.seconds / 2
    assert report.verdict is Verdict.TIMEOUT and "spent" in report.message and "waiting" in report.message, report.message
    stopped = [c.verdict for c in report.cases].index(Verdict.TIMEOUT)
    assert stopped <= 2, "stopped at the third call: 1.5 s of sleep each, a 3 s allowance"
    assert all(c.verdict is Verdict.SKIPPED for c in report.cases[stopped + 1:])


def test_the_same_limits_accept_a_solve_that_does_not_sleep(matmul, emulator, cache):
    report = pipeline.grade(read(NAIVE, "naive.cu"), small(matmul), emulator, pipeline.Options(Mode.RUN, 7, cache))
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert report.wall_s < report.job_limit.seconds


def test_the_emulator_adds_the_per_call_model_summed_over_the_job(matmul, emulator):
    backend = EmulatorBackend()
    backend._speed = Speed(thread_s=1e-7, flop_s=1e-9)  # no calibration: a known speed
    shapes = [dict(s.dims) for s in matmul.functional]
    calls_s = sum(backend.call_limit(matmul, dims, None).seconds - matmul.limits.case_s for dims in shapes)
    limit = backend.job_limit(matmul, shapes, None)
    assert limit.seconds == pytest.approx(matmul.limits.job_s + len(backend.orders) * calls_s)
    assert limit.seconds > matmul.limits.job_s and limit.shape_dependent
    assert f"{LIMIT_SLACK:g}×" in limit.why and "limits.job_s" in limit.why
    assert backend.job_limit(matmul, [], None).seconds == matmul.limits.job_s


def test_the_gpu_bound_is_the_challenges_job_s(matmul):
    from grader.backends.cuda import CudaBackend
    limit = CudaBackend.job_limit(None, matmul, [dict(s.dims) for s in matmul.functional], None)  # needs no GPU
    assert limit == JobLimit(matmul.limits.job_s, limit.why) and "limits.job_s" in limit.why


# --------------------------------------------------------------------------- the pipeline, with a stand-in backend


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class SlowCompiler:
    """A backend whose compile takes `compile_took_s` on the test's clock and fails as a compile that
    was stopped fails: what the pipeline must bound and explain. Nothing runs."""

    name, measures_time, orders, sandbox = "stand-in", False, ("forward",), None

    def __init__(self, clock: Clock, job_s: float, compile_took_s: float):
        self.clock, self.job_s, self.compile_took_s = clock, job_s, compile_took_s
        self.compile_s: float | None = None

    def job_limit(self, challenge, cases, cache_dir) -> JobLimit:
        return JobLimit(self.job_s, "the stand-in's bound")

    def build(self, source, challenge, cache_dir, libraries=None) -> build.BuildResult:
        self.compile_s = challenge.limits.compile_s
        self.clock.now += min(self.compile_took_s, self.compile_s)
        return build.BuildResult(build.BuildStatus.COMPILE_ERROR, f"compilation took longer than {self.compile_s:g} s "
                                                                  "and was stopped")

    def environment(self):
        from grader.backends import Environment
        return Environment(self.name, None, None, None, None, None, None)


def grade_with(backend, challenge, clock, options=None):
    options = options or pipeline.Options(Mode.RUN, 1, None)
    return pipeline.grade(text_source("// anything\n"), challenge, backend, options, clock=clock)


def test_the_compile_gets_the_jobs_time_left_when_that_is_less(matmul):
    clock = Clock()
    backend = SlowCompiler(clock, job_s=30.0, compile_took_s=1000.0)
    report = grade_with(backend, matmul, clock)
    assert backend.compile_s == 30.0 < matmul.limits.compile_s
    assert report.verdict is Verdict.COMPILE_ERROR
    assert "whole job" in report.message and "the compile was stopped" in report.message, report.message
    assert report.job_limit == JobLimit(30.0, "the stand-in's bound")


def test_a_compile_within_its_own_limit_keeps_its_own_message(matmul):
    clock = Clock()
    backend = SlowCompiler(clock, job_s=1000.0, compile_took_s=1000.0)
    report = grade_with(backend, matmul, clock)
    assert backend.compile_s == matmul.limits.compile_s
    assert report.message == f"compilation took longer than {matmul.limits.compile_s:g} s and was stopped"


def test_a_longer_timing_budget_raises_the_bound_for_the_timing_it_adds(matmul):
    class Timing(SlowCompiler):
        measures_time = True

    clock = Clock()
    budget_s = matmul.limits.timing_budget_s + 10
    options = pipeline.Options(Mode.SUBMIT, 1, None, timing_budget_s=budget_s)
    report = grade_with(Timing(clock, 60.0, 0.0), matmul, clock, options)
    timed = 2 * len(matmul.performance)  # the submission and the baseline, at every performance shape
    assert report.job_limit.seconds == pytest.approx(60.0 + timed * 10)
    assert "timing budget" in report.job_limit.why
    shorter = pipeline.Options(Mode.SUBMIT, 1, None, timing_budget_s=0.5)
    assert grade_with(Timing(clock, 60.0, 0.0), matmul, clock, shorter).job_limit.seconds == 60.0


# --------------------------------------------------------------------------- shown, and hidden where secret


def test_a_secret_run_hides_a_bound_that_grows_with_the_hidden_shapes():
    from test_report import grade_report, rendered
    emulated = JobLimit(412.0, "the emulator's bound for this job: ... 17 s ...", shape_dependent=True)
    secret = dataclasses.replace(grade_report(), secret=True, job_limit=emulated)
    shown = public(secret)
    assert shown.job_limit.seconds is None and "412" not in rendered(secret) and "17 s" not in rendered(secret)
    assert public_json(to_json(secret)) == public_json(to_json(shown))
    assert public_json(to_json(secret))["job_limit"]["seconds"] is None
    gpu = dataclasses.replace(secret, job_limit=JobLimit(60.0, "the challenge's"))
    assert public(gpu).job_limit == gpu.job_limit, "a GPU's bound is the challenge's, the same for every seed"
    message = pipeline._job_overrun(emulated, True, "the call in flight was stopped")
    assert "412" not in message and "whole job" in message


def test_a_secret_run_s_overrun_does_not_say_how_long_the_last_call_had_left():
    """The time the call in flight had left is the job's bound less what every case before it took, the
    hidden ones included: a secret run's message does not state it, even where the bound is public (a GPU)."""
    from grader import run

    gpu = JobLimit(60.0, "the challenge's")
    timeout = pipeline._Timeout(13.7, run.CallLimit(20.0, "the call's limit"), gpu)
    reply = run.Reply(run.Outcome.TIMEOUT, seconds=13.7)
    shown = pipeline._call_failure(reply, timeout, secret=False)[1]
    hidden = pipeline._call_failure(reply, timeout, secret=True)[1]
    assert "after 13.7 s" in shown and "13.7" not in hidden and "60 s" in hidden


# --------------------------------------------------------------------------- on a GPU


@pytest.mark.gpu
def test_the_job_bound_stops_a_sleeping_solve_on_a_gpu(matmul, cuda_backend, tmp_path):
    report = pipeline.grade(read(SLEEPER, "solutions/sleeps_each_call.cu"), small(matmul), cuda_backend,
                            pipeline.Options(Mode.RUN, 7, tmp_path))
    assert_stopped_by_the_job_bound(report, JOB_S)
    assert report.job_limit == JobLimit(JOB_S, report.job_limit.why)


@pytest.mark.gpu
def test_the_job_bound_covers_the_timing_on_a_gpu(matmul, cuda_backend, tmp_path):
    """One functional shape and its re-check (3 s of sleep) pass within the 12 s; the timing, five calls or more per
    performance shape, runs into the bound: that performance case is TIMEOUT, the later ones SKIPPED."""
    challenge = small(matmul, job_s=12.0, shapes=1)
    report = pipeline.grade(read(SLEEPER, "solutions/sleeps_each_call.cu"), challenge, cuda_backend,
                            pipeline.Options(Mode.SUBMIT, 7, tmp_path, timing_budget_s=0.5))
    assert_stopped_by_the_job_bound(report, 12.0)
    assert report.performance[0].verdict is Verdict.TIMEOUT, report.performance
