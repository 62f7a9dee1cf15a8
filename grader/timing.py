"""The timing stage: how repetitions are run, and what the samples say.

`measure` is shared by the worker (timing a submission) and the grader (timing the library
baseline), so both are measured by the same rules: warm-up first, then one sample per call with
the L2 cache flushed before it, until the relative standard error of the mean reaches the target
or the time budget is spent. Every sample is kept.
"""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Callable


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
    for _ in range(policy.warmup_calls):
        sample_ms()
    samples: list[float] = []
    started = clock()
    while len(samples) < policy.max_calls:
        samples.append(sample_ms())
        n = len(samples)
        if n >= policy.min_calls and relative_standard_error(samples) <= policy.target_rse:
            break
        if clock() - started >= policy.budget_s and n >= policy.floor_calls:
            break
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
    after. Work left running on a stream the end event does not wait for is not timed: the worker's
    wall clock, checked against the samples (pipeline.implausible_timing), is what sees it."""
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


def harness_seconds(sample_ms: Callable[[], float], calls: int = 20) -> float:
    """Wall seconds one sample of `sample_ms` costs with nothing to time (a sampler made with a
    no-op launch): the flush, its hold, the events and the host's own overhead. The wall-clock check
    subtracts it per call, so only time spent in the work itself can count as unexplained."""
    sample_ms()  # the first call loads what later calls reuse
    started = time.perf_counter()
    for _ in range(calls):
        sample_ms()
    return (time.perf_counter() - started) / calls


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
