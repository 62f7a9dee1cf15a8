"""What every backend is, and what the pipeline asks of it: the protocols, the environment a report
names, a worker's memory bound. `grader.backends` re-exports these; the backends import them from here,
so the package's `choose` can import the backends without a cycle."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

from grader import build, run, timing
from grader.buffers import GuardedBuffer
from grader.libraries import LibraryPolicy
from grader.results import JobLimit
from grader.sandbox import Sandbox
from grader.source import Source
from grader.spec import Challenge


@dataclass(frozen=True)
class Environment:
    """What a report names of where it ran; the emulator leaves the GPU's fields empty."""

    backend: str
    gpu: str | None
    compute_capability: str | None
    driver: str | None
    nvcc: str | None
    fp32_peak_gflops: float | None
    cupy: str | None


@runtime_checkable
class Backend(Protocol):
    name: str
    measures_time: bool
    orders: tuple[str, ...]
    """The thread orders each case runs in: the emulator runs forward and reversed to expose races."""
    parity_order: str
    """The one order an official challenge's own case runs in, as LeetGPU's judge runs it on a GPU."""
    xp: Any
    """The array module the challenge's reference code gets (numpy, or CuPy on a GPU)."""
    sandbox: Sandbox | None

    def environment(self) -> Environment:
        """What the report names: backend, GPU, driver, nvcc, peak."""

    def build(self, source: Source, challenge: Challenge, cache_dir: Path | None,
              libraries: LibraryPolicy = LibraryPolicy.NONE) -> build.BuildResult:
        """The submission compiled for this backend, under the library policy (grader.libraries)."""

    def call_limit(self, challenge: Challenge, dims: dict[str, int], cache_dir: Path | None) -> run.CallLimit: ...

    def job_limit(self, challenge: Challenge, cases: Sequence[dict[str, int]], cache_dir: Path | None) -> JobLimit:
        """How long the whole job may take (the compile and every call, correctness and timing), given the
        dimensions of the cases it checks for correctness, each run once per thread order: the challenge's
        `limits.job_s` on a GPU, more where a call may take longer than a GPU's (`call_limit`)."""

    def untimed_checks(self, challenge: Challenge) -> tuple[int, ...]:
        """Indices of the challenge's timed shapes whose answers a submit checks without timing them:
        none where the backend times (it checks every timed shape while timing it); in emulation, those
        it can afford."""

    def too_large(self, challenge: Challenge, shape) -> str | None:
        """Why a case whose data is given (an official challenge's) is not run here, or None: in emulation,
        one with more work than the emulator affords; a GPU runs every one."""

    def buffer_memory(self) -> tuple[int, str] | None:
        """The memory a case's buffers live in, as (bytes, where), `where` as a person reads it ("this GPU
        (NVIDIA H100)", "this machine's memory"); None when it is not known. The front ends check a
        challenge's shapes against it (`spec.check_fits`) before grading."""

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


WORKER_BASE_BYTES = {"cuda": 6 << 30, "emulator": 2 << 30}
"""A worker's host memory before the submission allocates anything of its own: the CUDA worker is a
Python process holding CuPy and a CUDA context; the emulator's is its runtime, fiber stacks and threads."""


def worker_memory_bytes(challenge: Challenge, backend: str) -> int:
    """The memory bound of one worker's box: its base, plus twice the largest case's buffers (room for
    a submission's host copy of its inputs and a scratch output; in emulation the buffers themselves
    are shared memory the grader made, charged to the grader)."""
    def case_bytes(dims: dict[str, int]) -> int:
        total = 0
        for param in challenge.params:
            if param.ctype.pointer:
                count = 1
                for extent in param.extent(dims):
                    count *= extent
                total += count * param.ctype.dtype.itemsize
        return total

    largest = max((case_bytes(shape.dims) for shape in (*challenge.functional, *challenge.performance)), default=0)
    return WORKER_BASE_BYTES[backend] + 2 * largest
