"""Cases: the trusted half of one call of `solve` — inputs, expected answer, and the inspection
of what the submission left behind (guards, inputs, outputs).

Everything the grader keeps of a case lives on the host (numpy); the backend's buffers are filled and
read back by plain copies, so that on a GPU no step makes CuPy compile a kernel at run time.

Inputs come from a generator seeded by (run seed, purpose, case index), so `--seed` reproduces a
run exactly and every purpose (functional check, timing, the re-check after timing) draws fresh
values.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from grader import check
from grader.buffers import make_guards_distinct
from grader.channel import Called, Launch
from grader.errors import SpecError
from grader.spec import Challenge, Check, Param, RandomShapes, Role, Shape
from grader.verdict import Verdict


class Purpose(enum.IntEnum):
    """Mixed into the seed, so each purpose sees independent values."""

    FUNCTIONAL = 1
    RANDOMIZED = 2
    RANDOM_SHAPES = 3
    TIMED = 4
    RECHECK = 5
    STRICT = 6


def rng_for(seed: int, purpose: Purpose, index: int) -> np.random.Generator:
    return np.random.default_rng([seed, int(purpose), index])


REDRAWS = 1000
"""Draws tried for one random shape before the challenge's `require` is called unsatisfiable by its ranges."""


def random_shapes(spec: RandomShapes, dims: tuple[str, ...], reference, seed: int,
                  valid: Callable[[dict[str, int]], str | None] = lambda dims: None) -> tuple[Shape, ...]:
    """Log-uniform draws per dimension; a draw over the budget (flops or bytes, by the challenge) has its
    largest dimension halved. A draw that `valid` refuses (a `require` it breaks, an empty buffer) is
    drawn again."""
    rng = rng_for(seed, Purpose.RANDOM_SHAPES, 0)
    return tuple(Shape(_valid_draw(spec, dims, reference, rng, valid), f"random{i + 1}") for i in range(spec.count))


def _valid_draw(spec: RandomShapes, dims, reference, rng, valid) -> dict[str, int]:
    for _ in range(REDRAWS):
        values = _draw(spec, dims, reference, rng)
        if valid(values) is None:
            return values
    raise SpecError("challenge.yaml", "randomized.ranges", f"no valid shape in {REDRAWS} draws (the last {valid(values)})",
                    hint="make the ranges fit the challenge's require conditions")


