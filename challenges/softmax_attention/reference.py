"""Trusted reference for the softmax attention challenge: inputs, the FP64 answer, its error scale.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies, `variants` recomputes the answer by other FP32 methods (correct ones and
wrong ones) so that `grader check` can measure the tolerance against them.

output = softmax(Q K^T / sqrt(d)) V, the softmax taken along each row of the M×N score matrix. The
work is two products of M·N·d multiply-adds each, so the shape's cost is counted in `flops`.

The two large products run in FP64 on the GPU when `xp` is CuPy (cuBLAS DGEMM, as matmul's reference
does); the M×N softmax between them, and everything for the small functional shapes, runs on the host.
"""

import math

import numpy as np

F32 = np.float32

LEETGPU_SPREAD = 0.1
"""LeetGPU draws Q, K and V uniformly from [-0.1, 0.1]."""
SHARP_SPREAD = 3.0
"""Q and K of the other two kinds of content: uniform in [-3, 3], so that each score q·k / sqrt(d) has
a standard deviation of 3 whatever d is (each product has variance 3^4 / 9, d of them, divided by
d): a row's softmax puts most of its weight on a few keys instead of spreading it evenly."""
MOVE_RANGE = (100.0, 160.0)
"""Moved keys: each row's scores all move by one amount b_i with |b_i| in [C, 2C], C drawn from this
range per case (`generate`)."""
SCALE_FLOOR = 2.0 ** -100
"""Added to every element's scale: only an output whose every contributing value of V is zero has a
scale of 0 otherwise."""


def generate(dims, rng):
    """Q, K and V in one of three kinds of content, drawn with equal chances per case.

    - LeetGPU's values: Q, K and V uniform in [-0.1, 0.1]. Scores are then within about ±0.01 of 0,
      so each row's softmax is nearly uniform and every output is close to the mean of V's column.
    - Sharp: Q and K uniform in [-3, 3], V in [-1, 1]. Scores have a standard deviation of 3 and the
      softmax weighs a few keys much more than the rest.
    - Moved keys: sharp values, then every key moved by the same vector c, which is zero but in one
      coordinate r. Each score of row i moves by the same amount b_i = q_ir c_r / sqrt(d), and a
      softmax along the row cannot see a common shift: the answer is that of the unmoved keys. A
      kernel that does not subtract each row's maximum can: Q's column r is drawn with |q_ir| in
      [1, 2] and a random sign, and c_r = C sqrt(d) with C in [100, 160], so |b_i| lies in [100, 320]:
      exp(score) overflows FP32 (above 88.7) in the rows moved up and is 0 (below -103.9) for every
      key in most rows moved down. Without the subtraction those rows come out as inf / inf or 0 / 0,
      NaN either way.

    Values are drawn in float64 and rounded to float32 once, so they use every bit of the significand
    (see challenges/reduction/reference.py, `_uniform`)."""
    m, n, d = dims["M"], dims["N"], dims["d"]
    kind = rng.integers(3)  # 0: LeetGPU's values; 1: sharp; 2: moved keys
    spread = LEETGPU_SPREAD if kind == 0 else SHARP_SPREAD
    q = _uniform(rng, (m, d), spread)
    k = _uniform(rng, (n, d), spread)
    v = _uniform(rng, (n, d), LEETGPU_SPREAD if kind == 0 else 1.0)
    if kind == 2:
        r = int(rng.integers(d))
        size = np.abs(q[:, r].astype(np.float64)) / spread + 1.0  # in [1, 2]
        q[:, r] = np.where(rng.random(m) < 0.5, -size, size)
        k[:, r] = (k[:, r].astype(np.float64) + rng.uniform(*MOVE_RANGE) * math.sqrt(d)).astype(F32)
    return {"Q": q, "K": k, "V": v}


def reference(inputs, xp):
    """softmax(Q K^T / sqrt(d)) V in FP64: the scores (every product of two float32 values is exact in
    float64, and d <= 128 of them add with an error below 2^-46 of their absolute sum), each row's
    maximum subtracted, exp, each row divided by its sum, then the product with V."""
    p, _, _ = _probabilities(inputs, xp)
    return {"output": _product(p, inputs["V"], xp)}


