"""What a grading run produced: plain frozen dataclasses, passed from the pipeline to the report
(and later the store). `to_json` turns any of them into JSON-ready data.

A run graded with a class's secret seed is `secret`: its randomized shapes, drawn from that seed,
are what a student cannot tune a kernel for, so they (and the seed) stay with the instructor.
`public` (for a GradeReport) and `public_json` (for a report as stored) give what a student or the
public may see of such a run, built from an allow-list (`PUBLIC_REPORT`: a field is shown only where it
is named), not by removing what is known to be secret from the whole: no seed, the randomized cases as
"hidden case N (randomized)" with their verdict only, nothing that grows with their shapes (wall time,
time inside solve, the emulator's job bound, the submission's output), no build record beyond the
student's own diagnostics, and a message composed from the first failing case's public form (never by
reading the private message). The store keeps everything; the view is made where output is made.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.build import BuildResult
from grader.check import Comparison
from grader.timing import Sources, TimingStats
from grader.verdict import Verdict


GRADER_FAILURE = "the grader failed on this file"
"""How the message of a GRADER_ERROR report begins (grader.job.grader_error). Databases written before
that verdict existed hold such runs as RUNTIME_ERROR with this message: the store reads them back as
GRADER_ERROR."""

class Mode(enum.Enum):
    RUN = "run"
    """Correctness only."""
    SUBMIT = "submit"
    """Correctness, then timing, then the re-check on fresh inputs."""


class CaseKind(enum.Enum):
    FUNCTIONAL = "functional"
    RANDOMIZED = "randomized"
    TIMED = "timed"
    """The output of the timed calls themselves."""
    RECHECK = "recheck"
    """Fresh inputs at the performance shape after timing (defeats replayed answers)."""
    STRICT = "strict"
    """An official challenge's case beyond what LeetGPU's judge checks (reseeded values, outputs filled with
    NaN, inputs checked, every thread order): reported apart, counted in the verdict only in a strict run."""


@dataclass(frozen=True)
class CaseResult:
    kind: CaseKind
    label: str
    dims: dict[str, int]
    verdict: Verdict
    message: str = ""
    comparisons: tuple[Comparison, ...] = ()
    call_s: float | None = None


@dataclass(frozen=True)
class PerformanceResult:
    label: str
    dims: dict[str, int]
    flops: float | None
    """Floating-point operations of the shape, where the challenge counts them (reference.flops)."""
    verdict: Verdict
    message: str = ""
    stats: TimingStats | None = None
    baseline: TimingStats | None = None
    fp32_peak_gflops: float | None = None
    bytes: float | None = None
    """Bytes a kernel must move at least for the shape, where the challenge counts them (reference.bytes)."""
    bandwidth_gbps: float | None = None
    """This GPU's memory bandwidth, measured as a device-to-device copy (read and write counted)."""
    timing: Sources | None = None
    """Which clock the time is from (the events, solve end to end, the grader's), and each clock's median."""

    @property
    def gflops(self) -> float | None:
        return self.flops / (self.stats.median_ms * 1e6) if self.stats and self.flops else None

    @property
    def baseline_gflops(self) -> float | None:
        return self.flops / (self.baseline.median_ms * 1e6) if self.baseline and self.flops else None

    @property
    def gbps(self) -> float | None:
        return self.bytes / (self.stats.median_ms * 1e6) if self.stats and self.bytes else None

    @property
    def percent_of_bandwidth(self) -> float | None:
        if self.gbps is None or not self.bandwidth_gbps:
            return None
        return 100.0 * self.gbps / self.bandwidth_gbps

    @property
    def percent_of_baseline(self) -> float | None:
        if not (self.stats and self.baseline):
            return None
        return 100.0 * self.baseline.median_ms / self.stats.median_ms

    @property
    def percent_of_peak(self) -> float | None:
        if self.gflops is None or not self.fp32_peak_gflops:
            return None
        return 100.0 * self.gflops / self.fp32_peak_gflops


