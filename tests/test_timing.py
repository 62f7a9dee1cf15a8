"""Repetition rules and statistics, with a fake sampler and clock (no GPU)."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest

from grader import l2flush, timing


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def sampler(values, clock: FakeClock, cost_s: float):
    stream = itertools.cycle(values)
    calls = []

    def sample() -> float:
        clock.now += cost_s
        calls.append(1)
        return next(stream)

    return sample, calls


def test_stops_as_soon_as_the_error_is_small():
    clock = FakeClock()
    sample, calls = sampler([10.0, 10.01], clock, 0.01)
    samples = timing.measure(sample, timing.TimingPolicy(budget_s=100), clock)
    assert len(samples) == timing.TimingPolicy.min_calls
    assert len(calls) == len(samples) + timing.TimingPolicy.warmup_calls


def test_noisy_samples_run_until_the_budget():
    clock = FakeClock()
    sample, _ = sampler([1.0, 3.0, 0.5, 5.0], clock, 0.1)
    samples = timing.measure(sample, timing.TimingPolicy(budget_s=2.0), clock)
    assert 15 <= len(samples) <= 25  # about budget / cost, far from max_calls
    assert timing.relative_standard_error(samples) > 0.005


def test_slow_calls_still_give_the_floor_of_samples():
    clock = FakeClock()
    sample, _ = sampler([900.0, 1100.0], clock, 5.0)
    samples = timing.measure(sample, timing.TimingPolicy(budget_s=1.0), clock)
    assert len(samples) == timing.TimingPolicy.floor_calls


def test_max_calls_bounds_the_loop():
    clock = FakeClock()
    sample, _ = sampler([1.0, 2.0], clock, 0.0)
    samples = timing.measure(sample, timing.TimingPolicy(budget_s=1.0, max_calls=50), clock)
    assert len(samples) == 50


def test_summary_statistics():
    stats = timing.summarize([4.0, 1.0, 3.0, 2.0, 5.0])
    assert stats.median_ms == 3.0 and stats.min_ms == 1.0 and stats.max_ms == 5.0
    assert stats.q1_ms == 2.0 and stats.q3_ms == 4.0
    assert stats.spread_pct == pytest.approx(100 * 2 / 3)
    assert stats.samples_ms == (4.0, 1.0, 3.0, 2.0, 5.0), "samples kept in call order"
    assert stats.rse == pytest.approx(timing.relative_standard_error([1, 2, 3, 4, 5]))


def test_gflops():
    assert timing.gflops(2 * 4096**3, 2.683) == pytest.approx(51_225, rel=1e-3)


def test_summarize_rejects_no_samples():
    with pytest.raises(ValueError):
        timing.summarize([])


def test_honest_timings_pass_the_cross_checks():
    from grader.pipeline import implausible_timing
    stats = timing.summarize([81.6] * 10)
    assert implausible_timing(stats, wall_s=12 * 0.0818, warmup_calls=2, flops=2 * 8192 * 6144 * 4096,
                              peak_gflops=66908) is None
    small = timing.summarize([0.02] * 10)  # overheads dominate the wall clock: no verdict from it
    assert implausible_timing(small, wall_s=12 * 0.0004, warmup_calls=2, flops=2e6, peak_gflops=66908) is None


def test_the_harness_cost_per_call_is_not_unexplained_time():
    """Reduction's level 8 on an H200: 0.042 ms a call, 2,000 calls (its samples never settled), each
    costing the harness 0.46 ms of wall time with nothing to time. Without the harness's cost, 0.9 s
    looked hidden and the level was rejected; with it, it is honest. Work hidden on another stream
    (0.5 ms a call beyond the harness) is still caught."""
    from grader.pipeline import implausible_timing
    stats = timing.summarize([0.042] * 1998)
    honest_wall = 2000 * (0.042e-3 + 0.47e-3)
    assert implausible_timing(stats, honest_wall, 2, None, None, 4.0 * 2**25, 4286, harness_s=0.46e-3) is None
    hidden_wall = 2000 * (0.042e-3 + 0.46e-3 + 0.5e-3)
    text = implausible_timing(stats, hidden_wall, 2, None, None, 4.0 * 2**25, 4286, harness_s=0.46e-3)
    assert text and "grader's own clock" in text and "0.46 ms its flush and events cost" in text


def test_faster_than_the_roofline_is_impossible():
    from grader.pipeline import implausible_timing
    stats = timing.summarize([0.001] * 10)
    text = implausible_timing(stats, wall_s=0.01, warmup_calls=2, flops=2 * 8192 * 6144 * 4096, peak_gflops=66908)
    assert text and "beyond 8× this GPU's FP32 peak" in text


def test_under_reported_time_disagrees_with_the_wall_clock():
    from grader.pipeline import implausible_timing
    stats = timing.summarize([5.0] * 10)  # claims 5 ms; the grader waited 80 ms per call
    text = implausible_timing(stats, wall_s=12 * 0.080, warmup_calls=2, flops=2 * 4096**3, peak_gflops=66908)
    assert text and "grader's own clock" in text


def test_event_sampler_flushes_then_times_only_the_work():
    """The one timed-sample rule the worker, the cuBLAS baseline and the copy bandwidth share: the
    flush is the grader's PTX read kernel, launched on the events' stream before the start event, and
    loaded through the driver (CuPy's own kernels would compile with NVRTC on a fresh machine)."""
    calls = []

    class Event:
        def __init__(self, name):
            self.name = name

        def record(self, stream=None):
            calls.append(f"record {self.name} on {stream.ptr}")

        def synchronize(self):
            calls.append(f"synchronize {self.name}")

    class Allocation:
        ptr = 0xF1000

    class Stream:
        ptr = 7

    class Module:
        def load(self, image):
            assert image.endswith(b"\0") and b".entry grader_l2_flush" in image and b"%globaltimer" in image
            calls.append("load ptx")

        def get_function(self, name):
            def launch(grid, block, args, stream=None):
                calls.append(f"flush {grid} {block} {[int(a) for a in args]} on {stream.ptr}")
            return launch

    class FakeCupy:
        class cuda:
            class runtime:
                @staticmethod
                def memset(ptr, value, size):
                    calls.append(f"zero {ptr:#x} {size}")

            class function:
                pass

    def alloc(size):
        calls.append(f"alloc {size}")
        return Allocation()

    cp = FakeCupy()
    events = iter([Event("start"), Event("end")])
    cp.cuda.alloc = alloc
    cp.cuda.function.Module = Module
    cp.cuda.get_current_stream = Stream
    cp.cuda.Event = lambda: next(events)
    cp.cuda.get_elapsed_time = lambda start, end: 1.25
    sample = timing.event_sampler(cp, l2flush.L2Flush(cp, 1024), lambda: calls.append("launch"),
                                  lambda: calls.append("wait"))
    assert calls == ["alloc 1040", "zero 0xf1000 1040", "load ptx"]
    calls.clear()
    assert sample() == 1.25
    # the flush holds the stream (200 µs) while the host queues the work; the device is awaited only
    # after the end event is queued, so neither the launch latency nor the synchronization is timed
    assert calls == [f"flush (1024,) (256,) [{0xF1000}, 64, {0xF1000 + 1024}, 200000] on 7", "record start on 7",
                     "launch", "record end on 7", "wait", "synchronize end"]


@pytest.mark.nvcc
def test_the_flush_kernel_is_valid_ptx(tmp_path):
    """The PTX assembles for Turing and for the H100/H200 (it is PTX 7.0 for sm_70: any GPU since Volta)."""
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not Path(ptxas).exists():
        pytest.skip("ptxas not found")
    source = tmp_path / "flush.ptx"
    source.write_text(l2flush.PTX)
    for arch in ("sm_75", "sm_90"):  # the oldest target CUDA 13's ptxas still knows, and Hopper
        done = subprocess.run([ptxas, f"-arch={arch}", str(source), "-o", str(tmp_path / f"{arch}.cubin")],
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_moving_bytes_faster_than_the_memory_is_impossible():
    """A memory-bound challenge's roofline: bytes over the measured copy bandwidth (caches flushed)."""
    from grader.pipeline import implausible_timing
    moved = 12 * 2**25  # vector add of 2^25 floats: 402 MB
    honest = timing.summarize([0.11] * 10)  # 3.7 TB/s on a 4.1 TB/s GPU
    assert implausible_timing(honest, 12 * 0.00011, 2, None, 66908, moved, 4100) is None
    cached = timing.summarize([0.02] * 10)  # 20 TB/s: the inputs never came from memory
    text = implausible_timing(cached, 12 * 0.00002, 2, None, 66908, moved, 4100)
    assert text and "GB/s" in text and "4,100 GB/s this GPU's memory measured" in text
