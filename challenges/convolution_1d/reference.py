"""Trusted reference for the convolution_1d challenge: input generation and the FP64 answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies, `variants` recomputes the answer the ways a kernel may (and must not).

output[i] = input[i]·kernel[0] + input[i + 1]·kernel[1] + … + input[i + K − 1]·kernel[K − 1] for
i = 0 .. N − K (N = input_size, K = kernel_size): a "valid" cross-correlation, every output a dot
product of K terms. Each output is such a dot product, so the answer is computed as one: the input cut
into overlapping windows times a banded (Toeplitz) matrix of the kernel, one FP64 matrix product
(`_correlate64`). On a GPU that is cuBLAS DGEMM, as matmul's reference uses; on the host numpy's BLAS.
A loop over the taps would be K passes over the output: 2,047 of them at the timed sizes.
"""

import numpy as np

CHUNK = 1 << 20
"""Values drawn per step: the float64 draw of a 2^24-element input is then 8 MB at a time, not 134."""

INPUT_RANGE = 10.0
"""LeetGPU's input values are uniform in [-10, 10] (its functional cases; its timed case uses [-1, 1],
which changes nothing a scale-free check can see)."""
KERNEL_RANGE = 1.0
"""Its kernel values are uniform in [-1, 1]."""

DIRECT_TAPS = 16
"""Up to this many taps the FP64 answer is a loop over the taps (K passes over the output); above it, a
matrix product, whose extra work (see `_correlate64`) is then at most a few times the direct one."""
MIN_WIDTH = 256
"""Outputs per row of the banded product, at least: a short kernel still makes a matrix wide enough to
keep BLAS efficient."""

VARIANT_WORK = 4.0e7
"""Multiply-adds above which `variants` skips a case: each variant is K numpy passes over M outputs,
and the functional cases stay below this so that every one of them is measured."""
BLOCK_TAPS = 256
"""The tap chunk of the blocked variant: a kernel that loads 256 taps into shared memory at a time
and sums each chunk from zero before adding it (levels/2_shared_tiles.cu adds in one sequence)."""
LANES = 8
"""The interleaved variant's independent accumulators (taps j, j + 8, j + 16 … in accumulator j % 8),
as an unrolled loop keeps them."""


def generate(dims, rng):
    """LeetGPU's values: the input uniform in [-10, 10], the kernel uniform in [-1, 1]. Zero-mean, so
    every output is a sum that cancels (about sqrt(K) times a term, where the terms' sizes add up to
    about K times one): a lost or repeated term, or reduced precision, cannot hide in a sum that only
    grows. Drawn in float64 and rounded to float32 once, so that each value has a full 24-bit
    significand (see challenges/reduction/reference.py, `_uniform`)."""
    return {"input": _uniform(rng, dims["input_size"], INPUT_RANGE),
            "kernel": _uniform(rng, dims["kernel_size"], KERNEL_RANGE)}


def reference(inputs, xp):
    """The correlation in FP64. Each product of two float32 values is exact in float64 (48 significant
    bits of 53), and a sum of K + W − 1 terms (W the banded product's width, below) rounds by at most
    that many times 2^-53 of sum |x·k|: under 10^-12 of the scale below, six orders of magnitude
    under the FP32 error the tolerance allows."""
    return {"output": _correlate64(inputs["input"], inputs["kernel"], xp, absolute=False)}


def error_scale(inputs, xp):
    """S_i = sum_j |input[i + j]·kernel[j]| in FP64: the yardstick of an FP32 dot product's rounding.
    Every FP32 addition is off by at most 2^-24 of its result, no partial sum of output i in any
    order exceeds S_i in magnitude, and a rounded product is off by 2^-24 of itself; unlike |output_i|,
    S_i does not vanish when the terms cancel. A wrong tap, a lost one or a flipped kernel is off by
    a sizeable fraction of S_i; a correct FP32 sum by a few 2^-24 of it (challenge.yaml's limit is
    measured: statement.md, "Accuracy")."""
    return {"output": _correlate64(inputs["input"], inputs["kernel"], xp, absolute=True)}