@dataclass(frozen=True)
class JobLimit:
    """How long a whole grading job may take (the compile and every call, correctness and timing), and
    why that long: shown in the report, and in the TIMEOUT message of a job that ran past it."""

    seconds: float | None
    """None only in a public view of a secret run whose bound grows with the shapes (`shape_dependent`)."""
    why: str
    shape_dependent: bool = False
    """The bound grows with the cases' shapes (the emulator's): in a secret run it tells how large the
    hidden randomized shapes are together, so what students see of such a run leaves it out."""


@dataclass(frozen=True)
class Isolation:
    """What confined the submission in this run: the box as the grader built it, and the worker's
    confinement as the grader read it from outside the box once the worker was ready (None where no
    worker started, or where there was no box to read)."""

    boxed: bool
    description: str
    """What the box is (bubblewrap, uid, policy, namespaces...), or why there was none."""
    worker_uid: int | None = None
    seccomp_filters: int | None = None
    """Filters in force on the worker: the box's policy (and the emulator runtime's own)."""
    memory_bytes: int | None = None
    """The worker box's memory bound (a cgroup), where one could be set."""


HIDDEN_JOB_LIMIT = JobLimit(None, "the challenge's bound on a GPU (limits.job_s) plus the emulator's allowance for "
                                  "every case's shape, hidden shapes included, so not shown", True)


@dataclass(frozen=True)
class Parity:
    """How an official LeetGPU challenge was graded: by LeetGPU's rule on the file's own cases (the verdict its
    judge would give), and how the checks beyond its judge went (CaseKind.STRICT cases)."""

    atol: float
    rtol: float
    strict: bool
    """The extra checks counted in the verdict (`--strict`, or the class's setting)."""
    extras_run: int
    extras_failed: int
    first_failure: str = ""
    """The first failing extra check's headline (its label, verdict and message)."""
    notes: tuple[str, ...] = ()
    """How this challenge differs from the grader's own rules (an input its starter leaves writable...)."""
    widened: tuple[str, ...] = ()
    """The cases compared with the rule widened against the exact answer: the file's own FP32 reference misses
    the rule there (grader.leetgpu.official._Answers)."""


@dataclass(frozen=True)
class GradeReport:
    submission: str
    challenge: str
    challenge_version: int
    functional_version: int
    performance_version: int
    mode: Mode
    seed: int | None
    """None in a public view of a secret run."""
    verdict: Verdict
    message: str
    build: BuildResult | None
    cases: tuple[CaseResult, ...]
    performance: tuple[PerformanceResult, ...]
    environment: Any
    baseline_label: str | None
    grader_version: str
    wall_s: float | None
    """None in a public view of a secret run (it grows with the hidden shapes)."""
    kernel_s: float | None
    """Wall time spent inside the submission's calls (timed and untimed), as the grader saw it; None in a
    public view of a secret run."""
    worker_output: str = ""
    placement: Any = None
    """Where the submission stands on the reference ladder (grader.place.Placement), when measured."""
    sanitizer: tuple | None = None
    """compute-sanitizer findings (grader.sanitize.Finding) with --sanitize; () when it found nothing."""
    secret: bool = False
    """Graded with a seed derived from the class's secret seed (the class server, `grader grade`): shown to
    students only through `public`."""
    job_limit: JobLimit | None = None
    """The bound on the whole job this run was graded under; None where none applied (no run reached it)."""
    isolation: Isolation | None = None
    """What confined the submission: the report says what was in force, nothing more."""
    parity: Parity | None = None
    """For an official LeetGPU challenge: its rule, and the checks beyond its judge."""
    libraries: str | None = None
    """The library policy it was graded under (grader.libraries.LibraryPolicy's value); None in reports from
    before there was one, which allowed none."""

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED


# --------------------------------------------------------------------------- what students see of a secret run


