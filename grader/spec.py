"""The spec stage: a challenge folder parsed once into frozen dataclasses.

A challenge lives in `challenges/<slug>/`: `challenge.yaml` (signature, shapes, tolerance, limits),
`reference.py` (input generation and the trusted FP64 reference), `statement.md` and `starter.cu`.
Every unknown key and every bad value is a `SpecError` naming the file and the key, raised while the
challenge loads: a broken challenge stops the grader before any submission is judged against it.
"""

from __future__ import annotations

import dataclasses
import enum
import importlib.util
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import ml_dtypes
import numpy as np
import yaml

from grader import expr
from grader.errors import GraderError, SpecError, UsageError

SPEC_FILE = "challenge.yaml"
REFERENCE_FILE = "reference.py"
REFERENCE_FUNCTIONS = ("generate", "reference", "error_scale")
WORK_FUNCTIONS = ("flops", "bytes")
"""How much work a shape is: floating-point operations, and bytes a kernel must move at least. A
challenge defines one or both (matmul: flops; vector add: bytes); each gives its metrics (GFLOP/s
against the FP32 peak, GB/s against the measured memory bandwidth) and its roofline check."""
TEXT_FILES = ("statement.md", "starter.cu")
"""Read by `grader show` and `grader init`; checked to be UTF-8 at load, where present."""

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
RESERVED_NAMES = frozenset("""
    alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t char16_t char32_t
    class compl concept const consteval constexpr constinit const_cast continue co_await co_return co_yield
    decltype default delete do double dynamic_cast else enum explicit export extern false float for friend
    goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or or_eq private
    protected public register reinterpret_cast requires restrict return short signed sizeof static
    static_assert static_cast struct switch template this thread_local throw true try typedef typeid
    typename union unsigned using virtual void volatile wchar_t while xor xor_eq
    _Alignas _Alignof _Atomic _Bool _Complex _Generic _Imaginary _Noreturn _Static_assert _Thread_local
    threadIdx blockIdx blockDim gridDim warpSize
""".split())
"""C and C++ keywords, which cannot name a parameter or the entry point, and CUDA's built-in variables,
which a parameter of that name would hide from every kernel launched inside `solve`."""


class Origin(enum.Enum):
    """Whose challenge: the grader's own, or one of LeetGPU's official repository read from the user's checkout."""
    GRADER = "grader"
    LEETGPU = "leetgpu"


class Role(enum.Enum):
    INPUT = "input"
    OUTPUT = "output"
    INOUT = "inout"
    """Read and written: given a starting value by `generate`, compared after the call (GEMM's C)."""


class Check(enum.Enum):
    """How an output is compared with the reference's."""

    TOLERANCE = "tolerance"
    """Scaled error and relative Frobenius error within `tolerance` (floating-point outputs)."""
    EXACT = "exact"
    """Every element equal (integer outputs; a float output that copies input values)."""
    MULTISET = "multiset"
    """The same values in any order (sorted, then equal): answers whose order the problem leaves free."""
    ALLCLOSE = "allclose"
    """|got − expected| ≤ atol + rtol·|expected| per element (NaN and infinity never equal): LeetGPU's rule,
    for its official challenges (`Tolerance.allclose`), against its own reference."""


@dataclass(frozen=True)
class Element:
    """An element type a buffer may hold: its C name, the numpy type the grader holds it in, and the
    numpy type of the same width its bytes travel in (CuPy knows no bfloat16)."""

    name: str
    dtype: np.dtype
    storage: np.dtype

    @property
    def floating(self) -> bool:
        return self.dtype.kind == "f" or self.dtype == BFLOAT16

    @property
    def default_check(self) -> Check:
        return Check.TOLERANCE if self.floating else Check.EXACT


BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
ELEMENTS = {e.name: e for e in (
    Element("float", np.dtype(np.float32), np.dtype(np.float32)),
    Element("double", np.dtype(np.float64), np.dtype(np.float64)),
    Element("half", np.dtype(np.float16), np.dtype(np.float16)),
    Element("__nv_bfloat16", BFLOAT16, np.dtype(np.uint16)),
    Element("int", np.dtype(np.int32), np.dtype(np.int32)),
    Element("unsigned int", np.dtype(np.uint32), np.dtype(np.uint32)),
    Element("int8_t", np.dtype(np.int8), np.dtype(np.int8)),
    Element("uint8_t", np.dtype(np.uint8), np.dtype(np.uint8)),
    Element("long long", np.dtype(np.int64), np.dtype(np.int64)),
)}
ALIASES = {"__half": "half", "nv_bfloat16": "__nv_bfloat16", "unsigned char": "uint8_t", "signed char": "int8_t",
           "unsigned": "unsigned int", "int32_t": "int", "uint32_t": "unsigned int", "int64_t": "long long"}
"""Other spellings of the same type, as CUDA's headers define them: a submission may write either."""
SCALARS = {"int": np.dtype(np.int32), "float": np.dtype(np.float32)}
"""Scalar parameters: an int is a dimension (every case gives it), a float a value (drawn or fixed)."""


@dataclass(frozen=True)
class CType:
    """A parameter type the grader can pass: a pointer to an element type, or a scalar."""

    text: str
    dtype: np.dtype
    pointer: bool
    const: bool
    element: Element | None = None
    """For a pointer: what it points to."""

    @property
    def canonical(self) -> str:
        return canonical_type(self.text)


def canonical_type(text: str) -> str:
    """`text` with every alias replaced by its one spelling here (`const __half*` -> `const half*`)."""
    const = text.startswith("const ")
    base = text.removeprefix("const ").rstrip("*").strip()
    base = ALIASES.get(base, base)
    return ("const " if const else "") + base + ("*" if text.endswith("*") else "")


def c_type(text: str) -> CType | None:
    """The CType of a type written in challenge.yaml, or None when the grader cannot pass it."""
    text = " ".join(text.replace("*", " * ").split()).replace(" *", "*")
    if not text.endswith("*"):
        return CType(text, SCALARS[text], False, False) if text in SCALARS else None
    const = text.startswith("const ")
    base = text.removeprefix("const ").rstrip("*").strip()
    element = ELEMENTS.get(ALIASES.get(base, base))
    if element is None or text.count("*") != 1:
        return None
    return CType(text, element.storage, True, const, element)


SUPPORTED_TYPES = ", ".join([*(f"[const] {name}*" for name in ELEMENTS), *SCALARS])


@dataclass(frozen=True)
class ScalarValue:
    """A float parameter's value in a case that does not fix it: `fixed`, or uniform in [low, high]."""

    fixed: float | None = None
    low: float | None = None
    high: float | None = None

    def draw(self, rng: np.random.Generator) -> float:
        value = self.fixed if self.fixed is not None else rng.uniform(self.low, self.high)
        return float(np.float32(value))  # what a float parameter can hold

    def describe(self) -> str:
        return f"{self.fixed:g}" if self.fixed is not None else f"uniform in [{self.low:g}, {self.high:g}]"


@dataclass(frozen=True)
class Param:
    name: str
    ctype: CType
    role: Role | None = None
    """INPUT, OUTPUT or INOUT for a pointer; None for a scalar."""
    shape: tuple[expr.Expression, ...] = ()
    """For a pointer: the buffer's extents, each an expression over the int parameters ("M", "1",
    "input_size - kernel_size + 1")."""
    check: Check | None = None
    """For an output or inout buffer: how it is compared."""
    value: ScalarValue | None = None
    """For a float scalar: its value where a case does not give one."""

    def extent(self, dims: dict[str, int]) -> tuple[int, ...]:
        return tuple(int(e(dims)) for e in self.shape)

    @property
    def dimension(self) -> bool:
        """An int scalar: a dimension every case names."""
        return not self.ctype.pointer and self.value is None


