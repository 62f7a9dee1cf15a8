#!/usr/bin/env python3
"""Measured evidence for the matmul grader's tolerance rule.

The matmul challenge (A is M×N, B is N×K, C is M×K, float32, row-major, N the INNER dimension)
accepts a result C against the FP64 reference R = A @ B when BOTH

    scaled max error   max |C - R| / S  <= 1.5e-6,   S = |A| @ |B| in float64
    relative Frobenius ||C - R||_F / ||R||_F <= 5e-5

hold (a cell with S == 0 counts as error 0 when C == R there, else inf).

The rule is only fair if every honest FP32 summation order passes it with margin at every shape
the challenge can use, while results computed with reduced-precision inputs (TF32, FP16, BF16)
fail it. This script measures exactly that on the GPU: for each shape it draws fresh inputs
uniform in [-1, 1) (zero-mean, like challenges/matmul/reference.py), computes R and S in float64
with cuBLAS, computes C with several FP32 methods (cuBLAS, sequential ascending / descending,
no-FMA, split-K, emulated 3xTF32) and several reduced-precision ones (TF32, FP16, BF16 inputs with
FP32 accumulation), and prints both metrics, PASS/FAIL under the rule, and the margins.

Usage:  python3 bench/tolerance_margins.py [--quick] [--json OUT.json] [--seed 1]

Needs CuPy (cupy-cuda13x), numpy and an NVIDIA GPU. The rounding helpers and `metrics` also work
on numpy arrays so they can be checked without a GPU.

Time estimate for the default run on one H200 (the listed shapes total ~10.7e12 flop per method,
almost all of it in the 8192×65536×8192 shape):
  - FP64 reference and scale (cuBLAS DGEMM, ~50 TFLOP/s): 2 × 10.7e12 flop   ->  ~0.5 s
  - 7 float32 cuBLAS GEMMs per shape (~40 TFLOP/s):       7 × 10.7e12 flop   ->  ~2 s
  - 3 naive sequential kernels + split-K (>= ~2 TFLOP/s): 4 × 10.7e12 flop   ->  ~20 s
  - input generation, rounding, metrics, CPU reference check, NVRTC compile  ->  ~20 s
so about a minute, well under the 8-minute limit. A guard still skips the sequential kernels at a
large shape when the elapsed time plus their projected time would pass SEQ_BUDGET_S (6 minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

try:
    import cupy as cp
except ImportError:  # the pure-numpy helpers stay usable without CuPy
    cp = None

Array = Any  # a numpy.ndarray or cupy.ndarray
Shape = tuple[int, int, int]  # (M, N, K), N the inner dimension

SCALED_MAX_LIMIT = 1.5e-6
REL_FROB_LIMIT = 5e-5

FULL_SHAPES: list[Shape] = [
    (1, 1, 1), (2, 3, 2), (3, 5, 7), (1, 257, 1), (257, 1, 129), (127, 129, 257),
    (129, 127, 1), (1, 1000, 1023), (1023, 1000, 1), (33, 65, 17), (64, 64, 64),
    (65, 63, 66), (256, 256, 255), (4097, 3, 5), (5, 3, 4099), (17, 4096, 19),
    (2, 65536, 3), (512, 16, 512), (1000, 1000, 1000), (64, 65536, 64),
    (1024, 65536, 1024), (4095, 4097, 4093), (4096, 4096, 4096), (8192, 6144, 4096),
    (8192, 8192, 8192),
    (8192, 65536, 8192),  # 2 GiB per float32 input, 4 GiB per float64 copy
]
QUICK_MAX_MNK = 2**31
QUICK_EXTRA: Shape = (8192, 6144, 4096)  # the leetgpu performance shape

# Time guard for the naive sequential kernels (asc, desc, nofma): before running them at a shape
# of at least SEQ_GUARD_MIN_FLOPS, project their time from the throughput measured so far (or
# SEQ_RATE_GUESS before any measurement) and skip them if the run would pass SEQ_BUDGET_S.
# (No listed shape exceeds 2e13 flop -- the largest is 8.8e12 -- so the floor is 1e12, which
# makes the guard apply to the two largest shapes.)
SEQ_RATE_GUESS = 4e12  # flop/s
SEQ_BUDGET_S = 360.0
SEQ_GUARD_MIN_FLOPS = 1e12
SEQ_RATE_MIN_SAMPLE_FLOPS = 1e10  # shapes smaller than this do not update the measured rate

SPLITK_CHUNK = 256
SPLITK_BUFFER_BYTES = 2**31  # cap on the [chunks, M, K] float32 partial buffer (per pass)

REF_CHECK_MAX_MNK = 2**30  # shapes up to this size also get R and S recomputed by numpy on CPU
REF_CHECK_WARN = 1e-12

BLOCK = 16


# --------------------------------------------------------------------------------------------
# Array-module helpers and reduced-precision rounding (numpy or cupy)


def array_module(x: Array) -> Any:
    """numpy or cupy, whichever owns x."""
    if cp is not None:
        return cp.get_array_module(x)
    return np


def _as_f32(x: Array) -> Array:
    xp = array_module(x)
    return xp.ascontiguousarray(x, dtype=xp.float32)


def tf32_round(x: Array) -> Array:
    """Round float32 values to TF32 (10 explicit mantissa bits), ties away from zero.

    Adds half an ULP of TF32 (0x1000) to the bit pattern and clears the low 13 bits. Intended for
    finite inputs well inside the float32 range (ours are in [-1, 1)); NaN and values within one
    TF32 ULP of FLT_MAX are not handled.
    """
    xp = array_module(x)
    bits = _as_f32(x).view(xp.uint32) + xp.uint32(0x1000)
    bits &= xp.uint32(0xFFFFE000)
    return bits.view(xp.float32)


def tf32_split(x: Array) -> tuple[Array, Array]:
    """hi = tf32(x), lo = tf32(x - hi); x - hi is exact in float32, hi + lo ≈ x to ~2^-22."""
    x = _as_f32(x)
    hi = tf32_round(x)
    lo = tf32_round(x - hi)
    return hi, lo


def bf16_round(x: Array) -> Array:
    """Round float32 values to bfloat16 (round to nearest, ties to even), kept as float32.

    Finite inputs only (NaN payloads are not preserved).
    """
    xp = array_module(x)
    bits = _as_f32(x).view(xp.uint32)
    rounded = bits >> xp.uint32(16)
    rounded &= xp.uint32(1)
    rounded += xp.uint32(0x7FFF)
    rounded += bits
    rounded &= xp.uint32(0xFFFF0000)
    return rounded.view(xp.float32)


def fp16_round(x: Array) -> Array:
    """Round float32 values to IEEE half precision, kept as float32."""
    xp = array_module(x)
    return _as_f32(x).astype(xp.float16).astype(xp.float32)


# --------------------------------------------------------------------------------------------
# Reference, scale and the two metrics (numpy or cupy)


def reference_and_scale(A: Array, B: Array) -> tuple[Array, Array]:
    """R = A @ B and S = |A| @ |B|, both in float64 (two float64 input copies live at once)."""
    xp = array_module(A)
    a = A.astype(xp.float64)
    b = B.astype(xp.float64)
    R = xp.matmul(a, b)
    xp.abs(a, out=a)
    xp.abs(b, out=b)
    S = xp.matmul(a, b)
    del a, b
    return R, S


def metrics(C: Array, R: Array, S: Array) -> tuple[float, float]:
    """(scaled max error, relative Frobenius error) of C against R with scale S, in float64.

    scaled max = max |C - R| / S, where a cell with S == 0 counts 0 if C == R there, else inf.
    rel Frobenius = ||C - R||_F / ||R||_F (0 if both are 0, inf if only ||R|| is 0).
    A non-finite C gives (inf, inf). Uses one full-size float64 temporary plus boolean masks.
    """
    xp = array_module(C)
    if C.shape != R.shape or C.shape != S.shape:
        raise ValueError(f"shape mismatch: C {C.shape}, R {R.shape}, S {S.shape}")
    if C.size == 0:
        return 0.0, 0.0
    if not bool(xp.isfinite(C).all()):
        return math.inf, math.inf

    diff = C.astype(xp.float64, order="C")  # the one float64 temporary; never aliases C
    diff -= R
    flat = diff.ravel()
    diff_sq = float(xp.dot(flat, flat))
    ref_flat = xp.ascontiguousarray(R).ravel()
    ref_sq = float(xp.dot(ref_flat, ref_flat))
    if ref_sq > 0.0:
        rel_frob = math.sqrt(diff_sq) / math.sqrt(ref_sq)
    else:
        rel_frob = 0.0 if diff_sq == 0.0 else math.inf

    xp.abs(diff, out=diff)
    with np.errstate(divide="ignore", invalid="ignore"):
        xp.divide(diff, S, out=diff)
    # Where S == 0: exact cells gave 0/0 = NaN (count as 0), inexact ones x/0 = inf.
    xp.copyto(diff, 0.0, where=xp.isnan(diff))
    scaled_max = float(diff.max())
    del diff, flat
    return scaled_max, rel_frob


def passes(scaled_max: float, rel_frob: float) -> bool:
    """The proposed acceptance rule (NaN compares False, so it fails)."""
    return scaled_max <= SCALED_MAX_LIMIT and rel_frob <= REL_FROB_LIMIT


# --------------------------------------------------------------------------------------------
# Methods built from float32 GEMMs (numpy or cupy)


def matmul_fp32(A: Array, B: Array) -> Array:
    """Plain float32 GEMM (cuBLAS SGEMM under CuPy with TF32 off)."""
    return array_module(A).matmul(A, B)


def matmul_3xtf32(A: Array, B: Array) -> Array:
    """Emulated 3xTF32: hi·hi + hi·lo + lo·hi, each a float32 GEMM on TF32-representable inputs
    (which models a tensor-core product with FP32 accumulation), summed smallest terms first."""
    xp = array_module(A)
    a_hi, a_lo = tf32_split(A)
    b_hi, b_lo = tf32_split(B)
    small = xp.matmul(a_lo, b_hi)
    small += xp.matmul(a_hi, b_lo)
    del a_lo, b_lo
    big = xp.matmul(a_hi, b_hi)
    small += big
    return small


def matmul_tf32(A: Array, B: Array) -> Array:
    return array_module(A).matmul(tf32_round(A), tf32_round(B))


def matmul_fp16(A: Array, B: Array) -> Array:
    return array_module(A).matmul(fp16_round(A), fp16_round(B))


def matmul_bf16(A: Array, B: Array) -> Array:
    return array_module(A).matmul(bf16_round(A), bf16_round(B))


# --------------------------------------------------------------------------------------------
# Hand-written float32 kernels (cupy only)

KERNEL_SOURCE = r"""
// One thread per C cell; threadIdx.x walks the columns of C so B reads are coalesced.
// All index arithmetic is 64-bit: M*N and N*K can exceed 2^31.
typedef unsigned long long u64;
typedef long long i64;

