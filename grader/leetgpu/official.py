"""An official challenge as the grading pipeline takes it: a grader.spec.Challenge built from the checkout's
file and its cases.

- Parity: the example, the functional cases and the performance case, as the file makes them (its own values,
  outputs as it fills them), compared by LeetGPU's rule (|x − r| ≤ atol + rtol·|r| against the file's
  reference) and run once each: the verdict LeetGPU's judge would give.
- Extras (`Challenge.extras`, reported apart, counted only in a strict run): the functional cases drawn again
  with another seed (values only: the shapes are the file's), outputs arriving filled with NaN instead of
  zeros, "in" buffers checked unmodified, every thread order the backend runs (the emulator's race check).
- A buffer's extents are the file's tensors' shapes, looked up by the case's int parameters (`Extent`): a file
  whose sizes the int parameters do not decide cannot be called by a `solve` that only gets those.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader import spec
from grader.errors import GraderError
from grader.leetgpu import checkout, loader
from grader.leetgpu.loader import FileCase, Loaded, Which

LIMITS = spec.Limits(compile_s=120.0, case_s=20.0, timing_budget_s=2.0, job_s=300.0)
"""LeetGPU's files state no limits; these are the grader's usual ones for a challenge (matmul's), with a longer
job bound: a file's functional cases reach its performance sizes (matmul's 8192×6144×4096 among them)."""
BASELINE_LABEL = "PyTorch reference"
STRICT_SEED_SALT = 27
"""Mixed into the run's seed for the extras' draws: other values than the parity cases', as reproducible."""


class Unsupported(GraderError):
    """The official challenge cannot be graded here (a type the grader has no buffer for, several GPUs, sizes
    the int parameters do not decide): the verdict is UNSUPPORTED with this reason."""


@dataclass(frozen=True)
class Extent:
    """One axis of one buffer in every case, by the case's int parameters: the shape the file's tensor has
    (`axis` None: its whole element count, for a buffer whose number of dimensions differs between cases, a
    matrix in one and the same data flattened in another; `solve` gets a pointer either way)."""

    param: str
    axis: int | None
    shapes: "Shapes"

    def __call__(self, dims: dict[str, int]) -> int:
        shape = self.shapes.of(dims)[self.param]
        return math.prod(shape) if self.axis is None else shape[self.axis]

    def __str__(self) -> str:
        return f"{self.param}.shape[{self.axis}] (the file's)" if self.axis is not None else f"{self.param}.numel()"


@dataclass(frozen=True)
class Shapes:
    """Every buffer's shape in each case, by the case's int parameters (which must decide them)."""

    table: tuple[tuple[tuple[tuple[str, int], ...], dict[str, tuple[int, ...]]], ...]

    def of(self, dims: dict[str, int]) -> dict[str, tuple[int, ...]]:
        key = _key(dims)
        for known, shapes in self.table:
            if known == key:
                return shapes
        raise GraderError(f"no case of the file has the sizes {dict(key)}: the buffers' shapes are not known")


def _key(dims: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((name, int(value)) for name, value in dims.items()))


def device_for(backend_name: str) -> str:
    """Where the file's tensors and reference live: the GPU's device where the submission runs on one."""
    return "cuda" if backend_name == "cuda" else "cpu"


def same_problem(challenges_dir: Path, slug: str) -> Path | None:
    """The folder of the grader's own challenge that is this official one (its `leetgpu:` name), if any."""
    for name in spec.list_challenges(challenges_dir):
        try:
            if spec.parse(challenges_dir / name).leetgpu == slug:
                return challenges_dir / name
        except GraderError:
            continue
    return None


