"""Trusted reference for the gemm_fp16 challenge: input generation, the FP64 answer, its error scale,
and the variants that measure the tolerance.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies. Here C is both an input and the output (role `inout`): `generate` gives
its starting values, and the answer is alpha · A·B + beta · C computed from them.

Why the tolerance looks the way it does (statement.md, "Accuracy", says it in words): the output is
half precision, and rounding a result to half moves it by up to 2^-11 of itself. That one rounding is
the largest error a correct kernel makes. Everything before it can be done exactly or in FP32: a
product of two halves has at most 22 significant bits and is exact in FP32, so the only other errors
are the FP32 additions of the sum over k (a few units of 2^-24 of the terms' sizes) and the epilogue's
two or three FP32 roundings. So the answer must be, within FP32 noise, the exact result rounded once
to half. What that rules out: accumulating in half (each partial sum rounded to 11 bits), and
rounding alpha·A·B to half before adding beta·C (a second half rounding, of a term that may be far
larger than the result when the two cancel).
"""

import concurrent.futures
import os

import numpy as np

VALUES_PER_STREAM = 1 << 20
"""Inputs are drawn in blocks, each from its own random stream seeded from the case's generator, on
threads (the 4096 × 4096 timed matrices are 16.8 million values each). The values depend on the seed
and the shape only, never on the number of threads."""
THREADS = min(8, os.cpu_count() or 1)

HALF_MIN_NORMAL = 2.0 ** -14
"""The smallest normal half. Below it half's spacing stops shrinking (2^-24 all the way down), so a
correctly rounded result there is off by up to 2^-25 in absolute terms: 2^-11 of this floor."""

SUM_WEIGHT = 2.0 ** -6
"""The weight of |alpha| (|A|·|B|)_ij in the scale: the room for the FP32 sum over k. A sum of K terms
in FP32 is off by a few units of 2^-24 of sum_k |a_ik b_kj| (a sequential sum of 4096 terms measured
about 1e-6 of it at worst). With this weight such an error uses well under a hundredth of the limit,
while a sum kept in half (errors near 2^-11 of the partial sums) or a wrong term (an error the size of
a term) stays many times over it; statement.md, "Accuracy", has the measured margins."""

VARIANT_MAX_MACS = 1 << 25
"""Variants re-do the product on the host in float32, one k at a time for the sequential orders; a case
with more multiply-adds than this is left out of the measurement (every functional case is below it)."""


def generate(dims, rng):
    """A, B and C uniform in [-1, 1], rounded from float64 to half once: LeetGPU's inputs (it draws
    torch.empty(...).uniform_(-1, 1) in half). Zero-mean values make the sum over k cancel to about
    sqrt(K / 9) while its terms add up to about K / 4, so precision shortcuts and missing terms show."""
    return {"A": _uniform(rng, (dims["M"], dims["K"])),
            "B": _uniform(rng, (dims["K"], dims["N"])),
            "C": _uniform(rng, (dims["M"], dims["N"]))}


def reference(inputs, xp):
    """alpha · (A·B) + beta · C in FP64 from the half inputs (alpha and beta are the float32 values the
    kernel receives). Every half is exact in float64, and so is every product; the FP64 sum of K
    products is off by at most K · 2^-53 of sum |a b|, nine orders of magnitude below half's rounding."""
    alpha, beta = float(inputs["alpha"]), float(inputs["beta"])
    product = _product64(inputs["A"], inputs["B"], xp, absolute=False)
    result = product * alpha
    result += beta * inputs["C"].astype(np.float64)
    return {"C": result}


