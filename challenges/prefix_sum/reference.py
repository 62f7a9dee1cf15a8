"""Trusted reference for the prefix sum challenge: input generation, the FP64 answer, and the FP32 scans
that measure the tolerance.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies, and `variants` recomputes the answer the ways kernels do (correct orders
of FP32 additions, and the usual mistakes) so that `grader check` can measure the tolerance's margins.
A scan does one addition per element read and written, so it is memory-bound: the work of a shape is
measured in `bytes`, the input read once and the output written once.

Everything runs on the host in numpy whatever `xp` is: a cumulative sum in float64 takes about 0.15 s at
N = 2^25, and no CuPy kernel has to be compiled for it.
"""

import numpy as np

CHUNK = 1 << 20
"""Values drawn per step, so that the float64 draw is a few MB at a time instead of 268 MB at 2^25."""

SPREAD = 10.0
"""LeetGPU draws its functional inputs uniformly from [-10, 10], and so does the grader, at every size."""

F32 = np.float32

VARIANT_MAX = 1 << 22
"""Above this many elements `variants` measures nothing: the block-by-block simulations copy the array a
few dozen times, and every functional case is smaller."""


def generate(dims, rng):
    """Values uniform in [-10, 10], LeetGPU's own range, drawn in float64 and rounded to float32 once.

    Zero-mean, so the prefix sums wander like a random walk (about 5.8 sqrt(i)) while sum |x| grows as 5 i:
    a lost or repeated term, or a block offset that is wrong, stands out against outputs that stay small.
    Drawn in float64 rather than as float32 because numpy's float32 draws lie on a grid of 2^-24, and
    sums of values on a grid round much less often than sums of real data (see
    challenges/reduction/reference.py, `_uniform`)."""
    n = dims["N"]
    values = np.empty(n, F32)
    scratch = np.empty(min(n, CHUNK))
    for start in range(0, n, CHUNK):
        part = scratch[:min(CHUNK, n - start)]
        rng.random(out=part)
        part *= 2 * SPREAD
        part -= SPREAD
        values[start:start + part.size] = part  # rounds to nearest float32
    return {"input": values}


def reference(inputs, xp):
    """y_i = x_0 + ... + x_i in float64, one addition after another. Every float32 input is exact in
    float64 and each addition rounds by at most 2^-53 of its result, so y_i is off by less than
    i · 2^-53 · sum_{j<=i} |x_j| in the worst case (2^-28 of it at 2^25 elements, a sixteenth of one
    FP32 rounding) and by about 2^-53 · sqrt(i) of it in fact: measured against the same sum in 80-bit
    long double and against math.fsum (statement.md, "Accuracy"), the largest difference is below
    10^-16 of sum |x|, ten orders of magnitude under the tolerance."""
    return {"output": np.cumsum(inputs["input"], dtype=np.float64)}


def error_scale(inputs, xp):
    """s_i = |x_0| + ... + |x_i| in float64: the yardstick of one FP32 rounding in output i.

    Derivation (statement.md, "Accuracy"): every scan algorithm builds output i from partial sums of
    runs of x_0 .. x_i (a thread's own elements, a warp's, a block's, the blocks before it), each run a
    part of [0, i], so no partial sum on the way to output i is larger than s_i and each FP32 addition
    there rounds by at most 2^-24 s_i. A scan in which each term passes through d additions on its way
    to output i is off by at most about d · 2^-24 · s_i. Unlike |y_i|, s_i does not vanish where the
    prefix sum crosses zero, which the zero-mean inputs make it do again and again. (The sum of
    absolute values has no cancellation: its float64 rounding is negligible.)"""
    return {"output": np.cumsum(np.abs(inputs["input"]), dtype=np.float64)}


def bytes(dims):
    """Read the input once and write the output once: 8 bytes per element, the least any scan moves."""
    return 8.0 * dims["N"]


def baseline(inputs, xp):
    """The library's own scan on the device array (cupy.cumsum when xp is cupy: CUB's single-pass
    decoupled look-back scan), in float32 like the input."""
    return {"output": xp.cumsum(inputs["input"])}


# --------------------------------------------------------------------------- variants


