"""The timing stage: how repetitions are run, and what the samples say.

`measure` runs in the grader, for a submission's samples and the library baseline alike, so both are
measured by the same rules: warm-up first, then one sample per call with the L2 cache flushed before
it, until the relative standard error of the mean reaches the target or the time budget is spent.
Every sample is kept.

A submission's sample is taken by its worker (the submission's own process) one request at a time, and
the grader's clock times each request whole. What the worker says (its events' time, its own clock's
time) may be forged by the submission; the grader's clock may not. `attribute` decides which time a
sample counts: the events' (the GPU's work), or solve end to end where its host work costs more than
the events see (a cudaMalloc in every call, partial sums added on the host), and never less than the
grader's own clock allows, less 10%: a forged answer gains at most that.
"""

from __future__ import annotations

import enum
import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable, Sequence


@dataclass(frozen=True)
class TimingPolicy:
    budget_s: float
    target_rse: float = 0.005
    warmup_calls: int = 2
    min_calls: int = 10
    max_calls: int = 2000
    floor_calls: int = 3
    """Even past the budget, take at least this many samples."""


@dataclass(frozen=True)
class TimingStats:
    samples_ms: tuple[float, ...]
    median_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float
    q1_ms: float
    q3_ms: float
    rse: float
    """Relative standard error of the mean: stdev / sqrt(n) / mean."""

    @property
    def reps(self) -> int:
        return len(self.samples_ms)

    @property
    def spread_pct(self) -> float:
        """Interquartile range as a percentage of the median."""
        return 100.0 * (self.q3_ms - self.q1_ms) / self.median_ms if self.median_ms else 0.0


def relative_standard_error(samples: list[float]) -> float:
    if len(samples) < 2:
        return math.inf
    mean = statistics.fmean(samples)
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean if mean > 0 else math.inf


