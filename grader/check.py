"""The check stage: a submission's output against the trusted FP64 reference.

Two metrics, both scale-free (see the challenge statement for the derivation):
- scaled error: |got − expected| / scale per element, where `scale` is the size of that element's
  rounding error in any FP32 evaluation order (for matmul, |A| @ |B|). Catches any wrong element.
- relative Frobenius error ‖got − expected‖ / ‖expected‖: catches reduced precision (TF32, FP16)
  everywhere, even where the per-element test alone would be loose.
An element that is NaN or infinite always fails: outputs arrive filled with NaN, so an unwritten
element shows up as NaN.

Functions take an array module `xp` (numpy or cupy); arrays stay where they are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.spec import Tolerance

MISMATCHES_SHOWN = 5
ROW_PATTERN_MAX = 3
REDUCED_PRECISION_MAX_SCALED = 1e-3
"""Below this scaled error everywhere, a failing output is close but imprecise: the signature of
TF32/FP16 arithmetic, not of a wrong index (which is off by the element's own size)."""


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]
    got: float
    expected: float


@dataclass(frozen=True)
class Comparison:
    output: str
    shape: tuple[int, ...]
    passed: bool
    scaled_error: float
    relative_frobenius: float
    bad_count: int
    nonfinite_count: int
    first_bad: tuple[Mismatch, ...]
    diagnosis: str | None

    @property
    def total(self) -> int:
        return math.prod(self.shape)


def compare(name: str, got, expected, scale, tolerance: Tolerance, xp) -> Comparison:
    got64 = got.astype(xp.float64)
    diff = xp.abs(got64 - expected)
    bad = ~(diff <= tolerance.max_scaled_error * scale)  # NaN compares false, so it is bad
    nonfinite = int(xp.count_nonzero(~xp.isfinite(got64)))
    scaled = _scaled_max(diff, scale, xp) if nonfinite == 0 else math.inf
    rel_fro = _relative_frobenius(got64 - expected, expected, xp) if nonfinite == 0 else math.inf
    bad_count = int(xp.count_nonzero(bad))
    passed = bad_count == 0 and rel_fro <= tolerance.max_relative_frobenius
    if passed:
        return Comparison(name, tuple(got.shape), True, scaled, rel_fro, 0, 0, (), None)
    first = _first_bad(bad, got64, expected, xp)
    comparison = Comparison(name, tuple(got.shape), False, scaled, rel_fro, bad_count, nonfinite, first, None)
    return _with_diagnosis(comparison, tolerance, _where(bad, xp))


def to_host(array):
    """A numpy array, whether `array` lives on the GPU (cupy) or already on the host."""
    return array.get() if hasattr(array, "get") else array


def _scaled_max(diff, scale, xp) -> float:
    if diff.size == 0:
        return 0.0
    ratio = xp.where(scale > 0, diff / xp.where(scale > 0, scale, 1.0), xp.where(diff > 0, xp.inf, 0.0))
    return float(ratio.max())


def _relative_frobenius(error, expected, xp) -> float:
    norm = float(xp.linalg.norm(expected.ravel()))
    err = float(xp.linalg.norm(error.ravel()))
    if norm == 0.0:
        return 0.0 if err == 0.0 else math.inf
    return err / norm


def _first_bad(bad, got, expected, xp) -> tuple[Mismatch, ...]:
    flat = xp.flatnonzero(bad.ravel())[:MISMATCHES_SHOWN]
    if flat.size == 0:
        return ()
    positions = [int(i) for i in to_host(flat)]
    got_flat, exp_flat = got.ravel(), expected.ravel()
    return tuple(Mismatch(tuple(int(v) for v in _unravel(i, got.shape)), float(got_flat[i]), float(exp_flat[i]))
                 for i in positions)


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for extent in reversed(shape):
        index.append(flat_index % extent)
        flat_index //= extent
    return tuple(reversed(index))


def _where(bad, xp) -> str:
    """For a 2-D output whose bad elements fill a few whole rows or columns, say which (both, when the
    same elements are a whole row and a whole column, as in a 1×1 output)."""
    if bad.ndim != 2:
        return ""
    rows, cols = bad.shape
    found = []
    for axis, name, extent, across in ((1, "row", rows, cols), (0, "column", cols, rows)):
        lines = xp.flatnonzero(bad.any(axis=axis))
        if 0 < lines.size <= ROW_PATTERN_MAX and int(xp.count_nonzero(bad)) == lines.size * across:
            listed = [int(i) for i in to_host(lines)]
            last = f" (the last {name})" if listed == [extent - 1] else ""
            found.append(f"{name}{'s' if len(listed) > 1 else ''} {', '.join(map(str, listed))}{last}")
    return f"; every element of {' and '.join(found)} is wrong, and nothing else" if found else ""


def _with_diagnosis(c: Comparison, tolerance: Tolerance, where: str = "") -> Comparison:
    if c.nonfinite_count:
        text = (f"{c.nonfinite_count} of {c.total} elements are NaN or infinite; {c.output} arrives "
                "filled with NaN, so these were probably never written")
    elif c.scaled_error <= REDUCED_PRECISION_MAX_SCALED:
        text = (f"every element is close but the errors have the size of reduced-precision rounding "
                f"(relative Frobenius error {c.relative_frobenius:.2g}; FP32 stays under "
                f"{tolerance.max_relative_frobenius:.2g}): the kernel computes with TF32 or FP16 "
                "precision somewhere (TF32 tensor cores, half inputs); FP32 accuracy is required")
    else:
        text = f"{c.bad_count} of {c.total} elements differ from the reference beyond the tolerance"
    text += where
    return Comparison(c.output, c.shape, c.passed, c.scaled_error, c.relative_frobenius, c.bad_count,
                      c.nonfinite_count, c.first_bad, text)


def describe(c: Comparison, tolerance: Tolerance) -> str:
    """One paragraph for the report: what is wrong, where, and the metrics against their limits."""
    lines = [c.diagnosis or "matches the reference"]
    for m in c.first_bad:
        where = ", ".join(str(i) for i in m.index)
        lines.append(f"  {c.output}[{where}] = {m.got:.7g}, expected {m.expected:.7g}")
    if c.bad_count > len(c.first_bad):
        lines.append(f"  … {c.bad_count - len(c.first_bad)} more elements out of tolerance")
    lines.append(f"  max scaled error {_fmt(c.scaled_error)} (limit {tolerance.max_scaled_error:.2g}), "
                 f"relative Frobenius error {_fmt(c.relative_frobenius)} (limit {tolerance.max_relative_frobenius:.2g})")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return "inf (NaN or infinite output)" if math.isinf(value) else f"{value:.3g}"