def error_scale(inputs, xp):
    """For output (i, c): sum_j w_ij (|V_jc| + |O_ic|) + 2^-100, w_ij = P_ij (1 + a_ij + |S_ij - m_i|),
    where S = Q K^T / sqrt(d) are the scores, m_i row i's maximum, P the softmax, O the answer, and
    a_ij = (|Q| |K|^T)_ij / sqrt(d) the size of the terms that make S_ij.

    Derivation (statement.md, "Accuracy"). An FP32 kernel gets O_i as a weighted mean of V's rows, and
    what it gets wrong is the weights and the mean:
    - Each score is a dot product: its rounding error is a few units of FP32's roundoff u = 2^-24 times
      a_ij, the sum of its terms' magnitudes (the number of units grows with the additions a term goes
      through, at most d); the scaling by 1 / sqrt(d) adds u |S_ij|, and a_ij >= |S_ij|.
    - The subtraction of the maximum rounds by u |S_ij - m_i|, and expf is off by 2 units in the last
      place: exp turns an error e in its argument into a relative error e of its value, so weight j
      carries a relative error of a few units of u (1 + a_ij + |S_ij - m_i|).
    - A relative error e_j in weight j, after normalising, moves the output by sum_j P_ij e_j
      (V_jc - O_ic): bounded by sum_j P_ij |e_j| (|V_jc| + |O_ic|).
    - The sum of the weights and the weighted sum of V add their own roundings: a few units of u
      times sum_j P_ij |V_jc| and times |O_ic|, covered by the 1 in w_ij.
    The floor keeps the scale positive for an output whose contributing values of V are all zero."""
    p, a, gap = _probabilities(inputs, xp, with_terms=True)
    w = p * (1.0 + a + gap)
    v = inputs["V"]
    o = _product(p, v, xp)
    scale = _product(w, np.abs(v), xp)
    scale += w.sum(axis=1, keepdims=True) * np.abs(o)
    scale += SCALE_FLOOR
    return {"output": scale}


def flops(dims):
    """Two products of M·N·d multiply-adds (the scores, and the weighted sum of V), 2 flops each, and
    one exponential per score."""
    m, n, d = dims["M"], dims["N"], dims["d"]
    return 4.0 * m * n * d + 1.0 * m * n


def baseline(inputs, xp):
    """Attention in CuPy's own calls on the device arrays: the scores by a cuBLAS product (FP32, TF32
    off) and a scaling, the row maxima subtracted, exp, each row divided by its sum, then a second
    cuBLAS product. Every step is a separate kernel and the M×N scores go through memory each time."""
    q, k, v = inputs["Q"], inputs["K"], inputs["V"]
    scores = q @ k.T
    scores *= 1.0 / math.sqrt(q.shape[1])
    scores -= scores.max(axis=1, keepdims=True)
    xp.exp(scores, out=scores)
    scores /= scores.sum(axis=1, keepdims=True)
    return {"output": scores @ v}


