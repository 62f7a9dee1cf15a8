"""Trusted reference for the reduction challenge: input generation and the FP64 answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies. A sum is memory-bound (one addition per 4 bytes read), so the work of a
shape is measured in `bytes`: N floats read and one written.

The output is one number, so `reference` and `error_scale` return one-element arrays, the shape of the
`output` buffer (`shape: [1]` in challenge.yaml). Both run on the host whatever `xp` is: one pass over
the input in FP64 costs about 30 ms at N = 2^25, less than moving it to a GPU and the answer back.
"""

import numpy as np

CHUNK = 1 << 20
"""Values handled per step. Drawing (float64) and taking absolute values a chunk at a time keeps every
temporary at a few MB instead of a whole array's size (268 MB for the float64 draw at N = 2^25)."""


def generate(dims, rng):
    """Uniform values in [-1, 1]: zero-mean, so the sum cancels to about sqrt(N / 3) while the terms
    add up to N / 2 in magnitude. A result that loses precision, or a term, cannot hide in a sum that
    only grows."""
    return {"input": _uniform(rng, dims["N"])}


def reference(inputs, xp):
    """The sum in FP64. Every float32 term is exact in float64; numpy adds them pairwise within each
    buffer of the float32-to-float64 cast (8192 terms, a few dozen additions deep) and adds the
    buffers' sums one after another, so the error is at most about (30 + N / 8192) · 2^-53 · sum |x|
    (under 5 · 10^-13 · sum |x| at N = 2^25): six orders of magnitude below the FP32 error the
    tolerance allows. An exactly rounded sum (math.fsum) would change nothing the check can see, at a
    hundred times the cost: measured against it, this sum is off by 5.4 · 10^-20 · sum |x| at N = 2^25.
    How far correct and wrong FP32 orders are from the limit is measured by `grader check reduction`
    from variants.py."""
    return {"output": np.array([np.sum(inputs["input"], dtype=np.float64)])}


def error_scale(inputs, xp):
    """sum |x| in FP64: the yardstick of an FP32 sum's rounding error. Each FP32 addition is off by at
    most 2^-24 times its result, and no partial sum, in any order of addition, exceeds sum |x| in
    magnitude; unlike |sum x| it does not vanish when the terms cancel. (The bound on a whole sum is
    that times the number of additions a term passes through; challenge.yaml's limit is measured
    against it: statement.md, "Accuracy".)"""
    values = inputs["input"]
    total = 0.0
    for start in range(0, values.size, CHUNK):
        total += float(np.abs(values[start:start + CHUNK]).sum(dtype=np.float64))
    return {"output": np.array([total])}


def bytes(dims):
    """Read the input once and write one float: the least any kernel can move."""
    return 4.0 * dims["N"] + 4.0


def baseline(inputs, xp):
    """The library's own sum on the device array (cupy.sum when xp is cupy), kept one-dimensional so
    that it has the output's shape."""
    return {"output": xp.sum(inputs["input"], keepdims=True)}


def _uniform(rng, n):
    """n values uniform in [-1, 1], rounded from float64 to float32.

    Why not draw float32 directly: numpy's float32 draws are multiples of 2^-24 in [0, 1), so 2u - 1
    lies on a grid of 2^-23, and partial sums of such values stay on that grid: below 1 in magnitude
    (and, in a tree, for many levels above) every FP32 addition would be exact and the rounding that
    the tolerance allows for would barely happen. Rounded from float64, small values keep a full 24-bit
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
