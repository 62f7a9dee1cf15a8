"""Trusted reference for the histogramming challenge: input generation and the exact answer.

The same contract as every challenge's reference (see challenges/matmul/reference.py): `generate`
makes host (numpy) inputs, `reference` answers from them, `baseline` is the library call timed on
device copies. A histogram does one increment per element and reads every element once, so it is
memory-bound when its increments are cheap: the work of a shape is measured in `bytes`.

The answer is a count per bin, an integer that every correct kernel gets exactly, whatever order its
increments land in: the output is checked for equality, element by element (challenge.yaml), and
there is no rounding for an error scale to describe.
"""

import numpy as np

KINDS = ("uniform", "one_bin", "hot_bin")
"""What a case's values look like, drawn per case (`generate`):
- uniform: every value uniform in [0, num_bins), LeetGPU's own distribution;
- one_bin: every value the same bin, drawn uniformly: the worst contention there is, every increment of
  the call on one counter;
- hot_bin: nine values in ten on one bin, the rest uniform: contention on one counter and plenty of
  other bins to get right."""
KIND_WEIGHTS = (0.5, 0.25, 0.25)
HOT_SHARE = 0.9
TIMED_N = 1 << 24
"""From this size on (only the timed cases reach it) the values are always uniform, as LeetGPU times
them, so that every run times the same kind of input. Contention is timed by the shapes instead: the
case with 2 bins puts sixteen of every warp's 32 increments on each counter."""
CHUNK = 1 << 22
"""Values drawn per step, into the int32 array itself: the generator's temporary is 16 MB at a time
rather than the whole 200 MB at N = 50 million."""


def generate(dims, rng):
    """N values in [0, num_bins), int32, of one of the three kinds above (uniform at the timed sizes)."""
    n, bins = dims["N"], dims["num_bins"]
    kind = "uniform" if n >= TIMED_N else KINDS[rng.choice(len(KINDS), p=KIND_WEIGHTS)]
    if kind == "one_bin":
        return {"input": np.full(n, rng.integers(bins), dtype=np.int32)}
    values = np.empty(n, np.int32)
    for start in range(0, n, CHUNK):
        part = values[start:start + CHUNK]
        part[:] = rng.integers(0, bins, size=part.size, dtype=np.int32)
    if kind == "hot_bin":
        hot = rng.random(n) < HOT_SHARE
        values[hot] = rng.integers(bins)
    return {"input": values}


def reference(inputs, xp):
    """The count of each value in [0, num_bins): numpy's bincount, exact. It counts into int64; no count
    can pass N < 2^31, so the int32 the kernel writes holds it."""
    counts = np.bincount(inputs["input"], minlength=inputs["num_bins"])
    return {"histogram": counts.astype(np.int32)}


def error_scale(inputs, xp):
    """Nothing: the histogram is checked exactly (int, challenge.yaml), and counts have no rounding
    whose size a scale could describe."""
    return {}


def bytes(dims):
    """Read every value once and write every count once: 4 N + 4 num_bins bytes, the least any kernel
    can move. The atomic increments are not counted: a privatised kernel keeps them on chip, and the
    global ones it does make (one per bin per block) are a rounding error beside N."""
    return 4.0 * dims["N"] + 4.0 * dims["num_bins"]


def baseline(inputs, xp):
    """CuPy's histogram on the device array, with num_bins bins of width 1 over [0, num_bins): bin b
    counts the values in [b, b + 1), which for integers is the values equal to b. With CuPy's CUB
    accelerator on (its default) this is CUB's device-wide histogram, a privatised kernel. It counts in
    int64; the cast to int32 is part of the call, as the signature wants int32. Measured on an H200 at
    N = 50 million (the grader's medians): 0.547 ms with 256 bins, 0.830 ms with 1,024, 1.557 ms with
    2; cupy.bincount(x, minlength=num_bins) took 10 to 20% longer at each (a harness of our own)."""
    bins = int(inputs["num_bins"])
    counts, _ = xp.histogram(inputs["input"], bins=bins, range=(0, bins))
    return {"histogram": counts.astype(xp.int32)}
