"""The spec stage: a challenge folder parsed once into frozen dataclasses.

A challenge lives in `challenges/<slug>/`: `challenge.yaml` (signature, shapes, tolerance, limits),
`reference.py` (input generation and the trusted FP64 reference), `statement.md` and `starter.cu`.
Every unknown key and every bad value is a `SpecError` naming the file and the key.
"""

from __future__ import annotations

import enum
import importlib.util
import math
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import numpy as np
import yaml

from grader.errors import SpecError, UsageError

SPEC_FILE = "challenge.yaml"
REFERENCE_FILE = "reference.py"
REFERENCE_FUNCTIONS = ("generate", "reference", "error_scale", "flops")


class Role(enum.Enum):
    INPUT = "input"
    OUTPUT = "output"


@dataclass(frozen=True)
class CType:
    """A parameter type the grader can pass: a pointer to an element type, or a scalar."""

    text: str
    dtype: np.dtype
    pointer: bool
    const: bool


C_TYPES = {
    text: CType(text, np.dtype(dtype), "*" in text, text.startswith("const"))
    for text, dtype in [
        ("const float*", np.float32), ("float*", np.float32),
        ("const double*", np.float64), ("double*", np.float64),
        ("const int*", np.int32), ("int*", np.int32),
        ("int", np.int32), ("float", np.float32),
    ]
}


@dataclass(frozen=True)
class Param:
    name: str
    ctype: CType
    role: Role | None = None
    """INPUT or OUTPUT for a pointer; None for a scalar, whose value is a shape dimension."""
    shape: tuple[str, ...] = ()
    """For a pointer: the buffer's dimensions, named after scalar parameters."""

    def extent(self, dims: dict[str, int]) -> tuple[int, ...]:
        return tuple(dims[d] for d in self.shape)


@dataclass(frozen=True)
class Shape:
    dims: dict[str, int]
    name: str = ""

    def label(self) -> str:
        text = "×".join(str(v) for v in self.dims.values())
        return f"{self.name} {text}" if self.name else text


@dataclass(frozen=True)
class Tolerance:
    max_scaled_error: float
    """Largest allowed |got − expected| / scale for any element; scale comes from reference.py."""
    max_relative_frobenius: float
    """Largest allowed ‖got − expected‖ / ‖expected‖ over the whole output."""


@dataclass(frozen=True)
class Limits:
    compile_s: float
    case_s: float
    timing_budget_s: float


@dataclass(frozen=True)
class RandomShapes:
    count: int
    ranges: dict[str, tuple[int, int]]
    max_flops: float


@dataclass(frozen=True)
class Reference:
    """The functions of a challenge's reference.py (trusted code)."""

    generate: Callable[[dict[str, int], np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[dict[str, Any], Any], dict[str, Any]]
    error_scale: Callable[[dict[str, Any], Any], dict[str, Any]]
    flops: Callable[[dict[str, int]], float]
    baseline: Callable[[dict[str, Any], Any], dict[str, Any]] | None


@dataclass(frozen=True)
class Level:
    """One rung of the reference ladder: a reference solution and what it adds over the one below."""

    number: int
    name: str
    path: Path
    technique: str
    requires: tuple[int, int] | None = None
    """Minimum compute capability, e.g. (8, 0) for cp.async and TF32 tensor cores."""
    arch_specific: bool = False
    """Written `"9.0a"`: uses features of exactly that architecture (sm_90a's wgmma), which newer GPUs lack."""

    def available_on(self, major: int, minor: int) -> bool:
        if self.requires is None:
            return True
        return (major, minor) == self.requires if self.arch_specific else (major, minor) >= self.requires

    @property
    def needs(self) -> str:
        """What the level needs, as nvcc names it: "sm_80", "sm_90a", or "" for any GPU."""
        if self.requires is None:
            return ""
        return "sm_" + "".join(map(str, self.requires)) + ("a" if self.arch_specific else "")

    def unavailable_reason(self, compute_capability: str) -> str:
        wanted = ".".join(map(str, self.requires or ()))
        if self.arch_specific:
            return f"needs a GPU of compute capability {wanted} exactly ({self.needs}); this GPU has {compute_capability}"
        return f"needs compute capability {wanted}; this GPU has {compute_capability}"


@dataclass(frozen=True)
class Challenge:
    slug: str
    title: str
    version: int
    root: Path
    entry: str
    params: tuple[Param, ...]
    tolerance: Tolerance
    limits: Limits
    functional_version: int
    functional: tuple[Shape, ...]
    randomized: RandomShapes
    performance_version: int
    performance: tuple[Shape, ...]
    baseline_label: str | None
    reference: Reference
    levels: tuple[Level, ...] = ()

    @property
    def dims(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params if not p.ctype.pointer)

    @property
    def inputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.role is Role.INPUT)

    @property
    def outputs(self) -> tuple[Param, ...]:
        return tuple(p for p in self.params if p.role is Role.OUTPUT)

    def prototype(self) -> str:
        """The C declaration a submission must match, e.g. `void solve(const float* A, ...)`."""
        args = ", ".join(f"{p.ctype.text} {p.name}" for p in self.params)
        return f"void {self.entry}({args})"

    @property
    def statement_path(self) -> Path:
        return self.root / "statement.md"

    @property
    def starter_path(self) -> Path:
        return self.root / "starter.cu"


