"""Repetition rules and statistics, with a fake sampler and clock (no GPU)."""

from __future__ import annotations

import itertools
import statistics
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


CALIBRATION = timing.Calibration(worker_s=0.22e-3, request_s=0.05e-3, sample_s=0.23e-3, noise_ms=0.001)
"""A no-op sample on an H100 host: 0.22 ms by the worker's clock (flush, 0.2 ms hold, events,
synchronization), 0.23 ms by the grader's, and 0.05 ms for the request itself (the channel)."""


def samples(event_ms: float, end_to_end_ms: float, grader_ms: float | None = None, n: int = 50,
            jitter: float = 0.002, batch: int = 10) -> list[timing.Batch]:
    """Batches whose events, worker clock and grader clock (less the calibration) read as given."""
    grader_ms = end_to_end_ms if grader_ms is None else grader_ms
    wobble = [jitter * ((i * 7) % 5 - 2) / 2 for i in range(n)]
    batches = []
    for lo in range(0, n, batch):
        part = wobble[lo:lo + batch]
        grader_s = CALIBRATION.request_s + sum(CALIBRATION.sample_s + (grader_ms + w) / 1e3 for w in part)
        batches.append(timing.Batch(tuple(event_ms + w for w in part),
                                    tuple(CALIBRATION.worker_s + (end_to_end_ms + w) / 1e3 for w in part), grader_s))
    return batches


def test_a_kernel_whose_host_work_is_hidden_is_timed_by_its_events():
    counted = timing.attribute(samples(0.042, 0.0425), CALIBRATION)
    assert counted.sources.timed_by is timing.TimedBy.EVENTS and not counted.forged
    assert statistics.median(counted.samples_ms) == pytest.approx(0.042)


def test_host_work_in_solve_is_part_of_its_time():
    """A softmax calling cudaMalloc and cudaFree in every solve: its events saw 0.03 ms, solve took 0.509 ms
    end to end. That is its time (not IMPOSSIBLE_TIMING), and the report can say how much was host work."""
    counted = timing.attribute(samples(0.0299, 0.509), CALIBRATION)
    assert counted.sources.timed_by is timing.TimedBy.END_TO_END and not counted.forged
    assert statistics.median(counted.samples_ms) == pytest.approx(0.509)
    assert counted.sources.host_ms == pytest.approx(0.479, abs=1e-3)


def test_work_on_a_stream_the_events_miss_is_timed_end_to_end():
    counted = timing.attribute(samples(0.001, 2.0), CALIBRATION)  # events 0.001 ms: the side stream's
    assert counted.sources.timed_by is timing.TimedBy.END_TO_END and statistics.median(counted.samples_ms) == pytest.approx(2.0)


@pytest.mark.parametrize("claimed", [0.3, 0.6, 0.85, 0.95])
def test_a_forged_time_gains_at_most_ten_percent_and_the_slack(claimed):
    """The submission rewrites both of the worker's clocks to `claimed` of the truth (10 ms a call, as the
    grader's clock saw it): whatever it claims, the time counted is at least the grader's clock, less the
    slack, over 1.1."""
    counted = timing.attribute(samples(10 * claimed, 10 * claimed, grader_ms=10.0), CALIBRATION)
    assert statistics.median(counted.samples_ms) >= (10.0 - timing.GRADER_SLACK_MS) / timing.FORGERY_GAIN - 1e-9
    assert counted.forged is (claimed < timing.FORGED_SHARE)
    if claimed < 0.9:
        assert counted.sources.timed_by is timing.TimedBy.GRADER_CLOCK


def test_a_busy_channel_is_not_called_forgery():
    """The grader's clock 20% above the worker's (a loaded host slows the channel): the grader's clock
    counts, no verdict."""
    counted = timing.attribute(samples(10.0, 10.0, grader_ms=12.0), CALIBRATION)
    assert counted.sources.timed_by is timing.TimedBy.GRADER_CLOCK and not counted.forged


def test_a_small_honest_kernel_keeps_its_events_whatever_the_host_clocks_add():
    """Softmax level 4 at 8,388,608 on an H100: events 0.033 ms, the worker's clock 0.044, the grader's
    0.107 (host clocks cannot time a few microseconds closely): its time is its events'."""
    counted = timing.attribute(samples(0.0333, 0.0436, grader_ms=0.107), CALIBRATION)
    assert counted.sources.timed_by is timing.TimedBy.EVENTS and not counted.forged


def test_the_calibration_separates_the_request_from_the_samples():
    """Requests of one no-op sample take 0.28 ms, of 40 samples 9.25 ms: 0.23 ms a sample, 0.05 ms a request;
    the noise is the two medians' standard errors, spread over the 39 samples between them."""
    single = [0.26e-3, 0.27e-3, 0.29e-3, 0.30e-3] * 25
    batch = [9.23e-3, 9.24e-3, 9.26e-3, 9.27e-3] * 25
    cal = timing.Calibration.of([0.22e-3] * 4100, single, batch, 40)
    assert cal.sample_s == pytest.approx(0.23e-3, rel=1e-3) and cal.request_s == pytest.approx(0.05e-3, rel=1e-2)
    assert cal.worker_s == pytest.approx(0.22e-3)
    assert cal.noise_ms == pytest.approx(2e3 * 0.93 * (0.025e-3 / 10 + 0.025e-3 / 10) / 39, rel=0.1)
    one = timing.Batch((0.1,) * 40, (0.32e-3,) * 40, cal.request_s + 40 * (cal.sample_s + 0.1e-3))
    assert cal.grader_ms(one) == pytest.approx(0.1)


def test_samples_come_in_batches_of_the_time_asked():
    """One sample after the warm-up batch, then batches of about batch_s each (at most MAX_BATCH)."""
    clock = FakeClock()
    sizes = []

    def fetch(count):
        sizes.append(count)
        clock.now += count * 0.25e-3
        return [0.05 + 0.01 * (i % 7) for i in range(count)]

    got = timing.measure_batches(fetch, timing.TimingPolicy(budget_s=0.05), clock, batch_s=0.01)
    assert sizes[0] == timing.TimingPolicy.warmup_calls and sizes[1] == 1 and set(sizes[2:]) == {40}
    assert len(got) == sum(sizes[1:])


def test_faster_than_the_roofline_is_impossible():
    from grader.pipeline import implausible_timing
    stats = timing.summarize([0.001] * 10)
    text = implausible_timing(stats, flops=2 * 8192 * 6144 * 4096, peak_gflops=66908)
    assert text and "beyond 8× this GPU's FP32 peak" in text
    assert implausible_timing(timing.summarize([81.6] * 10), flops=2 * 8192 * 6144 * 4096, peak_gflops=66908) is None


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
    assert implausible_timing(honest, None, 66908, moved, 4100) is None
    cached = timing.summarize([0.02] * 10)  # 20 TB/s: the inputs never came from memory
    text = implausible_timing(cached, None, 66908, moved, 4100)
    assert text and "GB/s" in text and "4,100 GB/s this GPU's memory measured" in text