@dataclass(frozen=True, eq=False)
class Given:
    """Buffers' starting contents a case fixes instead of drawing them: an official LeetGPU challenge's own
    test data (grader.leetgpu), in the file's shapes and types."""

    arrays: dict[str, np.ndarray]
    """Every buffer's contents before the call: inputs, inouts, and outputs as the file fills them (zeros)."""
    strict: bool = False
    """One of the checks beyond LeetGPU's own: outputs arrive filled with NaN, not as the file fills them,
    inputs are checked unmodified, every thread order runs. Otherwise a parity case: as LeetGPU's judge runs it."""


@dataclass(frozen=True)
class Shape:
    dims: dict[str, int]
    name: str = ""
    values: dict[str, float] = field(default_factory=dict)
    """Float parameters this case fixes (the others are drawn from the case's seed)."""
    given: Given | None = field(default=None, compare=False)
    """The buffers' contents, where the case fixes them (official challenges); else `generate` draws them."""

    @property
    def parity(self) -> bool:
        """A case run as LeetGPU's judge runs it: outputs start as the file made them, inputs unchecked."""
        return self.given is not None and not self.given.strict

    def label(self) -> str:
        text = "×".join(str(v) for v in self.dims.values())
        text = f"{self.name} {text}" if self.name else text
        return text + "".join(f" {k}={v:g}" for k, v in self.values.items())


@dataclass(frozen=True)
class Tolerance:
    max_scaled_error: float
    """Largest allowed |got − expected| / scale for any element; scale comes from reference.py."""
    max_relative_frobenius: float
    """Largest allowed ‖got − expected‖ / ‖expected‖ over the whole output."""
    allclose: tuple[float, float] | None = None
    """(atol, rtol) for outputs checked by Check.ALLCLOSE: an official challenge's own."""


@dataclass(frozen=True)
class Limits:
    compile_s: float
    case_s: float
    """One call of the entry point on a GPU."""
    timing_budget_s: float
    job_s: float
    """The whole job on a GPU: the compile and every call, correctness and timing. Without it a solve
    that sleeps just under `case_s` at every call was accepted after many minutes, holding a GPU.
    The emulator adds to it as it adds to `case_s` (backends: `job_limit`)."""


@dataclass(frozen=True)
class RandomShapes:
    count: int
    ranges: dict[str, tuple[int, int]]
    max_flops: float | None = None
    """A draw whose flops exceed this is shrunk (a compute-bound challenge's budget)..."""
    max_bytes: float | None = None
    """...or whose bytes exceed this (a memory-bound one's). Exactly one of the two is set."""

    def budget(self, reference: "Reference") -> tuple[Callable[[dict[str, int]], float], float]:
        """The cost function and the limit random draws are shrunk under."""
        if self.max_flops is not None:
            return reference.flops, self.max_flops
        return reference.bytes, self.max_bytes


@dataclass(frozen=True)
class ReferenceFunction:
    """One function of reference.py, called through this wrapper so that whatever it raises becomes a
    SpecError naming reference.py and the function: the challenge is broken, not the submission, and
    not the grader. Without it a `SystemExit(0)` deep in a reference would end `grader run` with status
    0, as if the submission had been accepted.

    Passed through unchanged: KeyboardInterrupt (Ctrl-C stays Ctrl-C), MemoryError (running out of
    memory is the machine's state, which another process may cause, not a bug of the reference) and
    GraderError (the grader's own helpers, which a reference may call, already say what went wrong)."""

    path: Path
    name: str
    function: Callable[..., Any]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return self.function(*args, **kwargs)
        except (KeyboardInterrupt, MemoryError, GraderError):
            raise
        except BaseException as exc:  # SystemExit included: see the class docstring
            raise SpecError(self.path, self.name, f"raised {_describe(exc)} when the grader called it",
                            hint=f"fix {self.name} in {self.path.name}: it must return its result, "
                                 "not raise or exit") from exc