def variants(inputs, rng):
    """The answer recomputed in float32 the ways GPU kernels compute it, for `grader check`: correct
    orders of addition (must "pass", with a margin) and the usual mistakes (must "fail").

    numpy's float32 addition rounds exactly as a GPU's does (IEEE round to nearest even), so doing the
    kernel's additions in the kernel's order reproduces its output bit for bit; each order below is
    written to match the levels' kernels (levels/*.cu). Half precision is numpy's float16, whose sums
    round through float32 first: at most the last bit of a rare tie differs from a GPU's __hadd."""
    x = np.asarray(inputs["input"], F32)
    n = x.size
    if n > VARIANT_MAX:
        return {}
    good = _hierarchical(x, 256, _hillis_steele)
    result = {
        # One thread adding every element in turn: the longest chain of additions there is.
        "sequential": (np.cumsum(x, dtype=F32), "pass"),
        # Level 1: Hillis-Steele per block of 256, the block sums scanned the same way, added back.
        "hillis_steele_blocks": (good, "pass"),
        # GPU Gems 3's work-efficient scan (up-sweep, down-sweep) per block of 512, exclusive, then + x.
        "blelloch_blocks": (_hierarchical(x, 512, _blelloch_inclusive), "pass"),
        # Four contiguous elements per thread (a float4) in turn, Kogge-Stone over the 256 threads' totals.
        "kogge_stone_float4": (_hierarchical(x, 1024, _kogge_stone_float4), "pass"),
        # Level 2: tiles of 2048 summed first, the tile sums scanned, each tile scanned from its offset.
        "reduce_then_scan": (_reduce_then_scan(x), "pass"),
        # Level 3: every tile waits for its predecessor's inclusive prefix (a chain as long as the tiles).
        "lookback_chained": (_lookback(x, rng, 1), "pass"),
        # Level 3 as it usually runs: the nearest published prefix 1 to 70 tiles back, aggregates between.
        "lookback_windows": (_lookback(x, rng, 70), "pass"),
        # Wrong: every addition in half precision (wrong/half_accumulation.cu).
        "half_accumulation": (_hierarchical(x.astype(np.float16), 256, _hillis_steele).astype(F32), "fail"),
        # Wrong: y_i without x_i (wrong/exclusive_scan.cu).
        "exclusive": (np.concatenate([np.zeros(1, F32), good[:-1]]), "fail"),
        # Wrong: each block of 256 scanned alone (wrong/block_sums_never_added.cu).
        "block_sums_not_added": (_hillis_steele(_rows(x, 256)).reshape(-1)[:n], "fail"),
        # Wrong: block b offset by the blocks before b - 1, one block's sum missing.
        "offset_one_block_short": (_hierarchical(x, 256, _hillis_steele, lag=2), "fail"),
        # Wrong: the last, partial block never scanned: its outputs keep the grader's NaN.
        "last_partial_block_dropped": (_drop_partial(good, 256), "fail"),
    }
    return {name: ({"output": out}, must) for name, (out, must) in result.items()}