def hidden_label(number: int) -> str:
    """The public name of a secret run's randomized case: its place among the randomized cases, no shape."""
    return f"hidden case {number} (randomized)"


def shape_text(dims: dict) -> str:
    """A shape as reports write it: 1358×23×798."""
    return "×".join(str(v) for v in dims.values())


class Keep(enum.Enum):
    VALUE = "the value as it is"
    """A field shown as it is: a number, a string, a name, or a plain mapping or list of them (dims, notes)."""


KEEP = Keep.VALUE


@dataclass(frozen=True)
class Shown:
    """An allow-list for one kind of record (the dataclass `kind`, or the JSON object `to_json` makes of
    it): the fields shown, each by its own rule (KEEP, another Shown, or Each of one). Every other field
    is withheld: left out of the JSON form, and at its default in the object form (or at its `blanks`
    value, for a field the dataclass gives no default). A field added to a report is therefore withheld
    until it is named here, and one added without a default stops `public` until someone decides.
    `composed`: fields the caller composes for the view (a secret run's message, its cases)."""

    kind: str
    fields: dict[str, Keep | Shown | Each]
    composed: tuple[str, ...] = ()
    blanks: dict[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def names(self) -> frozenset[str]:
        """Every field the view of such a record may carry."""
        return frozenset(self.fields) | frozenset(self.composed)


@dataclass(frozen=True)
class Each:
    """A sequence of records, each shown by `record`."""

    record: Shown


def _keep(*names: str) -> dict[str, Keep]:
    return dict.fromkeys(names, KEEP)


_STATS = Shown("TimingStats", _keep("samples_ms", "median_ms", "mean_ms", "min_ms", "max_ms", "q1_ms", "q3_ms", "rse",
                                    "reps", "spread_pct"))
_MISMATCH = Shown("Mismatch", _keep("index", "got", "expected"))
_DIAGNOSTIC = Shown("Diagnostic", _keep("severity", "message", "path", "line", "column"))
_LAG = Shown("Lag", _keep("case", "level", "best_level", "best_cases", "cause", "multiple", "detail", "level_if_matched"))

PUBLIC_BUILD = Shown("BuildResult", {**_keep("status", "message", "notes", "seconds"), "diagnostics": Each(_DIAGNOSTIC)})
"""The build as its student sees it: how it went and the compiler's diagnostics of their own file. Withheld:
the artifact's path in the cache, the compiler's command (the toolchain's and the cache's paths), its whole
log (which quotes the source and names the build folder), and whether the build came from the cache (an
identical file built before, another student's maybe)."""

PUBLIC_CASE = Shown("CaseResult", {**_keep("kind", "label", "dims", "verdict", "message", "call_s"),
                                   "comparisons": Each(Shown("Comparison", {
                                       **_keep("output", "shape", "passed", "scaled_error", "relative_frobenius",
                                               "bad_count", "nonfinite_count", "diagnosis"),
                                       "first_bad": Each(_MISMATCH)}))})
"""A case of a public shape (a functional edge case of challenge.yaml, a performance shape, a re-check of
either): shown whole, its shape being public."""

HIDDEN_CASE = Shown("CaseResult", _keep("kind", "verdict"), composed=("label",), blanks={"dims": {}})
"""A randomized case of a secret run: its name ("hidden case 2 (randomized)") and its verdict, nothing else.
Its shape is the secret; its error sizes give the shape away as soon as a kernel's error grows with it (a
kernel scaling its answer by 1 + N·10⁻⁶ makes its relative error N·10⁻⁶); its message quotes indices,
element counts and limits that follow from the shape, and a crash's message what the submission printed;
its call time grows with the shape."""

PUBLIC_REPORT = Shown("GradeReport", {
    **_keep("submission", "challenge", "challenge_version", "functional_version", "performance_version", "mode",
            "verdict", "baseline_label", "grader_version", "libraries"),
    "build": PUBLIC_BUILD,
    "performance": Each(Shown("PerformanceResult", {
        **_keep("label", "dims", "flops", "verdict", "message", "fp32_peak_gflops", "bytes", "bandwidth_gbps",
                "gflops", "baseline_gflops", "percent_of_baseline", "percent_of_peak", "gbps", "percent_of_bandwidth"),
        "stats": _STATS, "baseline": _STATS,
        "timing": Shown("Sources", _keep("timed_by", "events_ms", "end_to_end_ms", "grader_ms"))})),
    "environment": Shown("Environment", _keep("backend", "gpu", "compute_capability", "driver", "nvcc",
                                              "fp32_peak_gflops", "cupy")),
    "placement": Shown("Placement", {**_keep("level", "levels", "name", "ratio_to_level", "next_level", "next_name",
                                             "ratio_to_next", "next_technique", "ratios", "shape_levels"),
                                     "lag": _LAG}),
    "sanitizer": Each(Shown("Finding", _keep("tool", "what", "where"))),
    "isolation": Shown("Isolation", _keep("boxed", "description", "worker_uid", "seccomp_filters", "memory_bytes")),
    "parity": Shown("Parity", _keep("atol", "rtol", "strict", "extras_run", "extras_failed", "first_failure", "notes",
                                     "widened")),
}, composed=("message", "cases", "job_limit", "secret"), blanks={"seed": None, "wall_s": None, "kernel_s": None})
"""What a student (or anyone) sees of a secret run. Withheld: the seed (it reproduces the hidden shapes),
the wall time and the time inside solve (both grow with the hidden shapes), and what the submission
printed (it ran on them, and can print them). Composed: the cases (each public case by PUBLIC_CASE, each
randomized one by HIDDEN_CASE), a message that names no hidden case's figure, the job's bound (hidden where
it grows with the shapes: the emulator's) and `secret`. The performance shapes, the placement on the
ladder (measured on them), compute-sanitizer's findings (on the functional cases) and the isolation
(sized from the public shapes) are public. Everything else a report may carry is withheld."""

_JOB_LIMIT = Shown("JobLimit", _keep("seconds", "why", "shape_dependent"))


def _shown_json(value: Any, rule: Keep | Shown | Each, **composed: Any) -> Any:
    """`value` (JSON, as `to_json` wrote it, or as an older grader did) as `rule` shows it."""
    if rule is KEEP or value is None:
        return value
    if isinstance(rule, Each):
        return [_shown_json(item, rule.record) for item in value] if isinstance(value, list) else None
    if not isinstance(value, dict):
        return None
    assert set(composed) == set(rule.composed), (rule.kind, sorted(composed))
    return {**{name: _shown_json(value[name], shown) for name, shown in rule.fields.items() if name in value},
            **composed}


def _shown_object(value: Any, rule: Keep | Shown | Each, **composed: Any) -> Any:
    """`value` (a report's dataclass) as `rule` shows it: a new record of its type holding only the fields shown."""
    if value is None:
        return None
    if rule is KEEP:
        assert not dataclasses.is_dataclass(value), f"a record kept whole: {type(value).__name__}"
        return value
    if isinstance(rule, Each):
        return tuple(_shown_object(item, rule.record) for item in value)
    assert type(value).__name__ == rule.kind and set(composed) == set(rule.composed), (rule.kind, sorted(composed))
    own = {f.name for f in dataclasses.fields(value)}
    shown = {name: _shown_object(getattr(value, name), sub) for name, sub in rule.fields.items() if name in own}
    return type(value)(**{**rule.blanks, **shown, **composed})


def _hidden_numbers(kinds: list[str]) -> dict[int, int]:
    """The randomized cases' numbers (1, 2...) by their position among all cases."""
    positions = [i for i, kind in enumerate(kinds) if kind == CaseKind.RANDOMIZED.value]
    return {position: number for number, position in enumerate(positions, 1)}


def first_failing(verdicts: list[Verdict]) -> int | None:
    """The case a failed run's message is about: the first neither passed nor skipped. The pipeline
    words its message from this case (`headline`), and what students see of a secret run is composed
    from the same case's public form: which case a message is about is decided by position, never by
    reading the message."""
    return next((i for i, v in enumerate(verdicts) if v.failed), None)


def headline(kind: str, label: str, message: str) -> str:
    """A run's message from its first failing case: "functional case 3×5×7: C[2, 0] = nan"."""
    return f"{kind} case {label}: {message}"


def _public_message(message: str, verdicts: list[Verdict], hidden: dict[int, int]) -> str:
    """The run's message, unless its first failing case is a randomized one: then that case's name and
    verdict, which is all a student may know of it. Every other message is about something a student may
    see (a public case, the build, the channel after the last case), and is shown as the grader wrote it."""
    first = first_failing(verdicts)
    if first not in hidden:
        return message
    return f"{hidden_label(hidden[first])}: {verdicts[first].name}"


def public(report: GradeReport) -> GradeReport:
    """What a student or the public may see of `report`: all of it, unless it is secret (a run graded with
    a class's secret seed, which its own grader's user owns whole). Of a secret run: PUBLIC_REPORT's fields
    and nothing else, built afresh (see `Shown`)."""
    if not report.secret:
        return report
    hidden = _hidden_numbers([c.kind.value for c in report.cases])
    cases = tuple(_shown_object(c, HIDDEN_CASE, label=hidden_label(hidden[i])) if i in hidden else
                  _shown_object(c, PUBLIC_CASE) for i, c in enumerate(report.cases))
    limit = report.job_limit
    limit = HIDDEN_JOB_LIMIT if limit and limit.shape_dependent else _shown_object(limit, _JOB_LIMIT)
    message = _public_message(report.message, [c.verdict for c in report.cases], hidden)
    return _shown_object(report, PUBLIC_REPORT, message=message, cases=cases, job_limit=limit, secret=True)


def public_json(data: dict) -> dict:
    """`public` for a secret run's report as the store keeps it (`to_json` of a GradeReport, maybe
    written by an older grader that had no `secret` field: the caller knows the run is secret from the
    store): the JSON object holds PUBLIC_REPORT's fields and no other key."""
    cases = list(data.get("cases") or [])
    hidden = _hidden_numbers([c.get("kind") for c in cases])
    shown_cases = [_shown_json(c, HIDDEN_CASE, label=hidden_label(hidden[i])) if i in hidden else
                   _shown_json(c, PUBLIC_CASE) for i, c in enumerate(cases)]
    limit = data.get("job_limit")
    limit = to_json(HIDDEN_JOB_LIMIT) if limit and limit.get("shape_dependent") else _shown_json(limit, _JOB_LIMIT)
    verdicts = [Verdict[c["verdict"]] for c in cases]
    message = _public_message(str(data.get("message") or ""), verdicts, hidden)
    return _shown_json(data, PUBLIC_REPORT, message=message, cases=shown_cases, job_limit=limit, secret=True)


def shown_json(report: GradeReport) -> dict:
    """A report as JSON as it may be shown: a secret run's public view (`public_json`), any other whole."""
    data = to_json(report)
    return public_json(data) if report.secret else data


def to_json(value: Any) -> Any:
    """JSON-ready data: dataclasses to dicts (with derived figures), enums to names, inf to null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in _DERIVED.get(type(value).__name__, ()):
            data[name] = to_json(getattr(value, name))
        return data
    if isinstance(value, enum.Enum):
        return value.name if isinstance(value, Verdict) else value.value
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


_DERIVED = {
    "Placement": (),
    "PerformanceResult": ("gflops", "baseline_gflops", "percent_of_baseline", "percent_of_peak", "gbps",
                          "percent_of_bandwidth"),
    "TimingStats": ("reps", "spread_pct"),
}
