"""C = A·B recomputed by correct and by wrong FP32 methods: `grader check matmul` measures the
tolerance's margins from these (statement.md, "Accuracy").

variants(inputs, rng) -> {name: ({"C": float32 array}, "pass" or "fail")}, host numpy only.

Correct ("pass"): FP32 dot products in the orders kernels use: sequential over k with a fused
multiply-add (the naive and tiled kernels: a tile only changes where the operands come from, not the
order of the adds), sequential without FMA (product and sum each rounded) forwards and backwards,
a pairwise tree, split-K (chunks of 8, 16 or 32 terms summed from zero, the partial sums then added in
order), numpy's own float32 GEMM (a blocked BLAS), and two models of the 3xTF32 tensor-core split:
three FP32 GEMMs, and level 6's own order with each tensor-core step truncated.
Wrong ("fail"): inputs rounded to TF32, FP16 or BF16 before an FP32 product, the last term of the
inner dimension dropped, and 3xTF32 accumulated on the tensor cores over the whole inner dimension
(level 6's first version: on an H200 it failed at 17×4096×19 with a scaled error of 1.95e-6; the model
gives 2.3-2.9e-6 there).

How each FP32 rounding is reproduced: numpy's float32 add and multiply are IEEE round to nearest, as on
a GPU. A fused multiply-add acc + a·b is done in float64, where a·b is exact (48 bits), then rounded to
float32. Where acc and a·b differ much in scale the float64 sum is itself rounded, and the second
rounding then differs from a true FMA only when the first lands exactly halfway between two floats
(about once in 2^29 steps), by one unit in the last place.
"""

import numpy as np

SPLIT_K = (8, 16, 32)
"""Chunk lengths of the split-K orders."""
MMA_K = 8
"""Inner length of one tensor-core step (mma.sync m16n8k8 in TF32)."""
K_TILE = 32
"""Inner length of level 6's k-tile, accumulated from zero on the tensor cores and then added to the
running FP32 sum."""


def variants(inputs, rng):
    a, b = inputs["A"], inputs["B"]
    methods = {
        "sequential k, FMA": (_sequential_fma(a, b), "pass"),
        "sequential k, no FMA": (_sequential(a, b), "pass"),
        "reversed k, no FMA": (_sequential(a[:, ::-1], b[::-1]), "pass"),
        "pairwise tree over k": (_pairwise(a, b), "pass"),
        **{f"split-K, chunks of {chunk} (FMA) added in order": (_split_k(a, b, chunk), "pass") for chunk in SPLIT_K},
        "numpy float32 matmul (BLAS)": (a @ b, "pass"),
        "3xTF32, three FP32 GEMMs, small terms first": (_three_tf32_gemms(a, b), "pass"),
        "3xTF32 as level 6 (32-deep k-tiles, MMAs rounded toward zero)":
            (_three_tf32_tensor_cores(a, b, K_TILE), "pass"),
        "TF32 inputs, FP32 accumulation": (_to_tf32(a) @ _to_tf32(b), "fail"),
        "FP16 inputs, FP32 accumulation": (_to_half(a) @ _to_half(b), "fail"),
        "BF16 inputs, FP32 accumulation": (_to_bf16(a) @ _to_bf16(b), "fail"),
        "last k term dropped": (a[:, :-1] @ b[:-1], "fail"),
        "3xTF32 accumulated on the tensor cores over all of k": (_three_tf32_tensor_cores(a, b, None), "fail"),
    }
    return {name: ({"C": np.asarray(c, np.float32)}, must) for name, (c, must) in methods.items()}


# --------------------------------------------------------------------------- FP32 orders


def _products(a, b):
    """Every product a[i, k]·b[k, j] rounded to float32, as an N × M × K array: one contiguous M × K
    plane per k."""
    return a.T[:, :, None] * b[:, None, :]


def _sequential(a, b):
    """acc = acc + a·b over k = 0 .. N-1, the product and the sum each rounded to float32."""
    return _in_order(_products(a, b))


def _in_order(terms):
    """The float32 planes terms[0] + terms[1] + ..., added left to right, a whole plane per step."""
    total = np.zeros(terms.shape[1:], np.float32)
    for plane in terms:
        total += plane
    return total


