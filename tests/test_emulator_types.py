"""Half, bfloat16 and the integer atomics in the CPU emulator: every intrinsic against an exact reference.

One probe program (generated here from the tables below) calls each of cuda_fp16.h's and cuda_bf16.h's
functions and operators on many inputs and writes every result's bits: each unary function on all 65,536
bit patterns of its type, the binary and ternary ones on a cross product of edge values (zeros, subnormals,
the largest finite, infinities, NaNs, ones and their neighbours) and on random pairs chosen to land on
rounding ties often, the conversions from float, double and every integer type on edges, exact midpoints
and their neighbours. The same file runs on a GPU (tests/test_gpu_types.py compares the two bit for bit).

The references are computed here, independently of the headers: a value is rounded to half or bfloat16 by
finding its two neighbours in the sorted table of all finite values of the format (no bit tricks shared
with the C++), the exact result of an operation comes from float64 (exact for +, -, * of two halves or
two bfloat16s; for fma a TwoSum gives the part float64 drops, so ties are broken the right way), and a
NaN result is CUDA's canonical NaN, 0x7fff. numpy's float16 (and ml_dtypes' bfloat16 where installed) is
checked against the table rounding first, so the reference itself is tested.

The atomics run under contention (4,096 threads in 16 blocks on one address) and their outcomes are
exact whatever the order: counts, the multiset of returned old values, atomicInc/atomicDec's wrap values,
half and bfloat16 sums that stop where adding one more rounds back to the same value.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from grader.backends.emulator import CXX_FLAGS, encode_command
from grader.emulator import INCLUDE, RUNTIME
from grader.emulator.translate import MAIN_RENAMED, translate

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

# ----------------------------------------------------------------------------------------- the formats


class Format:
    """A 16-bit floating-point format: `mantissa` stored bits, `exponent` bits, IEEE-style encoding."""

    def __init__(self, name: str, mantissa: int, exponent: int):
        self.name, self.mantissa, self.exponent = name, mantissa, exponent
        self.bias = (1 << (exponent - 1)) - 1
        self.inf = ((1 << exponent) - 1) << mantissa
        self.max_finite = self.inf - 1
        self.one = self.bias << mantissa
        bits = np.arange(1 << 16, dtype=np.int64)
        exp, man = (bits >> mantissa) & ((1 << exponent) - 1), bits & ((1 << mantissa) - 1)
        magnitude = np.where(exp == 0, np.ldexp(man.astype(np.float64), 1 - self.bias - mantissa),
                             np.ldexp((man + (1 << mantissa)).astype(np.float64), exp - self.bias - mantissa))
        magnitude = np.where(exp == (1 << exponent) - 1, np.where(man == 0, np.inf, np.nan), magnitude)
        self.table = np.where(bits & 0x8000, -magnitude, magnitude)
        # the positive finite values in bit order (increasing), then where infinity would sit if the
        # exponent went on: the neighbour above the largest finite value for rounding
        self.ladder = np.append(self.table[:self.max_finite + 1], 2.0 ** (self.bias + 1))

    def value(self, bits) -> np.ndarray:
        return self.table[np.asarray(bits, dtype=np.int64) & 0xFFFF]

    def isnan(self, bits) -> np.ndarray:
        return (np.asarray(bits, dtype=np.int64) & 0x7FFF) > self.inf

    def round(self, x, mode: str = "rn", residual=None) -> np.ndarray:
        """Bits of float64 `x` rounded to this format: rn (to nearest, ties to even), rz, rd (down), ru (up).
        `residual` is what float64 could not hold of the true value (x + residual): too small to move it
        past a neighbour, it decides a tie and whether an x on a representable value was really on it.
        A NaN gives 0x7fff; a finite value past the largest overflows to infinity only away from zero."""
        x = np.asarray(x, dtype=np.float64)
        negative = np.signbit(x)
        m = np.abs(x)
        finite_m = np.where(np.isfinite(m), m, 0.0)
        lo = np.clip(np.searchsorted(self.ladder, finite_m, side="right") - 1, 0, self.max_finite)
        hi = lo + 1
        below, above = finite_m - self.ladder[lo], self.ladder[hi] - finite_m
        exact = below == 0
        toward = np.zeros(m.shape, dtype=np.int64)  # +1: the magnitude's true value is a little above m
        if residual is not None:
            r = np.nan_to_num(np.asarray(residual, dtype=np.float64))
            toward = np.sign(np.where(negative, -r, r)).astype(np.int64)
        if mode == "rn":
            tie = below == above
            up = (below > above) | (tie & ((toward > 0) | ((toward == 0) & (lo % 2 == 1))))
            magnitude_bits = np.where(up, hi, lo)
        else:  # toward zero, or away from it (up for a positive value, down for a negative one)
            away = {"rz": np.zeros(m.shape, bool), "ru": ~negative, "rd": negative}[mode]
            # on a representable value, a residual below it means the true value lies under it
            toward_zero = np.where(exact & (toward < 0), lo - 1, lo)
            away_from_zero = np.where(exact & (toward <= 0), lo, hi)
            magnitude_bits = np.where(away, away_from_zero, toward_zero)
        magnitude_bits = np.where(np.isinf(m), self.inf, magnitude_bits)  # infinity stays, in every mode
        out = magnitude_bits | np.where(negative, 0x8000, 0)
        return np.where(np.isnan(x), 0x7FFF, out).astype(np.uint64)


HALF = Format("half", 10, 5)
BF16 = Format("bf16", 7, 8)


@dataclass(frozen=True)
class Names:
    """How CUDA spells one type's functions: `S` in __float2{S}, `S2` in __floats2{S2}_rn."""

    fmt: Format
    T: str
    T2: str
    S: str
    S2: str
    other: str  # the other 16-bit type, for the explicit conversion constructors

    def __call__(self, text: str) -> str:
        for key, value in (("{T2}", self.T2), ("{T}", self.T), ("{S2}", self.S2), ("{S}", self.S), ("{O}", self.other)):
            text = text.replace(key, value)
        return text


HALF_NAMES = Names(HALF, "__half", "__half2", "half", "half2", "__nv_bfloat16")
BF16_NAMES = Names(BF16, "__nv_bfloat16", "__nv_bfloat162", "bfloat16", "bfloat162", "__half")
TYPES = (HALF_NAMES, BF16_NAMES)

# ----------------------------------------------------------------------------------------- reference helpers


def two(lo, hi) -> np.ndarray:
    """A packed pair of 16-bit lanes: x in the low half, as a __half2 lies in memory."""
    return (np.asarray(lo, dtype=np.uint64) & 0xFFFF) | ((np.asarray(hi, dtype=np.uint64) & 0xFFFF) << 16)


def partner(a: np.ndarray) -> np.ndarray:
    """The high lane the probe pairs with element i: element i ^ 1 (so every value is in both lanes)."""
    return a[np.arange(len(a)) ^ 1]


def f32_bits(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)


def signed(x, dtype) -> np.ndarray:
    """An integer result as the probe writes it: sign-extended to 64 bits, as uint64."""
    return np.asarray(x).astype(dtype).astype(np.int64).view(np.uint64)


def unsigned(x, dtype) -> np.ndarray:
    return np.asarray(x).astype(dtype).astype(np.uint64)


def canonical(F: Format, bits) -> np.ndarray:
    bits = np.asarray(bits, dtype=np.uint64)
    return np.where(F.isnan(bits), np.uint64(0x7FFF), bits)


def exact_fma(F: Format, a, b, c):
    """(float64 nearest of a*b + c, the rest): a*b is exact in float64 for 11- and 8-bit significands,
    and TwoSum gives exactly what the sum lost."""
    with np.errstate(invalid="ignore"):
        p = F.value(a) * F.value(b)
        cv = F.value(c)
        s = p + cv
        bb = s - p
        e = (p - (s - bb)) + (cv - bb)
    return s, np.where(np.isfinite(s), e, 0.0)


def exact_integers(q, dtype) -> tuple[np.ndarray, np.ndarray]:
    """int64 values cast (wrapping) to `dtype`, as float64 and what float64 dropped of them (past 2^53)."""
    wrapped = [int(v) for v in np.asarray(q).astype(dtype)]
    near = np.array([float(v) for v in wrapped])
    return near, np.array([float(v - int(f)) for v, f in zip(wrapped, near)])


def integer_nearest(F: Format, q, dtype, mode: str = "rn") -> np.ndarray:
    near, rest = exact_integers(q, dtype)
    return F.round(near, mode, rest)


def saturate(F: Format, bits) -> np.ndarray:
    """_sat: the result clamped to [0, 1]; NaN gives +0."""
    v = F.value(bits)
    out = np.where(v > 1, F.one, np.where(v > 0, bits, 0))
    return np.where(F.isnan(bits), 0, out).astype(np.uint64)


def relu(F: Format, bits) -> np.ndarray:
    """_relu: a negative result and -0 become +0, NaN stays the canonical NaN."""
    v = F.value(bits)
    return np.where(F.isnan(bits), np.uint64(0x7FFF), np.where(v <= 0, 0, bits)).astype(np.uint64)