__device__ __forceinline__ bool cell_of_thread(i64 M, i64 K, u64* row, u64* col)
{
    *col = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    *row = (u64)blockIdx.y * blockDim.y + threadIdx.y;
    return *row < (u64)M && *col < (u64)K;
}

// C[row, col] = sum_k A[row, k] * B[k, col], k = 0 .. N-1, acc = fmaf(a, b, acc) in float32.
extern "C" __global__ void seq_asc_fma(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C, i64 M, i64 N, i64 K)
{
    u64 row, col;
    if (!cell_of_thread(M, K, &row, &col)) return;
    const float* a = A + row * (u64)N;
    const float* b = B + col;
    const u64 ldb = (u64)K;
    float acc = 0.0f;
    for (i64 k = 0; k < N; ++k)
        acc = fmaf(a[k], b[(u64)k * ldb], acc);
    C[row * ldb + col] = acc;
}

// Same, k = N-1 .. 0.
extern "C" __global__ void seq_desc_fma(const float* __restrict__ A, const float* __restrict__ B,
                                        float* __restrict__ C, i64 M, i64 N, i64 K)
{
    u64 row, col;
    if (!cell_of_thread(M, K, &row, &col)) return;
    const float* a = A + row * (u64)N;
    const float* b = B + col;
    const u64 ldb = (u64)K;
    float acc = 0.0f;
    for (i64 k = N - 1; k >= 0; --k)
        acc = fmaf(a[k], b[(u64)k * ldb], acc);
    C[row * ldb + col] = acc;
}

