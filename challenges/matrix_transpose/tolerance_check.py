"""Checks with numpy alone what statement.md ("Accuracy") says of the limits: the exact transpose passes
with errors of exactly zero, and plausible wrong outputs fail, by how much.

    python challenges/matrix_transpose/tolerance_check.py

Inputs, the expected output and the error scale come from this challenge's own reference.py, and the
limits from its challenge.yaml, so the numbers follow any change to either. Each wrong output is what
the kernel named would leave in the output buffer, computed with numpy: the same elements in the
same places (a copy through half precision rounds as a GPU's __float2half does, to nearest even).
Elements a kernel never writes keep the NaN the grader fills the output with. The grader's two
measures are recomputed as grader/check.py computes them.

Every method has the shapes on which it must fail: a kernel that only goes wrong on non-square
matrices passes the square ones, and that is right, not a hole in the tolerance. The table gives,
per method, the errors over the runs it must fail (or pass), and how many of them it did; below it,
element by element, what each wrong output looks like at the largest shape.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
SHAPES = ((1, 1), (1, 1000), (1000, 1), (2, 3), (3, 2), (31, 33), (32, 32), (33, 31), (65, 63),
          (127, 129), (257, 255), (5, 4099), (4099, 5), (1021, 1031), (2048, 1000), (7000, 6000))
"""(rows, cols): the functional cases' kinds of shape, and LeetGPU's timed one."""
SEEDS_SMALL = 5
"""Seeds per shape under a million elements, where a wrong output has the fewest elements to show in."""


def load_reference():
    spec = importlib.util.spec_from_file_location("matrix_transpose_reference", HERE / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def limits() -> tuple[float, float]:
    tolerance = yaml.safe_load((HERE / "challenge.yaml").read_text())["tolerance"]
    return float(tolerance["max_scaled_error"]), float(tolerance["max_relative_frobenius"])


# --------------------------------------------------------------------------- what wrong kernels leave


def transposed(x: np.ndarray) -> np.ndarray:
    """What a correct kernel leaves: output[j][i] = input[i][j], in float32."""
    return np.ascontiguousarray(x.T)


def square_only(x: np.ndarray) -> np.ndarray:
    """wrong/square_only.cu: n = rows for both dimensions. Thread (row, col < n) stores
    input[row * n + col] at output[col * n + row]. Reads past the input's end would take the guard's
    NaN; stores past the output's end are dropped here (the grader would report them as
    OUT_OF_BOUNDS, which the functional cases' order keeps from coming first)."""
    rows, cols = x.shape
    n = rows
    flat_in = x.reshape(-1)
    flat_out = np.full(rows * cols, np.nan, np.float32)
    index = np.arange(n)
    row, col = np.meshgrid(index, index, indexing="ij")
    source, target = (row * n + col).reshape(-1), (col * n + row).reshape(-1)
    inside = target < flat_out.size
    values = np.full(source.size, np.nan, np.float32)
    readable = source < flat_in.size
    values[readable] = flat_in[source[readable]]
    flat_out[target[inside]] = values[inside]
    return flat_out.reshape(cols, rows)


def swapped_dimensions(x: np.ndarray) -> np.ndarray:
    """wrong/swapped_dimensions.cu: a correct kernel told the input is cols × rows, so it transposes
    that misreading of the same bytes."""
    rows, cols = x.shape
    return np.ascontiguousarray(x.reshape(cols, rows).T).reshape(cols, rows)


def copied(x: np.ndarray) -> np.ndarray:
    """wrong/copies_instead.cu: every element stored at its own offset, row * cols + col."""
    rows, cols = x.shape
    return x.reshape(cols, rows).copy()


def through_half(x: np.ndarray) -> np.ndarray:
    """wrong/half_precision.cu: each value rounded to half (11 significant bits) and back."""
    return transposed(x).astype(np.float16).astype(np.float32)


def through_bfloat16(x: np.ndarray) -> np.ndarray:
    """Each value rounded to bfloat16 (8 significant bits, float32's range), to nearest even."""
    bits = transposed(x).view(np.uint32)
    return ((bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)).view(np.float32)


def through_tf32(x: np.ndarray) -> np.ndarray:
    """Each value rounded to TF32 (11 significant bits, float32's range), to nearest even: what a
    copy through a tensor core's TF32 path would leave."""
    bits = transposed(x).view(np.uint32)
    return ((bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)).view(np.float32)


def last_bit_cut(x: np.ndarray) -> np.ndarray:
    """The smallest damage a value can take: its lowest significand bit set to zero."""
    return (transposed(x).view(np.uint32) & np.uint32(0xFFFFFFFE)).view(np.float32)


def every_shape(rows: int, cols: int) -> bool:
    return True


def non_square(rows: int, cols: int) -> bool:
    return rows != cols


def matrix_not_square(rows: int, cols: int) -> bool:
    """Neither square nor a vector: the shapes on which the misread layout differs from the right one."""
    return rows != cols and rows > 1 and cols > 1


def not_a_vector(rows: int, cols: int) -> bool:
    return rows > 1 and cols > 1


METHODS = {
    # name: (what the kernel leaves, "pass", "fail" or "info", the shapes the requirement is for)
    "exact transpose (any correct kernel)": (transposed, "pass", every_shape),
    "square-only kernel (n = rows)": (square_only, "fail", non_square),
    "rows and cols swapped": (swapped_dimensions, "fail", matrix_not_square),
    "copy, not transposed": (copied, "fail", not_a_vector),
    "copy through half (FP16)": (through_half, "fail", every_shape),
    "copy through bfloat16": (through_bfloat16, "fail", every_shape),
    "copy through TF32": (through_tf32, "fail", every_shape),
    "last significand bit cut": (last_bit_cut, "info", every_shape),
}