@functools.lru_cache(maxsize=4)
def challenge(root: Path, slug: str, seed: int, device: str = "cpu", ladder: Path | None = None) -> spec.Challenge:
    """The official challenge `slug` of the checkout at `root`, its cases drawn with `seed`. Raises Unsupported
    with the reason where it cannot be graded here. Made once per (checkout, slug, seed, device, ladder) in a
    process: the command line and the job it starts share it.

    `ladder`: a folder of the grader's own challenges (challenge.yaml with levels) whose reference ladder the
    submission is placed on, measured at this challenge's performance case: ours for the same problem by
    default (`same_problem`), or one an instructor attaches; used where its solve has the same parameters."""
    official = checkout.find(root, slug)
    if official is None:
        raise GraderError(f"no official challenge {slug!r} in {root}")
    if official.num_gpus is not None and official.num_gpus > 1:
        raise Unsupported(f"{slug} needs {official.num_gpus} GPUs; the grader runs a submission on one")
    mapped = checkout.mapped(official)
    if mapped.unsupported:
        raise Unsupported(f"{slug}: {mapped.unsupported}")
    loaded = loader.load(official, device)
    bare = _params(official, mapped)
    parity = [*loaded.cases(Which.EXAMPLE, seed), *loaded.cases(Which.FUNCTIONAL, seed)]
    performance = loaded.cases(Which.PERFORMANCE, seed)
    strict = loaded.cases(Which.FUNCTIONAL, _strict_seed(seed))
    every = [*parity, *performance, *strict]
    _check_types(slug, bare, every)
    shapes = _shapes(slug, bare, every)
    params = _with_extents(bare, shapes, every)
    counts = _Counts(params, loaded, every)
    rule = (official.atol or 0.0, official.rtol or 0.0)
    answers = _Answers(loaded, params, shapes, rule)
    levels, ladder_notes = _ladder(ladder, params)
    return spec.Challenge(
        slug=slug, title=official.title or slug, version=1, root=official.folder, entry="solve", params=params,
        tolerance=spec.Tolerance(1.0, math.inf, rule), limits=LIMITS,
        functional_version=1, functional=tuple(_shape(case, bare) for case in parity),
        randomized=spec.RandomShapes(0, {}, max_bytes=0.0), performance_version=1,
        performance=tuple(_shape(case, bare) for case in performance), baseline_label=BASELINE_LABEL,
        reference=spec.Reference(generate=_no_draws, reference=answers.reference, error_scale=answers.widening,
                                 flops=counts.flops, bytes=counts.bytes,
                                 baseline=functools.partial(_baseline, loaded, params, shapes), estimated=True),
        extras=tuple(_shape(case, bare, strict=True, suffix=" reseeded") for case in strict),
        levels=levels, notes=mapped.notes + ladder_notes, origin=spec.Origin.LEETGPU,
        statement_file=checkout.STATEMENT_FILE, starter_file=str(checkout.STARTER_FILE))


def _ladder(folder: Path | None, params: tuple[spec.Param, ...]) -> tuple[tuple[spec.Level, ...], tuple[str, ...]]:
    """The levels of the grader's challenge in `folder`, where its solve takes the same parameters."""
    if folder is None:
        return (), ()
    ours = spec.parse(folder)
    if [p.ctype.canonical for p in ours.params] != [p.ctype.canonical for p in params]:
        return (), (f"the ladder of {ours.slug} is not used: its solve takes other parameters",)
    return ours.levels, (f"its ladder: the grader's {ours.slug} ({len(ours.levels)} levels), each level timed at this "
                         "challenge's performance case where a GPU times the submission",)


def _strict_seed(seed: int) -> int:
    return int(np.random.SeedSequence([seed, STRICT_SEED_SALT]).generate_state(1, np.uint64)[0] >> 1)


def _params(official: checkout.Official, mapped: checkout.Mapped) -> tuple[spec.Param, ...]:
    """The parameters without extents: types as the starter writes them, roles as the file says."""
    params = []
    for name, written, role in mapped.params:
        ctype = spec.c_type(written)
        if not ctype.pointer:
            value = spec.ScalarValue(fixed=0.0) if ctype.text == "float" else None
            params.append(spec.Param(name, ctype, value=value))
            continue
        kind = spec.Role(role)
        check = spec.Check.ALLCLOSE if kind is not spec.Role.INPUT else None
        params.append(spec.Param(name, ctype, kind, (), check))
    return tuple(params)


