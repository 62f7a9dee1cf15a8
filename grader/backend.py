"""What a backend is: the questions the pipeline asks of the GPU and of the CPU emulator alike.

Two implementations: `cuda_backend.CudaBackend` (nvcc, CuPy, CUDA events) and
`emulator.backend.EmulatorBackend` (g++ and fibers, correctness only). The pipeline, the cases, the
ladder and the command line depend on these protocols, not on either class; a timing backend (one
whose `measures_time` is true) also answers the questions of `TimingBackend`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from grader import build, run, timing
from grader.buffers import GuardedBuffer
from grader.sandbox import Sandbox
from grader.source import Source
from grader.spec import Challenge


@runtime_checkable
class Backend(Protocol):
    name: str
    measures_time: bool
    orders: tuple[str, ...]
    """The thread orders each case runs in: the emulator runs forward and reversed to expose races."""
    xp: Any
    """The array module the challenge's reference code gets (numpy, or CuPy on a GPU)."""
    sandbox: Sandbox | None

    def environment(self) -> Any:
        """What the report names: backend, GPU, driver, nvcc, peak (`cuda_backend.Environment`)."""

    def build(self, source: Source, challenge: Challenge, cache_dir: Path | None) -> build.BuildResult: ...

    def call_limit(self, challenge: Challenge, dims: dict[str, int], cache_dir: Path | None) -> run.CallLimit: ...

    def worker(self, built: build.BuildResult, challenge: Challenge) -> run.Worker: ...

    def buffer(self, name: str, shape: tuple[int, ...], dtype) -> GuardedBuffer: ...

    def synchronize(self) -> None: ...

    def free_memory(self) -> None: ...


@runtime_checkable
class TimingBackend(Backend, Protocol):
    """A backend that times: the GPU."""

    info: Any
    """The device (`device.DeviceInfo`): architecture, L2 size, FP32 peak."""

    @property
    def flush_bytes(self) -> int: ...

    def bandwidth_gbps(self) -> float: ...

    def time_baseline(self, challenge: Challenge, pristine: dict, policy: timing.TimingPolicy) -> list[float]: ...