@dataclass(frozen=True)
class Reference:
    """The functions of a challenge's reference.py (trusted code), each a ReferenceFunction."""

    generate: Callable[[dict[str, int], np.random.Generator], dict[str, np.ndarray]]
    reference: Callable[[dict[str, Any], Any], dict[str, Any]]
    error_scale: Callable[[dict[str, Any], Any], dict[str, Any]]
    flops: Callable[[dict[str, int]], float] | None
    bytes: Callable[[dict[str, int]], float] | None
    baseline: Callable[[dict[str, Any], Any], dict[str, Any]] | None
    variants: Callable[[dict[str, Any], np.random.Generator], dict[str, Any]] | None = None
    """Optional: the answer recomputed by correct and wrong methods, for `grader check` (grader/kit.py)."""
    estimated: bool = False
    """`flops` and `bytes` are estimates (an official challenge's buffer sizes and PyTorch's count): they size
    the emulator's limits and show a share of the hardware's rates, but never call a timing impossible."""


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
    require: tuple[expr.Expression, ...] = ()
    """Conditions on the dimensions every case meets (`kernel_size <= input_size`)."""
    leetgpu: str | None = None
    """The folder name of the same problem in LeetGPU's official repository (`13_histogramming`): another name
    for this challenge wherever a slug is taken."""
    extras: tuple[Shape, ...] = ()
    """Cases beyond the challenge's own, run after them and reported apart, counted in the verdict only where
    the run is strict: an official challenge's checks that LeetGPU's judge does not make (Given.strict)."""
    notes: tuple[str, ...] = ()
    """What a report should say about how this challenge is graded (an official challenge's differences)."""
    origin: Origin = Origin.GRADER
    """Whose challenge it is: the grader's own (a folder of challenges/) or LeetGPU's, read from a checkout."""
    statement_file: str = "statement.md"
    """The statement, relative to `root`: Markdown for the grader's own, HTML (challenge.html) for LeetGPU's."""
    starter_file: str = "starter.cu"
    """The starter a student begins from, relative to `root`."""

    @property
    def dims(self) -> tuple[str, ...]:
        """The int parameters: a case's dimensions."""
        return tuple(p.name for p in self.params if p.dimension)

    @property
    def scalars(self) -> tuple[Param, ...]:
        """The float parameters, whose values are drawn or fixed per case."""
        return tuple(p for p in self.params if p.value is not None)

    @property
    def inputs(self) -> tuple[Param, ...]:
        """Buffers only read: a write into one is INPUT_MODIFIED."""
        return tuple(p for p in self.params if p.role is Role.INPUT)

    @property
    def outputs(self) -> tuple[Param, ...]:
        """Buffers compared after the call: outputs and inouts."""
        return tuple(p for p in self.params if p.role in (Role.OUTPUT, Role.INOUT))

    @property
    def generated(self) -> tuple[Param, ...]:
        """Buffers `generate` fills: inputs and inouts."""
        return tuple(p for p in self.params if p.role in (Role.INPUT, Role.INOUT))

    def valid(self, dims: dict[str, int]) -> str | None:
        """None when a case of these dimensions can be run, else why not: a `require` condition it
        breaks, or a buffer extent below 1."""
        try:
            for condition in self.require:
                if not condition(dims):
                    return f"breaks require: {condition}"
            for p in self.params:
                if p.ctype.pointer and min(p.extent(dims)) < 1:
                    return f"{p.name} would have shape {p.extent(dims)}: every extent must be 1 or more"
        except ZeroDivisionError:
            return "an expression divides by zero"
        return None

    def prototype(self) -> str:
        """The C declaration a submission must match, e.g. `void solve(const float* A, ...)`."""
        args = ", ".join(f"{p.ctype.text} {p.name}" for p in self.params)
        return f"void {self.entry}({args})"

    @property
    def statement_path(self) -> Path:
        return self.root / self.statement_file

    @property
    def starter_path(self) -> Path:
        return self.root / self.starter_file


# --------------------------------------------------------------------------- locating


def list_challenges(challenges_dir: Path) -> list[str]:
    if not challenges_dir.is_dir():
        return []
    return sorted(p.name for p in challenges_dir.iterdir() if (p / SPEC_FILE).is_file())


def load_all(challenges_dir: Path, slugs: tuple[str, ...] = ()) -> dict[str, Challenge]:
    """The challenges named (all of the folder's when none are), by slug, in the order given."""
    return {slug: load(challenges_dir, slug) for slug in slugs or tuple(list_challenges(challenges_dir))}


