"""What a grading run produced: plain frozen dataclasses, passed from the pipeline to the report
(and later the store). `to_json` turns any of them into JSON-ready data."""

from __future__ import annotations

import dataclasses
import enum
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grader.build import BuildResult
from grader.check import Comparison
from grader.timing import TimingStats
from grader.verdict import Verdict


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
    comparisons: tuple[Comparison, ...] = ()
    call_s: float | None = None


@dataclass(frozen=True)
class PerformanceResult:
    label: str
    dims: dict[str, int]
    flops: float
    verdict: Verdict
    message: str = ""
    stats: TimingStats | None = None
    baseline: TimingStats | None = None
    fp32_peak_gflops: float | None = None
    timing_wall_s: float | None = None

    @property
    def gflops(self) -> float | None:
        return self.flops / (self.stats.median_ms * 1e6) if self.stats else None

    @property
    def baseline_gflops(self) -> float | None:
        return self.flops / (self.baseline.median_ms * 1e6) if self.baseline else None

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
class GradeReport:
    submission: str
    challenge: str
    challenge_version: int
    functional_version: int
    performance_version: int
    mode: Mode
    seed: int
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

    @property
    def accepted(self) -> bool:
        return self.verdict is Verdict.ACCEPTED


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
    "PerformanceResult": ("gflops", "baseline_gflops", "percent_of_baseline", "percent_of_peak"),
    "TimingStats": ("reps", "spread_pct"),
}
