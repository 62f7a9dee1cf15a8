"""kit_mix (a test challenge): y = alpha x + beta y in half, and counts[w] = how many of flags[w W ..
(w + 1) W) are nonzero."""

import numpy as np


def generate(dims, rng):
    n = dims["N"]
    return {"x": rng.uniform(-4, 4, n).astype(np.float16), "y": rng.uniform(-4, 4, n).astype(np.float16),
            "flags": (rng.random(n) < 0.3).astype(np.uint8) * rng.integers(1, 256, n).astype(np.uint8)}


def _parts(inputs):
    x, y = inputs["x"].astype(np.float64), inputs["y"].astype(np.float64)
    return inputs["alpha"] * x, inputs["beta"] * y


def reference(inputs, xp):
    ax, by = _parts(inputs)
    n, w = inputs["N"], inputs["W"]
    padded = np.zeros(-(-n // w) * w, np.int64)
    padded[:n] = inputs["flags"] != 0
    return {"y": ax + by, "counts": padded.reshape(-1, w).sum(axis=1).astype(np.int32)}


def error_scale(inputs, xp):
    ax, by = _parts(inputs)
    return {"y": np.abs(ax) + np.abs(by) + np.abs(ax + by)}


def bytes(dims):
    return 7.0 * dims["N"]