def fmax(F: Format, a, b, nan_wins: bool) -> np.ndarray:
    """__hmax: the larger, a NaN operand ignored (both NaN: canonical NaN), +0 above -0; __hmax_nan: NaN
    if either is."""
    va, vb = F.value(a), F.value(b)
    a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
    pick = np.where(va > vb, a, np.where(vb > va, b, np.where(np.signbit(va), b, a)))
    pick = np.where(F.isnan(a), b, np.where(F.isnan(b), a, pick))
    either = F.isnan(a) | F.isnan(b)
    return np.where(F.isnan(pick) | (either & nan_wins), np.uint64(0x7FFF), pick)


def fmin(F: Format, a, b, nan_wins: bool) -> np.ndarray:
    va, vb = F.value(a), F.value(b)
    a, b = np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)
    pick = np.where(va < vb, a, np.where(vb < va, b, np.where(np.signbit(va), a, b)))
    pick = np.where(F.isnan(a), b, np.where(F.isnan(b), a, pick))
    either = F.isnan(a) | F.isnan(b)
    return np.where(F.isnan(pick) | (either & nan_wins), np.uint64(0x7FFF), pick)


def to_int(F: Format, bits, mode: str, dtype, nan_value: int = 0) -> np.ndarray:
    """The saturating float-to-integer conversion of cvt.rni/rzi/rmi/rpi, as the probe writes it (sign- or
    zero-extended to 64 bits): out of range clamps, NaN gives 0 (0x8000000000000000 for 64-bit ones)."""
    v = F.value(bits)
    with np.errstate(invalid="ignore"):
        r = np.nan_to_num({"rn": np.rint, "rz": np.trunc, "rd": np.floor, "ru": np.ceil}[mode](v), nan=0.0)
    info = np.iinfo(dtype)
    r = np.clip(r, float(info.min), float(info.max))  # float(2^63 - 1) is 2^63: the 64-bit top is handled below
    if dtype == np.uint64:
        out = np.where(r >= 2.0 ** 64, np.uint64(info.max), np.minimum(r, 2.0 ** 64 - 2048).astype(np.uint64))
    elif dtype == np.int64:
        out = np.where(r >= 2.0 ** 63, np.int64(info.max), np.minimum(r, 2.0 ** 63 - 1024).astype(np.int64)).view(np.uint64)
    elif info.min < 0:
        out = signed(r.astype(np.int64), dtype)
    else:
        out = unsigned(r.astype(np.int64), dtype)
    return np.where(np.isnan(v), np.uint64(nan_value), out).astype(np.uint64)


def rounded(F: Format, fn):
    """A math function's reference: fn in float64, rounded once to the format."""
    def reference(bits):
        with np.errstate(all="ignore"):
            return F.round(fn(F.value(bits)))
    return reference


MATH = {
    "hsqrt": np.sqrt, "hrsqrt": lambda v: 1.0 / np.sqrt(v), "hrcp": lambda v: 1.0 / v, "hexp": np.exp,
    "hexp2": np.exp2, "hexp10": lambda v: np.power(10.0, v), "hlog": np.log, "hlog2": np.log2, "hlog10": np.log10,
    "hsin": np.sin, "hcos": np.cos, "htanh": np.tanh, "htanh_approx": np.tanh,
    "htrunc": np.trunc, "hceil": np.ceil, "hfloor": np.floor, "hrint": np.rint,
}
"""hname: float64 reference; the h2 version (h2sqrt, ...) applies it to both lanes."""

APPROXIMATE = {"htanh_approx", "h2tanh_approx"}
"""What CUDA computes with a hardware approximation (tanh.approx) and documents no rounding for: the
emulator rounds the exact value, a GPU may be one unit in the last place away."""

# ----------------------------------------------------------------------------------------- the operations


@dataclass(frozen=True)
class Op:
    family: str  # "un" (every bit pattern), "bin" (pairs and triples), "cvt" (from float, double, integers)
    name: str  # what the report calls it
    code: str  # C++ statement setting `r`, an unsigned long long
    expect: object  # inputs dict -> uint64 array


def E(expr: str) -> str:
    return f"r = bits({expr});"


def unary_ops(n: Names) -> list[Op]:
    F = n.fmt
    ops = []

    def add(name, code, expect):
        ops.append(Op("un", f"{F.name}:{n(name)}", n(code), expect))

    def lanes(fn):
        return lambda I: two(fn(I["x"]), fn(partner(I["x"])))

    neg = lambda b: np.asarray(b, dtype=np.uint64) ^ 0x8000
    absolute = lambda b: np.asarray(b, dtype=np.uint64) & 0x7FFF
    add("__hneg", E("__hneg(x)"), lambda I: canonical(F, neg(I["x"])))
    add("unary -", E("-x"), lambda I: canonical(F, neg(I["x"])))
    add("unary +", E("+x"), lambda I: I["x"].astype(np.uint64))
    add("__habs", E("__habs(x)"), lambda I: canonical(F, absolute(I["x"])))
    add("__hneg2", E("__hneg2(v)"), lanes(lambda b: canonical(F, neg(b))))
    add("unary - (2)", E("-v"), lanes(lambda b: canonical(F, neg(b))))
    add("__habs2", E("__habs2(v)"), lanes(lambda b: canonical(F, absolute(b))))
    for name, fn in MATH.items():
        add(name, E(f"{name}(x)"), lambda I, fn=fn: rounded(F, fn)(I["x"]))
        h2 = "h2" + name[1:]
        add(h2, E(f"{h2}(v)"), lambda I, fn=fn: lanes(rounded(F, fn))(I))
    one = F.round(1.0)
    add("++x", "{ {T} t = x; ++t; r = bits(t); }", lambda I: F.round(F.value(I["x"]) + 1.0))
    add("x--", "{ {T} t = x; {T} old = t--; r = bits(t) | (bits(old) << 16); }",
        lambda I: F.round(F.value(I["x"]) - 1.0) | (I["x"].astype(np.uint64) << 16))
    add("++v", "{ {T2} t = v; ++t; r = bits(t); }", lanes(lambda b: F.round(F.value(b) + 1.0)))
    add("__hisnan2", E("__hisnan2(v)"), lanes(lambda b: np.where(F.isnan(b), one, 0)))
    add("__lowhigh2highlow", E("__lowhigh2highlow(v)"), lambda I: two(partner(I["x"]), I["x"]))
    add("__low2{S2}", E("__low2{S2}(v)"), lambda I: two(I["x"], I["x"]))
    add("__high2{S2}", E("__high2{S2}(v)"), lambda I: two(partner(I["x"]), partner(I["x"])))
    add("__{S}2{S2}", E("__{S}2{S2}(x)"), lambda I: two(I["x"], I["x"]))
    add("__low2{S}", E("__low2{S}(v)"), lambda I: I["x"].astype(np.uint64))
    add("__high2{S}", E("__high2{S}(v)"), lambda I: partner(I["x"]).astype(np.uint64))
    add("__ldg", E("__ldg(p + i)"), lambda I: I["x"].astype(np.uint64))
    add("__ldcs (2)", E("__ldcs(p2 + (i >> 1))"), lambda I: two(I["x"] & 0xFFFE, I["x"] | 1))
    add("__shfl_xor_sync", E("__shfl_xor_sync(0xffffffffu, x, 1)"), lambda I: partner(I["x"]).astype(np.uint64))
    add("__shfl_down_sync (2)", E("__shfl_down_sync(0xffffffffu, v, 1)"),
        lambda I: (lambda s: two(s, s ^ 1))(np.where(I["x"] % 32 == 31, I["x"], I["x"].astype(np.int64) + 1)))
    add("__shfl_sync", E("__shfl_sync(0xffffffffu, x, 3, 16)"), lambda I: ((I["x"] & 0xFFF0) | 3).astype(np.uint64))
    add("__shfl_up_sync", E("__shfl_up_sync(0xffffffffu, x, 2)"),
        lambda I: np.where(I["x"] % 32 < 2, I["x"], I["x"].astype(np.int64) - 2).astype(np.uint64))
    other = BF16 if F is HALF else HALF
    add("{O}({T})", E("{O}(x)"), lambda I: other.round(F.value(I["x"])))
    # to float: exact; a NaN keeps its sign and payload for bfloat16 (the bits shifted) and becomes the
    # canonical float NaN for half
    def widened(bits):
        v = F.value(bits)
        if F is BF16:
            return np.asarray(bits, dtype=np.uint64) << 16
        return np.where(np.isnan(v), np.uint64(0x7FFFFFFF), f32_bits(v))
    add("__{S}2float", E("__{S}2float(x)"), lambda I: widened(I["x"]))
    add("(float)", E("static_cast<float>(x)"), lambda I: widened(I["x"]))
    add("__low2float", E("__low2float(v)"), lambda I: widened(I["x"]))
    add("__high2float", E("__high2float(v)"), lambda I: widened(partner(I["x"])))
    add("__{S2}2float2", E("__{S2}2float2(v)"), lambda I: widened(I["x"]) | (widened(partner(I["x"])) << 32))
    widths = {"int": np.int32, "uint": np.uint32, "short": np.int16, "ushort": np.uint16,
              "ll": np.int64, "ull": np.uint64}
    for dst, dtype in widths.items():
        nan = 1 << 63 if dst in ("ll", "ull") else 0
        for mode in ("rn", "rz", "rd", "ru"):
            add(f"__{{S}}2{dst}_{mode}", E(f"__{{S}}2{dst}_{mode}(x)"),
                lambda I, m=mode, d=dtype, z=nan: to_int(F, I["x"], m, d, z))
    add("__{S}2char_rz", E("__{S}2char_rz(x)"), lambda I: to_int(F, I["x"], "rz", np.int8))
    add("__{S}2uchar_rz", E("__{S}2uchar_rz(x)"), lambda I: to_int(F, I["x"], "rz", np.uint8))
    casts = {"int": (np.int32, 0), "unsigned int": (np.uint32, 0), "short": (np.int16, 0),
             "unsigned short": (np.uint16, 0), "signed char": (np.int8, 0), "unsigned char": (np.uint8, 0),
             "long": (np.int64, 1 << 63), "unsigned long": (np.uint64, 1 << 63), "long long": (np.int64, 1 << 63),
             "unsigned long long": (np.uint64, 1 << 63)}
    for ctype, (dtype, nan) in casts.items():
        add(f"({ctype})", E(f"static_cast<{ctype}>(x)"), lambda I, d=dtype, z=nan: to_int(F, I["x"], "rz", d, z))
    add("(bool)", E("static_cast<bool>(x)"), lambda I: ((I["x"] & 0x7FFF) != 0).astype(np.uint64))
    add("__hisnan", E("__hisnan(x)"), lambda I: F.isnan(I["x"]).astype(np.uint64))
    add("__hisinf", E("__hisinf(x)"),
        lambda I: signed(np.where(I["x"] == F.inf, 1, np.where(I["x"] == F.inf | 0x8000, -1, 0)), np.int32))
    add("__{S}_as_short", E("__{S}_as_short(x)"), lambda I: signed(I["x"].astype(np.uint16).view(np.int16), np.int16))
    add("__short_as_{S}", E("__short_as_{S}(__{S}_as_short(x))"), lambda I: I["x"].astype(np.uint64))
    return ops