// Ascending, product and sum rounded separately (the _rn intrinsics are never contracted).
extern "C" __global__ void seq_asc_nofma(const float* __restrict__ A, const float* __restrict__ B,
                                         float* __restrict__ C, i64 M, i64 N, i64 K)
{
    u64 row, col;
    if (!cell_of_thread(M, K, &row, &col)) return;
    const float* a = A + row * (u64)N;
    const float* b = B + col;
    const u64 ldb = (u64)K;
    float acc = 0.0f;
    for (i64 k = 0; k < N; ++k)
        acc = __fadd_rn(acc, __fmul_rn(a[k], b[(u64)k * ldb]));
    C[row * ldb + col] = acc;
}

// Split-K, pass 1: blockIdx.z picks chunk (chunk0 + z) of the inner dimension; its partial sum,
// ascending with fmaf in float32, goes to P[z, row, col].
extern "C" __global__ void splitk_partial(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ P, i64 M, i64 N, i64 K,
                                          i64 chunk, i64 chunk0)
{
    u64 row, col;
    if (!cell_of_thread(M, K, &row, &col)) return;
    const i64 k_begin = (chunk0 + (i64)blockIdx.z) * chunk;
    const i64 k_end = (k_begin + chunk < N) ? k_begin + chunk : N;
    const float* a = A + row * (u64)N;
    const float* b = B + col;
    const u64 ldb = (u64)K;
    float acc = 0.0f;
    for (i64 k = k_begin; k < k_end; ++k)
        acc = fmaf(a[k], b[(u64)k * ldb], acc);
    P[(u64)blockIdx.z * (u64)M * ldb + row * ldb + col] = acc;
}

