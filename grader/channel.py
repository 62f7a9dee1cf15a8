"""The worker's channel, grader side: what a worker may answer, checked field by field on arrival.

The worker runs the submission in its own process, so every byte on its results pipe may have been
written by the submission (the pipe's descriptor is on the worker's command line). An answer is
therefore parsed like any untrusted input: one JSON object per line, at most MAX_LINE_BYTES, with
exactly the fields its request allows, each of the right type and range. Anything else raises
`Malformed`, which the grader turns into the submission's RUNTIME_ERROR, never its own exception.
What passes is returned as a typed answer (`Started`, `Called`, `Sampled`, `Ponged`, `Failed`...), the
one shape both workers' answers take on the grader's side.
"""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Union

MAX_LINE_BYTES = 1 << 20
MAX_TEXT_CHARS = 64 * 1024
MAX_ITEMS = 100_000


class Op(enum.Enum):
    """What the grader asks the worker for."""

    LOAD = "load"
    CALL = "call"
    PING = "ping"
    TIME = "time"
    SAMPLE = "sample"
    END = "end"
    EXIT = "exit"


@dataclass(frozen=True)
class Command:
    """One request to the worker as the grader makes it. `wire` is the message it becomes: JSON for the
    Python worker (grader/worker.py), a line of text for the emulator's (backends/emulator.py,
    `encode_command`)."""

    op: Op
    args: tuple[dict, ...] = ()
    """The call's arguments, one buffer or scalar each (case.worker_args)."""
    order: str | None = None
    """The order threads run in, where the backend has one (the emulator: forward or reverse)."""
    count: int | None = None
    """Samples asked for (SAMPLE)."""
    id: int = 0
    """Chosen at random per request; the answer repeats it."""

    def wire(self) -> dict:
        message: dict = {"op": self.op.value, "id": self.id}
        if self.op in (Op.CALL, Op.TIME):
            message["args"] = list(self.args)
        if self.order is not None:
            message["order"] = self.order
        if self.count is not None:
            message["count"] = self.count
        return message


class Malformed(ValueError):
    """An answer that is not one the worker could have sent: the message says what is wrong."""


Check = Callable[[Any], bool]