def flops(dims):
    """A multiply and an add per tap and output: 2·K·(N − K + 1)."""
    return 2.0 * dims["kernel_size"] * _outputs(dims)


def bytes(dims):
    """The input and the kernel read once, the output written once: the least any kernel moves. At
    LeetGPU's timed size that is 8 bytes per output against 4,094 flops: the work is the arithmetic."""
    return 4.0 * (dims["input_size"] + dims["kernel_size"] + _outputs(dims))


def baseline(inputs, xp):
    """cupy.correlate(input, kernel, "valid"): numpy.correlate's definition, which is this challenge's.
    CuPy 14 computes it for floating-point arrays by FFT whatever the sizes (its `_choose_conv_method`
    always answers "fft"): a real FFT of each array, padded to a fast length of N + K − 1, their
    product and the inverse FFT, all in FP32 (cuFFT), then the valid part. O(N log N) instead of
    O(N·K): not the arithmetic a direct kernel does, and its rounding is relative to the whole
    vectors rather than to each output's own terms."""
    return {"output": xp.correlate(inputs["input"], inputs["kernel"], "valid")}


def variants(inputs, rng):
    """The answer recomputed on the host, in numpy float32 (IEEE rounding, as on a GPU), the ways a
    kernel may compute it ("pass") and the ways it must not ("fail"). The grader measures each with
    its own two measures against challenge.yaml's limits: every "pass" must stay 3 times under them,
    every "fail" must exceed them 3 times on some case. Cases above VARIANT_WORK multiply-adds are
    skipped (none of the functional ones is)."""
    x, k = inputs["input"], inputs["kernel"]
    m = x.size - k.size + 1
    if float(m) * k.size > VARIANT_WORK:
        return {}
    half_x, half_k = x.astype(np.float16).astype(np.float32), k.astype(np.float16).astype(np.float32)
    return {
        # Correct: one thread per output, taps in order, as levels 1 to 3 do.
        "sequential FP32, multiply then add": ({"output": _sequential(x, k, range(k.size))}, "pass"),
        "sequential FP32, fused multiply-add": ({"output": _sequential_fma(x, k)}, "pass"),
        "taps in reverse order": ({"output": _sequential(x, k, range(k.size - 1, -1, -1))}, "pass"),
        "pairwise tree over the taps": ({"output": _pairwise(x, k, 0, k.size)}, "pass"),
        f"{BLOCK_TAPS}-tap chunks, each summed from zero": ({"output": _chunked(x, k)}, "pass"),
        f"{LANES} interleaved accumulators": ({"output": _interleaved(x, k)}, "pass"),
        # Wrong: what the kernels in wrong/ do, and the shortcuts they stand for.
        "FP16 inputs, FP32 sums": ({"output": _sequential(half_x, half_k, range(k.size))}, "fail"),
        "FP16 accumulator": ({"output": _half_accumulator(x, k)}, "fail"),
        "last tap dropped": ({"output": _sequential(x, k, range(k.size - 1))}, "fail"),
        "kernel flipped (convolution)": ({"output": _sequential(x, k[::-1].copy(), range(k.size))}, "fail"),
    }


def _outputs(dims):
    return dims["input_size"] - dims["kernel_size"] + 1