// Split-K, pass 2: C[i] += P[0, i] + P[1, i] + ... + P[count-1, i], left to right in float32.
extern "C" __global__ void splitk_reduce(const float* __restrict__ P, float* __restrict__ C,
                                         i64 cells, i64 count)
{
    const u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (u64)cells) return;
    float acc = C[i];
    for (i64 j = 0; j < count; ++j)
        acc = __fadd_rn(acc, P[(u64)j * (u64)cells + i]);
    C[i] = acc;
}
"""

KERNEL_NAMES = ("seq_asc_fma", "seq_desc_fma", "seq_asc_nofma", "splitk_partial", "splitk_reduce")


class Kernels:
    """The RawKernels of KERNEL_SOURCE, compiled once by NVRTC."""

    def __init__(self) -> None:
        module = cp.RawModule(code=KERNEL_SOURCE)
        self.fn = {name: module.get_function(name) for name in KERNEL_NAMES}

    @staticmethod
    def _check(A: Array, B: Array) -> tuple[int, int, int]:
        if A.dtype != cp.float32 or B.dtype != cp.float32:
            raise TypeError("kernels take float32 inputs")
        if not (A.flags.c_contiguous and B.flags.c_contiguous):
            raise ValueError("kernels take C-contiguous inputs")
        M, N = A.shape
        N2, K = B.shape
        if N != N2:
            raise ValueError(f"inner dimensions differ: {A.shape} @ {B.shape}")
        return M, N, K

    @staticmethod
    def _grid(M: int, K: int, depth: int = 1) -> tuple[int, int, int]:
        grid = ((K + BLOCK - 1) // BLOCK, (M + BLOCK - 1) // BLOCK, depth)
        if grid[1] > 65535 or grid[2] > 65535:
            raise ValueError(f"grid {grid} exceeds the CUDA limits")
        return grid

    def sequential(self, name: str, A: Array, B: Array) -> Array:
        M, N, K = self._check(A, B)
        C = cp.empty((M, K), dtype=cp.float32)
        if C.size:
            self.fn[name](self._grid(M, K), (BLOCK, BLOCK, 1),
                          (A, B, C, np.int64(M), np.int64(N), np.int64(K)))
        return C

    def splitk(self, A: Array, B: Array) -> Array:
        """Chunks of SPLITK_CHUNK summed sequentially into a float32 [chunks, M, K] buffer, then
        added in chunk order in float32. The buffer holds at most SPLITK_BUFFER_BYTES; when all
        chunks do not fit, groups of chunks are done in turn, which gives the same roundings."""
        M, N, K = self._check(A, B)
        C = cp.zeros((M, K), dtype=cp.float32)
        cells = M * K
        chunks = (N + SPLITK_CHUNK - 1) // SPLITK_CHUNK
        if cells == 0 or chunks == 0:
            return C
        per_pass = max(1, min(chunks, 65535, SPLITK_BUFFER_BYTES // (4 * cells)))
        P = cp.empty((per_pass, M, K), dtype=cp.float32)
        reduce_grid = ((cells + 255) // 256, 1, 1)
        for first in range(0, chunks, per_pass):
            count = min(per_pass, chunks - first)
            self.fn["splitk_partial"](
                self._grid(M, K, count), (BLOCK, BLOCK, 1),
                (A, B, P, np.int64(M), np.int64(N), np.int64(K),
                 np.int64(SPLITK_CHUNK), np.int64(first)))
            self.fn["splitk_reduce"](reduce_grid, (256, 1, 1),
                                     (P, C, np.int64(cells), np.int64(count)))
        del P
        return C


# --------------------------------------------------------------------------------------------
# Method table


@dataclass(frozen=True)
class Method:
    name: str
    fp32: bool  # True: must pass the rule; False: reduced precision, must fail it
    sequential: bool  # naive sequential kernel, subject to the time guard
    run: Callable[[Array, Array], Array]


def build_methods(kernels: Kernels) -> list[Method]:
    return [
        Method("fp32_cublas", True, False, matmul_fp32),
        Method("fp32_seq_asc", True, True, lambda A, B: kernels.sequential("seq_asc_fma", A, B)),
        Method("fp32_seq_desc", True, True, lambda A, B: kernels.sequential("seq_desc_fma", A, B)),
        Method("fp32_nofma", True, True, lambda A, B: kernels.sequential("seq_asc_nofma", A, B)),
        Method("fp32_splitk", True, False, kernels.splitk),
        Method("fp32_3xtf32", True, False, matmul_3xtf32),
        Method("tf32", False, False, matmul_tf32),
        Method("fp16", False, False, matmul_fp16),
        Method("bf16", False, False, matmul_bf16),
    ]


# --------------------------------------------------------------------------------------------
# Inputs, device housekeeping


def shape_seed(seed: int, shape: Shape) -> int:
    """A seed that depends only on --seed and the shape (so --quick draws the same inputs)."""
    return int(np.random.SeedSequence([seed, *shape]).generate_state(1)[0])


def make_inputs(xp: Any, shape: Shape, seed: int) -> tuple[Array, Array]:
    """A (M×N) and B (N×K), float32 uniform in [-1, 1), as challenges/matmul/reference.py draws them."""
    M, N, K = shape
    rng = xp.random.default_rng(shape_seed(seed, shape))
    A = rng.random((M, N), dtype=xp.float32)
    A *= 2
    A -= 1
    B = rng.random((N, K), dtype=xp.float32)
    B *= 2
    B -= 1
    return A, B


def synchronize(xp: Any) -> None:
    if cp is not None and xp is cp:
        cp.cuda.Device().synchronize()


def free_memory(xp: Any) -> None:
    if cp is not None and xp is cp:
        cp.cuda.Device().synchronize()
        cp.get_default_memory_pool().free_all_blocks()
        cp.get_default_pinned_memory_pool().free_all_blocks()


def to_host(x: Array) -> np.ndarray:
    if cp is not None and array_module(x) is cp:
        return cp.asnumpy(x)
    return np.asarray(x)


def check_reference(A: Array, B: Array, R: Array, S: Array) -> float:
    """Largest |GPU value - CPU numpy value| / S_cpu over R and S: validates the reference."""
    a = to_host(A).astype(np.float64)
    b = to_host(B).astype(np.float64)
    r_cpu = a @ b
    s_cpu = np.abs(a) @ np.abs(b)
    denom = np.where(s_cpu > 0, s_cpu, 1.0)
    dev_r = np.abs(to_host(R) - r_cpu) / denom
    dev_s = np.abs(to_host(S) - s_cpu) / denom
    return float(max(dev_r.max(initial=0.0), dev_s.max(initial=0.0)))


def flops_of(shape: Shape) -> float:
    M, N, K = shape
    return 2.0 * M * N * K


def select_shapes(quick: bool) -> list[Shape]:
    if not quick:
        return list(FULL_SHAPES)
    return [s for s in FULL_SHAPES if s[0] * s[1] * s[2] <= QUICK_MAX_MNK or s == QUICK_EXTRA]


# --------------------------------------------------------------------------------------------
# Time guard for the sequential kernels


class SeqGuard:
    """Decides whether the naive sequential kernels may run at a shape without blowing the budget."""

    def __init__(self, start: float, budget_s: float = SEQ_BUDGET_S) -> None:
        self.start = start
        self.budget_s = budget_s
        self.flops = 0.0
        self.seconds = 0.0

    def rate(self) -> float:
        if self.flops >= SEQ_RATE_MIN_SAMPLE_FLOPS and self.seconds > 0:
            return self.flops / self.seconds
        return SEQ_RATE_GUESS

    def projected_s(self, shape: Shape, count: int) -> float:
        return count * flops_of(shape) / self.rate()

    def allows(self, shape: Shape, count: int) -> bool:
        if flops_of(shape) < SEQ_GUARD_MIN_FLOPS:
            return True
        elapsed = time.perf_counter() - self.start
        return elapsed + self.projected_s(shape, count) <= self.budget_s

    def record(self, shape: Shape, seconds: float) -> None:
        if flops_of(shape) >= SEQ_RATE_MIN_SAMPLE_FLOPS:
            self.flops += flops_of(shape)
            self.seconds += seconds


# --------------------------------------------------------------------------------------------
# The run


@dataclass
class RunState:
    rows: list[dict[str, Any]]
    skipped: list[dict[str, Any]]
    ref_checks: list[dict[str, Any]]


def shape_text(shape: Shape) -> str:
    return "(" + ", ".join(str(v) for v in shape) + ")"


def format_row(row: dict[str, Any]) -> str:
    verdict = "PASS" if row["passed"] else "FAIL"
    expected = "PASS" if row["fp32"] else "FAIL"
    flag = "" if row["passed"] == row["fp32"] else "  <-- VIOLATION"
    return (f"  {shape_text(tuple(row['shape'])):<20} {row['method']:<14} "
            f"scaled_max={row['scaled_max']:10.3e}  rel_frob={row['rel_frob']:10.3e}  "
            f"{verdict} (expect {expected})  {row['seconds']:8.3f}s{flag}")


def run_shape(xp: Any, shape: Shape, index: int, total: int, methods: list[Method], seed: int,
              guard: SeqGuard, start: float, state: RunState) -> None:
    M, N, K = shape
    print(f"[{time.perf_counter() - start:7.1f}s] shape {index}/{total} {shape_text(shape)} "
          f"({flops_of(shape):.3g} flop per product)", flush=True)
    free_memory(xp)

    t0 = time.perf_counter()
    A, B = make_inputs(xp, shape, seed)
    R, S = reference_and_scale(A, B)
    synchronize(xp)
    print(f"    inputs, R and S in {time.perf_counter() - t0:.2f}s", flush=True)

    if M * N * K <= REF_CHECK_MAX_MNK:
        deviation = check_reference(A, B, R, S)
        state.ref_checks.append({"shape": list(shape), "max_dev_over_S": deviation})
        note = "" if deviation <= REF_CHECK_WARN else "  <-- WARNING: GPU FP64 reference is off"
        print(f"    FP64 reference vs numpy on CPU: max |dev|/S = {deviation:.2e}{note}", flush=True)

    sequential = [m for m in methods if m.sequential]
    run_sequential = guard.allows(shape, len(sequential))
    if not run_sequential:
        names = ", ".join(m.name for m in sequential)
        projected = guard.projected_s(shape, len(sequential))
        print(f"    SKIPPED {names}: projected {projected:.0f}s at {guard.rate() / 1e12:.2f} "
              f"TFLOP/s would pass the {guard.budget_s:.0f}s budget", flush=True)
        for m in sequential:
            state.skipped.append({"shape": list(shape), "method": m.name,
                                  "projected_seconds": projected / len(sequential)})

    for method in methods:
        if method.sequential and not run_sequential:
            continue
        t1 = time.perf_counter()
        C = method.run(A, B)
        synchronize(xp)
        seconds = time.perf_counter() - t1
        if method.sequential:
            guard.record(shape, seconds)
        scaled_max, rel_frob = metrics(C, R, S)
        del C
        row = {"shape": list(shape), "method": method.name, "fp32": method.fp32,
               "scaled_max": scaled_max, "rel_frob": rel_frob,
               "passed": passes(scaled_max, rel_frob), "seconds": seconds}
        state.rows.append(row)
        print(format_row(row), flush=True)

    del A, B, R, S
    free_memory(xp)


def run_all(xp: Any, shapes: list[Shape], methods: list[Method], seed: int,
            state: RunState, start: float) -> None:
    guard = SeqGuard(start)
    for i, shape in enumerate(shapes, 1):
        run_shape(xp, shape, i, len(shapes), methods, seed, guard, start, state)


# --------------------------------------------------------------------------------------------
# Summary


def _ratio(num: float, den: float) -> float:
    if den == 0.0:
        return math.inf if num > 0 else math.nan
    return num / den


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per shape: worst FP32 and best reduced-precision metrics and the margins."""
    shapes: list[tuple[int, ...]] = []
    for row in rows:
        if tuple(row["shape"]) not in shapes:
            shapes.append(tuple(row["shape"]))
    table = []
    for shape in shapes:
        here = [r for r in rows if tuple(r["shape"]) == shape]
        fp32 = [r for r in here if r["fp32"]]
        reduced = [r for r in here if not r["fp32"]]
        entry: dict[str, Any] = {"shape": list(shape)}
        if fp32:
            worst_s = max(fp32, key=lambda r: r["scaled_max"])
            worst_f = max(fp32, key=lambda r: r["rel_frob"])
            entry.update(
                fp32_worst_scaled=worst_s["scaled_max"], fp32_worst_scaled_method=worst_s["method"],
                fp32_worst_frob=worst_f["rel_frob"], fp32_worst_frob_method=worst_f["method"],
                pass_margin_scaled=_ratio(SCALED_MAX_LIMIT, worst_s["scaled_max"]),
                pass_margin_frob=_ratio(REL_FROB_LIMIT, worst_f["rel_frob"]))
        if reduced:
            best_s = min(reduced, key=lambda r: r["scaled_max"])
            best_f = min(reduced, key=lambda r: r["rel_frob"])
            # A result is rejected when EITHER metric is over; the factor by which the
            # least-rejected reduced method is over its nearer limit:
            reject = min(max(_ratio(r["scaled_max"], SCALED_MAX_LIMIT),
                             _ratio(r["rel_frob"], REL_FROB_LIMIT)) for r in reduced)
            entry.update(
                reduced_best_scaled=best_s["scaled_max"], reduced_best_scaled_method=best_s["method"],
                reduced_best_frob=best_f["rel_frob"], reduced_best_frob_method=best_f["method"],
                reject_factor_scaled=_ratio(best_s["scaled_max"], SCALED_MAX_LIMIT),
                reject_factor_frob=_ratio(best_f["rel_frob"], REL_FROB_LIMIT),
                reject_factor_rule=reject)
        table.append(entry)
    return table


