"""The reference ladder measured on this GPU: every level graded like a submission, cached per
GPU, driver, grader version and challenge version, and re-measured on request.

The levels are built in parallel (nvcc runs on threads while earlier levels are measured) and timed
with a budget of their own, shorter than a submission's."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime
import enum
import json
import re
from dataclasses import dataclass
from pathlib import Path

from grader import __version__, pipeline, source as sources
from grader.results import GradeReport, Mode
from grader.spec import Challenge

FORMAT = 3
"""2: the ladder records the timing budget it was measured with. 3: GB/s per rung and the measured
bandwidth, for memory-bound challenges."""
TIMING_BUDGET_S = 1.0
"""Timed repetitions per performance case of a level (a submission gets the challenge's, 3 s for
matmul). Rungs are at least 1.28× apart and a submission reaches a rung within 3%, so about 1%
precision is plenty. The repetition rules are the submission's (stop at 0.5% standard error after 10
calls, at least 3 calls of even the slowest kernel); the levels reach that error within their 10 calls
(the naive kernel's medians repeat within 0.08% across processes, docs/benchmarks.md), so the shorter
budget rarely binds."""
SEED = 1
"""The seed a ladder is measured with wherever it is measured (`grader levels`, or the first placement
that needs it): a public one, since the cached ladder is the same for every run that reads it, whoever's
seed that run was graded with, and a class's secret seed must not reach a file it outlives."""


class RungStatus(str, enum.Enum):
    """A str too, so a ladder written with json.dumps(dataclasses.asdict(...)) (`grader levels --json`) says "measured"."""
    MEASURED = "measured"
    UNAVAILABLE = "unavailable"
    """The GPU lacks what the level needs (tensor cores, wgmma)."""
    FAILED = "failed"
    """The level was not ACCEPTED: a regression of the project's own reference."""


@dataclass(frozen=True)
class Rung:
    level: int
    name: str
    status: RungStatus
    detail: str = ""
    median_ms: dict[str, float] = dataclasses.field(default_factory=dict)
    gflops: dict[str, float | None] = dataclasses.field(default_factory=dict)
    max_scaled_error: float | None = None
    gbps: dict[str, float | None] = dataclasses.field(default_factory=dict)


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
    timing_budget_s: float | None = None
    """Seconds of timed repetitions per performance case each level was given."""
    bandwidth_gbps: float | None = None
    """This GPU's measured copy bandwidth, where the challenge counts bytes."""

    def measured(self) -> dict[int, dict[str, float]]:
        return {r.level: r.median_ms for r in self.rungs if r.status is RungStatus.MEASURED}


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
    data["rungs"] = tuple(Rung(**{**r, "status": RungStatus(r["status"])}) for r in data["rungs"])
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
    progress = progress or pipeline.NoProgress()
    budget_s = timing_budget_s or TIMING_BUDGET_S
    info = backend.info
    rungs, baseline_ms = [], {}
    available = [level for level in challenge.levels if level.available_on(info.major, info.minor)]
    with concurrent.futures.ThreadPoolExecutor(max(1, len(available))) as pool:
        # Every level's nvcc starts now; a level is graded once its own build is in the cache, so
        # the later builds overlap the earlier measurements. The timings are CUDA events on the GPU,
        # which compilers on the host do not disturb: on an H200 every rung came out within 0.7% of
        # the one measured with no build running.
        read = {level.number: sources.read(level.path) for level in available}  # built and graded alike
        builds = {number: pool.submit(backend.build, source, challenge, cache_dir) for number, source in read.items()}
        for index, level in enumerate(challenge.levels, 1):
            where = f"ladder level {index} of {len(challenge.levels)} ({level.name})"
            if level.number not in builds:
                rungs.append(Rung(level.number, level.name, RungStatus.UNAVAILABLE,
                                  level.unavailable_reason(info.compute_capability)))
                continue
            progress.stage(f"{where}: compiling (nvcc, levels in parallel)")
            builds[level.number].result()
            report = _grade_level(challenge, backend, cache_dir, seed, read[level.number], budget_s,
                                  not baseline_ms, _LevelProgress(progress, where))
            rungs.append(_rung(level.number, level.name, report))
            if not baseline_ms:
                baseline_ms = {p.label: p.baseline.median_ms for p in report.performance if p.baseline}
    env = backend.environment()
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    bandwidth = backend.bandwidth_gbps() if challenge.reference.bytes else None
    ladder = Ladder(challenge.slug, challenge.version, challenge.performance_version, env.gpu, env.driver,
                    __version__, stamp, challenge.baseline_label, baseline_ms, tuple(rungs), budget_s, bandwidth)
    save(cache_dir, challenge, env, ladder)
    return ladder


def _grade_level(challenge: Challenge, backend, cache_dir: Path, seed: int, source: sources.Source, budget_s: float,
                 time_baseline: bool, progress) -> GradeReport:
    options = pipeline.Options(Mode.SUBMIT, seed, cache_dir, budget_s, time_baseline=time_baseline,
                               recheck_after_timing=False)
    return pipeline.grade(source, challenge, backend, options, progress)


class _LevelProgress:
    """The pipeline's progress for one level, each stage prefixed with which level of how many."""

    def __init__(self, progress, where: str):
        self.progress, self.where = progress, where

    def stage(self, text: str, total: int | None = None) -> None:
        self.progress.stage(f"{self.where}: {text}", total)

    def advance(self, text: str) -> None:
        self.progress.advance(text)


def _rung(number: int, name: str, report: GradeReport) -> Rung:
    if not report.accepted:
        return Rung(number, name, RungStatus.FAILED, f"{report.verdict.label}: {report.message}")
    errors = [c.scaled_error for case in report.cases for c in case.comparisons]
    return Rung(number, name, RungStatus.MEASURED, "",
                {p.label: p.stats.median_ms for p in report.performance},
                {p.label: p.gflops for p in report.performance}, max(errors) if errors else None,
                {p.label: p.gbps for p in report.performance})