def _correlate64(signal, taps, xp, absolute):
    """sum_j signal[i + j]·taps[j] (of absolute values, with `absolute`) in FP64 for i = 0 .. m − 1.

    Short kernels: a loop over the taps. Longer ones: the outputs cut into rows of W (W = max(K, 256), at most m)
    and each row computed as windows @ band, where windows[r] = signal[r·W : r·W + W + K − 1] (rows
    overlap by K − 1; the last is padded with zeros) and band[b + j][b] = taps[j], zero elsewhere. That
    is (W + K − 1)/K times the direct work (2 at W = K) in one matrix product: cuBLAS DGEMM when xp is
    CuPy (a few milliseconds at 2^24 × 2,047), numpy's BLAS on the host."""
    n, k = signal.size, taps.size
    m = n - k + 1
    if k <= DIRECT_TAPS:
        x, t = signal.astype(np.float64), taps.astype(np.float64)
        if absolute:
            x, t = np.abs(x), np.abs(t)
        out = np.zeros(m)
        for j in range(k):
            out += t[j] * x[j:j + m]
        return out
    width = min(max(k, MIN_WIDTH), m)  # no wider than the output: one row of one output at N = K
    rows = -(-m // width)
    padded = np.zeros(rows * width + k - 1, np.float32)
    padded[:n] = signal
    windows = np.lib.stride_tricks.as_strided(padded, (rows, width + k - 1), (width * 4, 4)).copy()
    offset = np.arange(width + k - 1)[:, None] - np.arange(width)[None, :]  # j = row − column
    inside = (offset >= 0) & (offset < k)
    band = np.where(inside, taps[np.clip(offset, 0, k - 1)], np.float32(0))
    if xp is not np:
        from grader.backends.cuda import matmul64
        product = matmul64(windows, band, xp, absolute)
    else:
        w64, b64 = windows.astype(np.float64), band.astype(np.float64)
        if absolute:
            np.abs(w64, out=w64)
            np.abs(b64, out=b64)
        product = w64 @ b64
    return product.reshape(-1)[:m]


def _sequential(x, k, order):
    """One FP32 accumulator per output, the taps in `order` (from zero): each product rounded, each
    sum rounded."""
    m = x.size - k.size + 1
    acc = np.zeros(m, np.float32)
    for j in order:
        acc += k[j] * x[j:j + m]  # float32 · float32 and float32 + float32: two roundings
    return acc


def _sequential_fma(x, k):
    """fmaf(input[i + j], kernel[j], acc): the exact product added, one rounding per tap. The product
    of two floats is exact in float64, so float64 addition then rounding to float32 is the FMA (bar a
    double rounding in about one case in 2^29)."""
    m = x.size - k.size + 1
    acc = np.zeros(m, np.float32)
    x64 = x.astype(np.float64)
    for j in range(k.size):
        acc = (acc + float(k[j]) * x64[j:j + m]).astype(np.float32)
    return acc


def _pairwise(x, k, lo, hi):
    """Taps [lo, hi) summed as a balanced tree in FP32, as threads that share one output's taps and
    combine their partial sums do."""
    m = x.size - k.size + 1
    if hi - lo == 1:
        return k[lo] * x[lo:lo + m]
    mid = lo + (hi - lo) // 2
    return _pairwise(x, k, lo, mid) + _pairwise(x, k, mid, hi)


def _chunked(x, k):
    """Taps in chunks of BLOCK_TAPS, each chunk summed in order from zero, the chunk sums added in order."""
    total = None
    for lo in range(0, k.size, BLOCK_TAPS):
        part = _sequential(x, k, range(lo, min(lo + BLOCK_TAPS, k.size)))
        total = part if total is None else total + part
    return total


def _interleaved(x, k):
    """LANES accumulators, tap j into accumulator j % LANES, then added in order."""
    lanes = [_sequential(x, k, range(lane, k.size, LANES)) for lane in range(min(LANES, k.size))]
    total = lanes[0]
    for lane in lanes[1:]:
        total = total + lane
    return total


def _half_accumulator(x, k):
    """FP32 products added into a half-precision accumulator (11 significant bits)."""
    m = x.size - k.size + 1
    acc = np.zeros(m, np.float16)
    for j in range(k.size):
        acc = (acc.astype(np.float32) + k[j] * x[j:j + m]).astype(np.float16)
    return acc.astype(np.float32)


def _uniform(rng, n, bound):
    """n values uniform in [-bound, bound], drawn in float64 a chunk at a time and rounded to float32."""
    values = np.empty(n, np.float32)
    scratch = np.empty(min(n, CHUNK))
    for start in range(0, n, CHUNK):
        part = scratch[:min(CHUNK, n - start)]
        rng.random(out=part)
        part *= 2 * bound
        part -= bound
        values[start:start + part.size] = part  # rounds to nearest float32
    return values
