"""The transpose recomputed as correct and as wrong kernels would leave it: `grader check
matrix_transpose` measures the tolerance's margins from these (statement.md, "Accuracy").

variants(inputs, rng) -> {name: ({"output": float32 array}, "pass" or "fail")}. Each output is what the
kernel named leaves in the output buffer, computed with numpy: the same elements in the same places,
NaN (the grader's fill) where it writes nothing; a copy through half rounds as a GPU's __float2half
does, to nearest even.

A wrong kernel has to fail only where it is wrong: one that mishandles non-square matrices is right on
square ones, a misread layout is right on a vector, and the check asks each wrong method to fail clearly
on some case, not on all. Losing only the last significand bit fails too: the limit admits nothing but
the exact value (its one pass is a single element whose last bit was already 0).
"""

import numpy as np


def variants(inputs, rng):
    x = inputs["input"]
    methods = {
        "exact transpose (any correct kernel)": (_transposed(x), "pass"),
        "square-only kernel (n = rows), wrong/square_only.cu": (_square_only(x), "fail"),
        "rows and cols swapped, wrong/swapped_dimensions.cu": (_swapped_dimensions(x), "fail"),
        "copied, not transposed, wrong/copies_instead.cu": (_copied(x), "fail"),
        "copy through half (FP16), wrong/half_precision.cu": (_through_half(x), "fail"),
        "copy through bfloat16": (_through_bfloat16(x), "fail"),
        "copy through TF32": (_through_tf32(x), "fail"),
        "last significand bit cut": (_last_bit_cut(x), "fail"),
    }
    return {name: ({"output": out}, must) for name, (out, must) in methods.items()}


def _transposed(x):
    """What a correct kernel leaves: output[j][i] = input[i][j], in float32."""
    return np.ascontiguousarray(x.T)


def _square_only(x):
    """wrong/square_only.cu: n = rows for both dimensions. Thread (row, col), both < n, reads flat
    input[row * n + col] (the guard's NaN past the input's end) and stores it at flat output
    [col * n + row]; stores past the output's end are dropped here (the grader reports them as
    OUT_OF_BOUNDS, which the functional cases' order keeps from coming first). Only the output's first
    size elements matter, those with col < ceil(size / n): n × that many reads, never n × n."""
    rows, cols = x.shape
    n, size = rows, rows * cols
    written = min(n * n, size)
    used_cols = -(-written // n)
    source = np.arange(n)[:, None] * n + np.arange(used_cols)[None, :]  # [row, col]
    flat_in = x.reshape(-1)
    values = np.where(source < size, flat_in[np.minimum(source, size - 1)], np.float32(np.nan))
    flat_out = np.full(size, np.nan, np.float32)
    flat_out[:written] = values.T.reshape(-1)[:written]  # target col * n + row, in order
    return flat_out.reshape(cols, rows)


def _swapped_dimensions(x):
    """wrong/swapped_dimensions.cu: a correct kernel told the input is cols × rows, so it transposes
    that misreading of the same bytes."""
    rows, cols = x.shape
    return np.ascontiguousarray(x.reshape(cols, rows).T).reshape(cols, rows)


def _copied(x):
    """wrong/copies_instead.cu: every element stored at its own offset, row * cols + col."""
    rows, cols = x.shape
    return x.reshape(cols, rows).copy()


def _through_half(x):
    """wrong/half_precision.cu: each value rounded to half (11 significant bits) and back."""
    return _transposed(x).astype(np.float16).astype(np.float32)


def _through_bfloat16(x):
    """Each value rounded to bfloat16 (8 significant bits, float32's range), to nearest even."""
    bits = _transposed(x).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)


def _through_tf32(x):
    """Each value rounded to TF32 (11 significant bits, float32's range), to nearest even: what a copy
    through a tensor core's TF32 path would leave."""
    bits = _transposed(x).view(np.uint32)
    return ((bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)).view(np.float32)


def _last_bit_cut(x):
    """The smallest damage a value can take: its lowest significand bit set to zero."""
    return (_transposed(x).view(np.uint32) & np.uint32(0xFFFFFFFE)).view(np.float32)