def print_summary(table: list[dict[str, Any]], rows: list[dict[str, Any]],
                  skipped: list[dict[str, Any]]) -> bool:
    print()
    print(f"Summary (rule: scaled_max <= {SCALED_MAX_LIMIT:g} AND rel_frob <= {REL_FROB_LIMIT:g})")
    print("  pass margin = limit / worst FP32 value; reject factor = best reduced value / limit;")
    print("  rule reject = min over reduced methods of max(scaled/limit, frob/limit) (> 1: all rejected)")
    header = (f"  {'shape':<20} {'fp32 worst':>10} {'fp32 worst':>10} {'red. best':>10} "
              f"{'red. best':>10} {'pass marg':>9} {'pass marg':>9} {'reject':>8} {'reject':>8} "
              f"{'rule':>8}")
    header2 = (f"  {'':<20} {'scaled':>10} {'frob':>10} {'scaled':>10} {'frob':>10} "
               f"{'scaled':>9} {'frob':>9} {'scaled':>8} {'frob':>8} {'reject':>8}")
    print(header)
    print(header2)
    for e in table:
        print(f"  {shape_text(tuple(e['shape'])):<20} "
              f"{e.get('fp32_worst_scaled', math.nan):10.3e} {e.get('fp32_worst_frob', math.nan):10.3e} "
              f"{e.get('reduced_best_scaled', math.nan):10.3e} {e.get('reduced_best_frob', math.nan):10.3e} "
              f"{e.get('pass_margin_scaled', math.nan):9.3g} {e.get('pass_margin_frob', math.nan):9.3g} "
              f"{e.get('reject_factor_scaled', math.nan):8.3g} {e.get('reject_factor_frob', math.nan):8.3g} "
              f"{e.get('reject_factor_rule', math.nan):8.3g}")

    if table:
        margins_s = [e["pass_margin_scaled"] for e in table if "pass_margin_scaled" in e]
        margins_f = [e["pass_margin_frob"] for e in table if "pass_margin_frob" in e]
        rejects = [e["reject_factor_rule"] for e in table if "reject_factor_rule" in e]
        print(f"  overall: smallest FP32 pass margin scaled {min(margins_s, default=math.nan):.3g}, "
              f"frob {min(margins_f, default=math.nan):.3g}; smallest reduced-precision "
              f"rule reject factor {min(rejects, default=math.nan):.3g}")

    violations = [r for r in rows if r["passed"] != r["fp32"]]
    if skipped:
        print(f"  skipped by the time guard ({len(skipped)}): "
              + ", ".join(f"{s['method']} at {shape_text(tuple(s['shape']))}" for s in skipped))
    if violations:
        print(f"  VIOLATIONS ({len(violations)}):")
        for r in violations:
            kind = "FP32 result FAILED" if r["fp32"] else "reduced-precision result PASSED"
            print(f"    {kind}: {r['method']} at {shape_text(tuple(r['shape']))}: "
                  f"scaled_max={r['scaled_max']:.3e} rel_frob={r['rel_frob']:.3e}")
    ok = not violations and bool(rows)
    if ok:
        extra = " (time guard skipped some sequential runs, listed above)" if skipped else ""
        print(f"RESULT: every FP32 result passed and every reduced-precision result failed "
              f"({len(rows)} results){extra}.", flush=True)
    else:
        print(f"RESULT: NOT as expected: {len(violations)} violation(s) in {len(rows)} results.",
              flush=True)
    return ok