def load(challenges_dir: Path, slug: str) -> Challenge:
    root = challenges_dir / slug
    if not (root / SPEC_FILE).is_file() and re.fullmatch(r"\d+_[a-z0-9_]+", slug):
        loaded = (parse(challenges_dir / name) for name in list_challenges(challenges_dir))
        same = next((c for c in loaded if c.leetgpu == slug), None)  # LeetGPU's name of one of ours
        if same is not None:
            return same
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
        raw = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        raise SpecError(path, None, f"not valid YAML: {exc}") from exc
    for name in TEXT_FILES:
        if (root / name).is_file():
            read_text(root / name)
    top = _Fields(path, "", raw)
    params = _params(path, top.get("parameters", list))
    dims = tuple(p.name for p in params if p.dimension)
    scalars = tuple(p.name for p in params if p.value is not None)
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
        entry=_identifier(path, "entry", top.get("entry", str, "solve")),
        params=params,
        tolerance=_tolerance(top.sub("tolerance")),
        limits=_limits(top.sub("limits")),
        functional_version=functional.positive("version", int),
        functional=_shapes(functional, dims, scalars),
        randomized=_random_shapes(top.sub("randomized"), dims),
        performance_version=performance.positive("version", int),
        performance=_shapes(performance, dims, scalars),
        baseline_label=baseline_label,
        reference=_load_reference(root / REFERENCE_FILE, need_baseline=baseline_label is not None),
        levels=_levels(path, root, top.get("levels", list, [])),
        require=_require(path, top.get("require", list, []), set(dims)),
        leetgpu=_leetgpu_name(path, top.get("leetgpu", str, None)),
    )
    for fields in (top, functional, performance):
        fields.finish()
    _check_budget(challenge)
    _check_cases(challenge)
    return challenge


def _check_budget(challenge: Challenge) -> None:
    """randomized.max_flops needs flops() in reference.py, max_bytes needs bytes()."""
    cost, _ = challenge.randomized.budget(challenge.reference)
    if cost is None:
        key = "max_flops" if challenge.randomized.max_flops is not None else "max_bytes"
        needed = "flops" if key == "max_flops" else "bytes"
        raise SpecError(challenge.root / SPEC_FILE, f"randomized.{key}", f"{challenge.root / REFERENCE_FILE} defines "
                        f"no {needed}(dims) to measure a draw by", hint=f"define {needed}(dims) in reference.py, or "
                        "budget the draws by the work function it has")