def _check_types(slug: str, params: tuple[spec.Param, ...], cases: list[FileCase]) -> None:
    """Every tensor of the element type the starter declares (a 16-bit float's width says half or bfloat16
    only with the tensor's dtype), every int parameter an int."""
    for case in cases:
        for p in params:
            if p.ctype.pointer:
                got = case.arrays[p.name].dtype
                if got != p.ctype.element.dtype:
                    raise Unsupported(f"{slug}: {p.name} is a {got} tensor in case {case.name!r} but the starter "
                                      f"declares {p.ctype.text}")
            elif p.dimension and not isinstance(case.scalars.get(p.name), int):
                raise Unsupported(f"{slug}: {p.name} is not an int in case {case.name!r}")


def _shapes(slug: str, params: tuple[spec.Param, ...], cases: list[FileCase]) -> Shapes:
    """The first case's shapes for each set of int parameters; another case with the same ones may hold the
    same number of elements in another shape (flattened), not another number."""
    table: dict = {}
    for case in cases:
        shapes = {name: array.shape or (1,) for name, array in case.arrays.items()}
        before = table.setdefault(_key(_dims(case, params)), shapes)
        differs = [name for name in shapes if math.prod(before[name]) != math.prod(shapes[name])]
        if differs:
            raise Unsupported(f"{slug}: {differs[0]}'s size is not decided by the int parameters ("
                              f"{dict(_key(_dims(case, params)))} gives both {before[differs[0]]} and {shapes[differs[0]]})")
    return Shapes(tuple(table.items()))


def _with_extents(params: tuple[spec.Param, ...], shapes: Shapes, cases: list[FileCase]) -> tuple[spec.Param, ...]:
    found = []
    for p in params:
        if not p.ctype.pointer:
            found.append(p)
            continue
        ranks = {case.arrays[p.name].ndim or 1 for case in cases}
        axes = range(ranks.pop()) if len(ranks) == 1 else (None,)
        found.append(spec.Param(p.name, p.ctype, p.role, tuple(Extent(p.name, axis, shapes) for axis in axes), p.check))
    return tuple(found)


def _dims(case: FileCase, params: tuple[spec.Param, ...]) -> dict[str, int]:
    return {p.name: int(case.scalars[p.name]) for p in params if p.dimension}


def _shape(case: FileCase, params: tuple[spec.Param, ...], strict: bool = False, suffix: str = "") -> spec.Shape:
    values = {p.name: float(np.float32(case.scalars[p.name])) for p in params if p.value is not None}
    return spec.Shape(_dims(case, params), case.name + suffix, values, spec.Given(case.arrays, strict))


def _no_draws(dims, rng):
    raise GraderError("an official challenge's cases are the file's own: none is drawn")


WIDEN_MARGIN = 2.0
"""Where the file's own FP32 reference misses its rule against the exact answer by a factor f, a submission is
held to the rule widened 2f× against the exact answer: as accurate as PyTorch's FP32, with room for another
summation order."""


