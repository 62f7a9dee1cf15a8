"""The CUDA backend: nvcc builds, CuPy buffers and FP64 references, CUDA events for timing.

The grader's own GPU work is plain copies, byte fills and cuBLAS calls. CuPy compiles each elementwise
or reduction kernel (astype, abs, comparisons, sums…) with NVRTC the first time a machine uses it,
which cost a fresh machine half a minute; the library calls and copies are compiled ahead of time.
"""

from __future__ import annotations

import ctypes
import dataclasses
from pathlib import Path

import numpy as np

from grader import build, check, device, run, spec, timing
from grader import sandbox as sandboxes
from grader.backends.base import Environment, worker_memory_bytes
from grader.l2flush import L2Flush
from grader.libraries import LibraryPolicy
from grader.buffers import DeviceBuffer, host_empty
from grader.emulator.translate import lint
from grader.results import JobLimit
from grader.source import Source
from grader.spec import Challenge, Origin


class CudaBackend:
    name = "cuda"
    measures_time = True
    orders = ("forward",)
    parity_order = "forward"
    """A GPU schedules threads itself: each case runs once."""

    def __init__(self, nvcc: str | None = None, ordinal: int = 0, sandbox=None):
        self.sandbox = sandbox
        self.info = device.query(ordinal)
        import cupy
        self.cp = cupy
        self.xp = cupy
        self.toolchain = build.toolchain(self.info.major, self.info.minor, nvcc)
        self._bandwidth_gbps: float | None = None

    def bandwidth_gbps(self) -> float:
        """This GPU's memory bandwidth as a device-to-device copy moves it (read and write counted),
        measured once per backend: the ceiling memory-bound metrics are shown against."""
        if self._bandwidth_gbps is None:
            self._bandwidth_gbps = measure_copy_bandwidth(self.cp, flush_bytes=self.flush_bytes)
        return self._bandwidth_gbps

    @property
    def flush_bytes(self) -> int:
        """Reading twice the L2 size before each timed call leaves none of the inputs cached."""
        return max(2 * self.info.l2_bytes, 64 << 20)

    def environment(self) -> Environment:
        return Environment(self.name, self.info.name, self.info.compute_capability, self.info.driver,
                           self.toolchain.version, self.info.fp32_peak_gflops, self.cp.__version__)

    def build(self, source: Source, challenge: Challenge, cache_dir: Path | None,
              libraries: LibraryPolicy = LibraryPolicy.NONE) -> build.BuildResult:
        built = build.build(build.BuildRequest(source, challenge.prototype(), challenge.entry, self.toolchain,
                                               cache_dir, challenge.limits.compile_s, self.sandbox,
                                               libraries=libraries))
        if built.status is not build.BuildStatus.OK:
            return built
        # Legacy warp-synchronous code passes here as a rule, yet is a race by CUDA's rules since Volta
        # (the emulator's verdict for it is RACE): the report says so on the GPU too.
        warned = tuple(f"{source.display_path}:{w.line}: {w.message}" for w in lint(source.text))
        return dataclasses.replace(built, notes=built.notes + warned) if warned else built

    def call_limit(self, challenge: Challenge, dims: dict, cache_dir: Path | None) -> run.CallLimit:
        return run.CallLimit(challenge.limits.case_s,
                             f"the challenge's limit for one call on a GPU ({_where(challenge, 'case_s')})")

    def untimed_checks(self, challenge: Challenge) -> tuple[int, ...]:
        return ()  # every timed shape is checked where it is timed

    def too_large(self, challenge: Challenge, shape) -> str | None:
        return None  # a case that does not fit the GPU's memory is the submission's MEMORY_LIMIT or the grader's note

    def job_limit(self, challenge: Challenge, cases, cache_dir: Path | None) -> JobLimit:
        return JobLimit(challenge.limits.job_s,
                        f"the challenge's bound on a whole job on a GPU ({_where(challenge, 'job_s')})")

    def worker(self, built: build.BuildResult, challenge: Challenge) -> run.Worker:
        box = sandboxes.with_memory(sandboxes.given(self.sandbox), worker_memory_bytes(challenge, self.name))
        return run.python_worker(built.artifact, challenge.entry, box, flush_bytes=self.flush_bytes)

    def buffer_memory(self) -> tuple[int, str] | None:
        return self.info.memory_bytes, f"this GPU ({self.info.name})"  # the buffers are device memory

    def buffer(self, name, shape, dtype) -> DeviceBuffer:
        return DeviceBuffer(self.cp, name, shape, dtype)

    def synchronize(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def free_memory(self) -> None:
        self.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()

    def time_baseline(self, challenge: Challenge, pristine: dict, policy: timing.TimingPolicy) -> list[float]:
        """The challenge's library baseline (cuBLAS for matmul) on device copies of the host inputs (the
        scalar parameters as they are), timed by the submission's rules."""
        cp = self.cp
        inputs = {name: upload(value, cp) if isinstance(value, np.ndarray) else value for name, value in pristine.items()}

        def call() -> None:
            challenge.reference.baseline(inputs, cp)

        sampler = timing.event_sampler(cp, L2Flush(cp, self.flush_bytes), call, cp.cuda.runtime.deviceSynchronize)
        return timing.measure(sampler, policy)


COPY_BYTES = 1 << 30
COPY_REPEATS = 7


def measure_copy_bandwidth(cp, nbytes: int = COPY_BYTES, flush_bytes: int = 64 << 20) -> float:
    """GB/s of a device-to-device copy of `nbytes` (1 GiB, or an eighth of the free memory if that is
    less), read plus write, median of COPY_REPEATS copies after one warm-up, each timed by the same
    sampler as a submission (L2 emptied first, CUDA events). A copy and the flush's PTX kernel:
    nothing is compiled by NVRTC."""
    nbytes = min(nbytes, cp.cuda.runtime.memGetInfo()[0] // 8) // 256 * 256
    source, target = cp.cuda.Memory(nbytes), cp.cuda.Memory(nbytes)
    cp.cuda.runtime.memset(source.ptr, 0x5A, nbytes)
    stream = cp.cuda.get_current_stream()

    def copy() -> None:
        cp.cuda.runtime.memcpyAsync(target.ptr, source.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, stream.ptr)

    sample = timing.event_sampler(cp, L2Flush(cp, flush_bytes), copy)
    samples = [sample() for _ in range(COPY_REPEATS + 1)]
    median_ms = sorted(samples[1:])[len(samples[1:]) // 2]
    return 2 * nbytes / (median_ms * 1e6)


# --------------------------------------------------------------------------- FP64 on the GPU, no kernel compiled

FP64_BLOCK_ELEMENTS = 1 << 20
"""Elements converted to float64 on the host per upload (8 MB): a whole float64 copy of a large input
never exists on the host, and each block is still written while it sits in cache."""


def upload(host: np.ndarray, cp):
    """A device copy of a host array, by one cudaMemcpy (bfloat16 travels as uint16: CuPy has no bfloat16)."""
    array = np.ascontiguousarray(host)
    if array.dtype == spec.BFLOAT16:
        array = array.view(np.uint16)
    device = cp.ndarray(array.shape, array.dtype)
    if array.nbytes:
        device.data.copy_from_host(ctypes.c_void_p(array.ctypes.data), array.nbytes)
    return device


def download(device, cp) -> np.ndarray:
    """A host copy of a C-contiguous device array (a large one in pinned memory), by one cudaMemcpy,
    which waits for the default stream."""
    host = host_empty(cp, device.nbytes)
    if host.nbytes:
        device.data.copy_to_host(ctypes.c_void_p(host.ctypes.data), host.nbytes)
    return host.view(device.dtype).reshape(device.shape)


def to_device_float64(host: np.ndarray, cp, absolute: bool = False):
    """`host` (|host| with `absolute`) as a float64 device array: converted on the host, on threads,
    each through a block of its own (pinned when large), and copied up."""
    flat = np.ascontiguousarray(host).reshape(-1)
    device = cp.ndarray(host.shape, np.float64)

    def convert(lo: int, hi: int) -> None:
        block = host_empty(cp, min(hi - lo, FP64_BLOCK_ELEMENTS) * 8).view(np.float64)
        for start in range(lo, hi, FP64_BLOCK_ELEMENTS):
            part = block[:min(FP64_BLOCK_ELEMENTS, hi - start)]
            if absolute:
                np.absolute(flat[start:start + part.size], out=part)
            else:
                part[...] = flat[start:start + part.size]
            # cudaMemcpy returns once it has read the block (from pinned memory, once it is done)
            (device.data + start * 8).copy_from_host(ctypes.c_void_p(part.ctypes.data), part.nbytes)

    check.map_chunks(convert, flat.size, FP64_BLOCK_ELEMENTS)
    return device


def matmul64(a: np.ndarray, b: np.ndarray, cp, absolute: bool = False) -> np.ndarray:
    """A·B (|A|·|B| with `absolute`) in FP64 for 2-D host arrays, by one cuBLAS DGEMM; the product on
    the host. Not `cupy.matmul`: for a 1×1 product it runs a reduction kernel that CuPy compiles."""
    (m, n), (inner, k) = a.shape, b.shape
    if n != inner:
        raise ValueError(f"cannot multiply {a.shape} by {b.shape}")
    if 0 in (m, n, k):
        return np.zeros((m, k))
    a64, b64 = to_device_float64(a, cp, absolute), to_device_float64(b, cp, absolute)
    c64 = cp.ndarray((m, k), np.float64)
    _dgemm(cp, a64, b64, c64)
    cp.cuda.runtime.deviceSynchronize()
    return download(c64, cp)


def _dgemm(cp, a, b, c) -> None:
    """Row-major C = A·B for cuBLAS, which is column-major: each array read column-major is its own
    transpose, and Cᵀ = Bᵀ·Aᵀ, so B goes first and nothing is transposed."""
    cublas = cp.cuda.cublas
    (m, n), k = a.shape, b.shape[1]
    one, zero = np.ones(1), np.zeros(1)
    handle = cp.cuda.get_cublas_handle()
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)  # alpha and beta are host scalars
    cublas.dgemm(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, k, m, n, one.ctypes.data, b.data.ptr, k,
                 a.data.ptr, n, zero.ctypes.data, c.data.ptr, k)


def _where(challenge: Challenge, limit: str) -> str:
    """Where a limit comes from: the challenge's own file, or the grader (LeetGPU's files state none)."""
    if challenge.origin is Origin.LEETGPU:
        return f"the grader's {limit} for LeetGPU's challenges, whose files state no limits"
    return f"limits.{limit} in its challenge.yaml"