def read_text(path: Path) -> str:
    """A challenge file as UTF-8 text (a byte-order mark allowed); anything else is a SpecError saying
    where the first undecodable byte is, rather than a crash in whatever reads the file later."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SpecError(path, None, f"cannot be read: {exc.strerror}", hint="check the file's permissions") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SpecError(path, None, f"not UTF-8 text: byte {data[exc.start]:#04x} on line {line} cannot be decoded",
                        hint="save the file as UTF-8") from exc


def _identifier(path: Path, key: str, name: str) -> str:
    """A name that goes into the C prototype a submission must match, so it must be one C accepts."""
    if not IDENTIFIER.fullmatch(name):
        raise SpecError(path, key, f"{name!r} is not a C identifier",
                        hint="use ASCII letters, digits and underscores, not starting with a digit")
    if name in RESERVED_NAMES:
        raise SpecError(path, key, f"{name!r} is a C/C++ keyword or a CUDA built-in variable", hint="rename it")
    return name


def _params(path: Path, raw: list) -> tuple[Param, ...]:
    params: list[Param] = []
    seen: dict[str, int] = {}
    for i, item in enumerate(raw):
        fields = _Fields(path, f"parameters[{i}]", item)
        name = _identifier(path, fields.key("name"), fields.get("name", str))
        if name in seen:
            raise SpecError(path, fields.key("name"), f"{name!r} is already the name of parameters[{seen[name]}]",
                            hint="every parameter needs a name of its own")
        seen[name] = i
        text = fields.get("type", str)
        ctype = c_type(text)
        if ctype is None:
            raise SpecError(path, fields.key("type"), f"unsupported type {text!r}", hint=f"supported: {SUPPORTED_TYPES}")
        if not ctype.pointer and name == "name":
            raise SpecError(path, fields.key("name"), "a scalar parameter cannot be called 'name': the shapes "
                                                      "in functional and performance use that key for a label",
                            hint="rename it")
        params.append(_pointer(fields, name, ctype) if ctype.pointer else _scalar(fields, name, ctype))
        fields.finish()
    dims = {p.name for p in params if p.dimension}
    for i, item in enumerate(raw):
        if params[i].ctype.pointer:
            params[i] = _with_shape(path, f"parameters[{i}]", params[i], item["shape"], dims)
    if not any(p.role in (Role.OUTPUT, Role.INOUT) for p in params):
        raise SpecError(path, "parameters", "no output parameter", hint="give a buffer the role output or inout")
    return tuple(params)


def _pointer(fields: _Fields, name: str, ctype: CType) -> Param:
    role_text = fields.get("role", str)
    try:
        role = Role(role_text)
    except ValueError:
        raise SpecError(fields.path, fields.key("role"), f"expected input, output or inout, got {role_text!r}")
    if (role is Role.INPUT) != ctype.const:
        need = "must be const" if role is Role.INPUT else "must not be const (solve writes it)"
        raise SpecError(fields.path, fields.key("type"), f"an {role.value} pointer {need}")
    fields.get("shape", list)  # parsed once every dimension is known (_with_shape)
    check = None
    if role is not Role.INPUT:
        text = fields.get("check", str, ctype.element.default_check.value)
        try:
            check = Check(text)
        except ValueError:
            check = None
        if check is None or check is Check.ALLCLOSE:  # allclose is LeetGPU's, for its official challenges
            raise SpecError(fields.path, fields.key("check"), f"unknown check {text!r}",
                            hint=f"one of {', '.join(c.value for c in Check if c is not Check.ALLCLOSE)}")
    elif "check" in fields.raw:
        raise SpecError(fields.path, fields.key("check"), "an input is not compared", hint="remove the key")
    return Param(name, ctype, role, (), check)


def _scalar(fields: _Fields, name: str, ctype: CType) -> Param:
    if ctype.text == "int":
        return Param(name, ctype)
    raw = fields.get("value", (float, dict))
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise SpecError(fields.path, fields.key("value"), f"expected a finite number, got {raw!r}")
        return Param(name, ctype, value=ScalarValue(fixed=raw))
    value = _Fields(fields.path, fields.key("value"), raw)
    pair = value.get("uniform", list)
    numbers = [_as_float(v) for v in pair]
    if len(numbers) != 2 or not all(isinstance(v, float) and math.isfinite(v) for v in numbers) \
            or numbers[0] > numbers[1]:
        raise SpecError(fields.path, value.key("uniform"), f"expected [low, high] with low <= high, got {pair!r}")
    value.finish()
    return Param(name, ctype, value=ScalarValue(low=numbers[0], high=numbers[1]))


def _with_shape(path: Path, where: str, param: Param, raw: list, dims: set[str]) -> Param:
    if not raw:
        raise SpecError(path, f"{where}.shape", "a buffer needs at least one extent",
                        hint="name the int parameters that give its size, e.g. [M, K]")
    shape = []
    for j, extent in enumerate(raw):
        key = f"{where}.shape[{j}]"
        if isinstance(extent, bool) or not isinstance(extent, (int, str)) or isinstance(extent, int) and extent < 1:
            raise SpecError(path, key, "expected an int parameter's name, a size of 1 or more, or an expression; "
                                       f"got {extent!r}")
        try:
            shape.append(expr.parse(str(extent), dims))
        except expr.ExpressionError as exc:
            raise SpecError(path, key, str(exc),
                            hint=f"int parameters: {', '.join(sorted(dims)) or 'none'}; {expr.HINT}") from exc
    return dataclasses.replace(param, shape=tuple(shape))


def _leetgpu_name(path: Path, name: str | None) -> str | None:
    if name is not None and not re.fullmatch(r"\d+_[a-z0-9_]+", name):
        raise SpecError(path, "leetgpu", f"{name!r} is not a LeetGPU folder name", hint="e.g. 13_histogramming")
    return name


def _require(path: Path, raw: list, dims: set[str]) -> tuple[expr.Expression, ...]:
    conditions = []
    for i, text in enumerate(raw):
        if not isinstance(text, str):
            raise SpecError(path, f"require[{i}]", f"expected a condition as text, got {text!r}")
        try:
            conditions.append(expr.parse(text, dims, condition=True))
        except expr.ExpressionError as exc:
            raise SpecError(path, f"require[{i}]", str(exc), hint=expr.HINT) from exc
    return tuple(conditions)


def _check_cases(challenge: Challenge) -> None:
    """Every fixed case can be run: it meets `require`, and every buffer has extents of 1 or more."""
    path = challenge.root / SPEC_FILE
    for group, shapes in (("functional", challenge.functional), ("performance", challenge.performance)):
        for index, shape in enumerate(shapes):
            problem = challenge.valid(shape.dims)
            if problem:
                raise SpecError(path, f"{group}.cases[{index}]", f"case {shape.label()} {problem}",
                                hint="change the case, or the condition")


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
                    fields.positive("timing_budget_s", float), fields.positive("job_s", float))
    fields.finish()
    return limits


def _shapes(fields: _Fields, dims: tuple[str, ...], scalars: tuple[str, ...] = ()) -> tuple[Shape, ...]:
    shapes = []
    for i, item in enumerate(fields.get("cases", list)):
        case = _Fields(fields.path, f"{fields.key('cases')}[{i}]", item)
        name = case.get("name", str, "")
        sizes = {d: case.positive(d, int) for d in dims}
        values = {s: float(np.float32(_finite(case, s))) for s in scalars if s in case.raw}
        case.finish()
        shapes.append(Shape(sizes, name, values))
    if not shapes:
        raise SpecError(fields.path, fields.key("cases"), "needs at least one case")
    return tuple(shapes)


def _finite(fields: _Fields, name: str) -> float:
    value = fields.get(name, float)
    if not math.isfinite(value):
        raise SpecError(fields.path, fields.key(name), f"expected a finite number, got {value!r}")
    return value


def _random_shapes(fields: _Fields, dims: tuple[str, ...]) -> RandomShapes:
    ranges_fields = fields.sub("ranges")
    ranges = {}
    for d in dims:
        pair = ranges_fields.get(d, list)
        whole = all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
        if len(pair) != 2 or not whole or not 1 <= pair[0] <= pair[1]:
            raise SpecError(fields.path, ranges_fields.key(d), f"expected [low, high] with 1 <= low <= high, got {pair!r}")
        ranges[d] = (pair[0], pair[1])
    ranges_fields.finish()
    count = fields.get("count", int)
    if count < 0:
        raise SpecError(fields.path, fields.key("count"), f"must be 0 or more, got {count}")
    budgets = [key for key in ("max_flops", "max_bytes") if key in fields.raw]
    if len(budgets) != 1:
        raise SpecError(fields.path, fields.key("max_flops"), "give exactly one of max_flops and max_bytes "
                        f"(found {', '.join(budgets) or 'neither'})",
                        hint="max_flops with a flops() in reference.py, max_bytes with a bytes()")
    random_shapes = RandomShapes(count, ranges, **{budgets[0]: fields.positive(budgets[0], float)})
    fields.finish()
    return random_shapes


def _load_reference(path: Path, need_baseline: bool) -> Reference:
    if not path.is_file():
        raise SpecError(path, None, "missing", hint="every challenge needs a reference.py")
    read_text(path)  # Python would say "SyntaxError"; this says which byte is not UTF-8
    module = import_file(path)
    missing = [f for f in REFERENCE_FUNCTIONS if not callable(getattr(module, f, None))]
    if need_baseline and not callable(getattr(module, "baseline", None)):
        missing.append("baseline")
    if missing:
        raise SpecError(path, missing[0], "function not defined",
                        hint=f"reference.py must define {', '.join(REFERENCE_FUNCTIONS)}")
    if not any(callable(getattr(module, f, None)) for f in WORK_FUNCTIONS):
        raise SpecError(path, "flops", "neither flops nor bytes is defined",
                        hint="define flops(dims) (floating-point operations of a shape), bytes(dims) (bytes a "
                             "kernel must move at least), or both")
    optional = ("baseline", "variants", *WORK_FUNCTIONS)
    wrapped = {name: ReferenceFunction(path, name, getattr(module, name)) for name in REFERENCE_FUNCTIONS}
    wrapped.update({name: ReferenceFunction(path, name, getattr(module, name))
                    if callable(getattr(module, name, None)) else None for name in optional})
    return Reference(**wrapped)


def import_file(path: Path) -> ModuleType:
    """Run a challenge's Python file (reference.py; variants.py for `grader check`). The file is trusted but
    may still be broken, and whatever its top level raises is reported as the challenge's fault: an
    exception, and also SystemExit (which would otherwise end the grader quietly, with the status the file
    chose) and KeyboardInterrupt raised by the file itself. A real Ctrl-C in the few milliseconds of the
    import is reported the same way."""
    suffix = "" if path.name == REFERENCE_FILE else f"_{path.stem}"
    spec = importlib.util.spec_from_file_location(f"grader_challenge_{path.parent.name}{suffix}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        raise SpecError(path, None, f"raised {_describe(exc)} at import",
                        hint=f"run `python {path}` to see the traceback, and fix the file") from exc
    return module


def _describe(exc: BaseException, limit_chars: int = 300) -> str:
    text = repr(exc)
    return text if len(text) <= limit_chars else text[:limit_chars] + "…"


# --------------------------------------------------------------------------- fitting a machine


def buffer_bytes(challenge: Challenge, dims: dict[str, int]) -> int:
    """The bytes of all of a case's buffers (inputs and outputs) at these dimensions."""
    return sum(math.prod(p.extent(dims)) * p.ctype.dtype.itemsize for p in challenge.params if p.ctype.pointer)