COMPARISONS = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: (a != b) & ~np.isnan(a) & ~np.isnan(b),
    "le": lambda a, b: a <= b, "ge": lambda a, b: a >= b, "lt": lambda a, b: a < b, "gt": lambda a, b: a > b,
    "equ": lambda a, b: ~((a != b) & ~np.isnan(a) & ~np.isnan(b)), "neu": lambda a, b: ~(a == b),
    "leu": lambda a, b: ~(a > b), "geu": lambda a, b: ~(a < b), "ltu": lambda a, b: ~(a >= b),
    "gtu": lambda a, b: ~(a <= b),
}
OPERATORS = {"==": "eq", "!=": "neu", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


def binary_ops(n: Names) -> list[Op]:
    F = n.fmt
    ops = []

    def add(name, code, expect):
        ops.append(Op("bin", f"{F.name}:{n(name)}", n(code), expect))

    def lanes(fn):  # a lane-wise binary or ternary reference over the packed pairs
        return lambda I: two(fn(I["x"], I["y"], I["z"]), fn(partner(I["x"]), partner(I["y"]), partner(I["z"])))

    def arith(op):
        def reference(a, b, c=None):
            with np.errstate(all="ignore"):
                return F.round(op(F.value(a), F.value(b)))
        return reference

    add_ = arith(np.add)
    sub_ = arith(np.subtract)
    mul_ = arith(np.multiply)
    div_ = arith(np.divide)
    def fma_(a, b, c):
        nearest, rest = exact_fma(F, a, b, c)
        return F.round(nearest, residual=rest)
    for name, fn in (("__hadd", add_), ("__hsub", sub_), ("__hmul", mul_), ("__hdiv", div_),
                     ("__hadd_rn", add_), ("__hsub_rn", sub_), ("__hmul_rn", mul_)):
        add(name, E(f"{name}(x, y)"), lambda I, fn=fn: fn(I["x"], I["y"]))
        if name != "__hdiv":
            h2 = name.replace("_rn", "2_rn") if name.endswith("_rn") else name + "2"
            add(h2, E(f"{h2}(v, w)"), lanes(fn))
    add("__h2div", E("__h2div(v, w)"), lanes(div_))
    for name, fn in (("__hadd_sat", add_), ("__hsub_sat", sub_), ("__hmul_sat", mul_)):
        add(name, E(f"{name}(x, y)"), lambda I, fn=fn: saturate(F, fn(I["x"], I["y"])))
        h2 = name.replace("_sat", "2_sat")
        add(h2, E(f"{h2}(v, w)"), lanes(lambda a, b, c, fn=fn: saturate(F, fn(a, b))))
    for symbol, fn in (("+", add_), ("-", sub_), ("*", mul_), ("/", div_)):
        add(f"x {symbol} y", E(f"x {symbol} y"), lambda I, fn=fn: fn(I["x"], I["y"]))
        add(f"x {symbol}= y", f"{{ {{T}} t = x; t {symbol}= y; r = bits(t); }}", lambda I, fn=fn: fn(I["x"], I["y"]))
        add(f"v {symbol} w", E(f"v {symbol} w"), lanes(fn))
        add(f"v {symbol}= w", f"{{ {{T2}} t = v; t {symbol}= w; r = bits(t); }}", lanes(fn))
    add("__hfma", E("__hfma(x, y, z)"), lambda I: fma_(I["x"], I["y"], I["z"]))
    add("__hfma_sat", E("__hfma_sat(x, y, z)"), lambda I: saturate(F, fma_(I["x"], I["y"], I["z"])))
    add("__hfma_relu", E("__hfma_relu(x, y, z)"), lambda I: relu(F, fma_(I["x"], I["y"], I["z"])))
    add("__hfma2", E("__hfma2(v, w, u)"), lanes(fma_))
    add("__hfma2_sat", E("__hfma2_sat(v, w, u)"), lanes(lambda a, b, c: saturate(F, fma_(a, b, c))))
    add("__hfma2_relu", E("__hfma2_relu(v, w, u)"), lanes(lambda a, b, c: relu(F, fma_(a, b, c))))

    def cmadd(I):  # (a.x + i a.y)(b.x + i b.y) + c: two fmas a lane, in CUDA's order
        ax, ay, bx, by = I["x"], partner(I["x"]), I["y"], partner(I["y"])
        real = fma_(ay ^ 0x8000, by, fma_(ax, bx, I["z"]))
        imag = fma_(ay, bx, fma_(ax, by, partner(I["z"])))
        return two(real, imag)
    add("__hcmadd", E("__hcmadd(v, w, u)"), cmadd)
    for name, nan_wins in (("__hmax", False), ("__hmax_nan", True)):
        add(name, E(f"{name}(x, y)"), lambda I, z=nan_wins: fmax(F, I["x"], I["y"], z))
        h2 = name.replace("max", "max2")
        add(h2, E(f"{h2}(v, w)"), lanes(lambda a, b, c, z=nan_wins: fmax(F, a, b, z)))
    for name, nan_wins in (("__hmin", False), ("__hmin_nan", True)):
        add(name, E(f"{name}(x, y)"), lambda I, z=nan_wins: fmin(F, I["x"], I["y"], z))
        h2 = name.replace("min", "min2")
        add(h2, E(f"{h2}(v, w)"), lanes(lambda a, b, c, z=nan_wins: fmin(F, a, b, z)))
    one = F.round(1.0)
    for cmp, fn in COMPARISONS.items():
        test = lambda a, b, fn=fn: fn(F.value(a), F.value(b))
        add(f"__h{cmp}", E(f"__h{cmp}(x, y)"), lambda I, t=test: t(I["x"], I["y"]).astype(np.uint64))
        add(f"__h{cmp}2", E(f"__h{cmp}2(v, w)"), lanes(lambda a, b, c, t=test: np.where(t(a, b), one, 0)))
        add(f"__h{cmp}2_mask", E(f"__h{cmp}2_mask(v, w)"),
            lanes(lambda a, b, c, t=test: np.where(t(a, b), 0xFFFF, 0)))
        add(f"__hb{cmp}2", E(f"__hb{cmp}2(v, w)"),
            lambda I, t=test: (t(I["x"], I["y"]) & t(partner(I["x"]), partner(I["y"]))).astype(np.uint64))
    for symbol, cmp in OPERATORS.items():
        test = lambda a, b, fn=COMPARISONS[cmp]: fn(F.value(a), F.value(b))
        add(f"x {symbol} y", E(f"x {symbol} y"), lambda I, t=test: t(I["x"], I["y"]).astype(np.uint64))
        add(f"v {symbol} w", E(f"v {symbol} w"),
            lambda I, t=test: (t(I["x"], I["y"]) & t(partner(I["x"]), partner(I["y"]))).astype(np.uint64))
    add("__halves2{S2}", E("__halves2{S2}(x, y)"), lambda I: two(I["x"], I["y"]))
    add("make_{S2}", E("make_{S2}(x, y)"), lambda I: two(I["x"], I["y"]))
    add("{T2}(x, y)", E("{T2}(x, y)"), lambda I: two(I["x"], I["y"]))
    add("__lows2{S2}", E("__lows2{S2}(v, w)"), lambda I: two(I["x"], I["y"]))
    add("__highs2{S2}", E("__highs2{S2}(v, w)"), lambda I: two(partner(I["x"]), partner(I["y"])))
    return ops


def widened(f32: np.ndarray) -> np.ndarray:
    """float32 values as float64 (exact; a signalling NaN is just a NaN here)."""
    with np.errstate(invalid="ignore"):
        return f32.astype(np.float64)


def conversion_ops(n: Names) -> list[Op]:
    F = n.fmt
    ops = []

    def add(name, code, expect):
        ops.append(Op("cvt", f"{F.name}:{n(name)}", n(code), expect))

    f64 = lambda I: widened(I["f"])
    g64 = lambda I: widened(I["g"])
    for mode in ("rn", "rz", "rd", "ru"):
        add(f"__float2{{S}}_{mode}", E(f"__float2{{S}}_{mode}(f)"), lambda I, m=mode: F.round(f64(I), m))
    add("__float2{S}", E("__float2{S}(f)"), lambda I: F.round(f64(I)))
    add("{T}(float)", E("{T}(f)"), lambda I: F.round(f64(I)))
    add("= float", "{ {T} t; t = f; r = bits(t); }", lambda I: F.round(f64(I)))
    # cvt.rn.f16.f64 and cvt.rn.bf16.f64 keep a NaN's sign and the top of its payload, quieted: no
    # canonical 0x7fff here (an H200 says so)
    def from_double(I):
        raw = I["d"].view(np.uint64)
        nan = (raw >> 63 << 15) | F.inf | (1 << (F.mantissa - 1)) | ((raw & ((1 << 52) - 1)) >> (52 - F.mantissa))
        return np.where(np.isnan(I["d"]), nan, F.round(I["d"])).astype(np.uint64)
    add("__double2{S}", E("__double2{S}(d)"), from_double)
    add("{T}(double)", E("{T}(d)"), from_double)
    add("= double", "{ {T} t; t = d; r = bits(t); }", from_double)
    add("__float2{S2}_rn", E("__float2{S2}_rn(f)"), lambda I: two(F.round(f64(I)), F.round(f64(I))))
    add("__floats2{S2}_rn", E("__floats2{S2}_rn(f, g)"), lambda I: two(F.round(f64(I)), F.round(g64(I))))
    add("__float22{S2}_rn", E("__float22{S2}_rn(make_float2(f, g))"),
        lambda I: two(F.round(f64(I)), F.round(g64(I))))
    sources = {"int": ("int", np.int32), "uint": ("unsigned int", np.uint32), "short": ("short", np.int16),
               "ushort": ("unsigned short", np.uint16), "ll": ("long long", np.int64),
               "ull": ("unsigned long long", np.uint64)}
    for src, (ctype, dtype) in sources.items():
        for mode in ("rn", "rz", "rd", "ru"):
            add(f"__{src}2{{S}}_{mode}", E(f"__{src}2{{S}}_{mode}(static_cast<{ctype}>(q))"),
                lambda I, m=mode, d=dtype: integer_nearest(F, I["q"], d, m))
        add(f"{{T}}({ctype})", E(f"{{T}}(static_cast<{ctype}>(q))"),
            lambda I, d=dtype: integer_nearest(F, I["q"], d))
        add(f"= {ctype}", f"{{ {{T}} t; t = static_cast<{ctype}>(q); r = bits(t); }}",
            lambda I, d=dtype: integer_nearest(F, I["q"], d))
    add("{T}(long)", E("{T}(static_cast<long>(q))"), lambda I: integer_nearest(F, I["q"], np.int64))
    add("{T}(unsigned long)", E("{T}(static_cast<unsigned long>(q))"), lambda I: integer_nearest(F, I["q"], np.uint64))
    return ops


def probe_ops() -> list[Op]:
    return [op for n in TYPES for op in unary_ops(n) + binary_ops(n) + conversion_ops(n)]


# ----------------------------------------------------------------------------------------- the atomics

THREADS, BLOCKS = 256, 16
ATOMIC_THREADS = THREADS * BLOCKS
INC_LIMIT = 37
_T = range(ATOMIC_THREADS)
_SPREAD = [(t * 7919) % 10007 for t in _T]  # a permutation-like spread of values, distinct enough


@dataclass(frozen=True)
class Atomic:
    """One address every thread updates once: `code` sets `r` to what the call returned (`t` is the
    thread's index, `s[K]` the address). What must hold whatever the order: the final value and,
    where given, the sorted returned values (an exchange: the returned values and the final value
    together are the initial value and every value written)."""

    name: str
    code: str
    initial: int
    width: int  # the bits of the slot and of the returned values compared
    final: int | None = None
    returns: tuple | None = None
    written: tuple | None = None  # an exchange's values


def _sorted(values) -> tuple:
    return tuple(sorted(values))


def _cas_chain() -> tuple[int, tuple]:
    x, seen = 0, []
    for _ in _T:
        seen.append(x)
        x = (x * 2 + 1) & 0xFFFFFFFF
    return x, _sorted(seen)


M32, M64 = (1 << 32) - 1, (1 << 64) - 1
N = ATOMIC_THREADS
HALF_ONE_SUMS = _sorted(int(HALF.round(min(k, 2048))) for k in _T)
BF16_ONE_SUMS = _sorted(int(BF16.round(min(k, 256))) for k in _T)

ATOMICS = [
    Atomic("atomicAdd int", "r = (unsigned)atomicAdd((int*)&s[K], 1);", 0, 32, N, _sorted(_T)),
    Atomic("atomicAdd unsigned", "r = atomicAdd((unsigned*)&s[K], 1u);", 0, 32, N, _sorted(_T)),
    Atomic("atomicAdd unsigned long long", "r = atomicAdd(&s[K], 1ull << 33);", 0, 64, N << 33,
           _sorted(k << 33 for k in _T)),
    Atomic("atomicAdd_block int", "r = (unsigned)atomicAdd_block((int*)&s[K], 2);", 0, 32, 2 * N,
           _sorted(2 * k for k in _T)),
    Atomic("atomicAdd_system unsigned long long", "r = atomicAdd_system(&s[K], 5ull);", 0, 64, 5 * N,
           _sorted(5 * k for k in _T)),
    Atomic("atomicSub int", "r = (unsigned)atomicSub((int*)&s[K], 1);", 100, 32, (100 - N) & M32,
           _sorted((100 - k) & M32 for k in _T)),
    Atomic("atomicSub unsigned", "r = atomicSub((unsigned*)&s[K], 1u);", 5, 32, (5 - N) & M32,
           _sorted((5 - k) & M32 for k in _T)),
    Atomic("atomicSub_system int", "r = (unsigned)atomicSub_system((int*)&s[K], 3);", 0, 32, (-3 * N) & M32,
           _sorted((-3 * k) & M32 for k in _T)),
    Atomic("atomicExch int", "r = (unsigned)atomicExch((int*)&s[K], t + 1);", 0, 32, written=_sorted(k + 1 for k in _T)),
    Atomic("atomicExch unsigned long long", "r = atomicExch(&s[K], (unsigned long long)t << 40 | 1);", 7, 64,
           written=_sorted((k << 40) | 1 for k in _T)),
    Atomic("atomicExch float", "r = __float_as_uint(atomicExch((float*)&s[K], (float)t + 0.5f));", 0, 32,
           written=_sorted(int(np.float32(k + 0.5).view(np.uint32)) for k in _T)),
    Atomic("atomicExch_block unsigned", "r = atomicExch_block((unsigned*)&s[K], (unsigned)t + 9);", 0, 32,
           written=_sorted(k + 9 for k in _T)),
    Atomic("atomicInc", f"r = atomicInc((unsigned*)&s[K], {INC_LIMIT}u);", 0, 32, N % (INC_LIMIT + 1),
           _sorted(k % (INC_LIMIT + 1) for k in _T)),
    Atomic("atomicInc_block from above the limit", f"r = atomicInc_block((unsigned*)&s[K], {INC_LIMIT}u);", 1000, 32,
           (N - 1) % (INC_LIMIT + 1), _sorted([1000] + [k % (INC_LIMIT + 1) for k in range(N - 1)])),
    Atomic("atomicInc_system limit 0", "r = atomicInc_system((unsigned*)&s[K], 0u);", 3, 32, 0,
           _sorted([3] + [0] * (N - 1))),
    Atomic("atomicDec", f"r = atomicDec((unsigned*)&s[K], {INC_LIMIT}u);", 5, 32, (5 - N) % (INC_LIMIT + 1),
           _sorted((5 - k) % (INC_LIMIT + 1) for k in _T)),
    Atomic("atomicDec_block from above the limit", f"r = atomicDec_block((unsigned*)&s[K], {INC_LIMIT}u);", 1000, 32,
           (INC_LIMIT - (N - 1)) % (INC_LIMIT + 1),
           _sorted([1000] + [(INC_LIMIT - k) % (INC_LIMIT + 1) for k in range(N - 1)])),
    Atomic("atomicDec_system limit 0", "r = atomicDec_system((unsigned*)&s[K], 0u);", 0, 32, 0, _sorted([0] * N)),
    Atomic("atomicCAS int", "{ int* p = (int*)&s[K]; int old = *p, seen; "
           "do { seen = old; old = atomicCAS(p, seen, seen + 1); } while (old != seen); r = (unsigned)seen; }",
           0, 32, N, _sorted(_T)),
    Atomic("atomicCAS_block unsigned long long", "{ unsigned long long* p = &s[K]; unsigned long long old = *p, seen; "
           "do { seen = old; old = atomicCAS_block(p, seen, seen + 3); } while (old != seen); r = seen; }",
           0, 64, 3 * N, _sorted(3 * k for k in _T)),
    Atomic("atomicCAS_system unsigned", "{ unsigned* p = (unsigned*)&s[K]; unsigned old = *p, seen; "
           "do { seen = old; old = atomicCAS_system(p, seen, seen * 2u + 1u); } while (old != seen); r = seen; }",
           0, 32, *_cas_chain()),
    Atomic("atomicCAS unsigned short, two in one word", "{ unsigned short* p = (unsigned short*)&s[K] + (t & 1); "
           "unsigned short old = *p, seen; do { seen = old; old = atomicCAS(p, seen, (unsigned short)(seen + 1)); }"
           " while (old != seen); r = seen; }", 0, 32, (N // 2) * 0x10001, _sorted(list(range(N // 2)) * 2)),
    Atomic("atomicMin int", "r = (unsigned)atomicMin((int*)&s[K], (int)((t * 7919u) % 10007u) - 5000);", 0, 32,
           min([v - 5000 for v in _SPREAD] + [0]) & M32),
    Atomic("atomicMax int", "r = (unsigned)atomicMax((int*)&s[K], (int)((t * 7919u) % 10007u) - 5000);", 0, 32,
           max([v - 5000 for v in _SPREAD] + [0]) & M32),
    Atomic("atomicMin_block unsigned", "r = atomicMin_block((unsigned*)&s[K], (t * 7919u) % 10007u + 3u);", M32, 32,
           min(_SPREAD) + 3),
    Atomic("atomicMax_system unsigned", "r = atomicMax_system((unsigned*)&s[K], (t * 7919u) % 10007u + 3u);", 0, 32,
           max(_SPREAD) + 3),
    Atomic("atomicMin long long", "r = (unsigned long long)atomicMin((long long*)&s[K], "
           "((long long)((t * 7919u) % 10007u) - 5000) * (1ll << 35));", 0, 64,
           min([(v - 5000) << 35 for v in _SPREAD] + [0]) & M64),
    Atomic("atomicMax_block long long", "r = (unsigned long long)atomicMax_block((long long*)&s[K], "
           "((long long)((t * 7919u) % 10007u) - 5000) * (1ll << 35));", 1 << 63, 64,
           max((v - 5000) << 35 for v in _SPREAD) & M64),
    Atomic("atomicMin_system unsigned long long", "r = atomicMin_system(&s[K], ((unsigned long long)t << 40) + 77);",
           M64, 64, 77),
    Atomic("atomicMax unsigned long long", "r = atomicMax(&s[K], ((unsigned long long)t << 40) + 77);", 0, 64,
           ((N - 1) << 40) + 77),
    Atomic("atomicOr unsigned long long", "r = atomicOr(&s[K], 1ull << (t % 64));", 0, 64, M64),
    Atomic("atomicAnd_block unsigned long long", "r = atomicAnd_block(&s[K], ~(1ull << (t % 64)));", M64, 64, 0),
    Atomic("atomicXor_system unsigned long long", "r = atomicXor_system(&s[K], 1ull << (t % 64));", 0x5A5A, 64, 0x5A5A),
    Atomic("atomicOr int", "r = (unsigned)atomicOr((int*)&s[K], (int)(1u << (t % 32)));", 0, 32, M32),
    Atomic("atomicAnd unsigned", "r = atomicAnd((unsigned*)&s[K], ~(1u << (t % 32)));", M32, 32, 0),
    Atomic("atomicXor_block int", "r = (unsigned)atomicXor_block((int*)&s[K], (int)(1u << (t % 32)));", 0x1234, 32,
           0x1234),
    Atomic("atomicOr_block long long", "r = (unsigned long long)atomicOr_block((long long*)&s[K], "
           "(long long)(1ull << (t % 64)));", 0, 64, M64),
    Atomic("atomicAnd_system long long", "r = (unsigned long long)atomicAnd_system((long long*)&s[K], "
           "(long long)~(1ull << (t % 64)));", M64, 64, 0),
    Atomic("atomicXor unsigned", "r = atomicXor((unsigned*)&s[K], 1u << (t % 32));", 0, 32, 0),
    # floating-point sums exact whatever the order: adding 1 to a half stops at 2048 (2048 + 1 is a tie
    # that rounds back to the even 2048), to a bfloat16 at 256; 0.25s in half stop at 512, 0.5s in
    # bfloat16 at 128
    Atomic("atomicAdd __half", "r = __half_as_ushort(atomicAdd((__half*)&s[K], __float2half(1.0f)));", 0, 16,
           int(HALF.round(2048.0)), HALF_ONE_SUMS),
    Atomic("atomicAdd __half2", "{ __half2 old = atomicAdd((__half2*)&s[K], __floats2half2_rn(0.25f, 1.0f)); "
           "r = __half_as_ushort(old.x) | (__half_as_ushort(old.y) << 16); }", 0, 32,
           int(HALF.round(512.0)) | int(HALF.round(2048.0)) << 16),
    Atomic("atomicAdd __nv_bfloat16", "r = __bfloat16_as_ushort(atomicAdd((__nv_bfloat16*)&s[K], "
           "__float2bfloat16(1.0f)));", 0, 16, int(BF16.round(256.0)), BF16_ONE_SUMS),
    Atomic("atomicAdd __nv_bfloat162", "{ __nv_bfloat162 old = atomicAdd((__nv_bfloat162*)&s[K], "
           "__floats2bfloat162_rn(1.0f, 0.5f)); "
           "r = __bfloat16_as_ushort(old.x) | (__bfloat16_as_ushort(old.y) << 16); }", 0, 32,
           int(BF16.round(256.0)) | int(BF16.round(128.0)) << 16),
]


# ----------------------------------------------------------------------------------------- the inputs

SEED = 20261125
N_BIN = 1 << 14
N_CVT = 1 << 14
N_UN = 1 << 16


def _edges(F: Format) -> list[int]:
    one, top = F.one, F.max_finite
    return sorted({0, 0x8000, 1, 0x8001, (1 << F.mantissa) - 1, 1 << F.mantissa, one, one + 1, one - 1,
                   one | 0x8000, one + (1 << F.mantissa), one - (1 << F.mantissa), top, top - 1, top | 0x8000,
                   F.inf, F.inf | 0x8000, F.inf + 1, 0x7FFF, 0xFFFF, F.inf | (1 << (F.mantissa - 1)),
                   int(F.round(3.0)), int(F.round(1 / 3)), int(F.round(0.5)), int(F.round(-2.5)),
                   int(F.round(1.5)), int(F.round(255.5)), int(F.round(-0.75))})


def _random_values(F: Format, rng, count: int, spread: int, bits: int) -> np.ndarray:
    """Finite values whose exponents lie within `spread` of 1's and whose significands have only their
    top `bits` bits set: sums and products of such values land on exact ties often."""
    sign = rng.integers(0, 2, count) << 15
    exponent = np.clip(F.bias + rng.integers(-spread, spread + 1, count), 1, (1 << F.exponent) - 2)
    mantissa = rng.integers(0, 1 << F.mantissa, count) & ~((1 << max(F.mantissa - bits, 0)) - 1)
    return (sign | (exponent << F.mantissa) | mantissa).astype(np.uint16)


def _binary_inputs(F: Format, rng) -> dict:
    edges = np.array(_edges(F), dtype=np.uint16)
    a, b = np.repeat(edges, len(edges)), np.tile(edges, len(edges))
    parts_a, parts_b = [a], [b]
    rest = N_BIN - len(a)
    third = rest // 3
    parts_a.append(rng.integers(0, 1 << 16, third).astype(np.uint16))
    parts_b.append(rng.integers(0, 1 << 16, third).astype(np.uint16))
    parts_a.append(_random_values(F, rng, third, 4, F.mantissa + 1))
    parts_b.append(_random_values(F, rng, third, 4, F.mantissa + 1))
    last = rest - 2 * third
    parts_a.append(_random_values(F, rng, last, 12, 3))
    parts_b.append(_random_values(F, rng, last, 12, 3))
    x, y = np.concatenate(parts_a), np.concatenate(parts_b)
    z = np.where(rng.integers(0, 4, N_BIN) == 0, rng.integers(0, 1 << 16, N_BIN),
                 _random_values(F, rng, N_BIN, 6, F.mantissa + 1)).astype(np.uint16)
    z[: len(edges)] = edges
    return {"x": x, "y": y, "z": z}


def _midpoints(F: Format, rng, count: int) -> np.ndarray:
    """Exact midpoints between neighbouring finite values of F (and their negatives), as float64."""
    lo = rng.integers(0, F.max_finite, count)
    return np.where(rng.integers(0, 2, count) == 1, -1.0, 1.0) * (F.ladder[lo] + F.ladder[lo + 1]) / 2


def _conversion_inputs(rng) -> dict:
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 65504.0, 65519.0, 65520.0, 65536.0,
                        2.0 ** -24, 2.0 ** -25, 3 * 2.0 ** -26, 2.0 ** -26, 2.0 ** -14, 2.0 ** -133, 2.0 ** -134,
                        2.0 ** -126, 3.4e38, 3.3961776e38, 3.3963e38, 1.0 + 2.0 ** -11, 1.0 + 2.0 ** -8,
                        2049.0, 2051.0, 257.0, 259.0, np.float32(np.finfo(np.float32).max),
                        np.float32(np.finfo(np.float32).tiny), 1e-45, -1e-45], dtype=np.float64)
    mids = np.concatenate([_midpoints(HALF, rng, 2000), _midpoints(BF16, rng, 2000)])
    mids32 = mids.astype(np.float32)  # every half midpoint is a float; a bfloat16 one too
    ulp = np.spacing(np.abs(mids32))
    near = np.concatenate([mids32, mids32 + ulp, mids32 - ulp]).astype(np.float32)
    random_bits = rng.integers(0, 1 << 32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    in_range = (rng.standard_normal(N_CVT) * np.exp2(rng.integers(-26, 18, N_CVT))).astype(np.float32)
    # NaNs of either sign, quiet and signalling, with payloads: every conversion gives the same NaN
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345, 0x7FC12345, 0x7FBFFFFF], dtype=np.uint32)
    double_nans = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF4000000000123,
                            0x7FFFFFFFFFFFFFFF], dtype=np.uint64).view(np.float64)
    f = np.concatenate([special.astype(np.float32), nans.view(np.float32), near, random_bits])
    f = np.concatenate([f, in_range[: N_CVT - len(f)]]).astype(np.float32)
    g = np.roll(f, 977)
    # doubles: a midpoint nudged by far less than a float's unit in the last place must round away from
    # the tie, which rounding through float would lose
    nudge = np.where(rng.integers(0, 2, len(mids)) == 1, 1.0, -1.0) * np.abs(mids) * 2.0 ** -40
    d = np.concatenate([special, double_nans, mids, mids + nudge,
                        rng.standard_normal(3000) * np.exp2(rng.integers(-30, 20, 3000))])
    d = np.concatenate([d, widened(f[: N_CVT - len(d)])])
    ints = [0, 1, -1, 2047, 2048, 2049, 2050, 2051, 4097, 4099, 65504, 65519, 65520, 65535, 65536, 32767, -32768,
            255, 256, 257, 259, 2 ** 31 - 1, -2 ** 31, 2 ** 32 - 1, 2 ** 63 - 1, -2 ** 63, 2 ** 24 + 1,
            2 ** 40 + 2 ** 31, 3 * 2 ** 60]
    widths = rng.integers(1, 64, N_CVT)
    q = (rng.integers(0, 1 << 62, N_CVT, dtype=np.int64) >> (62 - np.minimum(widths, 62))) * np.where(
        rng.integers(0, 2, N_CVT) == 1, -1, 1)
    q[: len(ints)] = np.array(ints, dtype=object).astype(np.int64)
    return {"f": f, "g": g.astype(np.float32), "d": d, "q": q.astype(np.int64)}