def _draw(spec: RandomShapes, dims, reference, rng) -> dict[str, int]:
    cost, limit = spec.budget(reference)
    values = {d: _log_uniform(rng, *spec.ranges[d]) for d in dims}
    while cost(values) > limit:
        largest = max(values, key=values.get)
        values[largest] = max(spec.ranges[largest][0], values[largest] // 2)
        if all(values[d] == spec.ranges[d][0] for d in dims):
            break
    return values


def _log_uniform(rng: np.random.Generator, low: int, high: int) -> int:
    return int(min(high, max(low, round(math.exp(rng.uniform(math.log(low), math.log(high + 1)))))))


@dataclass
class Case:
    """One prepared call: the buffers the worker sees, and on the host what the outputs must be."""

    shape: Shape
    pristine: dict[str, np.ndarray]
    """The inputs and inouts as generated (host arrays): to detect writes into inputs, and to give an
    inout its starting value again before every call."""
    expected: dict[str, np.ndarray]
    scale: dict[str, np.ndarray]
    buffers: dict[str, Any] = field(default_factory=dict)
    arguments: dict[str, int | float] = field(default_factory=dict)
    """Every scalar parameter's value in this case: the dimensions and the float values."""
    start: dict[str, np.ndarray] = field(default_factory=dict)
    """Outputs' contents before each call where the case fixes them (an official parity case: as the file
    made them, zeros mostly); the others arrive filled with NaN."""
    check_inputs: bool = True
    """False for an official parity case: LeetGPU's judge never compares an "in" buffer."""

    def release(self) -> None:
        for buffer in self.buffers.values():
            buffer.free()
        self.buffers.clear()
        self.pristine = self.expected = self.scale = self.start = {}


@dataclass(frozen=True)
class Inspection:
    verdict: Verdict
    message: str
    comparisons: tuple[check.Comparison, ...] = ()


def arguments(challenge: Challenge, shape: Shape, rng: np.random.Generator) -> dict[str, int | float]:
    """The dimensions, and each float parameter's value: the case's own, or drawn (first, so that the
    draws of the inputs after them are the same whichever of the values a case fixes)."""
    drawn = {p.name: p.value.draw(rng) for p in challenge.scalars}
    return {**shape.dims, **drawn, **shape.values}


def prepare(challenge: Challenge, shape: Shape, rng: np.random.Generator, backend) -> Case:
    """Inputs generated on the host; the reference computes the expected outputs and their error scale
    with the backend's array module (the GPU's for heavy FP64 products) and hands back host arrays."""
    values = arguments(challenge, shape, rng)
    generated = shape.given.arrays if shape.given else challenge.reference.generate(dict(values), rng)
    pristine = {p.name: np.ascontiguousarray(generated[p.name], dtype=p.ctype.element.dtype) for p in challenge.generated}
    given = {**values, **pristine}
    if shape.given:  # the outputs as the case fixes them: an official reference makes its outputs in their shapes
        given |= {p.name: shape.given.arrays[p.name] for p in challenge.outputs if p.role is Role.OUTPUT}
    expected = _on_host(challenge.reference.reference(given, backend.xp))
    scale = _on_host(challenge.reference.error_scale(given, backend.xp))
    case = Case(shape, pristine, expected, scale, arguments=values, check_inputs=not shape.parity)
    if shape.parity:
        case.start = {p.name: np.ascontiguousarray(generated[p.name], dtype=p.ctype.element.dtype)
                      for p in challenge.outputs if p.role is Role.OUTPUT}
    for param in challenge.params:
        if param.role is None:
            continue
        buffer = backend.buffer(param.name, param.extent(shape.dims), param.ctype.dtype)
        case.buffers[param.name] = buffer
        if param.role is Role.OUTPUT:
            _fill(case, param)
        else:
            _upload(buffer, pristine[param.name], param)
    make_guards_distinct(case.buffers.values())
    backend.synchronize()  # the worker is another process: nothing orders its kernels after our copies
    return case


def _upload(buffer, array: np.ndarray, param: Param) -> None:
    """A host array into its buffer, in the buffer's shape (an official case may hold a matrix whose buffer is
    its element count: the file gives the same data flattened in another case)."""
    buffer.upload(stored(array, param).reshape(buffer.shape))


def stored(array: np.ndarray, param: Param) -> np.ndarray:
    """A host array's bytes as its buffer holds them (bfloat16 travels as uint16: CuPy has no bfloat16)."""
    return array.view(param.ctype.dtype)


def read_back(case: Case, param: Param) -> np.ndarray:
    """A buffer's data as the element type (a view: read it, do not write it)."""
    return case.buffers[param.name].to_host().view(param.ctype.element.dtype)


def _on_host(arrays: dict[str, Any]) -> dict[str, np.ndarray]:
    return {name: np.asarray(check.to_host(value)) for name, value in arrays.items()}


def reset_outputs(challenge: Challenge, case: Case, backend) -> None:
    """Outputs filled again, inouts given their starting value again: every call starts the same."""
    for param in challenge.outputs:
        if param.role is Role.INOUT:
            _upload(case.buffers[param.name], case.pristine[param.name], param)
        else:
            _fill(case, param)
    backend.synchronize()


def _fill(case: Case, param: Param) -> None:
    """An output before a call: the case's own starting contents where it fixes them, else NaN."""
    if param.name in case.start:
        _upload(case.buffers[param.name], case.start[param.name], param)
    else:
        case.buffers[param.name].fill_output()


def worker_args(challenge: Challenge, case: Case) -> list[dict]:
    args = []
    for param in challenge.params:
        if param.role is not None:
            args.append(case.buffers[param.name].worker_arg())
        elif param.ctype.dtype.kind == "f":
            args.append({"float": float(case.arguments[param.name])})
        else:
            args.append({"int": int(case.arguments[param.name])})
    return args


def inspect(challenge: Challenge, case: Case) -> Inspection:
    """Guards first (a stray write can explain everything after), then inputs, then outputs; all on
    host copies of the buffers."""
    damage = [d for d in (b.damage() for b in case.buffers.values()) if d is not None]
    if damage:
        return Inspection(Verdict.OUT_OF_BOUNDS, "; ".join(d.describe() for d in damage))
    for param in challenge.inputs if case.check_inputs else ():
        data = read_back(case, param)
        if not check.unchanged(data, case.pristine[param.name]):
            changed = check.changed_elements(data, case.pristine[param.name])
            return Inspection(Verdict.INPUT_MODIFIED,
                              f"{param.name} is an input ({param.ctype.text}) but {changed} of its elements changed")
    guards = {name: buffer.guard_word for name, buffer in case.buffers.items()}
    comparisons = tuple(_compare(challenge, case, p, guards) for p in challenge.outputs)
    failed = [c for c in comparisons if not c.passed]
    if failed:
        return Inspection(Verdict.WRONG_ANSWER, check.describe(failed[0], challenge.tolerance), comparisons)
    return Inspection(Verdict.ACCEPTED, "", comparisons)


def _compare(challenge: Challenge, case: Case, param: Param, guards: dict[str, int]) -> check.Comparison:
    got, expected = read_back(case, param), case.expected[param.name]
    got = got.reshape(expected.shape) if got.size == expected.size else got
    if param.check is Check.TOLERANCE:
        return check.compare(param.name, got, expected, case.scale[param.name], challenge.tolerance, guards)
    if param.check is Check.ALLCLOSE:
        widen = float(case.scale[param.name]) if param.name in case.scale else 1.0
        return check.compare_allclose(param.name, got, expected, challenge.tolerance, guards, widen)
    return check.compare_exact(param.name, got, expected, ordered=param.check is Check.EXACT)


# --------------------------------------------------------------------------- thread orders


@dataclass(frozen=True)
class OrderRun:
    """What one call left behind when threads ran in one order."""

    order: str
    inspection: Inspection
    outputs: tuple[bytes, ...]
    reply: Called


def snapshot(challenge: Challenge, case: Case) -> tuple[bytes, ...]:
    return tuple(bytes(check.to_host(case.buffers[p.name].data)) for p in challenge.outputs)


def with_past_end(run: OrderRun) -> Inspection:
    """A run's inspection once what the emulator saw a kernel do is counted: a read past the end of an
    allocation is WRONG_ANSWER (the answer rests on bytes the kernel does not own: on a GPU, whatever
    lies there), a write past one the grader does not guard (the submission's own cudaMalloc) is
    OUT_OF_BOUNDS. A stray write the guards caught, or a changed input, still comes first."""
    found, seen = run.inspection, run.reply.past_end
    if seen is None or found.verdict not in (Verdict.ACCEPTED, Verdict.WRONG_ANSWER):
        return found
    verdict = Verdict.OUT_OF_BOUNDS if seen.write else Verdict.WRONG_ANSWER
    message = seen.message + (f"; and the output is wrong: {found.message}" if found.message else "")
    return Inspection(verdict, message, found.comparisons)


def combine_orders(runs: list[OrderRun], judge_past_end: bool = True) -> Inspection:
    """ACCEPTED only if every order is; different outputs from different orders is a RACE. An access past
    an allocation's end explains more than a race does, and is named first. Not `judge_past_end` (an official
    parity case): a read past the end is judged by the output alone, as on a GPU; the strict checks judge it."""
    if judge_past_end:
        runs = [dataclasses.replace(r, inspection=with_past_end(r)) for r in runs]
    first = runs[0].inspection
    if all(r.inspection.verdict is Verdict.ACCEPTED for r in runs):
        return first
    for r in runs:
        if r.inspection.verdict not in (Verdict.ACCEPTED, Verdict.WRONG_ANSWER):
            return r.inspection  # a stray write or changed input says more than the race
    for r in runs:
        if r.reply.past_end is not None:
            return r.inspection
    if all(r.outputs == runs[0].outputs for r in runs[1:]):
        return first  # deterministic: the same wrong answer in every order
    return Inspection(Verdict.RACE, _race_message(runs), first.comparisons)


BARRIER_HINT = ("a __syncthreads() is probably missing where threads read shared memory that other threads "
                "wrote in the same step: after a tile is loaded, or before it is overwritten for the next one "
                "(between blocks, reading what other blocks wrote in the same launch, a grid.sync() in a "
                "cooperative launch, or a second kernel)")
STRAY_WRITE_HINT = ("no kernel wrote shared memory, so this is not a missing barrier: two threads write the same "
                    "output element, which means some thread writes outside its own element, or two threads update "
                    "one element with a plain `+=` where it needs atomicAdd (a histogram's bins, a counter). Usually a "
                    "missing or wrong bounds check (`col < K`, `row < M`) lets the threads past the edge write into "
                    "the next row, or an index mixes up the dimensions (N is the inner one)")


def _race_message(runs: list[OrderRun]) -> str:
    outcomes = "; ".join(f"{r.order} order: {_summary(r.inspection)}" for r in runs)
    kernels = runs[0].reply.kernels
    text = (f"the result depends on the order threads run in, or on the call before ({outcomes}: "
            "the emulator runs each case twice, so state a kernel keeps between calls, a counter or a "
            "sum in global memory it never resets, shows here too); ")
    if kernels and not any(k.shared for k in kernels):
        return text + STRAY_WRITE_HINT + ". " + "; ".join(_kernel_name(k) for k in kernels)
    sites = [_kernel_site(k) for k in kernels]
    return text + BARRIER_HINT + (". " + "; ".join(sites) if sites else "")


def _kernel_name(kernel: Launch) -> str:
    return f"kernel `{kernel.name}` (launched at line {kernel.line})"


def _summary(inspection: Inspection) -> str:
    if inspection.verdict is Verdict.ACCEPTED:
        return "correct"
    bad = [c for c in inspection.comparisons if not c.passed]
    return f"{bad[0].bad_count} of {bad[0].total} elements wrong" if bad else inspection.verdict.label


def _kernel_site(kernel: Launch) -> str:
    barriers = kernel.barriers
    where = _kernel_name(kernel)
    if not barriers:
        return f"{where} never calls __syncthreads()"
    lines = ", ".join(str(b) for b in barriers)
    return f"{where} synchronizes only at line{'s' if len(barriers) > 1 else ''} {lines}"
