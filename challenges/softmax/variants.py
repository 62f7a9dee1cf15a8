"""The softmax by correct and wrong methods, from which `grader check softmax` measures the tolerance.

`variants(inputs, rng)` (grader/kit.py) returns {name: ({"output": array}, "pass" or "fail")}. The
check draws each functional case's input with three seeds, grades every method's output with the
grader's own two measures, and requires each "pass" method to stay 3 times under the limits in every
case and each "fail" method to pass them 3 times over in some case (statement.md, "Accuracy").

A kernel's FP32 arithmetic is reproduced in numpy float32 (IEEE round to nearest, as on a GPU; a
product and a sum kept as two roundings where a GPU may fuse them, which only adds error), in the
order the kernel uses: the trees and grid-stride loops of the reference levels, the online (maximum,
sum) pairs and the order in which they combine, float4 steps, the last block's combine. Each exp is
the correctly rounded value moved by a random 0, 1 or 2 units in the last place (CUDA documents at
most 2 for expf; exp(0) stays exactly 1, as on a GPU); __expf is modelled as the hardware computes
it, ex2.approx of x · log2(e) rounded to FP32, with 2 units of error and results below 2^-126 flushed
to zero, and also at its documented bound (2 + 1.173 |x| units). Half is numpy's float16, bfloat16 a
rounding of float32 to 8 significant bits.

Left out: long sequential sums (one block of 256 or 1,024 threads, or one thread, adding its share of
the exps in turn). They are correct algorithms whose error grows with the length of the loop: within
the limits at the functional sizes (up to a million elements, for a block of threads) and beyond them
at the timed sizes of 2^23 and 2^25, which the check does not draw. So they are neither methods that
must pass everywhere nor wrong ones (statement.md, "Accuracy"; wrong/one_block_long_sums.cu).
"""

from __future__ import annotations

import numpy as np

BLOCK = 256
"""Threads per block in every level, as in levels/*.cu."""
FULL_GRID = 132 * 8
"""Blocks of the grid-stride levels on an H100 or H200 (132 multiprocessors, 8 blocks of 256 each);
the emulator reports the same count."""
WRONG_GRID = 64
"""Blocks of the grid-stride kernels in wrong/."""
F32 = np.float32
LOG2E = F32(1.4426950408889634)


def variants(inputs, rng):
    x = inputs["input"]
    with np.errstate(all="ignore"):  # the wrong methods overflow and divide by zero on purpose
        return {name: ({"output": method(x)}, must) for name, (method, must) in _methods(rng).items()}


