"""Trusted reference for the matrix_transpose challenge: input generation and the exact answer.

The contract of every challenge's reference (challenges/matmul/reference.py describes it): `generate`
makes host (numpy) inputs, `reference` and `error_scale` answer from them, `baseline` is the library
call timed on device copies. A transpose does no arithmetic at all, so its work is counted in `bytes`
(every element read once and written once), and its answer is exact: each output element is one
input element, copied.

Both answers are made on the host whatever `xp` is. Copying a float32 into a float64 is exact, so the
FP64 "reference" is the input itself, moved; the host does it in tiles that stay in cache, in a third
of a second on two cores at the largest timed shape (8191 × 8193), less than moving it to a GPU and back.
"""

import concurrent.futures
import os

import numpy as np

DRAW_CHUNK = 1 << 20
"""Values drawn per step of `generate`: the float64 draw is rounded to float32 a chunk at a time, so
the float64 scratch is 8 MB, never 8 bytes per element (537 MB at 8191 × 8193)."""

TILE = 128
"""Edge of the square tiles the host transposes in. A 128 × 128 tile is 64 KB of float32 read and
128 KB of float64 written: both stay in a core's cache while the tile is turned, where a whole-matrix
`input.T` copy walks one side of the matrix a column at a time and misses the cache on every element."""
THREADS = min(8, os.cpu_count() or 1)
"""numpy copies without holding the GIL, so bands of tiles on a few threads run in parallel; past
about 8 the host's memory bandwidth, not its cores, is the limit."""

SCALE_FLOOR = 2.0 ** -149
"""The smallest positive float32 (a subnormal): the least any element of the scale can be. See
`error_scale`."""


def generate(dims, rng):
    """A rows × cols matrix, uniform in [-1, 1]: signs mixed, and every value distinct from its
    neighbours, so an element taken from the wrong place cannot match the right one by accident."""
    return {"input": _uniform(rng, dims["rows"], dims["cols"])}


def reference(inputs, xp):
    """inputᵀ in float64: output[j][i] = input[i][j]. Exact: a float32 converts to float64 without
    rounding, so this is the one right answer, and a correct kernel matches it bit for bit."""
    return {"output": _transposed(inputs["input"], absolute=False)}


def error_scale(inputs, xp):
    """|input|ᵀ in float64, never below SCALE_FLOOR.

    A transpose is exact, so the tolerance (challenge.yaml) is as near zero as the grader accepts, and
    the scale only has to keep the scaled error |got − expected| / scale meaningful. |input| does: a
    value taken from the wrong place is off by about its own size, a scaled error near 1, and a value
    squeezed through half precision by about 2^-12 of it. The floor is for an element that is exactly
    zero (a draw of probability about 2^-149 here, but a possible value): there the scaled error would
    be a division by zero, reported as infinite, which the report reads as a NaN in the output. With
    the floor a wrong value there has a finite, huge scaled error, and the limit there,
    max_scaled_error × SCALE_FLOOR, is far below any float32 but zero, so only a zero (of either sign)
    passes."""
    return {"output": _transposed(inputs["input"], absolute=True)}


def bytes(dims):
    """Read the input once and write the output once: 8 bytes per element, the least any kernel can
    move."""
    return 8.0 * dims["rows"] * dims["cols"]


def baseline(inputs, xp):
    """The library's own transposing copy into a fresh contiguous array (CuPy when xp is cupy). `.T`
    alone is only a view with swapped strides; ascontiguousarray makes CuPy run its copy kernel and
    lay the elements out in the transposed order, as `solve` must."""
    return {"output": xp.ascontiguousarray(inputs["input"].T)}


def _transposed(matrix, absolute):
    """matrixᵀ as a new C-contiguous float64 array (|matrix|ᵀ, never below SCALE_FLOOR, if `absolute`),
    made tile by tile: each thread takes a band of TILE input rows, which become TILE output columns."""
    rows, cols = matrix.shape
    result = np.empty((cols, rows), np.float64)

    def band(top):
        bottom = min(top + TILE, rows)
        for left in range(0, cols, TILE):
            right = min(left + TILE, cols)
            target = result[left:right, top:bottom]
            target[...] = matrix[top:bottom, left:right].T  # float32 to float64: exact
            if absolute:
                np.abs(target, out=target)
                np.maximum(target, SCALE_FLOOR, out=target)

    tops = range(0, rows, TILE)
    if THREADS == 1 or len(tops) == 1:
        for top in tops:
            band(top)
    else:
        with concurrent.futures.ThreadPoolExecutor(THREADS) as pool:
            list(pool.map(band, tops))
    return result


def _uniform(rng, rows, cols):
    """rows × cols values uniform in [-1, 1], drawn in float64 and rounded to float32.

    Why not numpy's float32 draws: those are multiples of 2^-24 in [0, 1), so 2u - 1 is a multiple of
    2^-23 and a small value has few significant bits (one near 0.001 has 14), so few that a copy
    through half precision (11 bits) would keep some small values exactly. Rounded from float64,
    every value has a full 24-bit significand: a copy through half, bfloat16 or TF32 changes nearly
    every element, and one that loses only the last bit changes about half of them. (Rounding can lift
    a draw just below 1 to exactly 1.0: the interval is closed.)"""
    values = np.empty((rows, cols), np.float32)
    flat = values.reshape(-1)  # a view: filling it fills `values`
    scratch = np.empty(min(flat.size, DRAW_CHUNK))
    for start in range(0, flat.size, DRAW_CHUNK):
        part = scratch[:min(DRAW_CHUNK, flat.size - start)]
        rng.random(out=part)
        part *= 2.0
        part -= 1.0
        flat[start:start + part.size] = part  # rounded to the nearest float32
    return values
