"""Trusted reference for the convolution_2d challenge: input generation and the FP64 answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies, and `variants` re-computes the answer the ways a kernel really does, right
and wrong, so that `grader check` can measure the tolerance instead of guessing it.

The operation is LeetGPU's "2D Convolution", which is a valid cross-correlation (the kernel is not
flipped):

    output[i][j] = sum over m < kernel_rows, n < kernel_cols of input[i + m][j + n] · kernel[m][n]

for i < input_rows - kernel_rows + 1 and j < input_cols - kernel_cols + 1, every matrix row-major.

Both answers are made on the host in FP64 whatever `xp` is, as a sum over the kernel's taps of shifted
slices of the input: one multiply-add pass over a band of output rows per tap, bands on threads. At
LeetGPU's timed shape (3072 × 3072, a 15 × 15 kernel: 2.1 · 10^9 multiply-adds) that took 0.54 s on the
16 cores of an H200 host (1.6 s on one), each of the two answers; no CuPy kernel is compiled for it
(tests/test_no_runtime_compile.py).
"""

import concurrent.futures
import os

import numpy as np

DRAW_CHUNK = 1 << 20
"""Values drawn per step of `generate`: the float64 draw is rounded to float32 a chunk at a time, so
the float64 scratch is 8 MB however large the input (a float64 copy of an 8192 × 8192 input is 537 MB)."""

BAND_ELEMENTS = 1 << 17
"""Output elements per band (rows × columns, at least one row). One band's float64 accumulator, its
product scratch and the input rows it reads stay in a core's cache (a MB each) while the band's taps
pass over them, where a whole-array pass per tap would stream the output from memory once per tap (225
or 961 times). Bands four times smaller fit the cache better on one core but take the GIL between
numpy calls four times as often: on 16 threads they took 1.36 s at LeetGPU's shape against 0.54 s."""
THREADS = min(16, os.cpu_count() or 1)
"""numpy multiplies and adds without holding the GIL, so bands on threads run in parallel."""


def generate(dims, rng):
    """The input matrix and the kernel, each uniform in [-1, 1]: LeetGPU's range for its timed case
    (its small cases use narrower kernels, which changes no scaled error). Zero-mean values make the
    sums cancel, so a term that is missing, repeated, taken from the wrong tap or rounded to half
    precision shows against the error allowed, and every value is distinct from its neighbours, so a
    tap read from a flipped, transposed or shifted kernel cannot match the right one by accident."""
    rows, cols = dims["input_rows"], dims["input_cols"]
    kernel_rows, kernel_cols = dims["kernel_rows"], dims["kernel_cols"]
    return {"input": _uniform(rng, rows * cols).reshape(rows, cols),
            "kernel": _uniform(rng, kernel_rows * kernel_cols).reshape(kernel_rows, kernel_cols)}


def reference(inputs, xp):
    """The cross-correlation in FP64. Every product of two float32 values is exact in float64 (48
    significant bits of 53), and each output adds at most 961 of them (a 31 × 31 kernel) one after
    another, so its error is at most 961 · 2^-53 of the sum of |terms|, about 10^-13 of the error
    scale below: seven orders of magnitude under the FP32 error the tolerance allows."""
    return {"output": _correlate(inputs["input"], inputs["kernel"], absolute=False)}


def error_scale(inputs, xp):
    """sum over the window of |input[i + m][j + n] · kernel[m][n]| in FP64: the yardstick of an FP32
    sum's rounding error at that output. Each FP32 rounding, of a product or of an addition, is at
    most 2^-24 of its result, and no product or partial sum, in any order of addition, exceeds this
    sum in magnitude; unlike |output| it does not vanish where the terms cancel. (Every input is
    nonzero with probability one, so no scale is zero.)"""
    return {"output": _correlate(inputs["input"], inputs["kernel"], absolute=True)}


def flops(dims):
    """One multiply and one add per tap per output: 2 · output_rows · output_cols · kernel_rows ·
    kernel_cols."""
    out_rows, out_cols = _output_shape(dims)
    return 2.0 * out_rows * out_cols * dims["kernel_rows"] * dims["kernel_cols"]


def bytes(dims):
    """Read the input and the kernel once and write the output once: the least any kernel can move.
    With a 3 × 3 kernel on a large image (18 flops per output) that traffic, not the arithmetic, is
    the limit on an H100 or H200; with 15 × 15 and more taps it is the arithmetic."""
    out_rows, out_cols = _output_shape(dims)
    moved = dims["input_rows"] * dims["input_cols"] + dims["kernel_rows"] * dims["kernel_cols"] + out_rows * out_cols
    return 4.0 * moved


