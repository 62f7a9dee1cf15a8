"""The sum by correct and wrong methods, from which `grader check reduction` measures the tolerance.

`variants(inputs, rng)` (grader/kit.py) returns {name: ({"output": one-element array}, "pass" or
"fail")}. The check draws each functional case's input with three seeds, grades every method's sum
with the grader's own two measures, and requires each "pass" method to stay 3 times under the limits
in every case and each "fail" method to pass them 3 times over in some case (statement.md,
"Accuracy").

A kernel's FP32 sum is reproduced bit for bit by doing its additions in the same order in numpy
float32 (IEEE round to nearest, as on a GPU): the trees of the reference levels (interleaved and
sequential addressing, two loads added, a grid-stride loop per thread, warp shuffles over float4
loads), block sums added one by one in a random order (what atomicAdd does), numpy's own pairwise
float32 sum, and one thread adding every element in turn. Each shortcut is simulated by the roundings
it makes (numpy's float16 add rounds through float32 first, which can differ from a GPU's __hadd only
in the last bit of a rare tie), and each wrong kernel by the terms it leaves out or misreads.
"""

from __future__ import annotations

import numpy as np

BLOCK = 256
"""Threads per block in every level, as in levels/*.cu."""
FULL_GRID = 132 * 8
"""Blocks of levels 5 and 6 on an H100 or H200 (132 multiprocessors, 8 blocks of 256 threads each);
the emulator reports the same count."""
FLOAT_EXACT = 1 << 24
"""Above this a float no longer holds every integer."""
HALF_UP_TO = 1 << 22
"""The FP16 and BF16 variants are left out of cases larger than this: numpy's half-precision
arithmetic is slow (at 17,825,793 elements the five of them take about four times as long as every
correct order together), and where they fail is the small sizes. In a sum of millions, half's input rounding (2^-12 of
each element, random in sign) is as diluted as FP32's is, and there they can pass a case by chance."""
HALF = "half"
"""A variant measured up to HALF_UP_TO elements only."""


def variants(inputs, rng):
    x = inputs["input"]
    with np.errstate(over="ignore"):  # a half-precision sum may overflow: that is its mistake
        return {name: ({"output": np.array([method(x)], np.float32)}, must)
                for name, (method, must, *where) in _methods(rng).items() if not where or x.size <= HALF_UP_TO}


