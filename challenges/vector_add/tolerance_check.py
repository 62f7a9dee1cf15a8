"""Recomputes the accuracy margins quoted in statement.md ("Accuracy") with numpy alone.

    python challenges/vector_add/tolerance_check.py

Inputs come from this challenge's own reference.py (the grader's generator) and the limits from its
challenge.yaml, so the numbers follow any change to either. An FP32 kernel's sum is exactly what
numpy's float32 add gives (IEEE round to nearest, as on a GPU); each shortcut is simulated by the
roundings it performs on a GPU (numpy's float16 add rounds through float32 first, which can differ
from a GPU's __hadd in the last bit of a rare tie, far below anything measured here). The grader's
two measures are recomputed the way grader/check.py defines them.

Methods that must pass: the correctly rounded FP32 sum, and the same sum rounded toward zero (what
__fadd_rz would give): the limit is one FP32 unit in the last place, so any faithful rounding passes.
Methods that must fail: half and bfloat16 arithmetic, TF32-rounded inputs, and B truncated to TF32
before an otherwise correct FP32 add. Shown without a requirement: B with only its lowest 1 or 2
significand bits cut off, the smallest damage an input can take. Its error is within a few units in
the last place, so a handful of elements can land inside the limit by chance; the table says from
which N on it failed every run.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
SIZES = (1, 2, 3, 7, 33, 257, 1025, 65521, 1000003, 16777219, 25000000)
SEEDS_SMALL = 5
"""Seeds per size below a million: small cases are where a shortcut could pass by luck."""


def load_reference():
    spec = importlib.util.spec_from_file_location("vector_add_reference", HERE / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def limits() -> tuple[float, float]:
    tolerance = yaml.safe_load((HERE / "challenge.yaml").read_text())["tolerance"]
    return float(tolerance["max_scaled_error"]), float(tolerance["max_relative_frobenius"])


# --------------------------------------------------------------------------- roundings


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (8 significand bits), round to nearest even, kept as float32."""
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def to_tf32(x: np.ndarray) -> np.ndarray:
    """float32 rounded to TF32 (11 significand bits, like FP16, with FP32's range), to nearest even."""
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return rounded.view(np.float32)


def chop(x: np.ndarray, k: int) -> np.ndarray:
    """float32 with its lowest k significand bits set to zero (truncation toward zero)."""
    return (x.view(np.uint32) & np.uint32(~((1 << k) - 1) & 0xFFFFFFFF)).view(np.float32)


def toward_zero(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a + b in FP32 rounded toward zero: the exact sum (float64 holds it) rounded to nearest, then
    stepped one unit toward zero wherever that rounding went away from it."""
    exact = a.astype(np.float64) + b
    nearest = exact.astype(np.float32)
    away = np.abs(nearest.astype(np.float64)) > np.abs(exact)
    nearest[away] = np.nextafter(nearest[away], np.float32(0))
    return nearest


METHODS = {
    # name: (function of the float32 inputs, "pass" or "fail": what every run must do, or "info")
    "FP32 a + b (round to nearest)": (lambda a, b: a + b, "pass"),
    "FP32 a + b rounded toward zero (__fadd_rz)": (toward_zero, "pass"),
    "FP16 arithmetic (__hadd)": (lambda a, b: (a.astype(np.float16) + b.astype(np.float16)).astype(np.float32), "fail"),
    "FP16 inputs, FP32 add": (lambda a, b: a.astype(np.float16).astype(np.float32) + b.astype(np.float16), "fail"),
    "BF16 arithmetic": (lambda a, b: to_bf16(to_bf16(a) + to_bf16(b)), "fail"),
    "TF32-rounded inputs, FP32 add": (lambda a, b: to_tf32(a) + to_tf32(b), "fail"),
    "B truncated by 13 bits (to TF32)": (lambda a, b: a + chop(b, 13), "fail"),
    "B truncated by 2 bits": (lambda a, b: a + chop(b, 2), "info"),
    "B truncated by 1 bit": (lambda a, b: a + chop(b, 1), "info"),
}


# --------------------------------------------------------------------------- the grader's measures


def measures(got: np.ndarray, expected: np.ndarray, scale: np.ndarray) -> tuple[float, float]:
    """(max scaled error, relative Frobenius error), as grader/check.py computes them."""
    error = got.astype(np.float64)
    error -= expected
    np.abs(error, out=error)
    frobenius = float(np.sqrt(np.dot(error, error)) / np.sqrt(np.dot(expected, expected)))
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.fmax.reduce(error / scale, initial=0.0)  # 0/0 where both inputs are 0: ignored
    return float(scaled), frobenius


def main() -> None:
    reference = load_reference()
    max_scaled, max_frobenius = limits()
    results = {name: [] for name in METHODS}  # (scaled, frobenius, N) per run
    for n in SIZES:
        for seed in range(SEEDS_SMALL if n < 1_000_000 else 1):
            inputs = reference.generate({"N": n}, np.random.default_rng([seed, 1, n]))
            expected = reference.reference(inputs, np)["C"]
            scale = reference.error_scale(inputs, np)["C"]
            for name, (method, _) in METHODS.items():
                results[name].append((*measures(method(inputs["A"], inputs["B"]), expected, scale), n))
    runs = len(results[next(iter(METHODS))])
    print(f"limits: scaled error {max_scaled:.3g}, relative Frobenius {max_frobenius:.3g}; "
          f"{runs} runs, N from {SIZES[0]} to {SIZES[-1]}\n")
    print(f"{'method':44} {'must':4}  {'scaled error (min-max)':>24}  {'rel. Frobenius (min-max)':>24}  failed")
    problems = []
    for name, (_, must) in METHODS.items():
        rows = results[name]
        failed = [s > max_scaled or f > max_frobenius for s, f, _ in rows]
        scaled = [s for s, _, _ in rows]
        frobenius = [f for _, f, _ in rows]
        note = ""
        if must == "info":
            passed_at = [n for (_, _, n), bad in zip(rows, failed) if not bad]
            note = f", every run from N = {min(n for n in SIZES if n > max(passed_at, default=0))}" if any(failed) else ""
        print(f"{name:44} {must:4}  {min(scaled):10.3g} - {max(scaled):10.3g}  "
              f"{min(frobenius):10.3g} - {max(frobenius):10.3g}  {sum(failed)}/{runs}{note}")
        if must == "pass" and any(failed) or must == "fail" and not all(failed):
            problems.append(name)
    if problems:
        raise SystemExit(f"\nnot as statement.md says: {', '.join(problems)}")
    print("\nevery FP32 method passed every run; every shortcut marked fail failed every run")


if __name__ == "__main__":
    main()
