"""The tolerance rule on CPU arrays: FP32 passes, reduced precision and wrong elements fail, and the
mismatch report says where."""

from __future__ import annotations

import math
from pathlib import Path

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
        result = check.compare("C", c, r, s, TOL)
        assert result.passed, (shape, result)
        assert result.scaled_error < TOL.max_scaled_error / 2


@pytest.mark.parametrize("shape", [(1, 1, 1), (33, 65, 17), (127, 129, 257), (256, 256, 255)])
def test_tf32_fails_and_is_called_precision(shape):
    a, b, r, s = problem(*shape)
    result = check.compare("C", tf32(a) @ tf32(b), r, s, TOL)
    assert not result.passed
    assert result.relative_frobenius > TOL.max_relative_frobenius
    assert "precision" in result.diagnosis


def test_fp16_inputs_fail():
    a, b, r, s = problem(64, 64, 64)
    half = a.astype(np.float16).astype(np.float32) @ b.astype(np.float16).astype(np.float32)
    assert not check.compare("C", half, r, s, TOL).passed


def test_unwritten_last_row_is_named():
    a, b, r, s = problem(127, 129, 257)
    c = a @ b
    c[-1, :] = np.nan
    result = check.compare("C", c, r, s, TOL)
    assert not result.passed and result.nonfinite_count == 257 and result.bad_count == 257
    assert result.first_bad[0].index == (126, 0) and math.isnan(result.first_bad[0].got)
    assert "row 126 (the last row)" in result.diagnosis
    text = check.describe(result, TOL)
    assert "C[126, 0] = nan" in text and "limit 1.5e-06" in text


def test_one_wrong_element_is_found_and_reported():
    a, b, r, s = problem(40, 50, 60)
    c = a @ b
    c[5, 7] += 0.5
    result = check.compare("C", c, r, s, TOL)
    assert not result.passed and result.bad_count == 1
    assert result.first_bad[0].index == (5, 7)
    assert result.first_bad[0].expected == pytest.approx(r[5, 7])
    assert "precision" not in result.diagnosis
    assert "5, 7" in check.describe(result, TOL)


def test_all_nan_output_fails():
    a, b, r, s = problem(8, 8, 8)
    result = check.compare("C", np.full((8, 8), np.nan, np.float32), r, s, TOL)
    assert not result.passed and result.nonfinite_count == 64
    assert math.isinf(result.scaled_error)


def test_zeros_fail():
    a, b, r, s = problem(16, 16, 16)
    assert not check.compare("C", np.zeros((16, 16), np.float32), r, s, TOL).passed


def test_zero_scale_needs_an_exact_answer():
    r = np.zeros((1, 2))
    s = np.zeros((1, 2))
    assert check.compare("C", np.zeros((1, 2), np.float32), r, s, TOL).passed
    off = check.compare("C", np.array([[0.0, 1e-30]], np.float32), r, s, TOL)
    assert not off.passed and math.isinf(off.scaled_error)


def test_mismatch_list_is_capped():
    a, b, r, s = problem(10, 10, 10)
    result = check.compare("C", (a @ b) + 1, r, s, TOL)
    assert len(result.first_bad) == check.MISMATCHES_SHOWN
    assert "95 more elements" in check.describe(result, TOL)


# --------------------------------------------------------------------------- the blocked host pass