def _methods(rng: np.random.Generator) -> dict:
    """name: (method of the float32 input, "pass" or "fail")."""
    expf, fast, fast_bound = Exp("expf", rng), Exp("fast", rng), Exp("fast_bound", rng)
    same = lambda v: v  # noqa: E731
    return {
        "level 1: three passes, interleaved trees": (lambda x: level1(x, expf), "pass"),
        "level 2: grid-stride passes, 1,056 blocks": (lambda x: level2(x, expf), "pass"),
        "level 3: online pairs, shared-memory tree": (lambda x: level3(x, expf), "pass"),
        "level 4: float4 online, shuffles, 1 / S": (lambda x: level4(x, expf), "pass"),
        "level 1 with __expf (ex2.approx)": (lambda x: level1(x, fast), "pass"),
        "level 1 with __expf at its documented bound": (lambda x: level1(x, fast_bound), "pass"),
        "level 3 with __expf at its documented bound": (lambda x: level3(x, fast_bound), "pass"),
        "exp2f(fma(x, log2 e, -M log2 e)), tree sum": (lambda x: fma_exp2(x, expf), "pass"),
        "exp(x - M - ln S) (log domain)": (lambda x: log_domain(x, expf), "pass"),
        "block sums added by atomicAdd, random order": (
            lambda x: quotients(x, x.max(), level2_sum(x, expf, x.max(), partial_order=rng), expf), "pass"),
        "numpy np.sum of the FP32 exps (pairwise)": (
            lambda x: quotients(x, x.max(), np.sum(expf((x - x.max()).astype(F32)), dtype=F32), expf), "pass"),
        "no max subtraction (wrong/no_max_subtraction.cu)": (lambda x: no_max(x, expf), "fail"),
        "maximum starting at 0 instead of -infinity": (lambda x: max_from(x, expf, max(F32(0), x.max())), "fail"),
        "maximum of the first block (wrong/max_of_first_block.cu)": (
            lambda x: max_from(x, expf, x[:BLOCK].max()), "fail"),
        "softmax per block (wrong/block_local_sum.cu)": (lambda x: block_local(x, expf), "fail"),
        "sum of the first block's exps only": (lambda x: first_block_sum(x, expf), "fail"),
        "sum without the last N % 4 terms": (lambda x: sum_without_tail(x, expf), "fail"),
        "sum counted twice (wrong/sum_never_zeroed.cu)": (lambda x: twice_summed(x, expf), "fail"),
        "FP16 exp, argument and result (wrong/half_exp.cu)": (lambda x: half_exp(x, expf, (to_f16, to_f16)), "fail"),
        "FP16 argument, FP32 exp": (lambda x: half_exp(x, expf, (to_f16, same)), "fail"),
        "FP32 exp, FP16 result": (lambda x: half_exp(x, expf, (same, to_f16)), "fail"),
        "BF16 exp, argument and result": (lambda x: half_exp(x, expf, (to_bf16, to_bf16)), "fail"),
        "FP32 exps, FP16 sum": (lambda x: half_sum(x, expf), "fail"),
    }


# --------------------------------------------------------------------------- roundings and exps


def ulps(v: np.ndarray, k) -> np.ndarray:
    """Positive finite float32 values moved by k units in the last place (k an integer or an array),
    kept between 0 and the largest finite float; 0, infinity (an exp that overflowed, as expf's does on
    a GPU) and NaN stay as they are. In int32 without overflow: a positive finite float's bits are
    below 0x7F800000 and |k| stays far below 2^31 - 0x7F800000."""
    bits = v.view(np.int32) + np.asarray(k, np.int32)
    np.maximum(bits, 0, out=bits)
    np.minimum(bits, 0x7F7FFFFF, out=bits)
    return np.where((v > 0) & (v < np.inf), bits.view(F32), v)


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (8 significant bits), round to nearest even, kept as float32."""
    bits = np.ascontiguousarray(x, F32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(F32)


def to_f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, F32).astype(np.float16).astype(F32)


class Exp:
    """exp of float32 arguments in float32, by a model of one GPU function: "expf" (the correctly
    rounded value moved by up to 2 units), "fast" (__expf as the hardware computes it) or "fast_bound"
    (__expf at its documented bound)."""

    def __init__(self, model: str, rng: np.random.Generator):
        self.model, self.rng = model, rng

    def __call__(self, d) -> np.ndarray:
        d = np.atleast_1d(np.asarray(d, F32))
        if self.model == "fast":  # __expf: ex2.approx.ftz(x · log2 e)
            t = (d * LOG2E).astype(F32)
            e = ulps(np.exp2(t.astype(np.float64)).astype(F32), self.rng.integers(-2, 3, d.size))
        else:
            e = np.exp(d.astype(np.float64)).astype(F32)
            if self.model == "expf":
                e = ulps(e, self.rng.integers(-2, 3, d.size))
            elif self.model == "fast_bound":
                bound = 2 + np.floor(1.173 * np.abs(d.astype(np.float64)))
                e = ulps(e, np.rint((2 * self.rng.random(d.size) - 1) * bound).astype(np.int64))
        if self.model in ("fast", "fast_bound"):
            e[e < F32(2.0 ** -126)] = 0  # flushed to zero
        e[d == 0] = 1  # exp(0) is exactly 1 on a GPU
        return e


# --------------------------------------------------------------------------- reductions in the levels' orders


def padded(x: np.ndarray, width: int, fill: float) -> np.ndarray:
    """x as rows of `width`, `fill` after its end (at least one row: a launch has at least one block)."""
    rows = max(1, -(-x.size // width))
    out = np.full(rows * width, fill, x.dtype)
    out[:x.size] = x
    return out.reshape(rows, width)


def tree(a: np.ndarray, op, interleaved: bool = False) -> np.ndarray:
    """Each row of `a` (power-of-two width) reduced by `op` as a tree: sequential addressing
    (a[t] = op(a[t], a[t + s]), s = width/2 .. 1), or interleaved (s = 1, 2 ..: a[t] = op(a[t], a[t + s])
    for t a multiple of 2s)."""
    a = a.copy()
    if interleaved:
        s = 1
        while s < a.shape[1]:
            a[:, ::2 * s] = op(a[:, ::2 * s], a[:, s::2 * s])
            s *= 2
    else:
        s = a.shape[1] // 2
        while s:
            a[:, :s] = op(a[:, :s], a[:, s:2 * s])
            s //= 2
    return a[:, 0].copy()


def add(a, b):
    return (a + b).astype(a.dtype)


def passes(x: np.ndarray, op, fill: float, interleaved: bool) -> F32:
    """Level 1: a tree per block of 256 contiguous values, pass after pass, until one value is left."""
    values = x
    while True:
        values = tree(padded(values, BLOCK, fill), op, interleaved)
        if values.size == 1:
            return values[0]


def grid_stride(values: np.ndarray, threads: int, fill: float, op) -> np.ndarray:
    """The running results of `threads` threads walking `values` in steps of the grid's width."""
    rows = padded(values, threads, fill)
    acc = rows[0].copy()
    for row in rows[1:]:
        acc = op(acc, row)
    return acc