# --------------------------------------------------------------------------- locating


def list_challenges(challenges_dir: Path) -> list[str]:
    if not challenges_dir.is_dir():
        return []
    return sorted(p.name for p in challenges_dir.iterdir() if (p / SPEC_FILE).is_file())


def load(challenges_dir: Path, slug: str) -> Challenge:
    root = challenges_dir / slug
    if not (root / SPEC_FILE).is_file():
        known = ", ".join(list_challenges(challenges_dir)) or "none"
        raise UsageError(
            f"no challenge named {slug!r} in {challenges_dir}",
            hint=f"known challenges: {known} (see `grader list`)",
        )
    return parse(root)


# --------------------------------------------------------------------------- parsing


class _Fields:
    """Reads one YAML mapping, remembering which keys were used so leftovers are reported."""

    def __init__(self, path: Path, where: str, raw: Any):
        self.path, self.where = path, where
        if not isinstance(raw, dict):
            raise SpecError(path, where or None, f"expected a mapping, got {type(raw).__name__}")
        self.raw = raw
        self.used: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
        self.used.add(name)
        if name not in self.raw:
            if default is ...:
                raise SpecError(self.path, self.key(name), "missing required key")
            return default
        value = self.raw[name]
        if kind is float:
            value = _as_float(value)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
            expected = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise SpecError(self.path, self.key(name), f"expected {expected}, got {value!r}")
        return value

    def positive(self, name: str, kind: type, default: Any = ...) -> Any:
        value = self.get(name, kind, default)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise SpecError(self.path, self.key(name), f"must be a positive number, got {value!r}")
        return value

    def sub(self, name: str) -> "_Fields":
        return _Fields(self.path, self.key(name), self.get(name, dict))

    def finish(self) -> None:
        unknown = sorted(set(map(str, self.raw)) - self.used)
        if unknown:
            raise SpecError(self.path, self.key(unknown[0]), "unknown key",
                            hint=f"known keys here: {', '.join(sorted(self.used))}")


