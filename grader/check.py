"""The check stage: a submission's output against the trusted FP64 reference.

Two metrics, both scale-free (see the challenge statement for the derivation):
- scaled error: |got − expected| / scale per element, where `scale` is the size of that element's
  rounding error in any FP32 evaluation order (for matmul, |A| @ |B|). Catches any wrong element.
- relative Frobenius error ‖got − expected‖ / ‖expected‖: catches reduced precision (TF32, FP16)
  everywhere, even where the per-element test alone would be loose.
An element that is NaN or infinite always fails: outputs arrive filled with NaN, so an unwritten
element shows up as NaN.

Everything here runs on the host with numpy: a GPU's outputs arrive by plain copies, so checking
never makes CuPy compile a kernel (a first run on a fresh machine would pay for each). A large output
is checked in cache-sized blocks on a few threads, so that it is read once from memory.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import math
import os
from dataclasses import dataclass

import numpy as np

from grader.spec import Tolerance

MISMATCHES_SHOWN = 5
ROW_PATTERN_MAX = 3
REDUCED_PRECISION_MAX_SCALED = 1e-3
"""Below this scaled error everywhere, a failing output is close but imprecise: the signature of
TF32/FP16 arithmetic or of a long FP32 sum in one sequence, not of a wrong index (which is off by the
element's own size)."""


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
    exact: bool = False
    """Compared element for element (or as sorted values) for equality, not within a tolerance: the
    two error measures are 0 when it passes and infinite when it does not."""
    sorted_first: bool = False
    """An exact comparison of both sides' sorted values (a multiset check): indices are sorted positions."""
    widened: float = 1.0
    """LeetGPU's rule widened this many times at this case, against the exact answer: its own FP32 reference
    misses the rule there (grader.leetgpu.official)."""

    @property
    def total(self) -> int:
        return math.prod(self.shape)


def compare(name: str, got, expected, scale, tolerance: Tolerance, guards: dict[str, int] | None = None) -> Comparison:
    """`got` against `expected` within `tolerance`, `scale` (≥ 0) being each element's rounding scale.
    Arrays may live anywhere; they are compared on the host. `guards`: each buffer's guard word
    (buffers.py), by buffer name, so that a NaN copied from past a buffer's end is recognised as such."""
    got, expected, scale = (np.asarray(to_host(a)) for a in (got, expected, scale))
    sums = _sums(got, expected, scale, tolerance.max_scaled_error)
    finite = sums.nonfinite == 0
    scaled = sums.max_scaled if finite else math.inf
    rel_fro = _relative_frobenius(sums.error_sq, sums.expected_sq) if finite else math.inf
    passed = sums.bad == 0 and rel_fro <= tolerance.max_relative_frobenius
    if passed:
        return Comparison(name, tuple(got.shape), True, scaled, rel_fro, 0, 0, (), None)
    got64 = got.astype(np.float64)
    bad = ~(np.abs(got64 - expected) <= tolerance.max_scaled_error * scale)  # NaN compares false: bad
    comparison = Comparison(name, tuple(got.shape), False, scaled, rel_fro, sums.bad, sums.nonfinite,
                            _first_bad(bad, got64, expected), None)
    nonfinite = _nonfinite_origins(got, guards or {}) if sums.nonfinite else None
    return _with_diagnosis(comparison, tolerance, _where(bad), nonfinite)


def compare_allclose(name: str, got, expected, tolerance: Tolerance, guards: dict[str, int] | None = None,
                     widen: float = 1.0) -> Comparison:
    """LeetGPU's rule: |got − expected| ≤ atol + rtol·|expected| for every element (times `widen`), an
    infinity equal to the same infinity only, NaN to nothing. It is the scaled-error test with each element's
    allowance as its scale and a limit of 1 (the Frobenius measure does not decide), so a failure is reported
    in the same terms."""
    atol, rtol = tolerance.allclose
    expected = np.asarray(to_host(expected))
    if expected.dtype.kind in "iub":  # integer counts, compared as float64: their squares overflow their own type
        expected = expected.astype(np.float64)
    got = np.asarray(to_host(got))
    same_infinity = np.isinf(expected) & (got == expected)
    if same_infinity.any():  # torch.allclose's rule: an infinity equals the same infinity (a sort's ends)
        got, expected = np.where(same_infinity, 0, got).astype(got.dtype), np.where(same_infinity, 0, expected)
    allowance = atol + rtol * np.abs(expected.astype(np.float64))
    allowance[np.isinf(allowance)] = 0.0  # an infinite expected is matched by the same infinity only (above)
    found = compare(name, got, expected, allowance * widen if widen != 1.0 else allowance, tolerance, guards)
    return dataclasses.replace(found, widened=widen)


def compare_exact(name: str, got, expected, ordered: bool = True) -> Comparison:
    """Every element of `got` equal to `expected`'s (`ordered`), or the same values in any order (both
    sorted first). Integers compare as integers; a NaN equals nothing."""
    got, expected = np.asarray(to_host(got)), np.asarray(to_host(expected))
    a, b = (got, expected) if ordered else (np.sort(got, axis=None), np.sort(expected, axis=None))
    a, b = _comparable(a), _comparable(b)
    bad = ~(a == b)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return Comparison(name, tuple(got.shape), True, 0.0, 0.0, 0, 0, (), None, exact=True)
    nonfinite = int(np.count_nonzero(~np.isfinite(a))) if a.dtype.kind == "f" else 0
    where = _where(bad) if ordered else ""
    what = "elements differ from the reference" if ordered else \
        "values differ once both are sorted (the order is free; the values are not)"
    return Comparison(name, tuple(got.shape), False, math.inf, math.inf, count, nonfinite,
                      _first_bad(bad, a, b), f"{count} of {got.size} {what}{where}", exact=True, sorted_first=not ordered)


def _comparable(array: np.ndarray) -> np.ndarray:
    """Integers as int64 (exact), floating types (bfloat16 too) as float64."""
    if array.dtype.kind in "iub":
        return array.astype(np.int64)
    return array.astype(np.float64)


def to_host(array):
    """A numpy array, whether `array` lives on the GPU (cupy) or already on the host."""
    return array.get() if hasattr(array, "get") else array


def unchanged(data, original) -> bool:
    """Bit for bit the same (a NaN equals itself, −0 differs from +0)."""
    a, b = _words(data), _words(original)
    if a.size != b.size:
        return False
    return all(map_chunks(lambda lo, hi: _chunk_equal(a[lo:hi], b[lo:hi]), a.size))


def changed_elements(data, original) -> int:
    """How many elements differ in their bytes."""
    a, b = _element_bits(data), _element_bits(original)
    differs = a != b
    return int(np.count_nonzero(differs.any(axis=1) if differs.ndim == 2 else differs))


BLOCK_ELEMENTS = 1 << 16
"""Elements per block: a block's float64 temporaries (half a MB each) stay in a core's cache."""
THREADS = min(8, os.cpu_count() or 1)
"""numpy releases the GIL inside its loops, so chunks on threads run in parallel; past about 8 the
host's memory bandwidth, not its cores, is the limit."""


def map_chunks(work, size: int, block: int | None = None) -> list:
    """`work(lo, hi)` over [0, size) cut into one contiguous chunk per thread (whole blocks each), on
    threads when there is more than one block; the results in order. One chunk per thread, not one
    task per block, so that `work` can walk its blocks with scratch arrays allocated once: allocating
    in the loop page-faults, and faults from many threads queue on the kernel's memory map (a pass
    over a 128 MB output took 0.3 s that way on an H200 host)."""
    block = block or BLOCK_ELEMENTS
    blocks = max(1, -(-size // block))
    per_chunk = -(-blocks // min(THREADS, blocks)) * block
    bounds = [(lo, min(lo + per_chunk, size)) for lo in range(0, size, per_chunk)] or [(0, 0)]
    if len(bounds) == 1:
        return [work(*bounds[0])]
    with concurrent.futures.ThreadPoolExecutor(len(bounds)) as pool:
        return list(pool.map(lambda bound: work(*bound), bounds))


def _chunk_equal(a, b) -> bool:
    return all(np.array_equal(a[lo:lo + BLOCK_ELEMENTS], b[lo:lo + BLOCK_ELEMENTS])
               for lo in range(0, a.size, BLOCK_ELEMENTS))


# --------------------------------------------------------------------------- the pass over an output


@dataclass(frozen=True)
class _Sums:
    """What the pass over the output gathers, per block and then for the whole output."""

    error_sq: float
    expected_sq: float
    max_scaled: float
    bad: int
    nonfinite: int


def _combined(parts) -> _Sums:
    return _Sums(sum(p.error_sq for p in parts), sum(p.expected_sq for p in parts),
                 max((p.max_scaled for p in parts), default=0.0), sum(p.bad for p in parts),
                 sum(p.nonfinite for p in parts))


def _sums(got, expected, scale, max_scaled_error: float) -> _Sums:
    """One pass over the output: each of `got`, `expected` and `scale` is read once from memory, however
    many steps the rule takes, each step working on a block in cache."""
    g, e, s = (np.ascontiguousarray(a).reshape(-1) for a in (got, expected, scale))
    return _combined(map_chunks(lambda lo, hi: _chunk_sums(g[lo:hi], e[lo:hi], s[lo:hi], max_scaled_error),
                                g.size))


def _chunk_sums(got, expected, scale, max_scaled_error: float) -> _Sums:
    size = min(got.size, BLOCK_ELEMENTS)
    scratch = (np.empty(size), np.empty(size), np.empty(size, bool))
    return _combined([_block_sums(got[lo:lo + size], expected[lo:lo + size], scale[lo:lo + size],
                                  max_scaled_error, scratch) for lo in range(0, got.size, size or 1)])


def _block_sums(got, expected, scale, max_scaled_error: float, scratch) -> _Sums:
    work, limit, ok = (a[:got.size] for a in scratch)
    np.copyto(work, got)
    np.subtract(work, expected, out=work)
    # Sums of squares by numpy, not np.dot: BLAS would start threads of its own inside each of ours.
    error_sq = float(np.multiply(work, work, out=limit).sum())  # a NaN or infinity makes it non-finite
    expected_sq = float(np.multiply(expected, expected, out=limit).sum())
    nonfinite = 0 if math.isfinite(error_sq) else work.size - int(np.count_nonzero(np.isfinite(got)))
    np.abs(work, out=work)
    np.multiply(scale, max_scaled_error, out=limit)
    np.less_equal(work, limit, out=ok)  # NaN compares false: bad
    bad = work.size - int(np.count_nonzero(ok))
    with np.errstate(divide="ignore", invalid="ignore"):
        np.divide(work, scale, out=work)  # where the scale is 0: inf if the error is not, NaN (ignored) if it is
    max_scaled = float(np.fmax.reduce(work, initial=0.0))
    return _Sums(error_sq, expected_sq, max_scaled, bad, nonfinite)


def _words(array) -> np.ndarray:
    """The bytes of `array` as the widest unsigned words that divide them (fewer, faster comparisons)."""
    raw = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
    for width in (8, 4, 2):
        if raw.size % width == 0:
            return raw.view(f"u{width}")
    return raw


def _element_bits(array) -> np.ndarray:
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.itemsize in (1, 2, 4, 8):
        return flat.view(f"u{flat.dtype.itemsize}")
    return flat.view(np.uint8).reshape(flat.size, flat.dtype.itemsize)


# --------------------------------------------------------------------------- a failing output


def _relative_frobenius(error_sq: float, expected_sq: float) -> float:
    if expected_sq == 0.0:
        return 0.0 if error_sq == 0.0 else math.inf
    return math.sqrt(error_sq) / math.sqrt(expected_sq)


def _first_bad(bad, got, expected) -> tuple[Mismatch, ...]:
    flat_bad, got_flat, exp_flat = bad.reshape(-1), got.reshape(-1), expected.reshape(-1)
    positions: list[int] = []
    for lo in range(0, flat_bad.size, BLOCK_ELEMENTS):  # stop at the first few, however many are bad
        hits = np.flatnonzero(flat_bad[lo:lo + BLOCK_ELEMENTS])
        positions += [lo + int(i) for i in hits[:MISMATCHES_SHOWN - len(positions)]]
        if len(positions) == MISMATCHES_SHOWN:
            break
    return tuple(Mismatch(_unravel(i, got.shape), float(got_flat[i]), float(exp_flat[i])) for i in positions)


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for extent in reversed(shape):
        index.append(flat_index % extent)
        flat_index //= extent
    return tuple(reversed(index))


def _where(bad) -> str:
    """For a 2-D output whose bad elements fill a few whole rows or columns, say which (both, when the
    same elements are a whole row and a whole column, as in a 1×1 output); for a 1-D output whose bad
    elements are exactly its last few, say so (a tail the kernel's vector width or grid misses)."""
    if bad.ndim == 1:
        return _tail(bad)
    if bad.ndim != 2:
        return ""
    rows, cols = bad.shape
    found = []
    for axis, name, extent, across in ((1, "row", rows, cols), (0, "column", cols, rows)):
        lines = np.flatnonzero(bad.any(axis=axis))
        if 0 < lines.size <= ROW_PATTERN_MAX and int(np.count_nonzero(bad)) == lines.size * across:
            listed = [int(i) for i in lines]
            last = f" (the last {name})" if listed == [extent - 1] else ""
            found.append(f"{name}{'s' if len(listed) > 1 else ''} {', '.join(map(str, listed))}{last}")
    return f"; every element of {' and '.join(found)} is wrong, and nothing else" if found else ""


def _tail(bad) -> str:
    wrong = np.flatnonzero(bad)
    count, size = int(wrong.size), int(bad.size)
    if 0 < count < size and wrong[0] == size - count:
        return (f"; only the last {count} element{'s' if count > 1 else ''} (from index {size - count}) "
                f"{'are' if count > 1 else 'is'} wrong: often a tail that the kernel's vector width or grid does not "
                "cover, or the last of something it combines (a block, a tile) left out")
    return ""


OUTPUT_FILL_WORD = 0xFFFFFFFF
"""What every float32 output holds before a call (buffers.OUTPUT_FILL_BYTE)."""
EMULATED_SHARED_WORD = 0xFFF8DEAD
"""What the CPU emulator's shared memory holds until a thread writes it (runtime.cpp, kSharedPoison)."""
EMULATED_DEVICE_WORD = 0xFFF8BEEF
"""What memory a submission allocates (cudaMalloc) holds in the emulator until written (kDevicePoison)."""
EXPONENT_BITS = 0x7F800000


@dataclass(frozen=True)
class NonFinite:
    """What the bits of an output's NaN and infinite elements show of where they came from."""

    unwritten: int
    """Still the fill the output arrived with."""
    guards: tuple[tuple[str, int], ...]
    """Per buffer: elements holding that buffer's guard word (a value read past its end and stored)."""
    shared: int
    """The emulator's unwritten shared memory, or arithmetic on it (its NaN keeps its payload)."""
    allocated: int
    """The emulator's unwritten cudaMalloc memory, or arithmetic on it."""
    computed: int
    """Any other NaN or infinity: one the kernel's arithmetic produced."""


def _nonfinite_origins(got, guards: dict[str, int]) -> NonFinite | None:
    """Sort a float32 output's non-finite elements by their bits; None for other types."""
    if got.dtype != np.float32:
        return None
    bits = np.ascontiguousarray(got).view(np.uint32).reshape(-1)
    special = bits[(bits & EXPONENT_BITS) == EXPONENT_BITS]
    unwritten = int(np.count_nonzero(special == OUTPUT_FILL_WORD))
    magnitude = special & 0x7FFFFFFF  # a negation flips only the sign
    found = tuple((name, n) for name, word in guards.items()
                  if (n := int(np.count_nonzero(magnitude == (word & 0x7FFFFFFF)))))
    shared = int(np.count_nonzero(magnitude == (EMULATED_SHARED_WORD & 0x7FFFFFFF)))
    allocated = int(np.count_nonzero(magnitude == (EMULATED_DEVICE_WORD & 0x7FFFFFFF)))
    named = unwritten + sum(n for _, n in found) + shared + allocated
    return NonFinite(unwritten, found, shared, allocated, int(special.size) - named)


def _nonfinite_text(c: Comparison, origins: NonFinite | None) -> str:
    """Say what the bits show, and no more: a NaN the kernel computed may come from several mistakes."""
    lead = f"{c.nonfinite_count} of {c.total} elements are NaN or infinite"
    if origins is None:
        return (f"{lead}; {c.output} arrives filled with NaN before every call and every input is surrounded by "
                "NaN guards, so these were never written, added to without being set first, or computed from "
                "values read past an input's end")
    parts = []
    if origins.unwritten:
        parts.append(f"{origins.unwritten} still hold the NaN {c.output} arrives filled with before every call: never "
                     "written, or added to (atomicAdd, +=) without being set first: zero an output you accumulate "
                     f"into, in the same stream before the kernel (cudaMemsetAsync({c.output}, 0, bytes)); on LeetGPU "
                     "the buffer often happens to hold zeros, which hides that bug")
    for name, count in origins.guards:
        parts.append(f"{count} hold the guard value that lies just past {name}'s ends: the kernel read outside "
                     f"{name} and stored what it read (check the bounds of every load)")
    if origins.shared:
        parts.append(f"{origins.shared} come from shared memory no thread had written (the emulator fills it with a "
                     "NaN of its own until a thread writes it): a read before the write's __syncthreads(), or of "
                     "elements the block never fills (a tree over more slots than it has threads or warps)")
    if origins.allocated:
        parts.append(f"{origins.allocated} come from memory solve allocated (cudaMalloc) and never wrote (the "
                     "emulator fills it with a NaN of its own; on a GPU it is garbage, not zeros): set it "
                     "(cudaMemsetAsync) before adding into it")
    if origins.computed:
        parts.append(f"{origins.computed} are NaN or infinite values the kernel computed: arithmetic on a NaN (the "
                     "output's NaN fill when it adds into an output never zeroed; the NaN guards past every input "
                     "when it reads out of bounds), shared memory read before it was written (a missing "
                     "__syncthreads or a race), or an overflow")
    return f"{lead}: " + "; ".join(parts)


def _with_diagnosis(c: Comparison, tolerance: Tolerance, where: str = "", nonfinite: NonFinite | None = None) -> Comparison:
    if c.nonfinite_count:
        text = _nonfinite_text(c, nonfinite)
    elif c.scaled_error <= REDUCED_PRECISION_MAX_SCALED:
        if c.relative_frobenius > tolerance.max_relative_frobenius:
            measure = (f"relative Frobenius error {c.relative_frobenius:.2g}; FP32 in the usual orders stays under "
                       f"{tolerance.max_relative_frobenius:.2g}")
        else:
            measure = f"max scaled error {c.scaled_error:.2g}, over its limit {tolerance.max_scaled_error:.2g}"
        text = (f"every element is close, but the errors ({measure}) have the size of "
                "reduced-precision rounding: FP16 or BF16 values, TF32 tensor cores, or "
                "FP32 sums that run long in one sequence (one thread adding thousands of terms in turn; add in a "
                "tree, or in blocks, instead)")
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
        lines.append(f"  {'sorted ' if c.sorted_first else ''}{c.output}[{where}] = {m.got:.7g}, expected {m.expected:.7g}")
    if c.bad_count > len(c.first_bad):
        lines.append(f"  … {c.bad_count - len(c.first_bad)} more elements " + ("differ" if c.exact else "out of tolerance"))
    if c.exact:
        lines.append("  compared exactly: every element must equal the reference's")
        return "\n".join(lines)
    if tolerance.allclose is not None:
        atol, rtol = tolerance.allclose
        rule = f"atol {atol:g}, rtol {rtol:g}: LeetGPU's rule for this challenge, against its reference"
        if c.widened != 1.0:
            rule = (f"atol {atol:g}, rtol {rtol:g}, widened {c.widened:.3g}× at this case against the exact answer: "
                    "the file's own FP32 reference misses the rule here")
        lines.append(f"  the worst element's error is {_fmt(c.scaled_error)} times its allowance atol + rtol·|expected| "
                     f"({rule})")
        return "\n".join(lines)
    lines.append(f"  max scaled error {_fmt(c.scaled_error)} (limit {tolerance.max_scaled_error:.2g}), "
                 f"relative Frobenius error {_fmt(c.relative_frobenius)} (limit {tolerance.max_relative_frobenius:.2g})")
    return "\n".join(lines)


def _fmt(value: float) -> str:
    return "inf (NaN or infinite output)" if math.isinf(value) else f"{value:.3g}"