def _rows(x, width):
    """x as rows of `width`, the last padded with zeros (what a kernel loads past the end)."""
    rows = -(-x.size // width)
    padded = np.zeros(rows * width, x.dtype)
    padded[:x.size] = x
    return padded.reshape(rows, width)


def _hillis_steele(rows):
    """Inclusive Hillis-Steele (Kogge-Stone) scan of each row: in step d = 1, 2, 4 .. element k adds
    element k - d of the previous step. Returns the scanned rows; the last column is each row's total."""
    rows = rows.copy()
    step = 1
    while step < rows.shape[1]:
        shifted = rows.copy()
        shifted[:, step:] += rows[:, :-step]
        rows = shifted
        step *= 2
    return rows


def _blelloch_inclusive(rows):
    """Blelloch's scan of each row (width a power of two): the up-sweep builds a tree of sums in place,
    the down-sweep turns it into the exclusive scan, and adding x makes it inclusive. The up-sweep's root
    is the total (kept before it is cleared), returned in the last column as a kernel writes it."""
    a = rows.copy()
    width = a.shape[1]
    step = 1
    while step < width:  # up-sweep: a[k] += a[k - step] at every 2·step-th position
        a[:, 2 * step - 1::2 * step] += a[:, step - 1::2 * step]
        step *= 2
    total = a[:, -1].copy()
    a[:, -1] = 0
    step = width // 2
    while step >= 1:  # down-sweep: (left, right) <- (right, right + left)
        left = a[:, step - 1::2 * step].copy()
        a[:, step - 1::2 * step] = a[:, 2 * step - 1::2 * step]
        a[:, 2 * step - 1::2 * step] += left
        step //= 2
    a += rows
    a[:, -1] = total  # the block's total, as the kernel stores it for the next level
    return a


def _kogge_stone_float4(rows):
    """Tiles of 1024: each of 256 threads adds its four contiguous elements in turn, the threads' totals
    are scanned Hillis-Steele style, and each thread adds its exclusive offset to its four partial sums."""
    tiles = rows.shape[0]
    own = np.cumsum(rows.reshape(tiles, 256, 4), axis=2, dtype=F32)
    totals = _hillis_steele(own[:, :, 3])
    offsets = np.zeros_like(totals)
    offsets[:, 1:] = totals[:, :-1]
    return (own + offsets[:, :, None]).reshape(tiles, 1024)


def _hierarchical(x, width, scan_rows, lag=1):
    """A scan in blocks of `width`: `scan_rows` scans every block (its last column is the block's total),
    the totals are scanned the same way, recursively, and block b adds the inclusive total of block
    b - lag (lag 1 is right: the blocks before b)."""
    rows = scan_rows(_rows(x, width))
    if rows.shape[0] > 1:
        totals = _hierarchical(rows[:, -1].copy(), width, scan_rows)
        offsets = np.zeros(rows.shape[0], rows.dtype)
        offsets[lag:] = totals[:-lag]
        rows = rows + offsets[:, None]
    return rows.reshape(-1)[:x.size]


def _drop_partial(out, width):
    kept = out.copy()
    kept[out.size // width * width:] = np.nan
    return kept


# --------------------------------------------------------------------------- levels 2 and 3's orders

THREADS = 256
ITEMS = 8
WARPS = THREADS // 32
TILE = THREADS * ITEMS


def _block_scan(rows):
    """The block scan of levels 2 and 3 on tiles of 2048 (rows of `rows`): each of 256 threads adds its
    eight contiguous elements in turn; the threads' totals are scanned within each warp by __shfl_up_sync
    (Kogge-Stone over 32 lanes), the eight warp totals by warp 0 the same way. Returns (the thread's
    offset within the tile, its eight partial sums, the tile's total)."""
    tiles = rows.shape[0]
    own = np.cumsum(rows.reshape(tiles, WARPS, 32, ITEMS), axis=3, dtype=F32)
    lanes = _kogge_stone_last_axis(own[..., -1])
    lane_before = np.zeros_like(lanes)
    lane_before[..., 1:] = lanes[..., :-1]
    warps = _kogge_stone_last_axis(lanes[..., -1].copy())
    warp_before = np.zeros_like(warps)
    warp_before[:, 1:] = warps[:, :-1]
    offsets = warp_before[:, :, None] + lane_before
    return offsets, own, warps[:, -1]


def _kogge_stone_last_axis(values):
    values = values.copy()
    step = 1
    while step < values.shape[-1]:
        shifted = values.copy()
        shifted[..., step:] += values[..., :-step]
        values = shifted
        step *= 2
    return values


def _tree_sum(values):
    """A warp's butterfly sum (__shfl_xor_sync with 16, 8, 4, 2, 1) of the last axis, 32 wide: lane l adds
    lane l ^ 16 first, so lane 0 ends with ((v0 + v16) + (v8 + v24)) + ..."""
    while values.shape[-1] > 1:
        half = values.shape[-1] // 2
        values = values[..., :half] + values[..., half:]
    return values[..., 0]


def _reduce_then_scan(x):
    """Level 2. Pass 1: each tile's sum, thread t adding elements t, t + 256 .. in turn, then a shuffle
    tree per warp and over the eight warps. Pass 2: one block scans the tile sums, 2048 at a time with a
    carry. Pass 3: each tile's block scan, its thread offsets added to its tile's offset first."""
    rows = _rows(x, TILE)
    tiles = rows.shape[0]
    per_thread = np.cumsum(rows.reshape(tiles, ITEMS, THREADS), axis=1, dtype=F32)[:, -1]
    sums = _tree_sum(_tree_sum(per_thread.reshape(tiles, WARPS, 32)))  # lanes, then the warps' sums
    # pass 2: inclusive scan of the sums, chunk by chunk, each chunk's scan offset by the carry
    chunks = _rows(sums, TILE)
    offsets, own, totals = _block_scan(chunks)
    carry = np.zeros(chunks.shape[0], F32)
    for c in range(1, chunks.shape[0]):
        carry[c] = carry[c - 1] + totals[c - 1]
    scanned = ((carry[:, None, None] + offsets)[..., None] + own).reshape(-1)[:tiles]
    before = np.zeros(tiles, F32)
    before[1:] = scanned[:-1]
    offsets, own, _ = _block_scan(rows)
    return ((before[:, None, None] + offsets)[..., None] + own).reshape(-1)[:x.size]


def _lookback(x, rng, farthest):
    """Level 3: each tile's block scan, and its offset by decoupled look-back. Tile t finds the nearest
    predecessor p that has published its inclusive prefix, here p = t - k with k drawn from 1 ..
    `farthest`, and adds the aggregates of the tiles in between: warp 0 reads 32 predecessors at a time,
    lane 0 the nearest, sums the window with a butterfly and adds the windows one after another. The
    tile's own inclusive prefix, the next tiles' starting point, is that offset plus its aggregate."""
    rows = _rows(x, TILE)
    tiles = rows.shape[0]
    offsets, own, aggregates = _block_scan(rows)
    inclusive = np.zeros(tiles, F32)
    exclusive = np.zeros(tiles, F32)
    for t in range(tiles):
        if t > 0:
            p = t - int(rng.integers(1, min(t, farthest) + 1))
            # nearest first: aggregates t-1 .. p+1, then p's inclusive prefix
            chain = np.concatenate([aggregates[p + 1:t][::-1], inclusive[p:p + 1]])
            total = F32(0)
            for start in range(0, chain.size, 32):
                window = np.zeros(32, F32)
                part = chain[start:start + 32]
                window[:part.size] = part
                total = F32(total + _tree_sum(window))
            exclusive[t] = total
        inclusive[t] = exclusive[t] + aggregates[t]
    return ((exclusive[:, None, None] + offsets)[..., None] + own).reshape(-1)[:x.size]