def _methods(rng: np.random.Generator) -> dict:
    """name: (sum of the float32 input, "pass" or "fail"[, HALF])."""
    return {
        "level 1: interleaved tree, multi-pass": (lambda x: block_passes(x, tree=tree_interleaved), "pass"),
        "level 2: sequential-addressing tree": (lambda x: block_passes(x), "pass"),
        "levels 3, 4: two loads added, then the tree": (lambda x: block_passes(x, loads=2), "pass"),
        "level 5: grid-stride loop, 1056 blocks": (lambda x: grid_stride(x, 1), "pass"),
        "level 6: float4 grid-stride, warp shuffles": (lambda x: grid_stride(x, 4), "pass"),
        "block trees, atomicAdd in random order": (lambda x: atomic_partials(x, rng), "pass"),
        "numpy np.sum (pairwise, FP32)": (lambda x: np.sum(x, dtype=np.float32), "pass"),
        "one thread, sequential FP32 loop": (sequential, "pass"),
        "FP16 accumulation (wrong/half_accumulation.cu)": (lambda x: grid_stride(x, 1, 1024, np.float16), "fail", HALF),
        "FP16 inputs, FP32 tree": (lambda x: block_passes(to_f16(x).astype(np.float32)), "fail", HALF),
        "FP16 tree, FP16 inputs": (lambda x: block_passes(x, dtype=np.float16), "fail", HALF),
        "BF16 inputs, FP32 tree": (lambda x: block_passes(to_bf16(x)), "fail", HALF),
        "BF16 tree, BF16 inputs": (lambda x: block_passes(to_bf16(x), round_to=to_bf16), "fail", HALF),
        "drops the last N % 4 (wrong/float4_no_tail.cu)": (lambda x: block_passes(x[:x.size // 4 * 4]), "fail"),
        "drops the last partial block (grid rounded down)": (
            lambda x: block_passes(x[:max(x.size // BLOCK, 1) * BLOCK]), "fail"),
        "first 16,384 only (wrong/single_block.cu)": (lambda x: block_passes(x[:16384]), "fail"),
        "index through a float (fails at N = 17,825,793)": (float_index, "fail"),
    }


# --------------------------------------------------------------------------- roundings


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (8 significant bits), round to nearest even, kept as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def to_f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(np.float16)


# --------------------------------------------------------------------------- the orders of the levels


def tree_sequential(a: np.ndarray, round_to=None) -> np.ndarray:
    """Each row of `a` (power-of-two width) summed as `s = width/2 .. 1: a[t] += a[t + s]` for t < s:
    sequential addressing (levels 2 to 4), and also what __shfl_down_sync with offsets 16 .. 1 does
    within a warp (level 6). `round_to` rounds every partial sum (a reduced-precision tree)."""
    s = a.shape[1] // 2
    while s:
        a[:, :s] += a[:, s:2 * s]
        if round_to is not None:
            a[:, :s] = round_to(a[:, :s])
        s //= 2
    return a[:, 0].copy()


def tree_interleaved(a: np.ndarray) -> np.ndarray:
    """Interleaved addressing (level 1): `s = 1, 2, 4 ..: a[t] += a[t + s]` for t a multiple of 2s."""
    s = 1
    while s < a.shape[1]:
        a[:, ::2 * s] += a[:, s::2 * s]
        s *= 2
    return a[:, 0].copy()


def padded_rows(x: np.ndarray, width: int, dtype=np.float32) -> np.ndarray:
    """x as rows of `width`, zeros after its end: a bounds-checked load of 0.0f adds nothing, exactly."""
    rows = max(1, -(-x.size // width))  # at least one row: a launch has at least one block
    out = np.zeros(rows * width, dtype)
    out[:x.size] = x
    return out.reshape(rows, width)


def block_passes(x: np.ndarray, loads: int = 1, tree=tree_sequential, dtype=np.float32, round_to=None) -> float:
    """Levels 1 to 4: one partial sum per block of BLOCK threads, each thread first adding `loads`
    elements a block's width apart (two in levels 3 and 4), then the block's tree; the partials are
    reduced the same way, pass after pass, until one value is left. An empty x sums to 0 (a kernel that
    reads nothing writes the 0 it started from)."""
    values = np.asarray(x, dtype)
    while True:
        rows = padded_rows(values, BLOCK * loads, dtype).reshape(-1, loads, BLOCK)  # a fresh array
        acc = rows[:, 0, :]
        for k in range(1, loads):
            acc += rows[:, k, :]
        if round_to is not None:
            acc = round_to(acc)
        values = tree(acc, round_to) if round_to is not None else tree(acc)
        if values.size == 1:
            return float(values[0])


def grid_stride_pass(x: np.ndarray, blocks: int, vector: int, dtype=np.float32) -> np.ndarray:
    """One pass of levels 5 (vector = 1) and 6 (vector = 4): blocks · BLOCK threads walk the array in
    steps of the grid's width, each adding its elements (a float4 as (x + y) + (z + w)) to its own
    sum one after another; in level 6 the first N % 4 threads then add the tail. Level 5 finishes
    each block with the sequential-addressing tree; level 6 with shuffles in each warp (the same
    tree over 32 lanes) and then over the block's 8 warp sums. `dtype` float16 is
    wrong/half_accumulation.cu: the same loop and tree with every value and sum in half."""
    threads = blocks * BLOCK
    whole = x.size // vector * vector
    if vector == 4:
        quads = x[:whole].reshape(-1, 4)
        items = (quads[:, 0] + quads[:, 1]) + (quads[:, 2] + quads[:, 3])
    else:
        items = x
    steps = padded_rows(items, threads, dtype)
    acc = steps[0].copy()
    for row in steps[1:]:
        acc += row
    if vector == 4:
        acc[:x.size - whole] += x[whole:]
        warps = tree_sequential(acc.reshape(-1, 32))  # one sum per warp, in its lane 0
        return tree_sequential(warps.reshape(blocks, BLOCK // 32))  # lanes 8 .. 31 add zeros: exact
    return tree_sequential(acc.reshape(blocks, BLOCK))


def grid_stride(x: np.ndarray, vector: int, max_blocks: int = FULL_GRID, dtype=np.float32) -> float:
    """Levels 5 and 6: a grid of at most `max_blocks` blocks, then one block over their partial sums."""
    values = np.asarray(x, np.float32)
    blocks = min(-(-values.size // (BLOCK * vector)), max_blocks)
    values = grid_stride_pass(values, blocks, vector, dtype)
    if values.size > 1:
        values = grid_stride_pass(values, 1, vector, dtype)
    return float(values[0])


def atomic_partials(x: np.ndarray, rng: np.random.Generator) -> float:
    """Block sums (the level-2 tree) added one by one, in a random order, into an output zeroed
    first: a kernel that ends with atomicAdd(output, block_sum)."""
    partials = tree_sequential(padded_rows(x, BLOCK))
    rng.shuffle(partials)
    return float(np.cumsum(partials, dtype=np.float32)[-1])


def sequential(x: np.ndarray) -> float:
    """One thread adding every element in turn in FP32 (np.cumsum is that loop)."""
    return float(np.cumsum(x, dtype=np.float32)[-1])


def float_index(x: np.ndarray) -> float:
    """The level-2 tree with each thread's index passed through a float: above 2^24 an odd index rounds
    to an even neighbour (ties to even), so some elements are read twice and others never. Below 2^24
    it is level 2 exactly; the functional case of 2^24 + 2^20 + 1 elements is where it fails."""
    n = x.size
    if n <= FLOAT_EXACT:
        return block_passes(x)
    index = np.arange(FLOAT_EXACT, n, dtype=np.int64).astype(np.float32).astype(np.int64)
    read = np.concatenate([x[:FLOAT_EXACT], x[np.minimum(index, n - 1)]])
    return block_passes(read)
