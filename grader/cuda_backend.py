"""The CUDA backend: nvcc builds, CuPy buffers and FP64 references, CUDA events for timing."""

from __future__ import annotations

from dataclasses import dataclass

from pathlib import Path

from grader import build, device, run, timing
from grader.buffers import DeviceBuffer
from grader.spec import Challenge


@dataclass(frozen=True)
class Environment:
    backend: str
    gpu: str | None
    compute_capability: str | None
    driver: str | None
    nvcc: str | None
    fp32_peak_gflops: float | None
    cupy: str | None


class CudaBackend:
    name = "cuda"
    measures_time = True
    orders = ("forward",)
    """A GPU schedules threads itself: each case runs once."""

    def __init__(self, nvcc: str | None = None, ordinal: int = 0, sandbox=None):
        self.sandbox = sandbox
        self.info = device.query(ordinal)
        import cupy
        self.cp = cupy
        self.xp = cupy
        self.toolchain = build.toolchain(self.info.major, self.info.minor, nvcc)

    @property
    def flush_bytes(self) -> int:
        """Writing twice the L2 size before each timed call leaves none of the inputs cached."""
        return max(2 * self.info.l2_bytes, 64 << 20)

    def environment(self) -> Environment:
        return Environment(self.name, self.info.name, self.info.compute_capability, self.info.driver,
                           self.toolchain.version, self.info.fp32_peak_gflops, self.cp.__version__)

    def build(self, source: Path, display_path: str, challenge: Challenge, cache_dir: Path | None) -> build.BuildResult:
        return build.build(build.BuildRequest(source, display_path, challenge.prototype(), challenge.entry,
                                              self.toolchain, cache_dir, challenge.limits.compile_s))

    def worker(self, built: build.BuildResult, challenge: Challenge) -> run.Worker:
        return run.python_worker(built.artifact, challenge.entry, self.sandbox)

    def buffer(self, name, shape, dtype) -> DeviceBuffer:
        return DeviceBuffer(self.cp, name, shape, dtype)

    def synchronize(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def free_memory(self) -> None:
        self.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()

    def time_baseline(self, challenge: Challenge, pristine: dict, policy: timing.TimingPolicy) -> list[float]:
        """The challenge's library baseline (cuBLAS for matmul), timed by the submission's rules."""
        cp = self.cp

        def call() -> None:
            challenge.reference.baseline(pristine, cp)
            cp.cuda.runtime.deviceSynchronize()

        return timing.measure(timing.event_sampler(cp, self.flush_bytes, call), policy)
