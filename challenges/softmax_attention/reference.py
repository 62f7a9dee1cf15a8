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
U = 2.0 ** -24
"""FP32's unit roundoff: one rounding moves a value by at most this much of itself."""

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