def error_scale(inputs, xp):
    """|R| + 2^-14 + 2^-6 |alpha| (|A|·|B|), R the exact result, per element.

    - |R| + 2^-14: a correctly rounded half is within 2^-11 of this (2^-11 |R| for a normal half,
      2^-25 below 2^-14, where half's spacing stops shrinking).
    - 2^-6 |alpha| (|A|·|B|): room for the FP32 sum over k, whose error is a few units of 2^-24 of
      sum_k |a_ik b_kj|, not of |R|: when the terms cancel, R can be far smaller than they are.
      (SUM_WEIGHT says why this weight.) The epilogue's FP32 roundings, 2^-24 of |alpha A·B| and of
      |beta C|, both at most |R| + |alpha| (|A|·|B|), are covered by the same two terms.
    """
    alpha = abs(float(inputs["alpha"]))
    exact = reference(inputs, xp)["C"]
    scale = np.abs(exact)
    scale += HALF_MIN_NORMAL
    if alpha != 0.0:
        scale += (SUM_WEIGHT * alpha) * _product64(inputs["A"], inputs["B"], xp, absolute=True)
    return {"C": scale}


def flops(dims):
    """2·M·N·K: a multiply and an add per term of every sum (the epilogue's 3·M·N is not counted)."""
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def baseline(inputs, xp):
    """cuBLAS's own half GEMM with FP32 accumulation on the device arrays: one cublasGemmEx call (half
    A, B and C, CUBLAS_COMPUTE_32F, tensor cores), alpha and beta passed to it, C updated in place as
    the submission updates it. Not `alpha * (A @ B) + beta * C` in CuPy: that is the product and then
    three element-wise kernels over C (a tenth of the time at 1024³), and it rounds to half four times."""
    from cupy.cuda import cublas, runtime

    a, b, c = inputs["A"], inputs["B"], inputs["C"]
    m, k = a.shape
    n = b.shape[1]
    alpha = np.array([inputs["alpha"]], np.float32)
    beta = np.array([inputs["beta"]], np.float32)
    handle = xp.cuda.get_cublas_handle()
    cublas.setPointerMode(handle, cublas.CUBLAS_POINTER_MODE_HOST)
    # Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B goes first and nothing is transposed.
    cublas.gemmEx(handle, cublas.CUBLAS_OP_N, cublas.CUBLAS_OP_N, n, m, k,
                  alpha.ctypes.data, b.data.ptr, runtime.CUDA_R_16F, n,
                  a.data.ptr, runtime.CUDA_R_16F, k,
                  beta.ctypes.data, c.data.ptr, runtime.CUDA_R_16F, n,
                  cublas.CUBLAS_COMPUTE_32F, cublas.CUBLAS_GEMM_DEFAULT)
    return {"C": c}


# --------------------------------------------------------------------------- variants: the measured tolerance