# --------------------------------------------------------------------------- the grader's measures


def measures(got: np.ndarray, expected: np.ndarray, scale: np.ndarray) -> tuple[float, float]:
    """(max scaled error, relative Frobenius error) as grader/check.py computes them: both infinite
    when an element is NaN or infinite; 0/0 (an exact zero where the scale is zero) left out of the
    maximum. (This challenge's scale is never zero.)"""
    error = np.abs(got.astype(np.float64) - expected)
    if not np.all(np.isfinite(error)):
        return math.inf, math.inf
    frobenius = float(np.sqrt(np.sum(error * error)) / np.sqrt(np.sum(expected * expected)))
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = float(np.fmax.reduce((error / scale).reshape(-1), initial=0.0))
    return scaled, frobenius


def element_details(got: np.ndarray, expected: np.ndarray, scale: np.ndarray, max_scaled: float) -> str:
    """For one run: how many elements fail, how many are NaN, the median scaled error of the failing
    finite ones, and how many of those exceed 10^-3 (past which grader/check.py stops calling an
    output reduced-precision)."""
    error = np.abs(got.astype(np.float64) - expected)
    failing = ~(error <= max_scaled * scale)
    nan = int(np.count_nonzero(np.isnan(got)))
    scaled = error[failing & np.isfinite(error)] / scale[failing & np.isfinite(error)]
    median = f"{np.median(scaled):.3g}" if scaled.size else "-"
    return (f"{int(np.count_nonzero(failing))} of {failing.size} fail ({nan} NaN), median scaled error of "
            f"the finite ones {median}, {int(np.count_nonzero(scaled > 1e-3))} above 1e-3")


def zero_element_checks(reference, max_scaled: float) -> list[str]:
    """The scale's floor at work on an input element that is exactly zero: a zero of either sign must
    pass, the smallest float32 that is not zero must fail."""
    x = np.array([[0.0, 0.5]], np.float32)
    expected = reference.reference({"input": x}, np)["output"]
    scale = reference.error_scale({"input": x}, np)["output"]
    problems = []
    for got_zero, must_pass in ((0.0, True), (-0.0, True), (np.nextafter(np.float32(0), np.float32(1)), False)):
        got = transposed(x)
        got[0, 0] = got_zero
        scaled, _ = measures(got, expected, scale)
        passed = scaled <= max_scaled
        print(f"  input 0, output {float(got_zero)!r:>8}: scaled error {scaled:.3g}, "
              f"{'passes' if passed else 'fails'}")
        if passed != must_pass:
            problems.append(f"output {got_zero!r} where the input is 0")
    return problems


def main() -> None:
    reference = load_reference()
    max_scaled, max_frobenius = limits()
    results: dict[str, list[tuple[float, float, bool, tuple[int, int]]]] = {name: [] for name in METHODS}
    runs = 0
    details = []  # (method, text) for the largest shape's first seed
    for rows, cols in SHAPES:
        for seed in range(SEEDS_SMALL if rows * cols < 1_000_000 else 1):
            runs += 1
            inputs = reference.generate({"rows": rows, "cols": cols}, np.random.default_rng([seed, 1, rows, cols]))
            expected = reference.reference(inputs, np)["output"]
            scale = reference.error_scale(inputs, np)["output"]
            for name, (method, must, applies) in METHODS.items():
                scaled, frobenius = measures(method(inputs["input"]), expected, scale)
                results[name].append((scaled, frobenius, applies(rows, cols), (rows, cols)))
                if (rows, cols) == SHAPES[-1] and seed == 0 and must != "pass" and applies(rows, cols):
                    details.append((name, element_details(method(inputs["input"]), expected, scale, max_scaled)))
    print(f"limits: scaled error {max_scaled:.3g}, relative Frobenius {max_frobenius:.3g}; {runs} runs, "
          f"{len(SHAPES)} shapes from {SHAPES[0][0]}×{SHAPES[0][1]} to {SHAPES[-1][0]}×{SHAPES[-1][1]}\n")
    print(f"{'method':38} {'must':4}  {'scaled error (min - max)':>25}  {'rel. Frobenius (min - max)':>27}  "
          f"failed/runs it must")
    problems = []
    for name, (_, must, _) in METHODS.items():
        relevant = [(s, f, shape) for s, f, applies, shape in results[name] if applies]
        failed = [s > max_scaled or f > max_frobenius for s, f, _ in relevant]
        scaled = [s for s, _, _ in relevant]
        frobenius = [f for _, f, _ in relevant]
        passed_at = sorted({f"{r}×{c}" for (_, _, (r, c)), bad in zip(relevant, failed) if not bad})
        note = f", passed at {', '.join(passed_at)} only" if must == "info" and passed_at else ""
        print(f"{name:38} {must:4}  {min(scaled):11.3g} - {max(scaled):11.3g}  "
              f"{min(frobenius):12.3g} - {max(frobenius):12.3g}  {sum(failed)}/{len(relevant)}{note}")
        if must == "pass" and any(failed) or must == "fail" and not all(failed):
            problems.append(name)
    print(f"\nelement by element at {SHAPES[-1][0]}×{SHAPES[-1][1]}:")
    for name, text in details:
        print(f"  {name:38} {text}")
    print("\nan input element of exactly zero (the scale's floor):")
    problems += zero_element_checks(reference, max_scaled)
    if problems:
        raise SystemExit(f"\nnot as statement.md says: {', '.join(problems)}")
    print("\nthe exact transpose passed every run; every method marked fail failed every run it must")


if __name__ == "__main__":
    main()
