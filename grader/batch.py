"""Batch grading: every submission in a folder, resumable, each run stored as soon as it is graded.

A submission is either `NAME.cu` directly in the folder, or a folder `NAME/` holding one `.cu` file
(or several, of which `solution.cu`, `mine.cu` or `main.cu` is taken). A student's source graded
before (same hash, grader version and GPU, with the secret seed) is skipped, so a batch that was
stopped resumes where it stopped.
"""

from __future__ import annotations

import os
import secrets
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from grader import __version__, pipeline
from grader.errors import UsageError
from grader.results import GradeReport, Mode
from grader.store import Store, source_hash

PREFERRED = ("solution.cu", "mine.cu", "main.cu")


@dataclass(frozen=True)
class Submission:
    user: str
    path: Path


@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    verdicts: Counter = field(default_factory=Counter)
    fastest: tuple[str, float] | None = None
    """(user, geometric-mean median ms) of the fastest accepted submission graded now."""


def discover(folder: Path) -> list[Submission]:
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder", hint="pass the folder that holds one .cu file or folder per student")
    found = []
    for entry in sorted(folder.iterdir()):
        if entry.is_file() and entry.suffix == ".cu":
            found.append(Submission(entry.stem, entry))
        elif entry.is_dir():
            sources = sorted(entry.glob("*.cu"))
            chosen = next((s for s in sources if s.name in PREFERRED), sources[0] if len(sources) == 1 else None)
            if chosen:
                found.append(Submission(entry.name, chosen))
    if not found:
        raise UsageError(f"no submissions in {folder}", hint="expected NAME.cu files, or NAME/ folders with one .cu file")
    return found


def secret_seed(db_path: Path) -> int:
    """The batch's secret seed, kept beside the database (readable by its owner only)."""
    path = db_path.with_name(db_path.name + ".secret-seed")
    if path.is_file():
        return int(path.read_text().strip())
    seed = secrets.randbelow(2**62)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(str(seed))
    return seed


def grade_all(submissions: list[Submission], challenge, backend, store: Store, options: pipeline.Options,
              progress=None, finish: Callable[[GradeReport], GradeReport] | None = None) -> Summary:
    """Grade and store each submission not graded before; `finish` adds placement, where there is a ladder."""
    summary = Summary()
    gpu = backend.environment().gpu
    if progress:
        progress.stage("grading submissions", total=len(submissions))
    for sub in submissions:
        if progress:
            progress.advance(sub.user)
        text = sub.path.read_text(errors="replace")
        if store.already_graded(sub.user, challenge.slug, source_hash(text), __version__, gpu, secret=True):
            summary.skipped += 1
            continue
        report = pipeline.grade(sub.path, f"{sub.user}/{sub.path.name}", challenge, backend, options)
        if finish is not None and report.accepted:
            report = finish(report)
        store.record(report, sub.user, sub.path, text, secret_seed=True)
        _count(summary, sub.user, report)
    return summary


def _count(summary: Summary, user: str, report: GradeReport) -> None:
    summary.graded += 1
    summary.verdicts[report.verdict.name] += 1
    medians = [p.stats.median_ms for p in report.performance if p.stats]
    if report.accepted and medians:
        product = 1.0
        for m in medians:
            product *= m
        mean = product ** (1 / len(medians))
        if summary.fastest is None or mean < summary.fastest[1]:
            summary.fastest = (user, mean)
