"""Trusted reference for the softmax challenge: input generation and the FP64 answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies. A softmax does a few operations per element and must see every element
before it can write any, so it is memory-bound: the work of a shape is measured in `bytes`, the input
read once and the output written once.

Both answers are made on the host in FP64 whatever `xp` is: three passes over the input (maximum, sum,
quotients) take 0.8 s at N = 2^25 on one core, a small part of a timed case's budget, and no CuPy
kernel has to be compiled for them.
"""

import numpy as np

CHUNK = 1 << 20
"""Values handled per step. Drawing (float64), exponentials and scales are made a chunk at a time, so
every temporary is a few MB instead of a whole array's size (268 MB of float64 at N = 2^25)."""

SPREAD = 10.0
"""LeetGPU's values are uniform in [-10, 10]; so are these, before the offsets below."""
OFFSET_RANGE = (100.0, 1000.0)
"""In two cases out of three, every value of the case is moved by one offset of this size, up or down
(`generate`)."""
LOW_FRACTION = 16
"""The first N // 16 elements (none below N = 16) lie LOW_GAP lower than the rest."""
LOW_GAP = 200.0
SCALE_FLOOR = 2.0 ** -100
"""Added to every element's scale, so that outputs below FP32's normal range are judged by an absolute
error (`error_scale`)."""


def generate(dims, rng):
    """LeetGPU's values, uniform in [-10, 10], with two changes that a softmax cannot see and a
    kernel that skips the subtraction of the maximum, or takes it from part of the input, can.

    - The offset: each case draws one of three kinds with equal chance: no offset (LeetGPU's values
      as they are); every value moved up by c; every value moved down by c, c uniform in
      [100, 1000]. Softmax is the same for x and x + c, but exp(x) is not: above about 88.7 it
      overflows FP32, and when every value lies below about -104 it is 0 for every element and the
      quotient 0/0. (LeetGPU's [1000, 1, 2, 3] is the first trap; -1000 everywhere the second.)
    - The low start: the first N // 16 elements lie 200 below the rest. Their outputs are below
      e^-180, zero in FP32, and the maximum lies further on: a kernel that takes the maximum of its
      first block only (a pass over the partial maxima forgotten) subtracts a value about 200 too
      small and overflows. From N = 4096 on this start covers a block of 256 elements.

    The values are drawn in float64 and rounded to float32 once, so they use every bit of the
    significand (see challenges/reduction/reference.py, `_uniform`)."""
    n = dims["N"]
    kind = rng.integers(3)  # 0: LeetGPU's values; 1: moved up; 2: moved down
    offset = 0.0 if kind == 0 else (1.0 if kind == 1 else -1.0) * rng.uniform(*OFFSET_RANGE)
    low = n // LOW_FRACTION
    values = np.empty(n, np.float32)
    scratch = np.empty(min(n, CHUNK))
    for start in range(0, n, CHUNK):
        part = scratch[:min(CHUNK, n - start)]
        rng.random(out=part)
        part *= 2 * SPREAD
        part += offset - SPREAD
        if start < low:
            part[:low - start] -= LOW_GAP
        values[start:start + part.size] = part  # rounds to nearest float32
    return {"input": values}


def reference(inputs, xp):
    """exp(x_i - M) / sum_j exp(x_j - M) in FP64, M the largest input. Every float32 input is exact in
    float64, x_i - M is exact or rounded by 2^-53 of itself (dtype=np.float64: numpy would otherwise
    subtract a Python float from a float32 array in float32), numpy's exp is within an ulp, and the
    sum (pairwise within each chunk, chunk after chunk) agrees with math.fsum to 1.5e-16 up to a
    million elements and 4.4e-16 at N = 2^25 (measured on three inputs each). Measured against the
    same three passes in 80-bit long double, no output is off by more than 3e-16 of itself at N =
    65,537 and 1,000,003, nor 5.7e-16 at 2^25: eight orders of magnitude below the FP32 errors the
    tolerance allows.
    How far correct and wrong FP32 methods are from the limits is measured by `grader check softmax`
    from variants.py."""
    x = inputs["input"]
    top = float(x.max())
    total = _sum_of_exponentials(x, top)
    out = np.empty(x.size)
    for start in range(0, x.size, CHUNK):
        part = out[start:start + CHUNK]
        np.subtract(x[start:start + CHUNK], top, out=part, dtype=np.float64)
        np.exp(part, out=part)
        part /= total
    return {"output": out}


def error_scale(inputs, xp):
    """y_i (1 + |ln y_i|) + 2^-100 in FP64, y the reference's output; |ln y_i| = (M - x_i) + ln S.

    Derivation (statement.md, "Accuracy"): an FP32 kernel makes y_i as an exponential, and every
    step's error is relative to y_i. The exponent's own rounding is at most 2^-24 times its size,
    which exp turns into a relative error of that size: x_i - M for exp(x_i - M) / S, and
    x_i - M - ln S = ln y_i for a kernel that subtracts the logarithm of the sum instead of
    dividing by the sum. exp itself is off by a few units in the last place (CUDA documents 2 for
    expf, 2 + 1.17 |x_i - M| for __expf), the sum S by a relative error that every output shares,
    and the division by one rounding. Hence the yardstick y_i (1 + |ln y_i|), and the limit is a
    number of FP32 units in the last place. For inputs of similar size ln S also grows with N as the
    error bound of a tree sum does (log2 N roundings).

    The floor is for outputs below FP32's normal range (2^-126, 1.2e-38; about e^-87 of the
    largest output): a kernel makes them subnormal, or 0 when it flushes them (fast-math exp), and
    both are right. With the floor a correct output there passes, and a wrong one (a NaN, or
    anything above about 10^-36) fails."""
    x = inputs["input"]
    top = float(x.max())
    total = _sum_of_exponentials(x, top)
    log_total = float(np.log(total))
    out = np.empty(x.size)
    spread = np.empty(min(x.size, CHUNK))
    for start in range(0, x.size, CHUNK):
        part = out[start:start + CHUNK]
        gap = spread[:part.size]
        np.subtract(x[start:start + CHUNK], top, out=gap, dtype=np.float64)  # x_i - M <= 0
        np.exp(gap, out=part)
        part /= total  # y_i
        np.subtract(1.0 + log_total, gap, out=gap)  # 1 + |ln y_i| = 1 + (M - x_i) + ln S
        part *= gap
        part += SCALE_FLOOR
    return {"output": out}


def bytes(dims):
    """Read the input once and write the output once: 8 bytes per element, the least any kernel can
    move. A kernel that reads the input twice (the maximum and sum first, then the quotients) moves
    12 bytes per element unless its second read finds the input still in the L2 cache."""
    return 8.0 * dims["N"]


def baseline(inputs, xp):
    """The softmax in CuPy's own calls on the device array: the maximum, then x - max into a fresh
    array and every step after it in place (exp, sum, division). The same passes as
    cupyx.scipy.special.softmax, one allocation fewer: seven of the array's size in traffic, where
    a kernel needs two or three."""
    x = inputs["input"]
    e = xp.subtract(x, x.max())
    xp.exp(e, out=e)
    e /= e.sum()
    return {"output": e}


def _sum_of_exponentials(x, top):
    """sum_j exp(x_j - top) in float64, a chunk at a time."""
    total = 0.0
    scratch = np.empty(min(x.size, CHUNK))
    for start in range(0, x.size, CHUNK):
        part = scratch[:min(CHUNK, x.size - start)]
        np.subtract(x[start:start + CHUNK], top, out=part, dtype=np.float64)
        np.exp(part, out=part)
        total += float(part.sum())
    return total