def grid_for(items: int, limit: int = FULL_GRID) -> int:
    return min(limit, max(1, -(-items // BLOCK)))


def combine(m1, s1, m2, s2, exp):
    """Pairs (m1, s1) absorb (m2, s2), element by element, as `combine` in levels 3 and 4."""
    m1, s1, m2, s2 = (np.array(v, F32, ndmin=1) for v in (m1, s1, m2, s2))
    m, s = m1.copy(), s1.copy()
    up = m2 > m1
    if up.any():
        s[up] = (s1[up] * exp(m1[up] - m2[up])).astype(F32) + s2[up]
        m[up] = m2[up]
    down = ~up & (m2 != -np.inf)
    if down.any():
        s[down] = s1[down] + (s2[down] * exp(m2[down] - m1[down])).astype(F32)
    return m, s


def pair_tree(m: np.ndarray, s: np.ndarray, exp) -> tuple[np.ndarray, np.ndarray]:
    """Rows of pairs combined as a sequential-addressing tree (level 3's shared-memory tree; also
    level 4's butterfly, whose lane 0 combines exactly these pairs since both lanes of a step agree)."""
    m, s = m.copy(), s.copy()
    step = m.shape[1] // 2
    while step:
        a, b = combine(m[:, :step].ravel(), s[:, :step].ravel(), m[:, step:2 * step].ravel(),
                       s[:, step:2 * step].ravel(), exp)
        m[:, :step], s[:, :step] = a.reshape(-1, step), b.reshape(-1, step)
        step //= 2
    return m[:, 0].copy(), s[:, 0].copy()


def online_threads(x: np.ndarray, threads: int, exp, vector: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Each thread's running (m, s) over its grid-stride share, one element (level 3) or one float4
    (level 4: one rescale for the largest of four, then four exps, then the tail) per step."""
    m = np.full(threads, -np.inf, F32)
    s = np.zeros(threads, F32)
    if vector == 1:
        for row in padded(x, threads, -np.inf):
            up = row > m
            scale = np.where(up, exp(np.where(up, m - row, 0)), F32(1))
            term = np.where(up, F32(1), exp(np.where(up, 0, row - m)))
            term[row == -np.inf] = 0
            s = np.where(up, (s * scale).astype(F32) + F32(1), (s + term).astype(F32))
            m = np.maximum(m, row)
        return m, s
    whole = x.size // 4 * 4
    steps = max(1, -(-(whole // 4) // threads))
    quads = np.full((steps * threads, 4), -np.inf, F32)
    quads[:whole // 4] = x[:whole].reshape(-1, 4)
    for step in quads.reshape(steps, threads, 4):
        top = step.max(axis=1)
        up = top > m
        s = np.where(up, (s * exp(np.where(up, m - top, 0))).astype(F32), s)
        m = np.maximum(m, top)
        live = m != -np.inf
        e = np.zeros((threads, 4), F32)
        e[live] = exp((step[live] - m[live, None]).ravel()).reshape(-1, 4)
        s = (s + ((e[:, 0] + e[:, 1]).astype(F32) + (e[:, 2] + e[:, 3]).astype(F32)).astype(F32)).astype(F32)
    for t, value in enumerate(x[whole:]):  # thread t takes element 4·(N / 4) + t
        a, b = combine(m[t], s[t], value, 1, exp)
        m[t], s[t] = a[0], b[0]
    return m, s


# --------------------------------------------------------------------------- correct methods


def quotients(x: np.ndarray, top: F32, total: F32, exp, reciprocal: bool = False) -> np.ndarray:
    e = exp((x - top).astype(F32))
    if reciprocal:
        return (e * (F32(1) / F32(total))).astype(F32)
    return (e / F32(total)).astype(F32)


def level1(x, exp):
    top = passes(x, np.fmax, -np.inf, interleaved=True)
    exps = exp((x - top).astype(F32))
    total = passes(exps, add, 0.0, interleaved=True)
    return quotients(x, top, total, exp)


def level2_sum(x, exp, top, blocks=None, partial_order=None):
    """Level 2's S: grid-stride sums of exp(x - M), a tree per block, then every block's threads add
    the partial sums (thread t: partials t, t + 256, ...) and a tree. partial_order: the partial sums
    added one by one in an order drawn from this generator instead (atomicAdd)."""
    blocks = blocks or grid_for(x.size)
    exps = exp((x - top).astype(F32))
    partials = tree(grid_stride(exps, blocks * BLOCK, 0.0, add).reshape(blocks, BLOCK), add)
    if partial_order is not None:
        partial_order.shuffle(partials)
        return np.cumsum(partials, dtype=F32)[-1]
    return tree(grid_stride(partials, BLOCK, 0.0, add).reshape(1, BLOCK), add)[0]


def level2(x, exp):
    top = x.max()
    return quotients(x, top, level2_sum(x, exp, top), exp)


def level3(x, exp):
    blocks = grid_for(x.size)
    m, s = online_threads(x, blocks * BLOCK, exp)
    bm, bs = pair_tree(m.reshape(blocks, BLOCK), s.reshape(blocks, BLOCK), exp)
    # every block of the second kernel: thread t combines pairs t, t + 256, ... in turn, then the tree
    tm, ts = np.full(BLOCK, -np.inf, F32), np.zeros(BLOCK, F32)
    for start in range(0, blocks, BLOCK):
        n = min(BLOCK, blocks - start)
        tm[:n], ts[:n] = combine(tm[:n], ts[:n], bm[start:start + n], bs[start:start + n], exp)
    top, total = pair_tree(tm.reshape(1, BLOCK), ts.reshape(1, BLOCK), exp)
    assert top[0] == x.max()
    return quotients(x, top[0], total[0], exp)


def warp_then_block(m, s, exp):
    """Level 4's block combine: a butterfly per warp, then the warps' pairs in warp 0."""
    wm, ws = pair_tree(m.reshape(-1, 32), s.reshape(-1, 32), exp)
    return pair_tree(wm.reshape(-1, BLOCK // 32), ws.reshape(-1, BLOCK // 32), exp)


def level4(x, exp):
    blocks = grid_for(x.size // 4)
    m, s = online_threads(x, blocks * BLOCK, exp, vector=4)
    bm, bs = warp_then_block(m, s, exp)
    tm, ts = np.full(BLOCK, -np.inf, F32), np.zeros(BLOCK, F32)  # the last block
    for start in range(0, blocks, BLOCK):
        n = min(BLOCK, blocks - start)
        tm[:n], ts[:n] = combine(tm[:n], ts[:n], bm[start:start + n], bs[start:start + n], exp)
    top, total = warp_then_block(tm, ts, exp)
    return quotients(x, top[0], total[0], exp, reciprocal=True)


def fma_exp2(x, exp):
    """exp2(fma(x, log2 e, -M · log2 e)): log2(e) folded into one FMA (FlashAttention's form); the
    rounding of M · log2 e is the same for every element and cancels in the quotient."""
    top = x.max()
    shift = F32(top * LOG2E)
    t = (x.astype(np.float64) * np.float64(LOG2E) - np.float64(shift)).astype(F32)  # one rounding
    e = ulps(np.exp2(t.astype(np.float64)).astype(F32), exp.rng.integers(-2, 3, t.size))  # exp2f: 2 units
    e[t == 0] = 1
    total = passes(e, add, 0.0, interleaved=False)
    return (e / total).astype(F32)


def log_domain(x, exp):
    """exp(x - M - ln S): the logarithm of the sum subtracted instead of the sum divided."""
    top = x.max()
    total = level2_sum(x, exp, top)
    log_total = ulps(np.array([np.log(np.float64(total))], F32), exp.rng.integers(-1, 2, 1))[0]
    return exp(((x - top).astype(F32) - log_total).astype(F32))


# --------------------------------------------------------------------------- wrong methods


def no_max(x, exp):
    e = exp(x)
    return (e / passes(e, add, 0.0, False)).astype(F32)


def max_from(x, exp, top):
    """The right algorithm with `top` subtracted instead of the maximum."""
    e = exp((x - top).astype(F32))
    return (e / passes(e, add, 0.0, False)).astype(F32)


def block_local(x, exp):
    """wrong/block_local_sum.cu: every block of a 64-block grid divides its grid-stride share by its own
    maximum and sum."""
    blocks = grid_for(x.size, WRONG_GRID)
    out = np.empty(x.size, F32)
    owner = (np.arange(x.size) // BLOCK) % blocks
    for b in range(blocks):
        mine = owner == b
        share = x[mine]
        e = exp((share - share.max()).astype(F32))
        out[mine] = (e / passes(e, add, 0.0, False)).astype(F32)
    return out


def first_block_sum(x, exp):
    """S taken from the first block's 256 elements only."""
    e = exp((x - x.max()).astype(F32))
    return (e / passes(e[:BLOCK], add, 0.0, False)).astype(F32)


def sum_without_tail(x, exp):
    """A float4 loop that leaves the last N % 4 terms out of the sum (but writes every output)."""
    e = exp((x - x.max()).astype(F32))
    whole = x.size // 4 * 4
    return (e / passes(e[:whole], add, 0.0, False)).astype(F32) if whole else np.full(x.size, np.inf, F32)


def half_exp(x, exp, rounding):
    """wrong/half_exp.cu and its cousins: the argument and the result of exp rounded to half (or
    bfloat16), or one of them."""
    d = rounding[0]((x - x.max()).astype(F32))
    e = rounding[1](exp(d))
    return (e / passes(e, add, 0.0, False)).astype(F32)


def half_sum(x, exp):
    """exp in FP32, the sum in half: per-thread sums and a tree, every addition rounded to half."""
    top = x.max()
    e = exp((x - top).astype(F32)).astype(np.float16)
    blocks = grid_for(x.size, WRONG_GRID)
    acc = grid_stride(e, blocks * BLOCK, 0.0, add)
    total = tree(grid_stride(tree(acc.reshape(blocks, BLOCK), add), BLOCK, 0.0, add).reshape(1, BLOCK), add)[0]
    return (exp((x - top).astype(F32)) / F32(total)).astype(F32)


def twice_summed(x, exp):
    """The sum added to a scratch value still holding the previous call's sum (here: the same one)."""
    top = x.max()
    total = level2_sum(x, exp, top)
    return quotients(x, top, F32(total + total), exp)