def probe_inputs() -> dict:
    """The probe's inputs (deterministic): per type a binary set, shared conversion inputs."""
    rng = np.random.default_rng(SEED)
    inputs = {"un": {"x": np.arange(N_UN, dtype=np.uint16)}}
    for n in TYPES:
        inputs[f"bin:{n.fmt.name}"] = _binary_inputs(n.fmt, rng)
    inputs["cvt"] = _conversion_inputs(rng)
    inputs["atomic_init"] = np.array([a.initial for a in ATOMICS], dtype=object).astype(np.uint64)
    return inputs


def write_inputs(path: Path, inputs: dict) -> None:
    head = np.array([N_UN, N_BIN, N_CVT, len(ATOMICS)], dtype=np.int32)
    parts = [head.tobytes()]
    for n in TYPES:
        b = inputs[f"bin:{n.fmt.name}"]
        parts += [b["x"].tobytes(), b["y"].tobytes(), b["z"].tobytes()]
    c = inputs["cvt"]
    parts += [c["f"].tobytes(), c["g"].tobytes(), c["d"].tobytes(), c["q"].tobytes(), inputs["atomic_init"].tobytes()]
    path.write_bytes(b"".join(parts))


def family_inputs(inputs: dict, op: Op) -> dict:
    if op.family == "un":
        return inputs["un"]
    if op.family == "bin":
        return inputs["bin:" + op.name.split(":")[0]]
    return inputs["cvt"]


