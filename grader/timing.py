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


def event_sampler(cp, flush_bytes: int, work: Callable[[], object]) -> Callable[[], float]:
    """One timed sample per call, for `measure`: the L2 cache flushed by writing `flush_bytes`, then
    `work` (which must wait for the device itself, so that the end event follows all its kernels)
    between two CUDA events. Milliseconds, as the events measure them."""
    flush = cp.cuda.alloc(flush_bytes)
    stream = cp.cuda.get_current_stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def sample_ms() -> float:
        # A byte memset through the CUDA runtime, never one of CuPy's kernels (they compile on a
        # machine's first run); on the events' stream, so the flush is done before the start event.
        cp.cuda.runtime.memsetAsync(flush.ptr, 0, flush_bytes, stream.ptr)
        start.record(stream)
        work()
        end.record(stream)
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
