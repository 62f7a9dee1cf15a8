"""Trusted reference for the matmul challenge: input generation and the FP64 answer.

The contract every challenge's reference follows: `generate` makes host (numpy) inputs;
`reference` and `error_scale` take those host inputs and `xp`, the backend's array module (numpy, or
CuPy on a GPU), and return arrays on either side (the grader brings them to the host). A reference
that only needs numpy ignores `xp`; this one runs its large FP64 products on the GPU when it has one.
`baseline` is the vendor library, timed on device copies of the inputs. Only this file, never the
submission, decides what the right answer is.
"""

import concurrent.futures
import os

import numpy as np

VALUES_PER_STREAM = 1 << 20
"""Inputs are drawn in blocks, each from its own random stream seeded from the case's generator, on
threads: 75 million values took 0.35 s on one core. The values depend on the seed and the shape only,
never on the number of threads."""
THREADS = min(8, os.cpu_count() or 1)


def generate(dims, rng):
    """Uniform values in [-1, 1): zero-mean, so sums cancel and precision shortcuts show."""
    return {"A": _uniform(rng, (dims["M"], dims["N"])), "B": _uniform(rng, (dims["N"], dims["K"]))}


def reference(inputs, xp):
    return {"C": _product64(inputs["A"], inputs["B"], xp, absolute=False)}


def error_scale(inputs, xp):
    """|A| @ |B| in FP64: the size of each element's rounding error in any FP32 summation order."""
    return {"C": _product64(inputs["A"], inputs["B"], xp, absolute=True)}


def flops(dims):
    return 2.0 * dims["M"] * dims["N"] * dims["K"]


def baseline(inputs, xp):
    """The vendor library in FP32 on device arrays (cuBLAS through CuPy when xp is cupy; TF32 stays off)."""
    return {"C": xp.matmul(inputs["A"], inputs["B"])}


def _product64(a, b, xp, absolute):
    """A @ B (or |A| @ |B|) in FP64 from host arrays: numpy's BLAS, or cuBLAS DGEMM when xp is CuPy
    (a 8192×6144×4096 product takes seconds on the host, milliseconds there)."""
    if xp is not np:
        from grader.backends.cuda import matmul64
        return matmul64(a, b, xp, absolute)
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if absolute:
        a64, b64 = np.abs(a64), np.abs(b64)
    return a64 @ b64


def _uniform(rng, shape):
    values = np.empty(shape, np.float32)
    flat = values.reshape(-1)
    starts = range(0, flat.size, VALUES_PER_STREAM)
    streams = np.random.SeedSequence(rng.integers(0, 2**63, size=4)).spawn(len(starts))

    def fill(start, stream):
        part = flat[start:start + VALUES_PER_STREAM]
        np.random.default_rng(stream).random(out=part, dtype=np.float32)
        part *= 2
        part -= 1

    if len(starts) <= 1 or THREADS == 1:
        for start, stream in zip(starts, streams):
            fill(start, stream)
    else:
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(fill, starts, streams))
    return values