def baseline(inputs, xp):
    """CuPy's cross-correlation, cupyx.scipy.signal.correlate2d in 'valid' mode, on the device arrays:
    SciPy's definition, which is LeetGPU's (no flip), in FP32 (the result type of two float32 arrays).
    A direct correlation, not an FFT: on an H200 (CuPy 14.2) it matched the FP64 answer within the
    tolerance, and the grader timed it at 1.15, 0.57 and 2.81 ms at the three timed shapes, about
    half level 1's speed."""
    from cupyx.scipy import signal
    return {"output": signal.correlate2d(inputs["input"], inputs["kernel"], mode="valid")}


# --------------------------------------------------------------------------- variants (grader check)

VARIANT_ELEMENTS = 1 << 20
"""Outputs a variant computes, at most: past that (no functional case comes near; the timed shapes
would) only the first rows are re-computed and the rest are the reference rounded to float32, which
every variant's verdict can spare: a wrong method is wrong in its first rows too."""


def variants(inputs, rng):
    """Host re-computations in the precision a kernel really uses, each marked "pass" (a correct
    method: `grader check` requires its errors to stay 3 times or more under the tolerance) or
    "fail" (a mistake: its error must pass the tolerance by 3 times or more on some case).

    The FP32 sums are reproduced exactly: numpy's float32 multiply and add round as a GPU's FMUL and
    FADD do, tap by tap in the order given. A fused multiply-add is the exact product added in float64
    and rounded once to float32: the same as the GPU's FFMA except in the rare double-rounding tie,
    which moves a result by one unit in its last place. `rng` is unused: every method here is
    deterministic."""
    x, k = inputs["input"], inputs["kernel"]
    kernel_rows, kernel_cols = k.shape
    rows = _variant_rows(x.shape, k.shape)
    part = x[:rows + kernel_rows - 1]
    taps = [(m, n) for m in range(kernel_rows) for n in range(kernel_cols)]
    flat = k.reshape(-1)
    transposed = flat.reshape(kernel_cols, kernel_rows).T  # tap (m, n) read at n · kernel_rows + m
    half = (part.astype(np.float16).astype(np.float32), k.astype(np.float16).astype(np.float32))
    tf32 = (_tf32(part), _tf32(k))
    found = {
        # Correct: one FP32 accumulator per output, in the orders and forms kernels use.
        "fp32 row-major taps": ("pass", _fp32_sum(part, k, taps)),
        "fp32 row-major taps, fused multiply-add": ("pass", _fp32_sum(part, k, taps, fused=True)),
        "fp32 taps reversed": ("pass", _fp32_sum(part, k, taps[::-1])),
        "fp32 column-major taps, fused multiply-add": ("pass", _fp32_sum(part, k, sorted(taps, key=lambda t: t[::-1]),
                                                                          fused=True)),
        "fp32 per-row partial sums, then added": ("pass", _fp32_row_partials(part, k)),
        # Wrong.
        "fp16 inputs, fp32 sums": ("fail", _fp32_sum(*half, taps)),
        "tf32 inputs (tensor cores), fp32 sums": ("fail", _fp32_sum(*tf32, taps, fused=True)),
        "kernel flipped (a true convolution)": ("fail", _fp32_sum(part, k[::-1, ::-1], taps, fused=True)),
        "last kernel row dropped": ("fail", _fp32_sum(part, k, [t for t in taps if t[0] < kernel_rows - 1],
                                                      fused=True)),
        "kernel read transposed": ("fail", _fp32_sum(part, transposed, taps, fused=True)),
    }
    exact = None
    if rows < x.shape[0] - kernel_rows + 1:
        exact = reference(inputs, np)["output"].astype(np.float32)
    out = {}
    for name, (must, computed) in found.items():
        if exact is not None:
            computed = np.concatenate([computed, exact[rows:]])
        out[name] = ({"output": computed}, must)
    return out


