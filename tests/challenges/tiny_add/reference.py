"""Trusted reference for the vector_add challenge: input generation and the FP64 answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies. Vector addition is memory-bound, so the work of a shape is measured in
`bytes` (what any kernel must move) rather than flops: 2N floats read and N written.

The FP64 answer is cheap enough on the host for every shape (about 0.1 s at N = 2^25), so `xp` is
ignored by `reference` and `error_scale`: moving the inputs to a GPU and the answer back would cost
more than the sum.
"""

import numpy as np

CHUNK = 1 << 20
"""Values drawn per step. The draw is made in float64 and rounded; doing it a chunk at a time keeps
the float64 temporary at 8 MB instead of 8 bytes per element (268 MB for one input at N = 2^25)."""


def generate(dims, rng):
    """Uniform values in [-1, 1]: zero-mean, so sums cancel and a wrong element cannot hide."""
    n = dims["N"]
    return {"A": _uniform(rng, n), "B": _uniform(rng, n)}


def reference(inputs, xp):
    """A + B in FP64. The sum of two float32 values is exact in float64 (53 bits hold both), so this
    is the true sum, not merely a more precise rounding of it."""
    total = inputs["A"].astype(np.float64)
    total += inputs["B"]  # in place: one float64 array, not two
    return {"C": total}


def error_scale(inputs, xp):
    """|A| + |B| in FP64. A correctly rounded FP32 a + b is off by at most 2^-24 |a + b|, and
    |a + b| <= |a| + |b|; unlike |a + b|, this scale does not vanish when a and b cancel, so a result
    that is correct to FP32 rounding is never judged against a near-zero yardstick."""
    scale = inputs["A"].astype(np.float64)
    np.abs(scale, out=scale)
    scale += np.abs(inputs["B"])
    return {"C": scale}


def bytes(dims):
    """Read A and B, write C: 12 bytes per element, the least any kernel can move."""
    return 12.0 * dims["N"]


def baseline(inputs, xp):
    """The library's own element-wise add on device arrays (CuPy's cupy.add when xp is cupy)."""
    return {"C": xp.add(inputs["A"], inputs["B"])}


def _uniform(rng, n):
    """n values uniform in [-1, 1], rounded from float64 to float32.

    Why not draw float32 directly: numpy's float32 draws are multiples of 2^-24 in [0, 1), so 2u - 1
    lies on a grid of 2^-23, and the float32 sum of two such values (a multiple of 2^-23 below 2 in
    magnitude) always fits in 24 bits: every sum would be exact and the FP32 rounding that the
    tolerance allows for would never happen. Rounded from float64, small values keep a full 24-bit
    significand and sums round as they do on real data. (Rounding can turn a draw just below 1 into
    1.0, hence the closed interval.)"""
    values = np.empty(n, np.float32)
    scratch = np.empty(min(n, CHUNK))
    for start in range(0, n, CHUNK):
        part = scratch[:min(CHUNK, n - start)]
        rng.random(out=part)
        part *= 2
        part -= 1
        values[start:start + part.size] = part  # rounds to nearest float32
    return values