def family_size(family: str) -> int:
    return {"un": N_UN, "bin": N_BIN, "cvt": N_CVT}[family]


def read_outputs(path: Path) -> dict:
    """{op name: uint64 array} for every probe op, then "atomic:<name>" -> (final, returned values)."""
    data = np.fromfile(path, dtype=np.uint64)
    out, at = {}, 0
    for op in probe_ops():
        size = family_size(op.family)
        out[op.name] = data[at:at + size]
        at += size
    finals = data[at:at + len(ATOMICS)]
    at += len(ATOMICS)
    for k, atomic in enumerate(ATOMICS):
        out["atomic:" + atomic.name] = (int(finals[k]), data[at:at + ATOMIC_THREADS])
        at += ATOMIC_THREADS
    assert at == len(data), f"the probe wrote {len(data)} values, {at} expected"
    return out


# ----------------------------------------------------------------------------------------- the probe program

PROBE_HEAD = r"""// Generated by tests/test_emulator_types.py: every half and bfloat16 intrinsic on many inputs, and the
// integer, half and bfloat16 atomics under contention. Usage: probe INPUT OUTPUT.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef unsigned long long u64;
typedef unsigned short u16;

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// Every result as 64 bits: integers sign- or zero-extended, floating-point values as their bits.
__device__ u64 bits(bool v) { return v ? 1 : 0; }
__device__ u64 bits(signed char v) { return (u64)(long long)v; }
__device__ u64 bits(unsigned char v) { return v; }
__device__ u64 bits(short v) { return (u64)(long long)v; }
__device__ u64 bits(unsigned short v) { return v; }
__device__ u64 bits(int v) { return (u64)(long long)v; }
__device__ u64 bits(unsigned v) { return v; }
__device__ u64 bits(long v) { return (u64)v; }
__device__ u64 bits(unsigned long v) { return v; }
__device__ u64 bits(long long v) { return (u64)v; }
__device__ u64 bits(unsigned long long v) { return v; }
__device__ u64 bits(float v) { return __float_as_uint(v); }
__device__ u64 bits(float2 v) { return __float_as_uint(v.x) | ((u64)__float_as_uint(v.y) << 32); }
__device__ u64 bits(__half v) { return __half_as_ushort(v); }
__device__ u64 bits(__half2 v) { return __half_as_ushort(v.x) | ((u64)__half_as_ushort(v.y) << 16); }
__device__ u64 bits(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
__device__ u64 bits(__nv_bfloat162 v) { return __bfloat16_as_ushort(v.x) | ((u64)__bfloat16_as_ushort(v.y) << 16); }
__device__ __half as_t(u16 b, __half) { return __ushort_as_half(b); }
__device__ __nv_bfloat16 as_t(u16 b, __nv_bfloat16) { return __ushort_as_bfloat16(b); }
"""