def measure(sample_ms: Callable[[], float], policy: TimingPolicy,
            clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Call `sample_ms` (one flushed, timed call; returns milliseconds) until the policy says stop."""
    return measure_batches(lambda count: [sample_ms() for _ in range(count)], policy, clock)


BATCH_S = 0.01
"""A submission's samples are asked for in batches of about this long (at most MAX_BATCH samples): the
grader's clock around a batch then carries the channel's cost once for many samples."""
MAX_BATCH = 64
MIN_BATCHES = 8
"""Batches taken at least (budget allowing) before the samples' precision may end the timing: the
grader's clock needs several to say how far its figure can stray (a few milliseconds in all for a small kernel)."""


def measure_batches(fetch: Callable[[int], list[float]], policy: TimingPolicy,
                    clock: Callable[[], float] = time.perf_counter, batch_s: float = 0.0) -> list[float]:
    """`measure`, taking the samples `fetch(count)` at a time: the warm-up in one batch, then one sample,
    then batches of about `batch_s` each (one sample at a time where it is 0), stopping by the policy's
    rules, checked after each batch; in batches, not before MIN_BATCHES of them on precision alone."""
    if policy.warmup_calls:
        fetch(policy.warmup_calls)
    samples: list[float] = []
    started, count, batches = clock(), 1, 0
    enough_batches = MIN_BATCHES if batch_s > 0 else 0
    while len(samples) < policy.max_calls:
        began = clock()
        got = fetch(count)
        per_call_s = (clock() - began) / len(got)
        samples += got
        n, batches = len(samples), batches + 1
        if n >= policy.min_calls and batches >= enough_batches and relative_standard_error(samples) <= policy.target_rse:
            break
        if clock() - started >= policy.budget_s and n >= policy.floor_calls:
            break
        fitting = round(batch_s / per_call_s) if per_call_s > 0 else MAX_BATCH
        count = max(1, min(fitting, MAX_BATCH, policy.max_calls - n))
    return samples


def event_sampler(cp, flush, launch: Callable[[], object],
                  finish: Callable[[], object] | None = None) -> Callable[[], float]:
    """One timed sample per call, for `measure`, in this order on the current stream: the L2 cache
    emptied by `flush` (an l2flush.L2Flush: a read, so the timed work never writes back the flush's
    lines, which then holds the stream until the work is queued behind it; one flush can serve several
    samplers), the start event, `launch()`
    (which queues the work and need not wait for it), the end event; then `finish()` (waiting for the
    device, and checking its errors) and the end event awaited. Milliseconds, as the events measure
    them: the work's kernels, without the host's launch latency before them or the synchronization
    after. Work left running on a stream the end event does not wait for is not in the events: the clocks
    around the whole sample (`attribute`) are what see it."""
    stream = cp.cuda.get_current_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def sample_ms() -> float:
        flush(stream)
        start.record(stream)
        launch()
        end.record(stream)
        if finish is not None:
            finish()
        end.synchronize()
        return cp.cuda.get_elapsed_time(start, end)

    return sample_ms


def summarize(samples_ms: list[float] | tuple[float, ...]) -> TimingStats:
    if not samples_ms:
        raise ValueError("no timing samples")
    ordered = sorted(samples_ms)
    if len(ordered) >= 2:
        q1, _, q3 = statistics.quantiles(ordered, n=4, method="inclusive")
    else:
        q1 = q3 = ordered[0]
    return TimingStats(tuple(samples_ms), statistics.median(ordered), statistics.fmean(ordered),
                       ordered[0], ordered[-1], q1, q3, relative_standard_error(list(samples_ms)))


def gflops(flops: float, ms: float) -> float:
    return flops / (ms * 1e-3) / 1e9


# --------------------------------------------------------------------------- which time a sample counts


FORGERY_GAIN = 1.10
"""A time is never taken below the grader's own clock, less GRADER_SLACK_MS, divided by this: what a
forged answer can gain."""
GRADER_SLACK_MS = 0.1
"""How far the grader's clock (less the calibration) may run ahead of an honest kernel's time a call:
the most measured was 0.074 ms (softmax level 4 at 8,388,608, an H100, 2026-11-25, docs/benchmarks.md),
where samples are a quarter of a millisecond and the kernel 0.033 ms. Host clocks cannot time a few
microseconds more closely than that: for a kernel of 0.1 ms a forgery can gain up to 2× (the rooflines
still bound it), for one of 10 ms 11%."""
HOST_WORK_SHARE = 0.25
"""Solve is timed end to end where its own clock exceeds the events' time by more than this share..."""
HOST_WORK_MIN_MS = 0.02
"""...and by more than this: the most the two differed for an honest kernel without host work was 31%
and 0.021 ms (docs/benchmarks.md); the host work this is for (a cudaMalloc in every call, partial sums
added on the host) costs a tenth of a millisecond and more."""
FORGED_SHARE = 0.5
"""A worker whose own clock reports less than this share of what the grader's clock saw is lying: the
submission rewrote its answers (IMPOSSIBLE_TIMING). Between that and the grader's clock less 10%, the
grader's clock is taken instead, without a verdict: a busy host can slow the channel that much."""


class TimedBy(enum.Enum):
    EVENTS = "events"
    """The GPU's events around the work: solve's host work hidden behind the stream's hold."""
    END_TO_END = "end to end"
    """The worker's clock around solve and the device's synchronization, less the harness's cost."""
    GRADER_CLOCK = "grader's clock"
    """The grader's clock around each request, less the channel's and the harness's cost."""


@dataclass(frozen=True)
class Batch:
    """Timed calls asked for in one request: each as the worker reported it, and the request whole as the
    grader's clock saw it."""

    events_ms: tuple[float, ...]
    worker_s: tuple[float, ...]
    """The worker's clock around each sample, from the flush's launch to the device synchronized after solve."""
    grader_s: float
    """The grader's clock, from the request sent to its answer read."""


@dataclass(frozen=True)
class Calibration:
    """What a sample costs with nothing to time, measured before the submission's library was loaded, so
    that nothing of it can have been forged: by the worker's clock (flush, hold, events, synchronization),
    and by the grader's as a fixed cost per request (the channel) plus a cost per sample."""

    worker_s: float
    request_s: float
    sample_s: float
    noise_ms: float
    """How far the grader's per-sample figure can stray: twice its standard error (0.93 × IQR / √n a median)."""

    @staticmethod
    def of(worker_s: Sequence[float], single_s: Sequence[float], batch_s: Sequence[float], batch: int) -> "Calibration":
        """From no-op requests of one sample (`single_s`) and of `batch` samples (`batch_s`), by the grader's
        clock, and every no-op sample's worker clock."""
        one, many = statistics.median(single_s), statistics.median(batch_s)
        sample_s = max((many - one) / (batch - 1), 0.0)
        spread_s = 0.93 * (_iqr(single_s) / math.sqrt(len(single_s)) + _iqr(batch_s) / math.sqrt(len(batch_s)))
        return Calibration(statistics.median(worker_s), max(one - sample_s, 0.0), sample_s,
                           2e3 * spread_s / (batch - 1))

    def grader_ms(self, batch: Batch) -> float:
        """The grader's clock's time a call of one batch, less what the request and the samples cost empty."""
        calls = len(batch.events_ms)
        return max(1e3 * ((batch.grader_s - self.request_s) / calls - self.sample_s), 0.0)


@dataclass(frozen=True)
class Sources:
    """What a report says of a timed case's clocks: which one counted, and each one's median a call."""

    timed_by: TimedBy
    events_ms: float
    end_to_end_ms: float
    grader_ms: float

    @property
    def host_ms(self) -> float:
        """What solve costs a call beyond the GPU work its events see."""
        return max(self.end_to_end_ms - self.events_ms, 0.0)


@dataclass(frozen=True)
class Attribution:
    samples_ms: tuple[float, ...]
    """The counted time of each sample."""
    sources: Sources
    forged: bool = False
    """The worker's clock claims far less than the grader's clock saw."""


def attribute(batches: Sequence[Batch], calibration: Calibration) -> Attribution:
    """Which time the samples count (see the module's docstring); `forged` where the worker's own clock
    is below FORGED_SHARE of the grader's."""
    events = [e for b in batches for e in b.events_ms]
    end_to_end = [max(1e3 * (w - calibration.worker_s), e) for b in batches for e, w in zip(b.events_ms, b.worker_s)]
    per_batch = [calibration.grader_ms(b) for b in batches]
    grader = [g for b, g in zip(batches, per_batch) for _ in b.events_ms]
    e_ms, w_ms, g_ms = (statistics.median(v) for v in (events, end_to_end, grader))
    timed_by, counted = TimedBy.EVENTS, events
    if w_ms > e_ms * (1 + HOST_WORK_SHARE) + HOST_WORK_MIN_MS:
        timed_by, counted = TimedBy.END_TO_END, end_to_end
    noise_ms = max(calibration.noise_ms, GRADER_SLACK_MS, _median_error(per_batch))
    allowed_ms = max(g_ms - noise_ms, 0.0)
    forged = w_ms < FORGED_SHARE * allowed_ms
    if statistics.median(counted) < allowed_ms / FORGERY_GAIN:
        timed_by, counted = TimedBy.GRADER_CLOCK, grader
    return Attribution(tuple(counted), Sources(timed_by, e_ms, w_ms, g_ms), forged)


def _median_error(values: Sequence[float]) -> float:
    """Twice the standard error of the median of `values` (0 below four of them: too few to say)."""
    return 2 * 0.93 * _iqr(values) / math.sqrt(len(values)) if len(values) >= 4 else 0.0


def _iqr(values: Sequence[float]) -> float:
    if len(values) < 2:
        return 0.0
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q3 - q1
