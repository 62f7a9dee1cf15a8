"""The whole grading run: spec → build → run → check → time → report data.

`grade` reads like the pipeline; each helper below is one step of it.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from grader import __version__, build, case as cases, channel, run, source as sources, timing
from grader.backends import Backend
from grader.libraries import LibraryPolicy
from grader.results import (HIDDEN_JOB_LIMIT, CaseKind, CaseResult, GradeReport, Isolation, JobLimit, Mode, Parity,
                            PerformanceResult, first_failing, headline)
from grader.spec import Challenge, Role, Shape
from grader.timing import TimingPolicy, summarize
from grader.verdict import Verdict, overall

WARP_SYNCHRONOUS = "legacy warp-synchronous code"
"""The start of the emulator's warning about `volatile` warp-synchronous code (emulator/translate.py):
a RACE in such a file is most likely that code, whatever the generic hint says."""

GRACE_S = 30.0
ROOFLINE_FACTOR = 8.0
"""No FP32-accurate result can beat this multiple of the FP32 peak (TF32 tensor cores: about 7.4×)."""
BANDWIDTH_FACTOR = 1.5
"""No kernel can move its bytes faster than this multiple of the measured copy bandwidth (the copy
reaches about 85% of an H200's memory peak)."""
BUILD_VERDICTS = {
    build.BuildStatus.COMPILE_ERROR: Verdict.COMPILE_ERROR,
    build.BuildStatus.INTERFACE_ERROR: Verdict.INTERFACE_ERROR,
    build.BuildStatus.UNSUPPORTED: Verdict.UNSUPPORTED,
}


@dataclass(frozen=True)
class Options:
    mode: Mode
    seed: int
    cache_dir: Path | None
    timing_budget_s: float | None = None
    """Overrides the challenge's timing budget per performance case."""
    time_baseline: bool = True
    """Time the library baseline beside each performance case (the ladder needs it only once)."""
    recheck_after_timing: bool = True
    """Check each performance shape again on fresh inputs after timing, against answers replayed from
    a cache. The ladder turns it off: its levels are the project's own files, not hostile code."""
    libraries: LibraryPolicy = LibraryPolicy.NONE
    """Which of CCCL (CUB, Thrust) the submission may use; every report states it."""
    strict: bool = False
    """An official challenge's extra checks (Challenge.extras) count in the verdict; otherwise they are
    reported beside it and the verdict is the one LeetGPU's judge would give."""
    secret: bool = False
    """`seed` is a class's secret one (the class server's and `grader grade`'s, derived per submission
    from the class's secret seed: grader.seeds): the report is marked secret, and what students see of it
    hides the seed, the randomized cases and whatever grew with them (grader.results.public)."""


class Progress(Protocol):
    def stage(self, text: str, total: int | None = None) -> None: ...
    def advance(self, text: str) -> None: ...


class NoProgress:
    def stage(self, text: str, total: int | None = None) -> None:
        pass

    def advance(self, text: str) -> None:
        pass


@dataclass
class _Run:
    """State shared by the steps of one grading run."""

    challenge: Challenge
    backend: Backend
    options: Options
    progress: Progress
    clock: Callable[[], float]
    job_limit: JobLimit
    deadline: float
    """On `clock`: when the job's bound runs out. Every request's timeout is at most the time left."""
    worker: run.Worker | None = None
    kernel_s: float = 0.0
    waited_s: float = 0.0
    """Time the calls spent waiting rather than computing (`_waited_s`), where the backend computes on the CPU."""

    def left_s(self) -> float:
        return self.deadline - self.clock()


@dataclass(frozen=True)
class _Timeout:
    """What one request may take: its own limit, or the job's time left where that is less."""

    seconds: float
    limit: run.CallLimit
    job: JobLimit | None = None
    """Set when the job's time left, not the request's own limit, is what bounds it."""


Case = tuple[CaseKind, Shape, object]
"""One correctness case of the plan: its kind, its shape and the generator of its inputs."""


def grade(source: sources.Source, challenge: Challenge, backend: Backend, options: Options,
          progress: Progress | None = None, clock: Callable[[], float] = time.perf_counter) -> GradeReport:
    """Grade the submission as the front end read it: the text built here is the text it stores."""
    started = clock()
    plan = _plan(challenge, options.seed, _untimed(challenge, backend, options))
    # the bound is computed before its clock starts: the emulator measures its speed for it (the grader's work)
    limit = _job_limit(challenge, backend, options, plan)
    state = _Run(challenge, backend, options, progress or NoProgress(), clock, limit, clock() + limit.seconds)
    display_path = source.display_path
    built = _build(state, source)
    if built.status is not build.BuildStatus.OK:
        return _report(state, display_path, BUILD_VERDICTS[built.status], _build_message(state, built), built,
                       (), (), clock() - started)
    with backend.worker(built, challenge) as worker:
        state.worker = worker
        start = _timeout(state, run.CallLimit(run.STARTUP_TIMEOUT_S, "the worker's limit for loading the library"))
        ready = worker.start(start.seconds)
        if ready.outcome is run.Outcome.TIMEOUT and start.job is not None:
            return _report(state, display_path, Verdict.TIMEOUT,
                           _job_overrun(start.job, options.secret, "while the library was still loading"), built, (),
                           (), clock() - started, worker.output_tail())
        if ready.outcome is not run.Outcome.OK:
            return _report(state, display_path, Verdict.RUNTIME_ERROR,
                           f"the library could not be loaded: {ready.detail}", built, (), (), clock() - started,
                           worker.output_tail())
        checked = _check_all(state, plan)
        timed: tuple[PerformanceResult, ...] = ()
        if options.mode is Mode.SUBMIT and backend.measures_time and all(c.verdict.passed for c in checked):
            timed, rechecked = _time_all(state)
            checked += rechecked
        passed = all(not c.verdict.failed for c in checked) and all(not p.verdict.failed for p in timed)
        if challenge.extras and passed and worker.alive:
            checked += _check_all(state, [(CaseKind.STRICT, s, cases.rng_for(options.seed, cases.Purpose.STRICT, i))
                                          for i, s in enumerate(challenge.extras)], "strict checks")
        channel = _channel_failure(worker)
        output = worker.output_tail()
    counted = [c for c in checked if c.kind is not CaseKind.STRICT or options.strict]
    verdicts = [c.verdict for c in counted] + [p.verdict for p in timed] + ([channel[0]] if channel else [])
    verdict = overall(verdicts)
    message = _first_failure(tuple(counted), timed) if verdict is not Verdict.ACCEPTED else ""
    if verdict is Verdict.RACE:
        message += "".join(f"; also: {note}" for note in built.notes if WARP_SYNCHRONOUS in note)
    if channel and not message:
        message = channel[1]
    return _report(state, display_path, verdict, message, built, checked, timed, clock() - started, output)


def unreadable(error: sources.SourceError, display_path: str, challenge: Challenge, environment,
               options: Options) -> GradeReport:
    """The report for a file the grader would not read (empty, binary, too large, gone): a compile
    error, since there is nothing to compile, saying why. The command line refuses such a file as
    bad usage; a batch records this for the student and goes on with the class. Nothing runs, so only
    where it would have run (`environment`, a backends.Environment) is asked for."""
    built = build.BuildResult(build.BuildStatus.COMPILE_ERROR, f"{error.message} ({error.hint})")
    c = challenge
    return GradeReport(display_path, c.slug, c.version, c.functional_version, c.performance_version, options.mode,
                       options.seed, Verdict.COMPILE_ERROR, built.message, built, (), (), environment,
                       c.baseline_label, __version__, 0.0, 0.0, secret=options.secret, libraries=options.libraries.value)


def unsupported(display_path: str, slug: str, reason: str, environment, options: Options) -> GradeReport:
    """The report for a challenge the grader cannot grade here (an official one with a type it has no buffer
    for, or several GPUs): UNSUPPORTED with the reason; nothing is built or run."""
    return GradeReport(display_path, slug, 1, 1, 1, options.mode, options.seed, Verdict.UNSUPPORTED, reason, None,
                       (), (), environment, None, __version__, 0.0, 0.0, secret=options.secret,
                       libraries=options.libraries.value)


# --------------------------------------------------------------------------- the job's bound


def _plan(c: Challenge, seed: int, untimed: tuple[int, ...] = ()) -> list[Case]:
    """The correctness cases, in order: functional, randomized (drawn from the seed), the timed shapes
    a backend that cannot time checks instead (`untimed`: their indices in c.performance, each with the
    values a GPU would time it on), and a re-check."""
    plan = [(CaseKind.FUNCTIONAL, s, cases.rng_for(seed, cases.Purpose.FUNCTIONAL, i)) for i, s in enumerate(c.functional)]
    randomized = cases.random_shapes(c.randomized, c.dims, c.reference, seed, c.valid)
    plan += [(CaseKind.RANDOMIZED, s, cases.rng_for(seed, cases.Purpose.RANDOMIZED, i)) for i, s in enumerate(randomized)]
    plan += [(CaseKind.TIMED, c.performance[i], cases.rng_for(seed, cases.Purpose.TIMED, i)) for i in untimed]
    # A shape seen before, with fresh values: an answer replayed from a cache keyed by shape or by
    # pointer (freed buffers come back at the same addresses) fails here.
    if c.functional[-1].given is None:  # a case whose data is given (official) would see the same values again
        plan.append((CaseKind.RECHECK, c.functional[-1], cases.rng_for(seed, cases.Purpose.RECHECK, len(c.performance))))
    return plan


def _untimed(c: Challenge, backend: Backend, options: Options) -> tuple[int, ...]:
    """The timed shapes a submit checks for correctness only: on a backend that cannot time (the
    emulator), those it can afford, so that an answer a GPU's submit would fail at a timed shape (a long
    FP32 sum at 2^25 elements) fails here too. A backend that times checks them while timing."""
    if options.mode is not Mode.SUBMIT or backend.measures_time:
        return ()
    return backend.untimed_checks(c)


def _job_limit(c: Challenge, backend: Backend, options: Options, plan: list[Case]) -> JobLimit:
    """The backend's bound for these cases, plus the timing a longer --timing-budget than the challenge's
    asks for: the submission's and the baseline's repetitions of every performance case."""
    limit = backend.job_limit(c, [dict(shape.dims) for _, shape, _ in plan], options.cache_dir)
    extra_s = (options.timing_budget_s or 0.0) - c.limits.timing_budget_s
    if options.mode is not Mode.SUBMIT or not backend.measures_time or extra_s <= 0:
        return limit
    timed = len(c.performance) * (2 if c.reference.baseline and options.time_baseline else 1)
    return dataclasses.replace(limit, seconds=limit.seconds + timed * extra_s, why=(
        f"{limit.why}, plus {timed} × {extra_s:g} s for the timing budget asked beyond the challenge's "
        f"{c.limits.timing_budget_s:g} s"))


def _timeout(state: _Run, limit: run.CallLimit) -> _Timeout:
    """A request's timeout: its own limit, or the job's time left where that is less (at once past it)."""
    left_s = max(state.left_s(), 0.0)
    return _Timeout(left_s, limit, state.job_limit) if left_s < limit.seconds else _Timeout(limit.seconds, limit)


def _job_overrun(job: JobLimit, secret: bool, stopped: str) -> str:
    """The message of a job stopped by its bound. In a secret run a bound that grows with the shapes is
    not stated: it would tell how large the hidden shapes are together."""
    shown = HIDDEN_JOB_LIMIT if secret and job.shape_dependent else job
    bound = f"its bound of {shown.seconds:.3g} s ({shown.why})" if shown.seconds is not None else f"its bound ({shown.why})"
    return (f"the whole job (compile and every case) ran past {bound}; {stopped}. A submission must finish all its "
            "cases within that bound, not only each call within its own limit")


# --------------------------------------------------------------------------- build


def _build(state: _Run, source: sources.Source) -> build.BuildResult:
    """The compile, within the challenge's compile_s and the job's time left, whichever is less."""
    state.progress.stage("compiling")
    c = state.challenge
    compile_s = max(min(c.limits.compile_s, state.left_s()), 0.0)
    bounded = dataclasses.replace(c, limits=dataclasses.replace(c.limits, compile_s=compile_s))
    return state.backend.build(source, bounded, state.options.cache_dir, state.options.libraries)


def _build_message(state: _Run, built: build.BuildResult) -> str:
    """A compile stopped because the job's time ran out says so, not only "took longer than N s"."""
    if state.left_s() > 0:
        return built.message
    return f"{built.message}; " + _job_overrun(state.job_limit, state.options.secret, "the compile was stopped")


# --------------------------------------------------------------------------- correctness


def _check_all(state: _Run, plan: list[Case], stage: str = "checking correctness") -> tuple[CaseResult, ...]:
    state.progress.stage(stage, total=len(plan))
    results: list[CaseResult] = []
    stopped = False
    for kind, shape, rng in plan:
        if stopped:
            results.append(CaseResult(kind, shape.label(), dict(shape.dims), Verdict.SKIPPED))
            continue
        state.progress.advance(shape.label())
        too_large = state.backend.too_large(state.challenge, shape) if shape.given is not None else None
        if too_large:
            results.append(CaseResult(kind, shape.label(), dict(shape.dims), Verdict.SKIPPED, too_large))
            continue
        results.append(_run_case(state, kind, shape, rng))
        stopped = _fatal(results[-1].verdict)
    return tuple(results)


def _channel_failure(worker: run.Worker) -> tuple[Verdict, str] | None:
    """After the last case: was any answer left unread (two answers to one request)?"""
    if not worker.alive:
        return None
    reply = worker.ping()
    if reply.outcome is run.Outcome.OK:
        return None
    return Verdict.RUNTIME_ERROR, "after the last case: " + reply.detail


def _fatal(verdict: Verdict) -> bool:
    """Verdicts after which the worker is gone or its CUDA context is unusable."""
    return verdict in (Verdict.RUNTIME_ERROR, Verdict.TIMEOUT, Verdict.MEMORY_LIMIT, Verdict.SKIPPED)


def _run_case(state: _Run, kind: CaseKind, shape: Shape, rng) -> CaseResult:
    """One case, once per thread order the backend runs (the emulator: forward, then reversed). A timed
    shape checked without timing runs in the first order only, as a GPU's timed check runs once: the
    smaller cases are where a missing barrier shows, and these are the slowest to emulate."""
    c, backend = state.challenge, state.backend
    limit = backend.call_limit(c, dict(shape.dims), state.options.cache_dir)
    case = cases.prepare(c, shape, rng, backend)
    runs: list[cases.OrderRun] = []
    # a parity case runs as LeetGPU's judge runs it, once; thread orders are one of the strict checks
    if shape.parity:
        orders = (backend.parity_order,)
    else:
        orders = backend.orders[:1] if kind is CaseKind.TIMED else backend.orders
    try:
        for order in orders:
            if runs:
                cases.reset_outputs(c, case, backend)
            timeout = _timeout(state, limit)
            reply = state.worker.call(cases.worker_args(c, case), timeout.seconds, order)
            failed = _call_failure(reply, timeout, state.options.secret)
            if failed:
                state.worker.stop()
                return CaseResult(kind, shape.label(), dict(shape.dims), failed[0], failed[1], call_s=reply.seconds)
            state.kernel_s += reply.data.seconds
            if not backend.measures_time and _waited_too_long(state, reply):
                state.worker.stop()
                return CaseResult(kind, shape.label(), dict(shape.dims), Verdict.TIMEOUT, _waiting_message(state),
                                  call_s=reply.seconds)
            found = cases.inspect(c, case)
            outputs = cases.snapshot(c, case) if len(orders) > 1 else ()
            runs.append(cases.OrderRun(order, found, outputs, reply.data))
        found = cases.combine_orders(runs, judge_past_end=not shape.parity)
        return CaseResult(kind, shape.label(), dict(shape.dims), found.verdict, found.message, found.comparisons,
                          runs[0].reply.seconds)
    finally:
        case.release()
        backend.free_memory()


WAITING_CPU_FRACTION = 0.1
"""An emulated call whose worker used less than this share of one CPU was waiting, not computing: every
emulated kernel runs on the CPU (a loaded machine still gives a busy worker far more than this)."""
WAITING_MIN_CALL_S = 1.0
"""Shorter calls are not judged: a CPU time read in clock ticks is too coarse for them."""


def _waited_too_long(state: _Run, reply: run.Reply) -> bool:
    """Count a call that waited (a `sleep`, a blocking read) against the job's allowance for waiting, the
    challenge's GPU bound (limits.job_s). In emulation the job's bound grows with the speed model's
    allowance for slow kernels (an hour and more on large shapes), which a solve that sleeps just under
    each call's limit would otherwise hold a grading slot for, using no CPU."""
    if reply.cpu_s is None or reply.seconds < WAITING_MIN_CALL_S or reply.cpu_s >= WAITING_CPU_FRACTION * reply.seconds:
        return False
    state.waited_s += reply.seconds - reply.cpu_s
    return state.waited_s > state.challenge.limits.job_s


def _waiting_message(state: _Run) -> str:
    """In a secret run the total is not stated: it sums the waits of every case so far, hidden ones included."""
    spent = "too long" if state.options.secret else f"{state.waited_s:.3g} s"
    return (f"the submission's calls spent {spent} waiting (sleeping or blocked: its worker used under "
            f"{WAITING_CPU_FRACTION:.0%} of a CPU meanwhile), more than the {state.challenge.limits.job_s:g} s a job may "
            "spend waiting in emulation, where every kernel computes on the CPU; the worker was stopped")


def _call_failure(reply: run.Reply, timeout: _Timeout, secret: bool = False) -> tuple[Verdict, str] | None:
    if reply.outcome is run.Outcome.OK:
        return _leftovers(reply.data)
    if reply.outcome is run.Outcome.TIMEOUT and timeout.job is not None:
        # how long the call had left is the bound less the time every case before it took, hidden ones included
        after = "" if secret else f" after {reply.seconds:.3g} s"
        return Verdict.TIMEOUT, _job_overrun(timeout.job, secret, f"the call in flight was stopped{after}, and the "
                                                                  "worker with it")
    if reply.outcome is run.Outcome.TIMEOUT:
        limit = timeout.limit
        return Verdict.TIMEOUT, (f"the call did not finish within {limit.seconds:.3g} s, {limit.why}: an endless "
                                 "loop, or a kernel far slower than that; the worker was stopped")
    if reply.outcome is run.Outcome.CUDA_ERROR:
        return Verdict.RUNTIME_ERROR, f"CUDA error: {reply.detail}"
    if reply.outcome is run.Outcome.CRASHED:
        if reply.detail.startswith("the submission "):  # the emulator's runtime caught it tampering
            return Verdict.RUNTIME_ERROR, reply.detail
        return Verdict.RUNTIME_ERROR, f"the submission crashed: {reply.detail}"
    if reply.outcome is run.Outcome.MALFORMED:
        return Verdict.RUNTIME_ERROR, reply.detail
    if reply.outcome is run.Outcome.MEMORY:
        return Verdict.MEMORY_LIMIT, reply.detail
    return Verdict.RUNTIME_ERROR, f"the worker failed: {reply.detail}"


def _leftovers(answer: channel.Answer) -> tuple[Verdict, str] | None:
    """What the worker saw a call leave behind: libraries loaded at run time, threads still running."""
    if not isinstance(answer, channel.Called):
        return None
    if answer.libraries_loaded:
        names = ", ".join(answer.libraries_loaded)
        return Verdict.INTERFACE_ERROR, (f"solve loaded a library at run time ({names}); only the CUDA runtime is "
                                         "available, library calls are not allowed: write the kernel yourself")
    if answer.threads_left:
        count = answer.threads_left
        return Verdict.RUNTIME_ERROR, (f"solve returned while {count} host thread{'s' if count > 1 else ''} it "
                                       "started kept running; all work must be done (or at least launched on the "
                                       "GPU) before solve returns")
    return None


# --------------------------------------------------------------------------- timing


def _time_all(state: _Run) -> tuple[tuple[PerformanceResult, ...], tuple[CaseResult, ...]]:
    c = state.challenge
    state.progress.stage("timing", total=len(c.performance))
    timed: list[PerformanceResult] = []
    rechecked: list[CaseResult] = []
    for index, shape in enumerate(c.performance):
        if not state.worker.alive:
            timed.append(PerformanceResult(shape.label(), dict(shape.dims), _work(c.reference.flops, shape),
                                           Verdict.SKIPPED, bytes=_work(c.reference.bytes, shape)))
            continue
        state.progress.advance(shape.label())
        result, timed_check = _time_case(state, index, shape)
        timed.append(result)
        if timed_check is not None:
            rechecked.append(timed_check)
        recheck = state.options.recheck_after_timing and shape.given is None
        if recheck and result.verdict.passed and timed_check is not None and timed_check.verdict.passed:
            rng = cases.rng_for(state.options.seed, cases.Purpose.RECHECK, index)
            rechecked.append(_run_case(state, CaseKind.RECHECK, shape, rng))
    return tuple(timed), tuple(rechecked)


def _policy(state: _Run) -> TimingPolicy:
    return TimingPolicy(budget_s=state.options.timing_budget_s or state.challenge.limits.timing_budget_s)


def _work(function, shape: Shape) -> float | None:
    """A challenge's flops or bytes for a shape, None where the challenge does not count it."""
    return function(shape.dims) if function else None


class _SampleFailed(Exception):
    """A timing request that did not answer as asked: the failure to report, as _call_failure words it."""

    def __init__(self, failure: tuple[Verdict, str]):
        super().__init__(failure[1])
        self.failure = failure


def _time_case(state: _Run, index: int, shape: Shape) -> tuple[PerformanceResult, CaseResult | None]:
    c, backend = state.challenge, state.backend
    flops, moved = _work(c.reference.flops, shape), _work(c.reference.bytes, shape)
    peak, bandwidth = backend.info.fp32_peak_gflops, backend.bandwidth_gbps() if moved else None
    policy = _policy(state)
    case = cases.prepare(c, shape, cases.rng_for(state.options.seed, cases.Purpose.TIMED, index), backend)
    try:
        try:
            samples = _samples(state, case, policy)
        except _SampleFailed as failed:
            state.worker.stop()
            return PerformanceResult(shape.label(), dict(shape.dims), flops, *failed.failure, bytes=moved), None
        counted = timing.attribute(samples, state.worker.calibration)
        stats = summarize(list(counted.samples_ms))
        state.kernel_s += sum(stats.samples_ms) / 1e3
        implausible = _forged(counted) or (None if c.reference.estimated else
                                           implausible_timing(stats, flops, peak, moved, bandwidth))
        if implausible:
            state.worker.stop()
            return PerformanceResult(shape.label(), dict(shape.dims), flops, Verdict.IMPOSSIBLE_TIMING, implausible,
                                     stats, bytes=moved, timing=counted.sources), None
        failed = _call_once_more(state, case, shape)
        if failed:
            state.worker.stop()
            return PerformanceResult(shape.label(), dict(shape.dims), flops, *failed, bytes=moved), None
        found = cases.inspect(c, case)
        timed_check = CaseResult(CaseKind.TIMED, shape.label(), dict(shape.dims), found.verdict, found.message,
                                 found.comparisons)
        wanted = c.reference.baseline and state.options.time_baseline
        baseline = summarize(backend.time_baseline(c, {**case.arguments, **case.pristine}, policy)) if wanted else None
        result = PerformanceResult(shape.label(), dict(shape.dims), flops, Verdict.ACCEPTED, "", stats, baseline,
                                   peak, moved, bandwidth, counted.sources)
        return result, timed_check
    finally:
        case.release()
        backend.free_memory()


def _call_once_more(state: _Run, case, shape: Shape) -> tuple[Verdict, str] | None:
    """An inout buffer (GEMM's C = αAB + βC) holds the result of every timed call, each applied to the
    last: it is given its starting value again and solve called once more, so the timed check compares
    one call's answer. So do the outputs of an official parity case, which start as the file makes them
    (zeros): LeetGPU's judge checks one call on them (a histogram that adds into its zeroed bins without
    clearing them is right once, and the strict checks say it relies on the zeros). The failure of that
    call, if it fails."""
    c = state.challenge
    if not any(p.role is Role.INOUT for p in c.outputs) and not shape.parity:
        return None
    cases.reset_outputs(c, case, state.backend)
    timeout = _timeout(state, state.backend.call_limit(c, dict(shape.dims), state.options.cache_dir))
    reply = state.worker.call(cases.worker_args(c, case), timeout.seconds, state.backend.orders[0])
    return _call_failure(reply, timeout, state.options.secret)


def _samples(state: _Run, case, policy: TimingPolicy) -> list[timing.Batch]:
    """The timed samples of one case, asked for in batches, each request timed by the grader's clock; the
    grader decides how many (timing.measure_batches). The warm-up batch is left out. Raises _SampleFailed."""
    c, worker = state.challenge, state.worker
    whole = run.CallLimit(policy.budget_s + (policy.warmup_calls + policy.floor_calls) * c.limits.case_s + GRACE_S,
                          f"the timing budget of {policy.budget_s:g} s plus {c.limits.case_s:g} s for each warm-up and "
                          "minimum call")
    deadline = state.clock() + _timeout(state, whole).seconds

    def bounded(calls: int) -> _Timeout:
        one_call = run.CallLimit(calls * c.limits.case_s, f"the challenge's limit of {c.limits.case_s:g} s a call "
                                                          f"(limits.case_s), for {calls} call{'s' if calls > 1 else ''}")
        left = deadline - state.clock()
        return _timeout(state, one_call if left >= one_call.seconds else run.CallLimit(max(left, 0.0), whole.why))

    def answered(reply: run.Reply, timeout: _Timeout) -> run.Reply:
        failed = _call_failure(reply, timeout, state.options.secret)
        if failed:
            raise _SampleFailed(failed)
        return reply

    opening = bounded(1)
    answered(worker.open_timing(cases.worker_args(c, case), opening.seconds), opening)
    taken: list[timing.Batch] = []

    def fetch(count: int) -> list[float]:
        timeout = bounded(count)
        reply = answered(worker.sample(timeout.seconds, count), timeout)
        taken.append(timing.Batch(reply.data.ms, reply.data.wall_s, reply.seconds))
        return list(reply.data.ms)

    timing.measure_batches(fetch, policy, state.clock, timing.BATCH_S)
    closing = bounded(1)
    answered(worker.end_timing(closing.seconds), closing)
    return taken[1:] if policy.warmup_calls else taken


def _forged(counted: timing.Attribution) -> str | None:
    if not counted.forged:
        return None
    clocks = counted.sources
    return (f"the worker's own clock reported {clocks.end_to_end_ms:.3g} ms a call, but the grader's clock saw "
            f"{clocks.grader_ms:.3g} ms a call beyond what a sample costs with nothing in it: less than "
            f"{timing.FORGED_SHARE:.0%} of it, which only a submission rewriting the worker's answers explains")


def implausible_timing(stats, flops: float | None, peak_gflops: float | None, moved: float | None = None,
                       bandwidth_gbps: float | None = None) -> str | None:
    """Cross-check the counted time against the roofline that applies (FP32 compute, memory bandwidth,
    or both): no honest kernel beats them (timing.attribute has already held it to the grader's clock)."""
    ms = stats.median_ms
    gflops = flops / (ms * 1e6) if flops and ms > 0 else (float("inf") if flops else 0.0)
    if peak_gflops and gflops > ROOFLINE_FACTOR * peak_gflops:
        return (f"a median of {ms:.4g} ms means {gflops:,.0f} GFLOP/s, beyond {ROOFLINE_FACTOR:g}× this "
                f"GPU's FP32 peak of {peak_gflops:,.0f} GFLOP/s: no FP32-accurate kernel runs that fast")
    gbps = moved / (ms * 1e6) if moved and ms > 0 else (float("inf") if moved else 0.0)
    if bandwidth_gbps and gbps > BANDWIDTH_FACTOR * bandwidth_gbps:
        return (f"a median of {ms:.4g} ms means {gbps:,.0f} GB/s, beyond {BANDWIDTH_FACTOR:g}× the {bandwidth_gbps:,.0f} "
                "GB/s this GPU's memory measured (caches are flushed before each timed call): no kernel moves "
                "its data that fast")
    return None


# --------------------------------------------------------------------------- report data


def _first_failure(checked: tuple[CaseResult, ...], timed: tuple[PerformanceResult, ...]) -> str:
    """The message of a failed run: its first failing case's (results.first_failing decides which, for
    this message and for what students see of a secret run alike)."""
    failing = first_failing([c.verdict for c in checked])
    if failing is not None:
        case = checked[failing]
        return headline(case.kind.value, case.label, case.message)
    failing = first_failing([p.verdict for p in timed])
    if failing is not None:
        return headline("performance", timed[failing].label, timed[failing].message)
    return ""


def _report(state: _Run, display_path: str, verdict: Verdict, message: str, built: build.BuildResult,
            checked, timed, wall_s: float, output: str = "") -> GradeReport:
    c = state.challenge
    return GradeReport(display_path, c.slug, c.version, c.functional_version, c.performance_version,
                       state.options.mode, state.options.seed, verdict, message, built, tuple(checked),
                       tuple(timed), state.backend.environment(), c.baseline_label, __version__, wall_s,
                       state.kernel_s, output, secret=state.options.secret, job_limit=state.job_limit,
                       isolation=_isolation(state), parity=_parity(state, checked),
                       libraries=state.options.libraries.value)


def _parity(state: _Run, checked) -> Parity | None:
    """An official challenge's rule and its extra checks' outcome (None for the grader's own challenges)."""
    c = state.challenge
    if c.tolerance.allclose is None:
        return None
    extras = [case for case in checked if case.kind is CaseKind.STRICT]
    failing = first_failing([case.verdict for case in extras])
    first = "" if failing is None else headline(
        "strict", extras[failing].label, f"{extras[failing].verdict.name}: {extras[failing].message}")
    return Parity(*c.tolerance.allclose, state.options.strict, sum(1 for e in extras if e.verdict is not Verdict.SKIPPED),
                  sum(1 for e in extras if e.verdict.failed), first, c.notes,
                  tuple(case.label for case in checked if any(x.widened != 1.0 for x in case.comparisons)))


def _isolation(state: _Run) -> Isolation:
    """The box the backend graded in, and what the grader read of its worker's confinement."""
    box = state.backend.sandbox
    if box is None:
        return Isolation(False, "no sandbox was given to the backend: the limits alone applied")
    worker, seen = state.worker, state.worker.confinement if state.worker else None
    memory = worker.sandbox.limits.memory_bytes if worker else None
    if seen is None:
        return Isolation(box.active, box.reason, memory_bytes=memory)
    return Isolation(box.active, box.reason, seen.uid, seen.seccomp_filters, memory)