def variants(inputs, rng):
    """The answer recomputed in FP32 by other methods, for `grader check` to measure the tolerance
    against: correct ones ("pass"), which a kernel may use, and wrong ones ("fail"), which it must not.

    FP32 is reproduced with numpy float32 arithmetic (IEEE round to nearest, as on a GPU), in the order
    each method adds; a product and a sum kept as two roundings where a GPU would fuse them into one
    (an FMA), which only adds error. expf and exp2f are the correctly rounded values moved by a random
    0, 1 or 2 units in the last place (CUDA documents at most 2); __expf is modelled as the hardware
    computes it (ex2.approx of x · log2(e) rounded to FP32, results below 2^-126 flushed to 0)."""
    q, k, v = inputs["Q"], inputs["K"], inputs["V"]
    ex = _Exp(rng)
    sequential = _dots(q, k, "sequential")  # shared by the variants that add the scores' terms in turn
    blas = _dots(q, k, "blas")
    found = {
        # The three reference levels, each in its own order.
        "level 1: three kernels, sequential sums": _three_kernels(sequential, v, ex, products="sequential"),
        "level 2: a row per block, chunks of 2048 keys": _row_per_block(q, k, v, ex),
        "level 3: 32×32 tiles, base 2, split keys merged": _flash(q, k, v, ex, tile=32, order="sequential",
                                                                  base2=True, split=True),
        # Other correct orders and forms.
        "online softmax in tiles of 64, scores as a tree over d": _flash(q, k, v, ex, tile=64, order="tree"),
        "online softmax in tiles of 64, scores in 4 float4 lanes": _flash(q, k, v, ex, tile=64, order="lanes4"),
        "three passes, scores divided by sqrtf(d), __expf": _three_kernels(sequential, v, ex, divide=True, exp="fast"),
        "three passes, exp2f with log2(e) folded into the scale": _three_kernels(sequential, v, ex, exp="exp2"),
        "numpy float32 products (BLAS order)": _three_kernels(blas, v, ex),
    }
    wrong = {
        "no scaling by 1/sqrt(d)": _three_kernels(blas, v, ex, scale="none"),
        "scaled by 1/d": _three_kernels(blas, v, ex, scale="d"),
        "no max subtraction": _three_kernels(blas, v, ex, subtract_max=False),
        "softmax along the columns": _three_kernels(blas, v, ex, axis=0),
        "scores rounded to half": _three_kernels(blas, v, ex, round_scores=_to_half),
        "Q and K rounded to TF32 (tensor cores, one pass)": _three_kernels(_dots(_to_tf32(q), _to_tf32(k), "blas"), v, ex),
        "last key dropped": (_three_kernels(blas[:, :-1], v[:-1], ex) if k.shape[0] > 1
                             else np.full(q.shape, np.nan, F32)),
    }
    results = {name: ({"output": out}, "pass") for name, out in found.items()}
    results.update({name: ({"output": out}, "fail") for name, out in wrong.items()})
    return results


# --------------------------------------------------------------------------- helpers


def _probabilities(inputs, xp, with_terms=False):
    """The softmax P of the scores in FP64, and with `with_terms` also a (the size of each score's
    terms, scaled) and |S - m| (each score's distance below its row's maximum)."""
    q, k = inputs["Q"], inputs["K"]
    alpha = 1.0 / math.sqrt(q.shape[1])
    s = _product(q, k.T, xp)
    s *= alpha
    s -= s.max(axis=1, keepdims=True)  # s is now S - m <= 0
    p = np.exp(s)
    p /= p.sum(axis=1, keepdims=True)
    if not with_terms:
        return p, None, None
    a = _product(np.abs(q), np.abs(k.T), xp)
    a *= alpha
    np.negative(s, out=s)
    return p, a, s


def _product(a, b, xp):
    """a @ b in FP64 from host arrays: numpy's BLAS, or cuBLAS DGEMM when xp is CuPy."""
    if xp is not np:
        from grader.backends.cuda import matmul64
        return matmul64(np.ascontiguousarray(a), np.ascontiguousarray(b), xp)
    return np.asarray(a, np.float64) @ np.asarray(b, np.float64)


def _uniform(rng, shape, spread):
    """Values uniform in [-spread, spread], drawn in float64 and rounded to float32."""
    return ((rng.random(shape) * 2.0 - 1.0) * spread).astype(F32)

# --------------------------------------------------------------------------- FP32 methods, for variants

LOG2E = 1.4426950408889634
MULTIPROCESSORS = 132
"""An H100's (and H200's) count, which level 3 sizes its key splits by."""


class _Exp:
    """exp in FP32 of float32 arguments, by a model of a GPU function (see `variants`)."""

    def __init__(self, rng):
        self.rng = rng

    def __call__(self, x, kind="expf"):
        x = np.asarray(x, F32)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            if kind == "fast":
                e = np.exp2((x * F32(LOG2E)).astype(np.float64)).astype(F32)
            elif kind == "exp2":
                e = np.exp2(x.astype(np.float64)).astype(F32)
            else:
                e = np.exp(x.astype(np.float64)).astype(F32)
            e = _ulps(e, self.rng.integers(-2, 3, x.shape))
            if kind == "fast":
                e[e < F32(2.0 ** -126)] = 0  # flushed to zero
        e[x == 0] = 1  # exactly 1 on a GPU
        return e


def _ulps(values, steps):
    """Positive float32 values moved by `steps` units in the last place (0, infinity and NaN kept)."""
    bits = values.view(np.int32).astype(np.int64) + steps
    moved = np.clip(bits, 0, 0x7F7FFFFF).astype(np.int32).view(F32)
    return np.where((values > 0) & np.isfinite(values), moved, values)


