"""The tolerance rule on CPU arrays: FP32 passes, reduced precision and wrong elements fail, and the
mismatch report says where."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grader import check
from grader.spec import Tolerance

TOL = Tolerance(max_scaled_error=1.5e-6, max_relative_frobenius=5e-5)


def problem(m, n, k, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.random((m, n), dtype=np.float32) * 2 - 1
    b = rng.random((n, k), dtype=np.float32) * 2 - 1
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return a, b, a64 @ b64, np.abs(a64) @ np.abs(b64)


def tf32(x: np.ndarray) -> np.ndarray:
    bits = x.view(np.uint32).astype(np.uint64)
    return (((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)).view(np.float32)


def sequential(a, b):
    """FP32 accumulation in plain index order: the naive kernel's summation."""
    c = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for n in range(a.shape[1]):
        c += np.outer(a[:, n], b[n, :]).astype(np.float32)
    return c


@pytest.mark.parametrize("shape", [(1, 1, 1), (3, 5, 7), (127, 129, 257), (4, 4096, 3), (64, 2, 64)])
def test_fp32_results_pass(shape):
    a, b, r, s = problem(*shape)
    for c in (a @ b, sequential(a, b)):
        result = check.compare("C", c, r, s, TOL, np)
        assert result.passed, (shape, result)
        assert result.scaled_error < TOL.max_scaled_error / 2


@pytest.mark.parametrize("shape", [(1, 1, 1), (33, 65, 17), (127, 129, 257), (256, 256, 255)])
def test_tf32_fails_and_is_called_precision(shape):
    a, b, r, s = problem(*shape)
    result = check.compare("C", tf32(a) @ tf32(b), r, s, TOL, np)
    assert not result.passed
    assert result.relative_frobenius > TOL.max_relative_frobenius
    assert "precision" in result.diagnosis


def test_fp16_inputs_fail():
    a, b, r, s = problem(64, 64, 64)
    half = a.astype(np.float16).astype(np.float32) @ b.astype(np.float16).astype(np.float32)
    assert not check.compare("C", half, r, s, TOL, np).passed


def test_unwritten_last_row_is_named():
    a, b, r, s = problem(127, 129, 257)
    c = a @ b
    c[-1, :] = np.nan
    result = check.compare("C", c, r, s, TOL, np)
    assert not result.passed and result.nonfinite_count == 257 and result.bad_count == 257
    assert result.first_bad[0].index == (126, 0) and math.isnan(result.first_bad[0].got)
    assert "row 126 (the last row)" in result.diagnosis
    text = check.describe(result, TOL)
    assert "C[126, 0] = nan" in text and "limit 1.5e-06" in text


def test_one_wrong_element_is_found_and_reported():
    a, b, r, s = problem(40, 50, 60)
    c = a @ b
    c[5, 7] += 0.5
    result = check.compare("C", c, r, s, TOL, np)
    assert not result.passed and result.bad_count == 1
    assert result.first_bad[0].index == (5, 7)
    assert result.first_bad[0].expected == pytest.approx(r[5, 7])
    assert "precision" not in result.diagnosis
    assert "5, 7" in check.describe(result, TOL)


def test_all_nan_output_fails():
    a, b, r, s = problem(8, 8, 8)
    result = check.compare("C", np.full((8, 8), np.nan, np.float32), r, s, TOL, np)
    assert not result.passed and result.nonfinite_count == 64
    assert math.isinf(result.scaled_error)


def test_zeros_fail():
    a, b, r, s = problem(16, 16, 16)
    assert not check.compare("C", np.zeros((16, 16), np.float32), r, s, TOL, np).passed


def test_zero_scale_needs_an_exact_answer():
    r = np.zeros((1, 2))
    s = np.zeros((1, 2))
    assert check.compare("C", np.zeros((1, 2), np.float32), r, s, TOL, np).passed
    off = check.compare("C", np.array([[0.0, 1e-30]], np.float32), r, s, TOL, np)
    assert not off.passed and math.isinf(off.scaled_error)


def test_mismatch_list_is_capped():
    a, b, r, s = problem(10, 10, 10)
    result = check.compare("C", (a @ b) + 1, r, s, TOL, np)
    assert len(result.first_bad) == check.MISMATCHES_SHOWN
    assert "95 more elements" in check.describe(result, TOL)