def _sequential_fma(a, b):
    """acc = fma(a, b, acc) over k = 0 .. N-1: one step per k over the whole output."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    step = np.empty(acc.shape, np.float64)
    for k in range(a.shape[1]):
        np.multiply.outer(a64[:, k], b64[k], out=step)
        step += acc
        acc[...] = step  # rounded to float32
    return acc


def _pairwise(a, b):
    """The float32 products summed as a balanced tree over k: neighbours in pairs, then pairs of pairs
    (an odd term left over at a level waits for the next one)."""
    level = _products(a, b)
    while len(level) > 1:
        half = len(level) // 2
        paired = level[0:2 * half:2] + level[1:2 * half:2]
        level = np.concatenate([paired, level[2 * half:]]) if len(level) % 2 else paired
    return level[0]


def _split_k(a, b, chunk):
    """Chunks of `chunk` consecutive k, each summed with FMA from zero (all chunks at once, one step per
    k inside a chunk), then the partial sums added in chunk order in float32."""
    m, n = a.shape
    count = -(-n // chunk)
    a_blocks = _padded_columns(a, count * chunk).reshape(m, count, chunk).transpose(1, 0, 2)  # [chunk, row, step]
    b_blocks = _padded_rows(b, count * chunk).reshape(count, chunk, -1)  # [chunk, step, column]
    partial = np.zeros((count, m, b.shape[1]), np.float32)
    for j in range(chunk):
        step = a_blocks[:, :, j, None] * b_blocks[:, None, j, :]  # float64: exact products
        step += partial
        partial[...] = step
    return _in_order(partial)


def _padded_columns(a, length):
    """a (M × N) in float64 with zero columns appended up to `length` (zero terms change no sum)."""
    padded = np.zeros((a.shape[0], length))
    padded[:, :a.shape[1]] = a
    return padded


def _padded_rows(b, length):
    """b (N × K) in float64 with zero rows appended up to `length`."""
    padded = np.zeros((length, b.shape[1]))
    padded[:b.shape[0]] = b
    return padded


# --------------------------------------------------------------------------- 3xTF32


def _tf32_split(x):
    """x = big + small, big = tf32(x), small = tf32(x - big) (x - big is exact in float32): what
    level 6's cvt.rna.tf32.f32 pair makes."""
    big = _to_tf32_away(x)
    return big, _to_tf32_away(x - big)


def _three_tf32_gemms(a, b):
    """small_a·big_b + big_a·small_b + big_a·big_b, each an FP32 GEMM (numpy's, standing for a tensor
    core with FP32 accumulation) of TF32 values, summed smallest terms first. Every product of two TF32
    values is exact in float32; the dropped small_a·small_b is below FP32 rounding."""
    a_big, a_small = _tf32_split(a)
    b_big, b_small = _tf32_split(b)
    total = a_small @ b_big
    total += a_big @ b_small
    total += a_big @ b_big
    return total


def _three_tf32_tensor_cores(a, b, depth):
    """Level 6's order: the inner dimension in k-tiles `depth` deep (None: one tile, all of k), each
    accumulated from zero in 8-deep tensor-core steps of three MMAs (small·big, big·small, big·big),
    the tiles' sums then added to the running sum with FP32 adds in order. A tensor core's accumulation
    is not correctly rounded (products exact, the sum truncated): each MMA is modelled as its exact sum
    plus the accumulator, rounded toward zero to float32, an error of up to one unit in the last place,
    every one pulling the same way."""
    m, n = a.shape
    depth = depth or -(-n // MMA_K) * MMA_K
    tiles = -(-n // depth)
    a_big, a_small = (_padded_columns(part, tiles * depth) for part in _tf32_split(a))
    b_big, b_small = (_padded_rows(part, tiles * depth) for part in _tf32_split(b))

    def per_tile(x, y):  # [tile, i, k] and [tile, k, j], float64 (TF32 values, so products are exact)
        return x.reshape(m, tiles, depth).transpose(1, 0, 2), y.reshape(tiles, depth, -1)

    terms = [per_tile(a_small, b_big), per_tile(a_big, b_small), per_tile(a_big, b_big)]
    tile_sums = np.zeros((tiles, m, b.shape[1]), np.float32)
    for k in range(0, depth, MMA_K):
        for x, y in terms:
            exact = x[:, :, k:k + MMA_K] @ y[:, k:k + MMA_K, :]  # 8 exact products: float64 holds the sum
            exact += tile_sums
            tile_sums = _toward_zero(exact)
    return _in_order(tile_sums)


def _toward_zero(x):
    """float64 values rounded toward zero to float32: to nearest, then one unit back toward zero where
    that went away from it (one less in the bits is one unit less in magnitude, either sign; such a
    value is never 0)."""
    nearest = x.astype(np.float32)
    away = np.abs(nearest) > np.abs(x)  # compared in float64: exact
    nearest.view(np.int32)[...] -= away
    return nearest


# --------------------------------------------------------------------------- narrower inputs


def _to_tf32_away(x):
    """float32 rounded to TF32 (10 explicit mantissa bits), to nearest with ties away from zero, as
    cvt.rna.tf32.f32 does: half a TF32 unit added to the bits, the low 13 cleared."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x1000)) & np.uint32(0xFFFFE000)).view(np.float32)


def _to_tf32(x):
    """The inputs a TF32 tensor-core GEMM multiplies: rounded to a 10-bit mantissa."""
    return _to_tf32_away(x)


def _to_half(x):
    """float32 rounded to half (10-bit mantissa, 5-bit exponent), to nearest even, kept as float32."""
    return x.astype(np.float16).astype(np.float32)


def _to_bf16(x):
    """float32 rounded to bfloat16 (7-bit mantissa), to nearest even, kept as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)