def _dots(q, k, order):
    """The M×n dot products q_i · k_j in FP32, the terms added in `order`: sequential over d, a
    pairwise tree, 4 lanes (t mod 4, as float4 code does) added at the end, 32 lanes then a shuffle
    tree (a warp per key), or numpy's BLAS product."""
    if order == "blas":
        return (q @ k.T).astype(F32)
    terms = q[:, None, :] * k[None, :, :]  # float32 products, each rounded
    d = terms.shape[2]
    if order == "sequential":
        return _sequential(terms, axis=2)
    if order == "lanes4":
        lanes = [_sequential(terms[:, :, r::4], axis=2) if r < d else 0 for r in range(4)]
        return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])).astype(F32)
    width = 32 if order == "warp" else 1 << max(0, (d - 1).bit_length())
    if order == "warp":  # lane l adds t = l, l + 32, ... in turn
        padded = np.zeros(terms.shape[:2] + (-(-d // 32) * 32,), F32)
        padded[:, :, :d] = terms
        terms = _sequential(padded.reshape(terms.shape[:2] + (-1, 32)), axis=2)
    else:
        padded = np.zeros(terms.shape[:2] + (width,), F32)
        padded[:, :, :d] = terms
        terms = padded
    while terms.shape[2] > 1:  # a tree: element i takes i + half
        half = terms.shape[2] // 2
        terms = terms[:, :, :half] + terms[:, :, half:]
    return terms[:, :, 0]


def _sequential(terms, axis):
    """The sum along `axis`, one term after another, in FP32: a loop over a short axis (no array of
    every partial sum), numpy's cumulative sum over a long one (fewer steps in Python)."""
    terms = np.moveaxis(terms, axis, 0)
    if terms.shape[0] > 256:
        return np.cumsum(terms, axis=0, dtype=F32)[-1]
    total = terms[0].astype(F32)  # a copy
    for term in terms[1:]:
        total += term
    return total


def _scale_of(d):
    return F32(1.0) / np.sqrt(F32(d))


def _three_kernels(raw, v, ex, products="blas", divide=False, exp="expf", scale="sqrt", subtract_max=True, axis=1,
                   round_scores=None):
    """From the dot products `raw` (M×N, FP32): the scores, a softmax over each row (its maximum, exps
    and their sequential sum, quotients), then the products with V, added key after key (`products`
    "sequential", as level 1) or by numpy's BLAS. With the options, a correct or a wrong variation."""
    d = v.shape[1]
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        if scale == "none":
            s = raw
        elif scale == "d":
            s = (raw / F32(d)).astype(F32)
        elif divide:
            s = (raw / np.sqrt(F32(d))).astype(F32)
        else:
            s = (raw * _scale_of(d)).astype(F32)
        if round_scores is not None:
            s = round_scores(s)
        x = (s - s.max(axis=axis, keepdims=True)).astype(F32) if subtract_max else s
        if exp == "exp2":
            e = ex((x * F32(LOG2E)).astype(F32), "exp2")
        else:
            e = ex(x, exp)
        p = (e / np.expand_dims(_sequential(e, axis), axis)).astype(F32)
        if products == "blas":
            return (p @ v).astype(F32)
        return _sequential(p[:, :, None] * v[None, :, :], axis=1)


def _row_per_block(q, k, v, ex, chunk=2048):
    """Level 2: per chunk of keys, warp-per-key scores, the chunk's maximum and exps, their sum as a
    tree, the chunk's weighted sum of V key after key, merged into the running results."""
    m_rows, d = q.shape
    scale = _scale_of(d)
    m = np.full((m_rows, 1), -np.inf, F32)
    l = np.zeros((m_rows, 1), F32)
    acc = np.zeros((m_rows, d), F32)
    with np.errstate(invalid="ignore"):
        for j0 in range(0, k.shape[0], chunk):
            s = (_dots(q, k[j0:j0 + chunk], "warp") * scale).astype(F32)
            m_new = np.maximum(m, s.max(axis=1, keepdims=True))
            e = ex((s - m_new).astype(F32))
            correction = ex((m - m_new).astype(F32))
            total = _tree(e)
            l = (l * correction + total[:, None]).astype(F32)
            acc = (acc * correction + _sequential(e[:, :, None] * v[None, j0:j0 + chunk, :], axis=1)).astype(F32)
            m = m_new
    return (acc / l).astype(F32)


def _tree(x):
    """Each row of x summed as a pairwise tree, in FP32."""
    width = 1 << max(0, (x.shape[1] - 1).bit_length())
    terms = np.zeros((x.shape[0], width), F32)
    terms[:, :x.shape[1]] = x
    while terms.shape[1] > 1:
        half = terms.shape[1] // 2
        terms = terms[:, :half] + terms[:, half:]
    return terms[:, 0]


def _flash(q, k, v, ex, tile, order, base2=False, split=False):
    """Online softmax over tiles of keys (level 3's method): per tile the scores, the new running
    maximum m', the running sum and weighted sum rescaled by exp(m - m') and the tile's own added (each
    tile's terms summed in turn, then added to the running sums). With base2 the queries are multiplied
    by log2(e) / sqrt(d) first and exp2f is used; with split the key tiles are shared out as level 3
    does on a GPU of MULTIPROCESSORS and the ranges merged at the end.

    Vectorised over the tiles: the running maximum is a cumulative maximum of the tiles' maxima, so
    every exponential is known before the sums; only the two running sums go tile after tile."""
    m_rows, d = q.shape
    n = k.shape[0]
    tile = min(tile, n)  # fewer keys than a tile: one tile of all of them, no padding to compute
    tiles = -(-n // tile)
    kind = "exp2" if base2 else "expf"
    if base2:
        q = (q * (F32(LOG2E) / np.sqrt(F32(d)))).astype(F32)
    keys = np.zeros((tiles * tile, d), F32)
    keys[:n] = k
    values = np.zeros((tiles * tile, d), F32)
    values[:n] = v
    s = _dots(q, keys, order)
    if not base2:
        s = (s * _scale_of(d)).astype(F32)
    s[:, n:] = -np.inf  # past the last key: weight 0
    s = s.reshape(m_rows, tiles, tile)
    ranges = [(0, tiles)]
    if split:
        row_tiles = -(-m_rows // 32)
        splits = min(tiles, max(1, -(-2 * MULTIPROCESSORS // row_tiles)))
        per = -(-tiles // splits)
        ranges = [(t, min(tiles, t + per)) for t in range(0, tiles, per)]
    top = s.max(axis=2)  # each tile's maximum
    m = np.empty_like(top)
    before = np.empty_like(top)  # the running maximum before each tile: -infinity at a range's start
    for begin, end in ranges:
        m[:, begin:end] = np.maximum.accumulate(top[:, begin:end], axis=1)
        before[:, begin] = -np.inf
        before[:, begin + 1:end] = m[:, begin:end - 1]
    with np.errstate(invalid="ignore"):
        correction = ex((before - m).astype(F32), kind)  # exp(-infinity) = 0 at a range's start
        e = ex((s - m[:, :, None]).astype(F32), kind)
    tile_l = _sequential(e, axis=2)
    tile_o = _sequential(e[:, :, :, None] * values.reshape(1, tiles, tile, d), axis=2)
    parts = []
    for begin, end in ranges:
        l = np.zeros(m_rows, F32)
        acc = np.zeros((m_rows, d), F32)
        for t in range(begin, end):
            l = (l * correction[:, t] + tile_l[:, t]).astype(F32)
            acc = (acc * correction[:, t, None] + tile_o[:, t]).astype(F32)
        parts.append((m[:, end - 1], l, acc))
    if len(parts) == 1:
        _, l, acc = parts[0]
        return (acc / l[:, None]).astype(F32)
    overall = np.max([part_m for part_m, _, _ in parts], axis=0)
    l = np.zeros(m_rows, F32)
    acc = np.zeros((m_rows, d), F32)
    for part_m, part_l, part_acc in parts:
        weight = ex((part_m - overall).astype(F32), kind)
        l = (l + part_l * weight).astype(F32)
        acc = (acc + part_acc * weight[:, None]).astype(F32)
    return (acc / l[:, None]).astype(F32)


def _to_half(x):
    with np.errstate(over="ignore"):
        return np.asarray(x, F32).astype(np.float16).astype(F32)


def _to_tf32(x):
    """float32 rounded to TF32's 10 significand bits (round to nearest even), kept as float32."""
    bits = np.ascontiguousarray(x, F32).view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return rounded.view(F32)