PROBE_KERNEL = r"""
// {tag}: op `op` on element i of each input; a grid-stride loop, so every warp stays whole
__global__ void {kernel}(int op, const u16* a, const u16* b, const u16* c, const float* fa, const float* fb,
                         const double* da, const long long* qa, const {T}* p, const {T2}* p2, u64* out, int n) {{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {{
        const {T} x = as_t(a[i], {T}()), y = as_t(b[i], {T}()), z = as_t(c[i], {T}());
        const {T2} v = {T2}(x, as_t(a[i ^ 1], {T}())), w = {T2}(y, as_t(b[i ^ 1], {T}())),
                   u = {T2}(z, as_t(c[i ^ 1], {T}()));
        const float f = fa[i], g = fb[i];
        const double d = da[i];
        const long long q = qa[i];
        (void)f; (void)g; (void)d; (void)q; (void)p; (void)p2;
        u64 r = 0;
        switch (op) {{
{cases}
        }}
        out[i] = r;
    }}
}}
"""

PROBE_TAIL = r"""
__global__ void atomics(u64* s, u64* returned, int threads) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    u64 r = 0;
%(atomics)s
}

static std::vector<char> read_file(const char* path) {
    std::vector<char> data;
    FILE* in = std::fopen(path, "rb");
    if (!in) return data;
    char chunk[1 << 16];
    size_t got;
    while ((got = std::fread(chunk, 1, sizeof chunk, in)) > 0) data.insert(data.end(), chunk, chunk + got);
    std::fclose(in);
    return data;
}

template <class V>
static V* upload(const char*& at, size_t count) {
    V* device = nullptr;
    CHECK(cudaMalloc(&device, count * sizeof(V)));
    CHECK(cudaMemcpy(device, at, count * sizeof(V), cudaMemcpyHostToDevice));
    at += count * sizeof(V);
    return device;
}

// kernel `which` (a type and a family) on op `op`
static void launch(int which, int op, const u16* a, const u16* b, const u16* c, const float* fa, const float* fb,
                   const double* da, const long long* qa, u64* out, int n) {
    switch (which) {
%(launches)s
    }
}

int main(int argc, char** argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: %%s INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    std::vector<char> input = read_file(argv[1]);
    if (input.size() < 16) {
        std::fprintf(stderr, "cannot read %%s\n", argv[1]);
        return 2;
    }
    const int* head = reinterpret_cast<const int*>(input.data());
    const int n_un = head[0], n_bin = head[1], n_cvt = head[2], n_slots = head[3];
    const char* at = input.data() + 16;
    u16* bins[2][3];
    for (int type = 0; type < 2; ++type)
        for (int k = 0; k < 3; ++k) bins[type][k] = upload<u16>(at, n_bin);
    float* fa = upload<float>(at, n_cvt);
    float* fb = upload<float>(at, n_cvt);
    double* da = upload<double>(at, n_cvt);
    long long* qa = upload<long long>(at, n_cvt);
    u64* slots = upload<u64>(at, n_slots);
    const int n_max = n_un > n_bin ? (n_un > n_cvt ? n_un : n_cvt) : (n_bin > n_cvt ? n_bin : n_cvt);
    u16* every = nullptr;  // the unary kernels' input: all 65,536 bit patterns
    std::vector<u16> patterns(n_max);
    for (int k = 0; k < n_max; ++k) patterns[k] = (u16)k;
    CHECK(cudaMalloc(&every, n_max * sizeof(u16)));
    CHECK(cudaMemcpy(every, patterns.data(), n_max * sizeof(u16), cudaMemcpyHostToDevice));
    float* zeros_f = nullptr;
    double* zeros_d = nullptr;
    long long* zeros_q = nullptr;
    CHECK(cudaMalloc(&zeros_f, n_max * sizeof(float)));
    CHECK(cudaMalloc(&zeros_d, n_max * sizeof(double)));
    CHECK(cudaMalloc(&zeros_q, n_max * sizeof(long long)));
    CHECK(cudaMemset(zeros_f, 0, n_max * sizeof(float)));
    CHECK(cudaMemset(zeros_d, 0, n_max * sizeof(double)));
    CHECK(cudaMemset(zeros_q, 0, n_max * sizeof(long long)));
    u64* out = nullptr;
    CHECK(cudaMalloc(&out, n_max * sizeof(u64)));
    std::vector<u64> host(n_max);
    FILE* result = std::fopen(argv[2], "wb");
    if (!result) return 2;
    struct Run { int type, family, ops; };
    const Run runs[] = {
%(runs)s
    };
    for (int which = 0; which < (int)(sizeof runs / sizeof runs[0]); ++which) {
        const Run& run = runs[which];
        const int n = run.family == 0 ? n_un : run.family == 1 ? n_bin : n_cvt;
        const u16* a = run.family == 1 ? bins[run.type][0] : every;
        const u16* b = run.family == 1 ? bins[run.type][1] : every;
        const u16* c = run.family == 1 ? bins[run.type][2] : every;
        for (int op = 0; op < run.ops; ++op) {
            launch(which, op, a, b, c, run.family == 2 ? fa : zeros_f, run.family == 2 ? fb : zeros_f,
                   run.family == 2 ? da : zeros_d, run.family == 2 ? qa : zeros_q, out, n);
            CHECK(cudaGetLastError());
            CHECK(cudaMemcpy(host.data(), out, n * sizeof(u64), cudaMemcpyDeviceToHost));
            if (std::fwrite(host.data(), sizeof(u64), n, result) != (size_t)n) return 3;
        }
    }
    const int threads = %(threads)d;
    u64* returned = nullptr;
    CHECK(cudaMalloc(&returned, (size_t)n_slots * threads * sizeof(u64)));
    atomics<<<%(blocks)d, %(block)d>>>(slots, returned, threads);
    CHECK(cudaGetLastError());
    std::vector<u64> finals(n_slots), returns((size_t)n_slots * threads);
    CHECK(cudaMemcpy(finals.data(), slots, n_slots * sizeof(u64), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(returns.data(), returned, returns.size() * sizeof(u64), cudaMemcpyDeviceToHost));
    if (std::fwrite(finals.data(), sizeof(u64), finals.size(), result) != finals.size()) return 3;
    if (std::fwrite(returns.data(), sizeof(u64), returns.size(), result) != returns.size()) return 3;
    return std::fclose(result) == 0 ? 0 : 3;
}
"""

