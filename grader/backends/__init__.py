"""The backends: where a submission runs, and the questions the pipeline asks of each.

- `backends/cuda.py`: `CudaBackend`, on an NVIDIA GPU (nvcc, CuPy, CUDA events): correctness and timing.
- `backends/emulator.py`: `EmulatorBackend`, on the CPU (g++ and fibers): correctness only. Its
  translator, runtime and compatibility headers are the `grader.emulator` package.

`resolve` says what `--backend` means on this machine (auto: the GPU when usable, else the emulator)
and `choose` makes that backend; the class server resolves once for all its grading processes, with
the same function, so a server and a local `submit` cannot read auto differently. The pipeline, the
cases, the ladder and the command line depend on the protocols below, not on either class; a timing
backend (one whose `measures_time` is true) also answers the questions of `TimingBackend`.
"""

from __future__ import annotations

from typing import Callable

from grader.backends.base import (WORKER_BASE_BYTES, Backend, Environment, TimingBackend,
                                  worker_memory_bytes)
from grader.errors import BackendUnavailable
from grader.sandbox import Sandbox

__all__ = ["WORKER_BASE_BYTES", "Backend", "Environment", "TimingBackend", "choose", "resolve",
           "worker_memory_bytes"]


def resolve(name: str, nvcc: str | None, fell_back: Callable[[str], None] | None = None) -> str:
    """What `--backend NAME` means here: "cuda" or "emulator". auto is "cuda" when the GPU backend can
    start (a usable GPU, CuPy, nvcc: what `CudaBackend` needs), else "emulator", and `fell_back` hears
    why the GPU cannot be used (the front end says it: a student expecting timings must learn why there
    are none)."""
    if name != "auto":
        return name
    from grader import build, device

    try:
        gpu = device.query()
        build.toolchain(gpu.major, gpu.minor, nvcc)
    except BackendUnavailable as error:
        if fell_back:
            fell_back(error.message)
        return "emulator"
    return "cuda"


def choose(name: str, nvcc: str | None, box: Sandbox | None = None,
           fell_back: Callable[[str], None] | None = None) -> Backend:
    """The backend `--backend` names, as `resolve` reads it (`fell_back` hears why auto is not the GPU)."""
    from grader.backends.cuda import CudaBackend
    from grader.backends.emulator import EmulatorBackend

    if resolve(name, nvcc, fell_back) == "emulator":
        return EmulatorBackend(nvcc, sandbox=box)
    return CudaBackend(nvcc, sandbox=box)
