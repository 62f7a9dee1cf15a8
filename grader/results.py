"""What a grading run produced: plain frozen dataclasses, passed from the pipeline to the report
(and later the store). `to_json` turns any of them into JSON-ready data.

A run graded with a class's secret seed is `secret`: its randomized shapes, drawn from that seed,
are what a student cannot tune a kernel for, so they (and the seed) stay with the instructor.
`public` (for a GradeReport) and `public_json` (for a report as stored) give what a student or the
public may see of such a run: no seed, no randomized shapes, the randomized cases as "hidden case N
(randomized)" with their verdict and error size, and a message composed from the first failing case's
public form (never by reading the private message). The store keeps everything; the redaction happens
where output is made.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

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


@dataclass(frozen=True)
class CaseResult:
    kind: CaseKind
    label: str
    dims: dict[str, int]
    verdict: Verdict
    message: str = ""
    comparisons: tuple[Comparison | ErrorSize, ...] = ()
    """ErrorSize in the public view of a secret run's randomized case."""
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
    wall_s: float
    kernel_s: float
    """Wall time spent inside the submission's calls (timed and untimed), as the grader saw it."""
    worker_output: str = ""
    placement: Any = None
    """Where the submission stands on the reference ladder (grader.place.Placement), when measured."""
    sanitizer: tuple | None = None
    """compute-sanitizer findings (grader.sanitize.Finding) with --sanitize; () when it found nothing."""
    secret: bool = False
    """Graded with the class's secret seed (`grader grade`): shown to students only through `public`."""
    job_limit: JobLimit | None = None
    """The bound on the whole job this run was graded under; None where none applied (no run reached it)."""
    isolation: Isolation | None = None
    """What confined the submission: the report says what was in force, nothing more."""

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


@dataclass(frozen=True)
class ErrorSize:
    """What a hidden case shows of one output's comparison: how far off it was. Not where (indices),
    over how many elements (counts) or of what shape: each of those gives the secret dimensions away."""

    output: str
    passed: bool
    scaled_error: float | None
    relative_frobenius: float | None


@dataclass(frozen=True)
class _Hidden:
    """One randomized case of a secret run, as much of it as redaction needs; read from a CaseResult
    or from its JSON, so that a report and a stored report are redacted by the same code."""

    number: int
    verdict: Verdict
    errors: tuple[ErrorSize, ...]

    @property
    def failed(self) -> bool:
        return self.verdict.failed

    def summary(self) -> str:
        """The verdict and the error size of the worst output: what a student may know of a hidden failure."""
        worst = next((e for e in self.errors if not e.passed), self.errors[0] if self.errors else None)
        if worst is None:
            return self.verdict.label
        return (f"{self.verdict.label}, max scaled error {_error_text(worst.scaled_error)}, "
                f"relative Frobenius error {_error_text(worst.relative_frobenius)}")

    def public_case(self) -> CaseResult:
        """No dims, no call time (it grows with the shape), and no message of the case's own: the
        grader's messages quote indices ("row 1357 (the last row)"), element counts and time limits
        that follow from the shape, and a crash's message can carry what the submission printed."""
        return CaseResult(CaseKind.RANDOMIZED, hidden_label(self.number), {}, self.verdict,
                          self.summary() if self.failed else "", self.errors)


def _error_text(value: float | None) -> str:
    """None is how JSON keeps a non-finite error (to_json), so both read the same."""
    return "not finite" if value is None or not math.isfinite(value) else f"{value:.3g}"


def _hidden_from_case(number: int, case: CaseResult) -> _Hidden:
    errors = tuple(ErrorSize(c.output, c.passed, c.scaled_error, c.relative_frobenius) for c in case.comparisons)
    return _Hidden(number, case.verdict, errors)


def _hidden_from_json(number: int, case: dict) -> _Hidden:
    errors = tuple(ErrorSize(c.get("output", ""), bool(c.get("passed")), c.get("scaled_error"),
                             c.get("relative_frobenius")) for c in case.get("comparisons") or [])
    return _Hidden(number, Verdict[case["verdict"]], errors)


def _hide(kinds: list[str], read: Callable[[int, int], _Hidden]) -> dict[int, _Hidden]:
    """The randomized cases by their position among all cases, numbered from 1 in their order."""
    positions = [i for i, kind in enumerate(kinds) if kind == CaseKind.RANDOMIZED.value]
    return {position: read(number, position) for number, position in enumerate(positions, 1)}


def first_failing(verdicts: list[Verdict]) -> int | None:
    """The case a failed run's message is about: the first neither passed nor skipped. The pipeline
    words its message from this case (`headline`), and what students see of a secret run is composed
    from the same case's public form: which case a message is about is decided by position, never by
    reading the message."""
    return next((i for i, v in enumerate(verdicts) if v.failed), None)


def headline(kind: str, label: str, message: str) -> str:
    """A run's message from its first failing case: "functional case 3×5×7: C[2, 0] = nan"."""
    return f"{kind} case {label}: {message}"


def _public_message(message: str, hidden: dict[int, _Hidden], first_failure: int | None) -> str:
    """The run's message, unless its first failing case is a randomized one: then that case's public
    summary. Every other message is about something a student may see (a public case, the build, the
    channel after the last case), and is shown as the grader wrote it."""
    about = hidden.get(first_failure)
    return message if about is None else f"{hidden_label(about.number)}: {about.summary()}"


def public(report: GradeReport) -> GradeReport:
    """What a student or the public may see of `report`: all of it, unless it is secret. Of a secret
    run: no seed, the randomized cases hidden (see `_Hidden.public_case`) and a message that names
    none of them; and none of the submission's output, which ran on the secret shapes and can print them."""
    if not report.secret:
        return report
    hidden = _hide([c.kind.value for c in report.cases], lambda n, i: _hidden_from_case(n, report.cases[i]))
    cases = tuple(hidden[i].public_case() if i in hidden else c for i, c in enumerate(report.cases))
    message = _public_message(report.message, hidden, first_failing([c.verdict for c in report.cases]))
    job_limit = HIDDEN_JOB_LIMIT if report.job_limit and report.job_limit.shape_dependent else report.job_limit
    return dataclasses.replace(report, seed=None, cases=cases, message=message, worker_output="", job_limit=job_limit)


def public_json(data: dict) -> dict:
    """`public` for a secret run's report as the store keeps it (`to_json` of a GradeReport, maybe
    written by an older grader that had no `secret` field: the caller knows the run is secret from
    the store). `public_json(to_json(r)) == to_json(public(r))` for a secret report `r`."""
    cases = list(data.get("cases") or [])
    hidden = _hide([c.get("kind") for c in cases], lambda n, i: _hidden_from_json(n, cases[i]))
    verdicts = [Verdict[c["verdict"]] for c in cases]
    job_limit = data.get("job_limit")
    if job_limit and job_limit.get("shape_dependent"):
        job_limit = to_json(HIDDEN_JOB_LIMIT)
    return {**data, "seed": None, "secret": True, "worker_output": "", "job_limit": job_limit,
            "cases": [to_json(hidden[i].public_case()) if i in hidden else c for i, c in enumerate(cases)],
            "message": _public_message(str(data.get("message") or ""), hidden, first_failing(verdicts))}


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