def _variant_rows(input_shape, kernel_shape):
    """Output rows a variant computes: all of them, or as many as VARIANT_ELEMENTS allows (at least
    one)."""
    out_rows, out_cols = input_shape[0] - kernel_shape[0] + 1, input_shape[1] - kernel_shape[1] + 1
    return min(out_rows, max(1, VARIANT_ELEMENTS // out_cols))


def _fp32_sum(x, k, taps, fused=False):
    """One float32 accumulator per output, the taps added one after another in the order given: the
    product rounded to float32, then the sum (FMUL, FADD), or with `fused` the exact product added
    and rounded once (FFMA). `x` may be a band of the input's first rows; the output has the band's
    rows."""
    kernel_rows, kernel_cols = k.shape
    out_rows, out_cols = x.shape[0] - kernel_rows + 1, x.shape[1] - kernel_cols + 1
    acc = np.zeros((out_rows, out_cols), np.float32)
    for m, n in taps:
        window = x[m:m + out_rows, n:n + out_cols]
        if fused:
            acc = (acc.astype(np.float64) + window.astype(np.float64) * np.float64(k[m, n])).astype(np.float32)
        else:
            acc += window * k[m, n]  # float32 · float32 rounds to float32, then the add rounds
    return acc


def _fp32_row_partials(x, k):
    """Each kernel row's taps summed into a float32 partial of its own (fused), then the partials added
    to the output's accumulator row after row: a kernel that gives each kernel row a thread or a loop
    of its own and combines them afterwards."""
    kernel_rows, kernel_cols = k.shape
    out_rows, out_cols = x.shape[0] - kernel_rows + 1, x.shape[1] - kernel_cols + 1
    acc = np.zeros((out_rows, out_cols), np.float32)
    for m in range(kernel_rows):
        acc += _fp32_sum(x[m:m + out_rows], k[m:m + 1], [(0, n) for n in range(kernel_cols)], fused=True)
    return acc


def _tf32(values):
    """float32 values rounded to TF32, the tensor cores' FP32 input format: 10 stored significand bits
    of float32's 23, rounded to nearest, ties to even (cvt.rna rounds ties away, a difference no
    measure here can see)."""
    bits = np.ascontiguousarray(values, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> np.uint32(13)) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return rounded.view(np.float32)


# --------------------------------------------------------------------------- helpers

def _output_shape(dims):
    return dims["input_rows"] - dims["kernel_rows"] + 1, dims["input_cols"] - dims["kernel_cols"] + 1


def _correlate(x, k, absolute):
    """sum over taps (m, n) of k[m, n] · x[m:, n:] (absolute values with `absolute`) in float64, a band
    of output rows at a time on threads. Each band converts the input rows it reads to float64 once
    and adds the taps in row-major order."""
    kernel_rows, kernel_cols = k.shape
    out_rows, out_cols = x.shape[0] - kernel_rows + 1, x.shape[1] - kernel_cols + 1
    weights = np.abs(k.astype(np.float64)) if absolute else k.astype(np.float64)
    out = np.empty((out_rows, out_cols))
    band = max(1, BAND_ELEMENTS // out_cols)
    starts = list(range(0, out_rows, band))
    per_thread = -(-len(starts) // min(THREADS, len(starts)))

    def work(first_band):
        rows = np.empty((band + kernel_rows - 1, x.shape[1]))
        product = np.empty((band, out_cols))
        for r0 in starts[first_band:first_band + per_thread]:
            r1 = min(out_rows, r0 + band)
            source = rows[:r1 - r0 + kernel_rows - 1]
            source[...] = x[r0:r1 + kernel_rows - 1]
            if absolute:
                np.absolute(source, out=source)
            acc, scratch = out[r0:r1], product[:r1 - r0]
            acc[...] = 0.0
            for m in range(kernel_rows):
                for n in range(kernel_cols):
                    np.multiply(source[m:m + r1 - r0, n:n + out_cols], weights[m, n], out=scratch)
                    acc += scratch

    firsts = range(0, len(starts), per_thread)
    if len(firsts) == 1:
        work(0)
    else:
        with concurrent.futures.ThreadPoolExecutor(len(firsts)) as pool:
            list(pool.map(work, firsts))
    return out


def _uniform(rng, n):
    """n values uniform in [-1, 1], drawn in float64 and rounded to float32 a chunk at a time, so that
    small values keep a full 24-bit significand (numpy's float32 draws lie on a grid of 2^-24, and
    products and sums of such values round less often than real data's; challenges/reduction's
    reference says more). Rounding can turn a draw just below 1 into 1.0, hence the closed interval."""
    values = np.empty(n, np.float32)
    scratch = np.empty(min(n, DRAW_CHUNK))
    for start in range(0, n, DRAW_CHUNK):
        part = scratch[:min(DRAW_CHUNK, n - start)]
        rng.random(out=part)
        part *= 2
        part -= 1
        values[start:start + part.size] = part
    return values