def plain_metrics(got, expected, scale, tol):
    """The rule written out over whole arrays, as the check stage computed it before blocks and threads."""
    got64 = got.astype(np.float64)
    diff = np.abs(got64 - expected)
    bad = ~(diff <= tol.max_scaled_error * scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(scale > 0, diff / np.where(scale > 0, scale, 1.0), np.where(diff > 0, np.inf, 0.0))
    nonfinite = int(np.count_nonzero(~np.isfinite(got64)))
    rel = np.linalg.norm((got64 - expected).ravel()) / np.linalg.norm(expected.ravel())
    return (float(ratio.max()) if nonfinite == 0 else math.inf, rel if nonfinite == 0 else math.inf,
            int(np.count_nonzero(bad)), nonfinite)


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 1000 elements, so small arrays cross many blocks and run on the thread pool."""
    monkeypatch.setattr(check, "BLOCK_ELEMENTS", 1000)
    monkeypatch.setattr(check, "THREADS", 4)


@pytest.mark.parametrize("damage", ["none", "few", "nan", "zero_scale", "tf32"])
def test_blocked_pass_agrees_with_the_plain_rule(small_blocks, damage):
    a, b, r, s = problem(97, 61, 89, seed=3)
    c = a @ b
    if damage == "few":
        c[96, 88] += 1.0
        c[3, 5] -= 1e-3
    elif damage == "nan":
        c[50, :] = np.nan
        c[7, 7] = np.inf
    elif damage == "zero_scale":
        s[10, :] = 0.0
        r[10, :] = 0.0
        c[10, :] = 0.0
        c[10, 3] = 1e-30
    elif damage == "tf32":
        c = tf32(a) @ tf32(b)
    result = check.compare("C", c, r, s, TOL)
    scaled, rel, bad, nonfinite = plain_metrics(c, r, s, TOL)
    assert result.scaled_error == pytest.approx(scaled, rel=1e-12)
    assert result.relative_frobenius == pytest.approx(rel, rel=1e-9)
    assert (result.bad_count, result.nonfinite_count) == ((bad, nonfinite) if not result.passed else (0, 0))
    assert result.passed == (bad == 0 and rel <= TOL.max_relative_frobenius)


def test_first_mismatches_come_in_order_across_blocks(small_blocks):
    a, b, r, s = problem(50, 20, 100, seed=4)
    c = a @ b
    for row, col in ((49, 99), (30, 0), (12, 34)):  # in different blocks, given out of order
        c[row, col] = 5.0
    result = check.compare("C", c, r, s, TOL)
    assert [m.index for m in result.first_bad] == [(12, 34), (30, 0), (49, 99)]
    assert result.bad_count == 3


def test_arrays_with_a_get_method_are_brought_to_the_host():
    """A GPU array (anything with .get()) is copied to the host first; callers need not do it."""

    class Device:
        def __init__(self, array):
            self.array = array

        def get(self):
            return self.array

    a, b, r, s = problem(9, 10, 11)
    assert check.compare("C", Device(a @ b), Device(r), Device(s), TOL).passed


def test_unchanged_means_the_same_bits():
    x = np.array([1.0, np.nan, 0.0, 2.5], np.float32)
    assert check.unchanged(x, x.copy()), "a NaN equals itself bit for bit"
    flipped = x.copy()
    flipped[2] = -0.0
    assert not check.unchanged(flipped, x), "-0 differs from +0"
    assert check.changed_elements(flipped, x) == 1
    odd = np.arange(7, dtype=np.uint8)  # 7 bytes: no wider word divides them
    assert check.unchanged(odd, odd.copy()) and not check.unchanged(odd, odd[::-1].copy())


def test_unchanged_on_many_blocks(small_blocks):
    x = np.random.default_rng(1).random(50_000, dtype=np.float32)
    y = x.copy()
    assert check.unchanged(y, x)
    y[49_999] = 0.5
    assert not check.unchanged(y, x) and check.changed_elements(y, x) == 1


def test_a_missed_tail_of_a_vector_is_named():
    """A 1-D output wrong only in its last elements: the tail a float4 loop forgot."""
    from grader.spec import Tolerance
    expected = np.linspace(-1, 1, 1027)
    got = expected.astype(np.float32)
    got[-3:] = np.nan
    c = check.compare("C", got, expected, np.ones_like(expected), Tolerance(1.2e-7, 1e-7))
    assert not c.passed and "only the last 3 elements (from index 1024) are wrong" in c.diagnosis


# --------------------------------------------------------------------------- diagnoses say what was measured


def _with_words(values: np.ndarray, words: dict[int, int]) -> np.ndarray:
    """`values` with the float32 bit patterns `words` (index → bits) written in."""
    out = values.astype(np.float32).copy()
    bits = out.view(np.uint32)
    for index, word in words.items():
        bits[index] = word
    return out


def test_nonfinite_elements_are_told_apart_by_their_bits():
    """The output's own fill (never written), an input's guard word (read past its end and stored, sign
    flipped or not) and any other NaN (computed) are each named with their count, and only those that occur."""
    expected = np.linspace(1.0, 2.0, 64)
    scale = np.ones(64)
    guard_a, guard_b = 0x7FC12345, 0x7FC0BEEF
    got = _with_words(expected, {3: check.OUTPUT_FILL_WORD, 4: check.OUTPUT_FILL_WORD, 10: guard_a,
                                 11: guard_a | 0x80000000, 12: 0x7FC00000, 13: 0x7F800000})
    c = check.compare("out", got, expected, scale, TOL, {"a": guard_a, "b": guard_b, "out": 0x7FC00ABC})
    assert not c.passed and c.nonfinite_count == 6
    assert "6 of 64 elements are NaN or infinite: 2 still hold the NaN out arrives filled with" in c.diagnosis
    assert "2 hold the guard value that lies just past a's ends" in c.diagnosis
    assert "2 are NaN or infinite values the kernel computed" in c.diagnosis
    assert "past b's" not in c.diagnosis and "past out's" not in c.diagnosis


def test_only_unwritten_elements_are_not_called_computed():
    expected = np.ones(8)
    got = _with_words(expected, {7: check.OUTPUT_FILL_WORD})
    c = check.compare("out", got, expected, expected, TOL, {"x": 0x7FC01234})
    assert "1 still hold the NaN" in c.diagnosis and "computed" not in c.diagnosis and "guard" not in c.diagnosis


def test_errors_of_lower_precision_size_name_every_cause_of_that_size():
    """Errors everywhere small but beyond FP32's: the size is all that was measured, so the diagnosis names
    a long serial FP32 sum beside FP16/BF16 and TF32 (a 2^20-term float32 sum in one sequence is that far off)."""
    rng = np.random.default_rng(7)
    x = rng.random(1 << 20, dtype=np.float32)
    serial = np.cumsum(x, dtype=np.float32)[-1:]
    exact, scale = np.array([x.astype(np.float64).sum()]), np.array([float(np.abs(x.astype(np.float64)).sum())])
    c = check.compare("output", serial, exact, scale, TOL)
    assert not c.passed and c.scaled_error <= check.REDUCED_PRECISION_MAX_SCALED, c
    assert "FP16 or BF16" in c.diagnosis and "FP32 sums that run long in one sequence" in c.diagnosis


def test_nans_from_the_emulators_unwritten_shared_and_allocated_memory_are_named_by_their_payload():
    """The emulator's shared memory and a submission's cudaMalloc'd memory hold NaNs of their own until
    written (runtime.cpp kSharedPoison, kDevicePoison); a NaN sum keeps its operand's payload, so the
    report can say where it came from, and never calls it the output's untouched fill."""
    import numpy as np

    from grader import check

    words = [check.EMULATED_SHARED_WORD, check.EMULATED_SHARED_WORD & 0x7FFFFFFF, check.EMULATED_DEVICE_WORD,
             check.OUTPUT_FILL_WORD, 0x7FC00000]
    got = np.array(words, dtype=np.uint32).view(np.float32)
    assert np.isnan(got).all()
    origins = check._nonfinite_origins(got, {})
    assert (origins.shared, origins.allocated, origins.unwritten, origins.computed) == (2, 1, 1, 1)
    added = (np.float32(1.5) + got[:1])[0]  # arithmetic keeps the payload: still traced to shared memory
    assert check._nonfinite_origins(np.array([added], np.float32), {}).shared == 1
    text = check._nonfinite_text(check.Comparison("output", (5,), False, float("inf"), float("inf"), 5, 5, (), None),
                                 origins)
    assert "2 come from shared memory no thread had written" in text and "1 come from memory solve allocated" in text
    source = (Path(check.__file__).parent / "emulator" / "runtime.cpp").read_text()
    assert f"kSharedPoison = 0x{check.EMULATED_SHARED_WORD:X}u" in source
    assert f"kDevicePoison = 0x{check.EMULATED_DEVICE_WORD:X}u" in source