def variants(inputs, rng):
    """Host re-computations of C, each marked as a method the tolerance must pass or fail.

    Passing ("pass"): products of halves in float32 (exact), summed in float32 in the orders GPU
    kernels use (k ascending as level 1 does, descending, a pairwise tree, split-K halves added at
    the end, and tensor-core-like chunks of 16 whose sums are rounded to float32 once per chunk, by
    nearest or toward zero), then alpha·acc + beta·c in float32 (two roundings and an add, or a fused
    multiply-add), rounded once to half.

    Failing ("fail"): the sum kept in half (the __hfma chain of a kernel that accumulates in half, and
    WMMA's half accumulator fragments, modelled as each 16-deep mma_sync summing in FP32 and rounding
    the running sum to half); alpha·acc rounded to half before beta·c is added (in FP32, or in half as
    well); beta·C dropped; alpha applied twice; A read as K × M (transposed); B read as N × K; C read
    back after a first split-K half was written to it (beta applied to an already updated C)."""
    a, b, c = inputs["A"], inputs["B"], inputs["C"]
    m, k = a.shape
    n = b.shape[1]
    if m * n * k > VARIANT_MAX_MACS:
        return {}
    alpha, beta = np.float32(inputs["alpha"]), np.float32(inputs["beta"])
    a32, b32, c32 = a.astype(np.float32), b.astype(np.float32), c.astype(np.float32)

    def out(acc, fused=False):
        return {"C": _epilogue(acc, c32, alpha, beta, fused)}

    ascending = _sequential(a32, b32, range(k))
    half_k = k // 2
    split = _sequential(a32, b32, range(half_k)) + _sequential(a32, b32, range(half_k, k))
    product_first = _to_half(_to_half(alpha * ascending).astype(np.float32) + beta * c32)
    a_transposed = a32.reshape(-1).reshape(k, m).T.copy()  # the M·K values of A read as K rows of M
    b_transposed = b32.reshape(-1).reshape(n, k).T.copy()  # the K·N values of B read as N rows of K
    found = {
        "fp32 k ascending": (out(ascending), "pass"),
        "fp32 k ascending, fma epilogue": (out(ascending, fused=True), "pass"),
        "fp32 k descending": (out(_sequential(a32, b32, range(k - 1, -1, -1))), "pass"),
        "fp32 pairwise tree": (out(_pairwise(a32, b32)), "pass"),
        "fp32 split-K halves": (out(split), "pass"),
        "fp32 chunks of 16 (tensor core)": (out(_chunked(a32, b32, 16, toward_zero=False)), "pass"),
        "fp32 chunks of 16 truncated": (out(_chunked(a32, b32, 16, toward_zero=True)), "pass"),
        "half accumulator": (out(_half_sum(a, b)), "fail"),
        "half accumulator fragments (wmma)": (out(_half_chunks(a32, b32, 16)), "fail"),
        "product rounded to half first": ({"C": product_first}, "fail"),
        "half epilogue": ({"C": _half_epilogue(ascending, c, alpha, beta)}, "fail"),
        "beta term dropped": ({"C": _to_half(alpha * ascending)}, "fail"),
        "alpha applied twice": (out(np.float32(alpha) * ascending), "fail"),
        "A read as K x M": (out(_sequential(a_transposed, b32, range(k))), "fail"),
        "B read as N x K": (out(_sequential(a32, b_transposed, range(k))), "fail"),
        "C read after split-K wrote it": ({"C": _split_overwrite(a32, b32, c32, alpha, beta)}, "fail"),
    }
    return found


def _to_half(values):
    """float32 to half, rounded to nearest even (numpy's cast, __float2half_rn's rounding)."""
    return np.asarray(values, np.float32).astype(np.float16)


def _epilogue(acc, c32, alpha, beta, fused):
    """alpha·acc + beta·c in float32, rounded once to half: beta·c rounded, then alpha·acc rounded and
    added (or, fused, alpha·acc + beta·c with one rounding, as fmaf(alpha, acc, beta·c) does)."""
    scaled_c = beta * c32
    if fused:
        result = (np.float64(alpha) * acc.astype(np.float64) + scaled_c).astype(np.float32)
    else:
        result = alpha * acc + scaled_c
    return _to_half(result)


def _sequential(a32, b32, order):
    """sum over k in the given order, one float32 rounding per addition (products exact in float32)."""
    acc = np.zeros((a32.shape[0], b32.shape[1]), np.float32)
    for kk in order:
        acc += np.outer(a32[:, kk], b32[kk, :])
    return acc


def _pairwise(a32, b32):
    """A tree over k: the products, then neighbours added level by level in float32."""
    terms = [np.outer(a32[:, kk], b32[kk, :]) for kk in range(a32.shape[1])]
    if not terms:
        return np.zeros((a32.shape[0], b32.shape[1]), np.float32)
    while len(terms) > 1:
        pairs = [terms[i] + terms[i + 1] for i in range(0, len(terms) - 1, 2)]
        terms = pairs + ([terms[-1]] if len(terms) % 2 else [])
    return terms[0]