class _Answers:
    """The expected outputs of each case: the file's reference_impl on its inputs, outputs starting as zeros
    (as the file's tests make them) in the case's own shapes.

    LeetGPU's rule is fixed per challenge, but FP32 rounding grows with the size: at some files' performance
    sizes the file's own FP32 reference misses its rule against the exact answer (measured with PyTorch on a
    CPU: 12_multi_head_attention's 1024×1024×16, 32,000 elements up to 19×; 53_casual_attention's 5000×128 up
    to 11,600×), so a correct FP32 kernel that sums in another order fails it by chance. There the output is
    compared with the FP64 evaluation of the same reference, the rule widened WIDEN_MARGIN × that factor
    (`widening`, per output, read by the pipeline as the case's error scale). Everywhere else the rule and the
    file's reference stand as they are: the verdict LeetGPU's judge gives."""

    def __init__(self, loaded: Loaded, params: tuple[spec.Param, ...], shapes: Shapes, rule: tuple[float, float]):
        self.loaded, self.params, self.shapes, self.rule = loaded, params, shapes, rule
        self._widened: dict[int, dict[str, np.ndarray]] = {}

    def reference(self, given: dict, xp) -> dict:
        own = self.shapes.of({p.name: given[p.name] for p in self.params if p.dimension})
        own = {**own, **{name: given[name].shape for name in own if name in given}}
        expected = self.loaded.reference(self.params, given, own)
        exact = self.loaded.reference64(self.params, given, own) or {}
        widened = {}
        for name, answer in exact.items():
            factor = _shortfall(expected[name], answer, *self.rule)
            if factor > 1.0:
                expected[name], widened[name] = answer, np.array(WIDEN_MARGIN * factor)
        self._widened[id(given)] = widened
        return expected

    def widening(self, given: dict, xp) -> dict:
        """The factor each output's rule is widened by at the case `reference` just answered (by `given`)."""
        return self._widened.pop(id(given), {})


def _shortfall(approximate: np.ndarray, exact: np.ndarray, atol: float, rtol: float) -> float:
    """How many times over its allowance the FP32 reference's worst element is, against the exact answer
    (1 or less: within the rule; where no finite factor says it, 1: the rule stands)."""
    if approximate.dtype != np.float32:
        return 1.0
    exact = exact.astype(np.float64)
    finite = np.isfinite(exact) & np.isfinite(approximate)
    allowance = atol + rtol * np.abs(exact[finite])
    error = np.abs(approximate[finite].astype(np.float64) - exact[finite])
    if not error.size or np.any((allowance == 0) & (error > 0)):
        return 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        worst = float(np.nanmax(np.where(allowance > 0, error / allowance, 0.0)))
    return worst if math.isfinite(worst) else 1.0


def _baseline(loaded: Loaded, params: tuple[spec.Param, ...], shapes: Shapes, inputs: dict, xp) -> dict:
    """The file's reference_impl on the device arrays (CuPy's, shared with PyTorch without a copy), for timing."""
    torch = loader.torch_module()
    given = {name: torch.from_dlpack(value) if hasattr(value, "__dlpack__") else value for name, value in inputs.items()}
    case = shapes.of({p.name: given[p.name] for p in params if p.dimension})
    tensors = {}
    for p in params:
        if p.role is spec.Role.OUTPUT:
            tensors[p.name] = torch.empty(case[p.name], dtype=loader.torch_dtype(p.ctype.element), device="cuda")
        elif p.role is not None and p.ctype.element.name == "__nv_bfloat16":
            tensors[p.name] = given[p.name].view(torch.bfloat16).reshape(case[p.name])
        elif p.role is not None:
            tensors[p.name] = given[p.name].reshape(case[p.name])
        else:
            tensors[p.name] = given[p.name]
    loaded.instance.reference_impl(**tensors)
    return {}


class _Counts:
    """A case's bytes (every buffer once) and flops (PyTorch's count of the reference), by its int parameters:
    estimates that size the emulator's limits and show a share of the hardware's rates."""

    def __init__(self, params: tuple[spec.Param, ...], loaded: Loaded, cases: list[FileCase]):
        self._bytes = {_key(_dims(c, params)): float(sum(a.nbytes for a in c.arrays.values())) for c in cases}
        self._flops: dict = {}
        for case in cases:
            key = _key(_dims(case, params))
            if key not in self._flops:
                self._flops[key] = loader.flops(loaded, params, case)

    def bytes(self, dims: dict[str, int]) -> float:
        return self._bytes.get(_key(dims), 0.0)

    def flops(self, dims: dict[str, int]) -> float:
        return self._flops.get(_key(dims)) or 0.0