def check_fits(challenge: Challenge, memory_bytes: int, where: str) -> None:
    """A SpecError for the first shape whose buffers alone need more than `memory_bytes` (the memory of
    `where`, e.g. "this GPU (NVIDIA H100)"). Checked before grading, because a case that cannot be
    allocated fails every submission the same way, halfway through, with an allocator's message.
    The buffers are a lower bound (the reference's own arrays and the guards come on top)."""
    path = challenge.root / SPEC_FILE
    for key, shape in _shapes_to_fit(challenge):
        need = buffer_bytes(challenge, shape.dims)
        if need > memory_bytes:
            raise SpecError(path, key, f"shape {shape.label()} needs {_size(need)} for its buffers alone, more than "
                                       f"the {_size(memory_bytes)} of {where}",
                            hint="make the shape smaller, or grade on a machine with more memory")


def _shapes_to_fit(challenge: Challenge):
    """(key, shape) for every fixed shape, and for the randomized ranges the largest shape they can draw
    when that is bounded: every dimension at its high end, which `random_shapes` can draw only when it
    stays within its budget, max_flops or max_bytes (a draw above it is shrunk, by how much depends on
    the draw). When it does
    not, the randomized shapes are not checked: no tight bound is known."""
    for index, shape in enumerate(challenge.functional):
        yield f"functional.cases[{index}]", shape
    for index, shape in enumerate(challenge.performance):
        yield f"performance.cases[{index}]", shape
    r = challenge.randomized
    largest = {d: high for d, (_, high) in r.ranges.items()}
    cost, limit = r.budget(challenge.reference)
    if r.count and largest and cost is not None and cost(dict(largest)) <= limit:
        yield "randomized.ranges", Shape(largest, "largest random")


def _size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
