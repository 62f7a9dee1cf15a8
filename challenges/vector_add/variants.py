"""The vector sum recomputed by correct and by wrong methods: `grader check vector_add` measures the
tolerance's margins from these (statement.md, "Accuracy").

variants(inputs, rng) -> {name: ({"C": float32 array}, "pass" or "fail")}. numpy's float32 add is the
GPU's FP32 add bit for bit (IEEE round to nearest even); each shortcut is modelled by the roundings it
makes on a GPU. numpy's float16 add rounds through float32 first, which can differ from a GPU's __hadd
in the last bit of a rare tie: far below anything that decides a verdict here.

Correct ("pass"): the correctly rounded FP32 sum, and the sum rounded toward zero (__fadd_rz): the
limit is one unit in the last place, so any faithful rounding passes, though toward zero comes close.
Wrong ("fail"): half and bfloat16 arithmetic, half or TF32 inputs with an FP32 add, and B cut to TF32
before a correct add. Cutting only B's last one or two bits is left out: its error is a few units in
the last place, neither sure to fail by the check's margin nor meant to pass.
"""

import numpy as np


def variants(inputs, rng):
    a, b = inputs["A"], inputs["B"]
    methods = {
        "FP32 a + b, round to nearest": (a + b, "pass"),
        "FP32 a + b rounded toward zero (__fadd_rz)": (_toward_zero(a, b), "pass"),
        "FP16 arithmetic (__hadd)": (_through_half(_through_half(a) + _through_half(b)), "fail"),
        "FP16 inputs, FP32 add": (_through_half(a) + _through_half(b), "fail"),
        "BF16 arithmetic": (_to_bf16(_to_bf16(a) + _to_bf16(b)), "fail"),
        "TF32-rounded inputs, FP32 add": (_to_tf32(a) + _to_tf32(b), "fail"),
        "B cut to TF32 (13 bits truncated)": (a + _chop(b, 13), "fail"),
    }
    return {name: ({"C": c}, must) for name, (c, must) in methods.items()}


def _through_half(x):
    """float32 rounded to half (11 significand bits), to nearest even, kept as float32."""
    return x.astype(np.float16).astype(np.float32)


def _to_bf16(x):
    """float32 rounded to bfloat16 (8 significand bits), to nearest even, kept as float32."""
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def _to_tf32(x):
    """float32 rounded to TF32 (11 significand bits, FP32's range), to nearest even."""
    bits = x.view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)
    return rounded.view(np.float32)


def _chop(x, k):
    """float32 with its lowest k significand bits set to zero (truncation toward zero)."""
    return (x.view(np.uint32) & np.uint32(~((1 << k) - 1) & 0xFFFFFFFF)).view(np.float32)


def _toward_zero(a, b):
    """a + b in FP32 rounded toward zero: the exact sum (float64 holds it) rounded to nearest, then
    stepped one unit toward zero wherever that rounding went away from it."""
    exact = a.astype(np.float64) + b
    nearest = exact.astype(np.float32)
    away = np.abs(nearest.astype(np.float64)) > np.abs(exact)
    nearest[away] = np.nextafter(nearest[away], np.float32(0))
    return nearest