def _as_float(value: Any) -> Any:
    """Ints and strings like "1.0e8" (YAML 1.1 reads exponents without a sign as text) as floats."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def parse(root: Path) -> Challenge:
    path = root / SPEC_FILE
    try:
        raw = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise SpecError(path, None, f"not valid YAML: {exc}") from exc
    top = _Fields(path, "", raw)
    params = _params(path, top.get("parameters", list))
    dims = tuple(p.name for p in params if not p.ctype.pointer)
    slug = top.get("slug", str)
    if slug != root.name:
        raise SpecError(path, "slug", f"{slug!r} differs from the folder name {root.name!r}")
    functional = top.sub("functional")
    performance = top.sub("performance")
    baseline_label = top.get("baseline", str, None)
    challenge = Challenge(
        slug=slug,
        title=top.get("title", str),
        version=top.positive("version", int),
        root=root,
        entry=top.get("entry", str, "solve"),
        params=params,
        tolerance=_tolerance(top.sub("tolerance")),
        limits=_limits(top.sub("limits")),
        functional_version=functional.positive("version", int),
        functional=_shapes(functional, dims),
        randomized=_random_shapes(top.sub("randomized"), dims),
        performance_version=performance.positive("version", int),
        performance=_shapes(performance, dims),
        baseline_label=baseline_label,
        reference=_load_reference(root / REFERENCE_FILE, need_baseline=baseline_label is not None),
        levels=_levels(path, root, top.get("levels", list, [])),
    )
    for fields in (top, functional, performance):
        fields.finish()
    return challenge


def _params(path: Path, raw: list) -> tuple[Param, ...]:
    params: list[Param] = []
    for i, item in enumerate(raw):
        fields = _Fields(path, f"parameters[{i}]", item)
        name = fields.get("name", str)
        text = fields.get("type", str)
        if text not in C_TYPES:
            raise SpecError(path, fields.key("type"), f"unsupported type {text!r}",
                            hint=f"supported: {', '.join(C_TYPES)}")
        ctype = C_TYPES[text]
        role = shape = None
        if ctype.pointer:
            role_text = fields.get("role", str)
            try:
                role = Role(role_text)
            except ValueError:
                raise SpecError(path, fields.key("role"), f"expected input or output, got {role_text!r}")
            if role is Role.INPUT and not ctype.const or role is Role.OUTPUT and ctype.const:
                raise SpecError(path, fields.key("type"), f"an {role.value} pointer must {'' if role is Role.INPUT else 'not '}be const")
            shape = tuple(fields.get("shape", list))
        fields.finish()
        params.append(Param(name, ctype, role, shape or ()))
    dims = {p.name for p in params if not p.ctype.pointer}
    for i, p in enumerate(params):
        unknown = [d for d in p.shape if d not in dims]
        if unknown:
            raise SpecError(path, f"parameters[{i}].shape", f"{unknown[0]!r} is not a scalar parameter")
    if not any(p.role is Role.OUTPUT for p in params):
        raise SpecError(path, "parameters", "no output parameter")
    return tuple(params)


def _levels(path: Path, root: Path, raw: list) -> tuple[Level, ...]:
    levels = []
    for i, item in enumerate(raw):
        fields = _Fields(path, f"levels[{i}]", item)
        number = fields.positive("level", int)
        if number != i + 1:
            raise SpecError(path, fields.key("level"), f"levels must be numbered 1, 2, 3… in order; got {number}")
        file = fields.get("file", str)
        if not (root / file).is_file():
            raise SpecError(path, fields.key("file"), f"{root / file} does not exist")
        requires = fields.get("requires", str, None)
        specific = bool(requires) and requires.endswith("a")
        try:
            cc = tuple(int(v) for v in requires.removesuffix("a").split(".")) if requires else None
            if cc is not None and len(cc) != 2:
                raise ValueError
        except ValueError:
            raise SpecError(path, fields.key("requires"),
                            f"expected a compute capability like \"8.0\" (or \"9.0a\" for one architecture's own features), got {requires!r}")
        levels.append(Level(number, fields.get("name", str), root / file, " ".join(fields.get("technique", str).split()),
                            cc, specific))
        fields.finish()
    return tuple(levels)


def _tolerance(fields: _Fields) -> Tolerance:
    tolerance = Tolerance(fields.positive("max_scaled_error", float),
                          fields.positive("max_relative_frobenius", float))
    fields.finish()
    return tolerance


def _limits(fields: _Fields) -> Limits:
    limits = Limits(fields.positive("compile_s", float), fields.positive("case_s", float),
                    fields.positive("timing_budget_s", float))
    fields.finish()
    return limits


def _shapes(fields: _Fields, dims: tuple[str, ...]) -> tuple[Shape, ...]:
    shapes = []
    for i, item in enumerate(fields.get("cases", list)):
        case = _Fields(fields.path, f"{fields.key('cases')}[{i}]", item)
        name = case.get("name", str, "")
        values = {d: case.positive(d, int) for d in dims}
        case.finish()
        shapes.append(Shape(values, name))
    if not shapes:
        raise SpecError(fields.path, fields.key("cases"), "needs at least one case")
    return tuple(shapes)


def _random_shapes(fields: _Fields, dims: tuple[str, ...]) -> RandomShapes:
    ranges_fields = fields.sub("ranges")
    ranges = {}
    for d in dims:
        pair = ranges_fields.get(d, list)
        if len(pair) != 2 or not all(isinstance(v, int) and v >= 1 for v in pair) or pair[0] > pair[1]:
            raise SpecError(fields.path, ranges_fields.key(d), f"expected [low, high] with 1 <= low <= high, got {pair!r}")
        ranges[d] = (pair[0], pair[1])
    ranges_fields.finish()
    random_shapes = RandomShapes(fields.get("count", int), ranges, fields.positive("max_flops", float))
    fields.finish()
    return random_shapes


def _load_reference(path: Path, need_baseline: bool) -> Reference:
    if not path.is_file():
        raise SpecError(path, None, "missing", hint="every challenge needs a reference.py")
    module = _import_file(path)
    missing = [f for f in REFERENCE_FUNCTIONS if not callable(getattr(module, f, None))]
    if need_baseline and not callable(getattr(module, "baseline", None)):
        missing.append("baseline")
    if missing:
        raise SpecError(path, missing[0], "function not defined",
                        hint=f"reference.py must define {', '.join(REFERENCE_FUNCTIONS)}")
    return Reference(module.generate, module.reference, module.error_scale, module.flops,
                     getattr(module, "baseline", None))


def _import_file(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"grader_challenge_{path.parent.name}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the file is trusted but may still be broken
        raise SpecError(path, None, f"failed to import: {exc!r}") from exc
    return module