FAMILIES = ("un", "bin", "cvt")


def probe_source() -> str:
    """The probe program: one kernel per type and family, a `switch` over its ops."""
    ops = probe_ops()
    kernels, runs, launches = [], [], []
    for type_index, n in enumerate(TYPES):
        for family_index, family in enumerate(FAMILIES):
            chosen = [op for op in ops if op.family == family and op.name.startswith(n.fmt.name + ":")]
            kernel = f"{n.fmt.name}_{family}"
            cases = "\n".join(f"            case {k}: {op.code} break;  // {op.name}" for k, op in enumerate(chosen))
            kernels.append(PROBE_KERNEL.format(tag=f"{n.fmt.name} {family}", kernel=kernel, T=n.T, T2=n.T2,
                                               cases=cases))
            runs.append(f"        {{{type_index}, {family_index}, {len(chosen)}}},")
            launches.append(f"        case {len(launches)}: {kernel}<<<{BLOCKS}, {THREADS}>>>(op, a, b, c, fa, fb, da, qa, "
                            f"reinterpret_cast<const {n.T}*>(a), reinterpret_cast<const {n.T2}*>(a), out, n); break;")
    # the kernels are listed in the order probe_ops() lists the ops
    order = [(op.name.split(":")[0], op.family) for op in ops]
    assert order == sorted(order, key=lambda o: ([n.fmt.name for n in TYPES].index(o[0]), FAMILIES.index(o[1])))
    atomics = "\n".join(f"    {code.replace('[K]', f'[{k}]')}\n    returned[(size_t){k} * threads + t] = r;"
                        for k, code in enumerate(a.code for a in ATOMICS))
    tail = PROBE_TAIL % {"atomics": atomics, "runs": "\n".join(runs), "launches": "\n".join(launches),
                         "threads": ATOMIC_THREADS,
                         "blocks": BLOCKS, "block": THREADS}
    return PROBE_HEAD + "".join(kernels) + tail


# ----------------------------------------------------------------------------------------- running it

GLUE = f"""
extern "C" void emu_invoke_entry(const ::emu::Arg*) {{
    char name[] = "probe";
    char* argv[] = {{name, std::getenv("EMU_PROBE_INPUT"), std::getenv("EMU_PROBE_OUTPUT"), nullptr}};
    if ({MAIN_RENAMED}(3, argv) != 0) std::abort();
}}
"""