def _chunked(a32, b32, width, toward_zero):
    """Tensor-core-like: each chunk of `width` products summed exactly (float64 holds it), rounded to
    float32 (to nearest, or toward zero as some tensor-core adders truncate) and added to a float32
    accumulator."""
    acc = np.zeros((a32.shape[0], b32.shape[1]), np.float32)
    for k0 in range(0, a32.shape[1], width):
        chunk = a32[:, k0:k0 + width].astype(np.float64) @ b32[k0:k0 + width, :].astype(np.float64)
        total = chunk + acc
        rounded = total.astype(np.float32)
        if toward_zero:
            # Where rounding to nearest went away from zero, step one float32 back toward zero.
            away = np.abs(rounded.astype(np.float64)) > np.abs(total)
            rounded = np.where(away, np.nextafter(rounded, np.float32(0)), rounded)
        acc = rounded
    return acc


def _half_sum(a, b):
    """The sum kept in half: acc = __hfma(a, b, acc), each step a float fma rounded to half."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float16)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    for kk in range(a.shape[1]):
        acc = (np.outer(a32[:, kk], b32[kk, :]) + acc.astype(np.float32)).astype(np.float16)
    return acc.astype(np.float32)


def _half_chunks(a32, b32, width):
    """WMMA with a half accumulator fragment, as the emulator models it: each mma_sync adds its
    `width` products to the running sum in FP32 and rounds the sum to half."""
    acc = np.zeros((a32.shape[0], b32.shape[1]), np.float16)
    for k0 in range(0, a32.shape[1], width):
        total = acc.astype(np.float32)
        for kk in range(k0, min(k0 + width, a32.shape[1])):
            total += np.outer(a32[:, kk], b32[kk, :])
        acc = total.astype(np.float16)
    return acc.astype(np.float32)


def _half_epilogue(acc, c, alpha, beta):
    """alpha·acc rounded to half, beta·c rounded to half, their sum rounded to half (__hadd of two
    __float2half results): three half roundings where one is allowed."""
    first = _to_half(alpha * acc).astype(np.float32)
    second = _to_half(beta * c.astype(np.float32)).astype(np.float32)
    return _to_half(first + second)


def _split_overwrite(a32, b32, c32, alpha, beta):
    """Split-K in two passes that both apply beta·C: the first writes alpha·P1 + beta·C to C, the second
    reads that back as its C: alpha·P2 + beta·(alpha·P1 + beta·C). Right only when beta is 1."""
    half_k = a32.shape[1] // 2
    first = _to_half(alpha * _sequential(a32, b32, range(half_k)) + beta * c32).astype(np.float32)
    return _to_half(alpha * _sequential(a32, b32, range(half_k, a32.shape[1])) + beta * first)


# --------------------------------------------------------------------------- helpers


def _product64(a, b, xp, absolute):
    """A·B (or |A|·|B|) in FP64 from host half arrays: numpy's BLAS, or cuBLAS DGEMM when xp is CuPy
    (a 4096³ product takes a minute on the host, milliseconds there)."""
    if xp is not np:
        from grader.backends.cuda import matmul64
        return matmul64(a, b, xp, absolute)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    if absolute:
        np.abs(a64, out=a64)
        np.abs(b64, out=b64)
    return a64 @ b64


def _uniform(rng, shape):
    """Values uniform in [-1, 1], drawn in float64 and rounded to half once, so that small values keep
    all 11 significant bits (a draw made in half directly would sit on a grid of 2^-11 and make many
    FP32 sums exact). Rounding can turn a draw just below 1 into 1.0, hence the closed interval."""
    values = np.empty(shape, np.float16)
    flat = values.reshape(-1)
    starts = range(0, flat.size, VALUES_PER_STREAM)
    streams = np.random.SeedSequence(rng.integers(0, 2**63, size=4)).spawn(len(starts))

    def fill(start, stream):
        part = np.random.default_rng(stream).random(min(VALUES_PER_STREAM, flat.size - start))
        part *= 2
        part -= 1
        flat[start:start + part.size] = part  # rounds to nearest half

    if len(starts) <= 1 or THREADS == 1:
        for start, stream in zip(starts, streams):
            fill(start, stream)
    else:
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(fill, starts, streams))
    return values