# --------------------------------------------------------------------------------------------
# JSON and main


def _json_safe(value: Any) -> Any:
    """Non-finite floats as strings ("inf", "nan") so the file is strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


def device_info() -> dict[str, Any]:
    info: dict[str, Any] = {"device": None, "cuda_runtime": None}
    if cp is None:
        return info
    try:
        name = cp.cuda.runtime.getDeviceProperties(0)["name"]
        info["device"] = name.decode() if isinstance(name, bytes) else str(name)
        info["cuda_runtime"] = cp.cuda.runtime.runtimeGetVersion()
    except Exception as exc:  # no usable device: say so rather than fail the report
        info["device"] = f"unknown ({type(exc).__name__})"
    return info


def write_json(path: str, args: argparse.Namespace, state: RunState, table: list[dict[str, Any]],
               ok: bool | None, seconds: float, error: str | None) -> None:
    payload = {
        "what": "tolerance margins of the matmul grader rule, per shape and method",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        **device_info(),
        "cupy_version": cp.__version__ if cp is not None else None,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "seed": args.seed,
        "quick": args.quick,
        "limits": {"scaled_max": SCALED_MAX_LIMIT, "rel_frob": REL_FROB_LIMIT},
        "all_as_expected": ok,
        "total_seconds": seconds,
        "error": error,
        "rows": [{k: r[k] for k in ("shape", "method", "scaled_max", "rel_frob", "passed",
                                    "seconds", "fp32")} for r in state.rows],
        "skipped": state.skipped,
        "reference_checks": state.ref_checks,
        "summary": table,
    }
    folder = os.path.dirname(path)
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(_json_safe(payload), f, indent=1, allow_nan=False)
        f.write("\n")
    print(f"wrote {path}", flush=True)


def tf32_is_off() -> bool:
    """False when CUPY_TF32 asks CuPy to run float32 GEMMs on TF32 tensor cores."""
    if os.environ.get("CUPY_TF32", "0") != "0":
        return False
    try:  # private CuPy API; the fp32_cublas row is the real check
        from cupy._core import _routines_linalg as linalg
        return linalg.get_compute_type(np.float32) != linalg.COMPUTE_TYPE_TF32
    except Exception:
        return True


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"only shapes with M*N*K <= 2^31, plus {shape_text(QUICK_EXTRA)}")
    parser.add_argument("--json", metavar="OUT", help="write every row and the summary here")
    parser.add_argument("--seed", type=int, default=1)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if cp is None:
        print("error: CuPy is not installed", file=sys.stderr)
        return 2
    if not tf32_is_off():
        print("WARNING: CUPY_TF32 is set (or CuPy runs float32 GEMMs as TF32): every float32 "
              "cupy.matmul would be TF32 and this evidence void. Unset CUPY_TF32 and rerun.",
              file=sys.stderr, flush=True)
        return 2

    start = time.perf_counter()
    state = RunState(rows=[], skipped=[], ref_checks=[])
    shapes = select_shapes(args.quick)
    error: str | None = None
    try:
        info = device_info()
        print(f"device {info['device']}, CUDA runtime {info['cuda_runtime']}, CuPy {cp.__version__}, "
              f"numpy {np.__version__}; seed {args.seed}; {len(shapes)} shapes"
              f"{' (quick)' if args.quick else ''}", flush=True)
        if os.environ.get("NVIDIA_TF32_OVERRIDE") is not None:
            print(f"note: NVIDIA_TF32_OVERRIDE={os.environ['NVIDIA_TF32_OVERRIDE']}", flush=True)
        kernels = Kernels()
        run_all(cp, shapes, build_methods(kernels), args.seed, state, start)
    except Exception as exc:  # a CUDA / CuPy error: report it and exit nonzero
        error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
        print(f"error after {time.perf_counter() - start:.1f}s: {error}", file=sys.stderr, flush=True)

    table = summarize(state.rows)
    ok = print_summary(table, state.rows, state.skipped)
    seconds = time.perf_counter() - start
    print(f"total {seconds:.1f}s", flush=True)
    if args.json:
        write_json(args.json, args, state, table, ok if error is None else None, seconds, error)
    return 1 if error is not None else 0


if __name__ == "__main__":
    sys.exit(main())
