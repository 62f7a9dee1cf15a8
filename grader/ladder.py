"""The reference ladder measured on this GPU: every level graded like a submission, cached per
GPU, driver, grader version and challenge version, and re-measured on request."""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, pipeline
from grader.results import GradeReport, Mode
from grader.spec import Challenge

FORMAT = 1


@dataclass(frozen=True)
class Rung:
    level: int
    name: str
    status: str
    """"measured", "unavailable" (the GPU lacks what it needs) or "failed" (not ACCEPTED: a regression)."""
    detail: str = ""
    median_ms: dict[str, float] = dataclasses.field(default_factory=dict)
    gflops: dict[str, float] = dataclasses.field(default_factory=dict)
    max_scaled_error: float | None = None


@dataclass(frozen=True)
class Ladder:
    challenge: str
    challenge_version: int
    performance_version: int
    gpu: str
    driver: str
    grader_version: str
    measured_at: str
    baseline_label: str | None
    baseline_ms: dict[str, float]
    rungs: tuple[Rung, ...]

    def measured(self) -> dict[int, dict[str, float]]:
        return {r.level: r.median_ms for r in self.rungs if r.status == "measured"}


def cache_path(cache_dir: Path, challenge: Challenge, environment) -> Path:
    gpu = re.sub(r"[^A-Za-z0-9]+", "-", environment.gpu or "none").strip("-")
    name = (f"{challenge.slug}-v{challenge.version}-perf{challenge.performance_version}-{gpu}-"
            f"driver{environment.driver}-grader{__version__}.json")
    return cache_dir / "ladders" / name


def load(cache_dir: Path, challenge: Challenge, environment) -> Ladder | None:
    path = cache_path(cache_dir, challenge, environment)
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if data.get("format") != FORMAT:
        return None
    data.pop("format")
    data["rungs"] = tuple(Rung(**r) for r in data["rungs"])
    return Ladder(**data)


def save(cache_dir: Path, challenge: Challenge, environment, ladder: Ladder) -> Path:
    path = cache_path(cache_dir, challenge, environment)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"format": FORMAT, **dataclasses.asdict(ladder)}, indent=1))
    tmp.replace(path)
    return path


def measure(challenge: Challenge, backend, cache_dir: Path, seed: int, progress=None,
            timing_budget_s: float | None = None) -> Ladder:
    """Grade every level in submit mode on `backend`; the baseline is timed with the first one."""
    info = backend.info
    rungs, baseline_ms = [], {}
    for level in challenge.levels:
        if progress:
            progress.stage(f"measuring the ladder: level {level.number} of {len(challenge.levels)} ({level.name})")
        if not level.available_on(info.major, info.minor):
            rungs.append(Rung(level.number, level.name, "unavailable", level.unavailable_reason(info.compute_capability)))
            continue
        options = pipeline.Options(Mode.SUBMIT, seed, cache_dir, timing_budget_s, time_baseline=not baseline_ms)
        report = pipeline.grade(level.path, str(level.path), challenge, backend, options)
        rungs.append(_rung(level.number, level.name, report))
        if not baseline_ms:
            baseline_ms = {p.label: p.baseline.median_ms for p in report.performance if p.baseline}
    env = backend.environment()
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    ladder = Ladder(challenge.slug, challenge.version, challenge.performance_version, env.gpu, env.driver,
                    __version__, stamp, challenge.baseline_label, baseline_ms, tuple(rungs))
    save(cache_dir, challenge, env, ladder)
    return ladder


def _rung(number: int, name: str, report: GradeReport) -> Rung:
    if not report.accepted:
        return Rung(number, name, "failed", f"{report.verdict.label}: {report.message}")
    errors = [c.scaled_error for case in report.cases for c in case.comparisons]
    return Rung(number, name, "measured", "",
                {p.label: p.stats.median_ms for p in report.performance},
                {p.label: p.gflops for p in report.performance}, max(errors) if errors else None)
