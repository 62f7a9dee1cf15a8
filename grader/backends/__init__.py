"""The backends: where a submission runs, and the questions the pipeline asks of each.

- `backends/cuda.py`: `CudaBackend`, on an NVIDIA GPU (nvcc, CuPy, CUDA events): correctness and timing.
- `backends/emulator.py`: `EmulatorBackend`, on the CPU (g++ and fibers): correctness only. Its
  translator, runtime and compatibility headers are the `grader.emulator` package.

`choose` picks one from `--backend` (auto: the GPU when usable, else the emulator). The pipeline, the
cases, the ladder and the command line depend on the protocols below, not on either class; a timing
backend (one whose `measures_time` is true) also answers the questions of `TimingBackend`.
"""

from __future__ import annotations

from typing import Callable

from grader.backends.base import (WORKER_BASE_BYTES, Backend, Environment, TimingBackend,
                                  worker_memory_bytes)
from grader.errors import BackendUnavailable
from grader.sandbox import Sandbox

__all__ = ["WORKER_BASE_BYTES", "Backend", "Environment", "TimingBackend", "choose", "worker_memory_bytes"]


def choose(name: str, nvcc: str | None, box: Sandbox | None = None,
           fell_back: Callable[[str], None] | None = None) -> Backend:
    """The backend `--backend` names. With "auto", the GPU when usable, else the emulator, and
    `fell_back` hears why the GPU was not (the front end says it: a student expecting timings must
    learn why there are none)."""
    from grader.backends.cuda import CudaBackend
    from grader.backends.emulator import EmulatorBackend

    if name == "emulator":
        return EmulatorBackend(nvcc, sandbox=box)
    try:
        return CudaBackend(nvcc, sandbox=box)
    except BackendUnavailable as error:
        if name == "cuda":
            raise
        if fell_back:
            fell_back(error.message)
        return EmulatorBackend(nvcc, sandbox=box)
