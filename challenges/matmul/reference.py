"""Trusted reference for the matmul challenge: input generation and the FP64 answer.

Functions take an array module `xp` (numpy or cupy) so the same code serves the GPU and the
CPU backends. Only this file, never the submission, decides what the right answer is.
"""

import numpy as np


def generate(dims, rng):
    """Uniform values in [-1, 1): zero-mean, so sums cancel and precision shortcuts show."""
    return {"A": _uniform(rng, (dims["M"], dims["N"])), "B": _uniform(rng, (dims["N"], dims["K"]))}


def reference(inputs, xp):
    a, b = (xp.asarray(inputs[k]).astype(xp.float64) for k in "AB")
    return {"C": a @ b}


def error_scale(inputs, xp):
    """|A| @ |B| in FP64: the size of each element's rounding error in any FP32 summation order."""
    a, b = (xp.abs(xp.asarray(inputs[k]).astype(xp.float64)) for k in "AB")
    return {"C": a @ b}


def flops(dims):
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def baseline(inputs, xp):
    """The vendor library in FP32 (cuBLAS through CuPy when xp is cupy; TF32 stays off)."""
    return {"C": xp.matmul(inputs["A"], inputs["B"])}


def _uniform(rng, shape):
    values = rng.random(shape, dtype=np.float32)
    values *= 2
    values -= 1
    return values