def build_emulated(source: str, work: Path) -> Path:
    """The probe compiled as the emulator compiles a submission (translated, g++ with its flags)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "probe.cpp").write_text(translate(source).text + GLUE)
    runtime = work / "runtime.o"
    if not runtime.exists():
        proc = subprocess.run(["g++", *CXX_FLAGS, "-I", str(INCLUDE), "-c", str(RUNTIME), "-o", str(runtime)],
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-6000:]
    proc = subprocess.run(["g++", *CXX_FLAGS, "-I", str(INCLUDE), str(runtime), "-include", "cuda_emu.h",
                           "-x", "c++", "probe.cpp", "-o", "probe"], cwd=work, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-6000:]
    return work / "probe"


def run_emulated(executable: Path, input_path: Path, output_path: Path, timeout_s: float = 600) -> None:
    """One call of the probe in the emulator's worker, spoken to over its command pipe as the grader does."""
    commands_read, commands_write = os.pipe()
    results_read, results_write = os.pipe()
    env = dict(os.environ, EMU_PROBE_INPUT=str(input_path), EMU_PROBE_OUTPUT=str(output_path))
    proc = subprocess.Popen([str(executable), "--commands-fd", str(commands_read), "--results-fd", str(results_write)],
                            pass_fds=(commands_read, results_write), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    os.close(commands_read)
    os.close(results_write)
    with os.fdopen(commands_write, "w") as commands, os.fdopen(results_read) as results:
        assert json.loads(results.readline()).get("ready"), "the worker did not start"
        commands.write(encode_command({"op": "call", "id": 1, "args": []}) + "\n")
        commands.flush()
        answer = results.readline()
        commands.write(encode_command({"op": "exit", "id": 2}) + "\n")
    stdout, stderr = proc.communicate(timeout=timeout_s)
    assert answer and json.loads(answer).get("ok"), f"{answer}\n{stderr.decode()[-3000:]}"


def atomic_problem(atomic: Atomic, final: int, returned: np.ndarray) -> str:
    """'' when the outcome is the one every order gives, else what differs."""
    mask = (1 << atomic.width) - 1
    got = sorted(int(r) & mask for r in returned)
    if atomic.written is not None:
        together = sorted(got + [final & mask])
        if together != sorted([atomic.initial & mask, *atomic.written]):
            return f"{atomic.name}: the returned values and the final {final:#x} are not the values written"
        return ""
    if atomic.final is not None and final & mask != atomic.final & mask:
        return f"{atomic.name}: final value {final & mask:#x}, expected {atomic.final & mask:#x}"
    if atomic.returns is not None and got != list(atomic.returns):
        wrong = next(k for k, (a, b) in enumerate(zip(got, atomic.returns)) if a != b)
        return f"{atomic.name}: returned values differ from the {wrong}th smallest on: {got[wrong:wrong + 4]}"
    return ""


def mismatches(op: Op, inputs: dict, got: np.ndarray) -> str:
    """'' when every element matches, else a few of the elements that do not, with their inputs."""
    expected = np.asarray(op.expect(family_inputs(inputs, op)), dtype=np.uint64)
    wrong = np.flatnonzero(expected != got)
    if not len(wrong):
        return ""
    I = family_inputs(inputs, op)
    lines = [f"{op.name}: {len(wrong)} of {len(got)} differ"]
    for k in wrong[:8]:
        shown = {key: (hex(int(v[k])) if v.dtype.kind in "ui" and v.dtype.itemsize == 2 else repr(v[k]))
                 for key, v in I.items()}
        lines.append(f"  [{k}] {shown}: expected {int(expected[k]):#x}, got {int(got[k]):#x}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------- what compiles

ACCEPTED = r"""#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void uses(const half* a, half* b, const __nv_bfloat16* c, __nv_bfloat16* d, float* f) {
    const int i = threadIdx.x;
    half x = a[i], y = __float2half(2.0f);
    half z = x * y + x / y - (-x);
    z += y;
    z *= (half)2;
    ++z;
    z--;
    bool ok = x < y && x != y && !(x == y) && x >= y && x <= z;
    float s = x;
    int k = x;
    unsigned u = y;
    long long l = z;
    double w64 = x;
    half2 v = __halves2half2(x, y), w = make_half2(y, x);
    v = v * w + v;
    v -= w;
    bool all = v == w;
    half h = 3;
    h = 2.5;
    h = 7;
    h = 1.5f;
    half zero = 0;
    if (x) h = x;
    b[i] = x > y ? x : y;
    __nv_bfloat16 p = c[i], q = __float2bfloat16(1.0f);
    p = p * q + p;
    p += q;
    bool lt = p < q;
    nv_bfloat162 r = __floats2bfloat162_rn(1.0f, 2.0f);
    r = r * r;
    __half from_b(p);
    __nv_bfloat16 from_h(x);
    d[i] = p;
    f[i] = s + k + u + l + w64 + all + lt + ok + __low2float(r) + float(from_b) + float(from_h) + float(zero);
    atomicAdd(b, x);
    atomicAdd(d, p);
    b[i + 1] = __hmax(x, __shfl_xor_sync(0xffffffffu, y, 1));
    d[i + 1] = __hfma(p, q, __ldg(c + i));
    half2 t = __ldg(reinterpret_cast<const half2*>(a));
    f[i + 1] = __half2float(t.x) + __bfloat162float(__hmul(p, __float2bfloat16_rn(0.5f))) + __hadd(1.0f, 2.0f);
    volatile half* vh = b;
    half copy = vh[0];
    f[i + 2] = float(copy) + float(h);
}
"""
"""A kernel nvcc compiles: the operators, conversions and mixed expressions of everyday half and bfloat16
code (`__hadd(1.0f, 2.0f)` is CUDA's integer __hadd: float to int is a standard conversion)."""

REJECTED = [
    "__device__ void r1(half x, float* f) { f[0] = x * 2.0f; }",  # __half * __half or float * float?
    "__device__ void r2(half x, float* f) { f[0] = x + 1; }",
    "__device__ void r3(half x, float* f) { f[0] = x < 0; }",
    "__device__ void r4(half x, float* f) { f[0] = x == 0.0f; }",
    "__device__ void r5(__nv_bfloat16 p, float* f) { half h = p; f[0] = h; }",  # the conversion is explicit
    "__device__ void r6(half x, __nv_bfloat16 p, float* f) { f[0] = x + p; }",
    "__device__ void r7(half x, float* f) { f[0] = 2.0 * x; }",
    "__device__ void r8(double d, half x, float* f) { f[0] = d + x; }",
    "__device__ void r9(half2 v, float* f) { half2 w = v * 2.0f; f[0] = w.x; }",  # no scalar-pair operators
    "__device__ void r10(volatile half* v, float* f) { f[0] = v[0] + v[1]; }",  # no volatile operators
    "__device__ void r11(half x, float* f) { f[0] = x.x; }",  # the bits are protected
]
"""Lines nvcc rejects (each is an error there): the emulator must reject them too, so that a file the
emulator accepts is one a GPU build accepts."""


def _rejected_source() -> str:
    return "#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n" + "\n".join(REJECTED) + "\n"


def _emulated_errors(source: str, tmp_path: Path) -> tuple[int, set[int], str]:
    """g++ on the translated source, as the emulator compiles it: (return code, lines with an error, log)."""
    unit = tmp_path / "unit.cpp"
    unit.write_text('#line 1 "probe.cu"\n' + translate(source).text)
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(INCLUDE), "-include", "cuda_emu.h",
                           str(unit)], capture_output=True, text=True, timeout=300)
    lines = {int(n) for n in re.findall(r"^probe\.cu:(\d+):\d+: error", proc.stderr, re.M)}
    return proc.returncode, lines, proc.stderr


@pytest.mark.slow
def test_everyday_half_and_bfloat16_code_compiles_in_the_emulator(tmp_path):
    code, _, log = _emulated_errors(ACCEPTED, tmp_path)
    assert code == 0, log


@pytest.mark.slow
def test_what_cuda_rejects_the_emulator_rejects_on_the_same_line(tmp_path):
    _, lines, log = _emulated_errors(_rejected_source(), tmp_path)
    assert lines == set(range(3, 3 + len(REJECTED))), log


@pytest.mark.nvcc
@pytest.mark.slow
def test_nvcc_accepts_and_rejects_those_lines(tmp_path):
    (tmp_path / "ok.cu").write_text(ACCEPTED)
    (tmp_path / "bad.cu").write_text(_rejected_source())
    ok = subprocess.run(["nvcc", "-arch=sm_90", "-c", "ok.cu", "-o", "ok.o"], cwd=tmp_path, capture_output=True,
                        text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    bad = subprocess.run(["nvcc", "-arch=sm_90", "-c", "bad.cu", "-o", "bad.o"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    lines = {int(n) for n in re.findall(r"^bad\.cu\((\d+)\): error", bad.stderr, re.M)}
    assert lines == set(range(3, 3 + len(REJECTED))), bad.stderr


# ----------------------------------------------------------------------------------------- the tests


def test_the_reference_rounding_agrees_with_numpy_and_ml_dtypes():
    """The table rounding is the references' base: numpy's float16 rounds float64 directly (to nearest
    even), and ml_dtypes' bfloat16 rounds float32 directly; both agree with it on every value tried."""
    rng = np.random.default_rng(1)
    x = np.concatenate([_midpoints(HALF, rng, 5000), rng.standard_normal(5000) * np.exp2(rng.integers(-30, 18, 5000)),
                        [0.0, -0.0, np.inf, -np.inf, 65519.99, 65520.0, 2.0 ** -25, 3 * 2.0 ** -26]])
    with np.errstate(over="ignore"):  # numpy rounds the values past half's range to infinity, and says so
        assert np.array_equal(HALF.round(x), x.astype(np.float16).view(np.uint16).astype(np.uint64))
    assert np.array_equal(HALF.value(np.arange(1 << 16)), np.arange(1 << 16, dtype=np.uint16).view(np.float16),
                          equal_nan=True)
    ml_dtypes = pytest.importorskip("ml_dtypes")
    f = np.concatenate([_midpoints(BF16, rng, 5000).astype(np.float32),
                        rng.integers(0, 1 << 32, 5000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    with np.errstate(invalid="ignore"):  # the random bits hold signalling NaNs
        expected = f.astype(ml_dtypes.bfloat16).view(np.uint16).astype(np.uint64)
    nan = np.isnan(f)
    assert np.array_equal(BF16.round(widened(f))[~nan], expected[~nan])


def test_directed_rounding_of_the_reference():
    assert [int(HALF.round(v, "rz")) for v in (1 + 2 ** -11, -(1 + 2 ** -11), 70000.0, -70000.0)] == \
        [0x3C00, 0xBC00, 0x7BFF, 0xFBFF]
    assert [int(HALF.round(v, "ru")) for v in (1 + 2 ** -20, -(1 + 2 ** -20), 70000.0, 2.0 ** -30)] == \
        [0x3C01, 0xBC00, 0x7C00, 0x0001]
    assert [int(HALF.round(v, "rd")) for v in (1 + 2 ** -20, -(1 + 2 ** -20), -70000.0, -(2.0 ** -30))] == \
        [0x3C00, 0xBC01, 0xFC00, 0x8001]
    assert int(BF16.round(1 + 2 ** -8, residual=-(2.0 ** -60))) == 0x3F80  # a tie that is not: below it
    assert int(BF16.round(1 + 2 ** -8, residual=2.0 ** -60)) == 0x3F81


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    """The probe built and run once in the emulator: (inputs, outputs, seconds to build, seconds to run)."""
    import time
    work = tmp_path_factory.mktemp("types-probe")
    inputs = probe_inputs()
    write_inputs(work / "input.bin", inputs)
    started = time.monotonic()
    executable = build_emulated(probe_source(), work)
    built = time.monotonic()
    run_emulated(executable, work / "input.bin", work / "output.bin")
    ran = time.monotonic()
    return inputs, read_outputs(work / "output.bin"), built - started, ran - built


ALL_OPS = probe_ops()


@pytest.mark.slow
@pytest.mark.parametrize("op", ALL_OPS, ids=[op.name for op in ALL_OPS])
def test_each_intrinsic_matches_the_exact_reference(emulated, op):
    inputs, outputs, _, _ = emulated
    assert not (problem := mismatches(op, inputs, outputs[op.name])), problem


@pytest.mark.slow
@pytest.mark.parametrize("atomic", ATOMICS, ids=[a.name for a in ATOMICS])
def test_atomics_under_contention_give_exact_outcomes(emulated, atomic):
    _, outputs, _, _ = emulated
    assert not (problem := atomic_problem(atomic, *outputs["atomic:" + atomic.name])), problem