def _finite_at_least(low: float, exclusive: bool = False) -> Check:
    def check(value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return False
        return value > low if exclusive else value >= low
    return check


def _int_at_least(low: int) -> Check:
    return lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= low


def _text(value: Any) -> bool:
    return isinstance(value, str) and len(value) <= MAX_TEXT_CHARS


def _list_of(item: Check, non_empty: bool = False) -> Check:
    return lambda value: (isinstance(value, list) and len(value) <= MAX_ITEMS and (bool(value) or not non_empty)
                          and all(item(v) for v in value))


def _is(expected: Any) -> Check:
    return lambda value: value is expected


@dataclass(frozen=True)
class Shape:
    """The fields one kind of answer has: all of `required`, any of `optional`, nothing else."""

    required: dict[str, Check]
    optional: dict[str, Check]


_KERNEL = Shape({"name": _text, "line": _int_at_least(0), "barriers": _list_of(_int_at_least(0))},
                {"shared": lambda v: isinstance(v, bool)})
_PAST_END = Shape({"write": lambda v: isinstance(v, bool), "message": _text}, {})

_SUCCESS = {
    "start": Shape({"ok": _is(True), "ready": _is(True)}, {"pid": _int_at_least(1)}),
    "call": Shape({"ok": _is(True), "seconds": _finite_at_least(0.0)},
                  {"kernels": _list_of(lambda k: _fits(k, _KERNEL) is None),
                   "threads_left": _int_at_least(1), "libraries_loaded": _list_of(_text),
                   "past_end": lambda v: _fits(v, _PAST_END) is None}),
    "runtime": Shape({"ok": _is(True), "runtime": _is(True)}, {"pid": _int_at_least(1)}),
    "time": Shape({"ok": _is(True), "timing": _is(True)}, {}),
    "sample": Shape({"ok": _is(True), "ms": _list_of(_finite_at_least(0.0), non_empty=True),
                     "wall_s": _list_of(_finite_at_least(0.0), non_empty=True)}, {}),
    "ping": Shape({"ok": _is(True), "pong": _is(True)}, {}),
    "end": Shape({"ok": _is(True), "pong": _is(True)}, {}),
}

_FAILURES = (
    Shape({"ok": _is(False), "cuda_error": _int_at_least(0), "name": _text}, {"message": _text}),
    Shape({"ok": _is(False), "crash": _text}, {}),
    Shape({"ok": _is(False), "fault": _text}, {}),
    Shape({"ok": _is(False), "internal": _text}, {}),
)


def _fits(message: Any, shape: Shape) -> str | None:
    """None when `message` has exactly the fields of `shape`, each valid; else what is wrong."""
    if not isinstance(message, dict):
        return "not a JSON object"
    missing = sorted(set(shape.required) - set(message))
    if missing:
        return f"no field {missing[0]!r}"
    extra = sorted(set(message) - set(shape.required) - set(shape.optional))
    if extra:
        return f"an unexpected field {extra[0][:40]!r}"
    checks = {**shape.required, **shape.optional}
    bad = [name for name, value in message.items() if not checks[name](value)]
    return f"an invalid value in field {bad[0]!r}" if bad else None


# --------------------------------------------------------------------------- typed answers


@dataclass(frozen=True)
class Launch:
    """A kernel launch the emulator's runtime saw during a call."""

    name: str
    line: int
    barriers: tuple[int, ...] = ()
    """Lines of the kernel's __syncthreads() calls."""
    shared: bool = False
    """Whether it wrote shared memory."""


@dataclass(frozen=True)
class PastEnd:
    """An access past the end (or before the start) of device memory that the emulator's runtime saw a
    kernel make: a read of any allocation, or a write past one the grader does not guard."""

    write: bool
    message: str


@dataclass(frozen=True)
class Started:
    pid: int | None = None


@dataclass(frozen=True)
class Called:
    seconds: float
    kernels: tuple[Launch, ...] = ()
    threads_left: int = 0
    """Host threads the call started that still ran when it returned."""
    libraries_loaded: tuple[str, ...] = ()
    past_end: PastEnd | None = None
    """The call's first access past an allocation (emulator only: a GPU's worker cannot see one)."""


@dataclass(frozen=True)
class RuntimeUp:
    """The GPU worker's CUDA runtime is up and its library not loaded yet: the time to calibrate."""

    pid: int | None = None


@dataclass(frozen=True)
class TimingOpened:
    pass


@dataclass(frozen=True)
class Sampled:
    """Timed samples: each one's events' milliseconds and the worker's clock around the whole sample."""

    ms: tuple[float, ...]
    wall_s: tuple[float, ...]


@dataclass(frozen=True)
class Ponged:
    pass


class FailureKind(enum.Enum):
    CUDA_ERROR = "cuda_error"
    CRASH = "crash"
    FAULT = "fault"
    INTERNAL = "internal"


@dataclass(frozen=True)
class Failed:
    kind: FailureKind
    detail: str
    """The crash, fault or internal text; for a CUDA error, its name and message."""
    cuda_error: int | None = None


Answer = Union[Started, RuntimeUp, Called, TimingOpened, Sampled, Ponged, Failed]


def _typed(op: str, message: dict) -> Answer:
    """A checked message as its typed answer."""
    if not message["ok"]:
        if "cuda_error" in message:
            detail = f"{message['name']} (CUDA error {message['cuda_error']})"
            detail += f": {message['message']}" if message.get("message") else ""
            return Failed(FailureKind.CUDA_ERROR, detail, message["cuda_error"])
        kind = next(k for k in (FailureKind.CRASH, FailureKind.FAULT, FailureKind.INTERNAL) if k.value in message)
        return Failed(kind, message[kind.value])
    if op == "start":
        return Started(message.get("pid"))
    if op == "call":
        kernels = tuple(Launch(k["name"], k["line"], tuple(k["barriers"]), k.get("shared", False))
                        for k in message.get("kernels", ()))
        past_end = message.get("past_end")
        return Called(float(message["seconds"]), kernels, message.get("threads_left", 0),
                      tuple(message.get("libraries_loaded", ())),
                      PastEnd(past_end["write"], past_end["message"]) if past_end else None)
    if op == "runtime":
        return RuntimeUp(message.get("pid"))
    if op == "time":
        return TimingOpened()
    if op == "sample":
        if len(message["ms"]) != len(message["wall_s"]):
            raise Malformed("an answer to 'sample' with as many times as clocks")
        return Sampled(tuple(map(float, message["ms"])), tuple(map(float, message["wall_s"])))
    return Ponged()


def parse(line: bytes, op: str, request_id: int = 0) -> Answer:
    """The worker's answer to request `request_id` of kind `op` (a key of _SUCCESS),
    checked; raises Malformed. The id is drawn at random per request and repeated in the answer, so
    a line the submission writes into the pipe is not taken for the answer (short of it reading the
    worker's memory)."""
    if len(line) > MAX_LINE_BYTES:
        raise Malformed(f"an answer of {len(line)} bytes (the limit is {MAX_LINE_BYTES})")
    try:
        message = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise Malformed("an answer that is not JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("ok"), bool):
        raise Malformed("an answer without a true or false 'ok'")
    answered = message.pop("id", None)
    if type(answered) is not int or answered != request_id:
        raise Malformed("an answer that does not name the request it answers")
    if message["ok"]:
        problem = _fits(message, _SUCCESS[op])
    else:
        problems = [_fits(message, shape) for shape in _FAILURES]
        problem = None if None in problems else "a failure report of no known kind"
    if problem:
        raise Malformed(f"an answer to '{op}' with {problem}" if message["ok"] else problem)
    return _typed(op, message)
