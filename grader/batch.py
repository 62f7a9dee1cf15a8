"""Batch grading: every submission in a folder, resumable, each run stored as soon as it is graded.

A submission is either `NAME.cu` directly in the folder, or a folder `NAME/` holding one `.cu` file
(or several, of which `solution.cu`, `mine.cu` or `main.cu` is taken, in that order). Everything else
in the folder is skipped and said why, since a teacher otherwise finds out which student was left out
only when the student asks: other files, folders without a `.cu` file to take, folders inside a
student's folder, and symbolic links, which are never followed (a student's link could point anywhere
on the grading machine). Names starting with "." are ignored silently.

Each file is read once, when it is found: that text is what is graded and stored, and its hash is
what a later batch compares. A student's source graded before (same hash, grader version and GPU,
with the secret seed) is skipped, so a batch that was stopped resumes where it stopped. A batch never
stops on one student's file: if the grader itself fails on it, the failure is recorded against that
student and the batch goes on.
"""

from __future__ import annotations

import os
import secrets
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from grader import __version__, job, pipeline, source as sources
from grader.errors import GraderError, UsageError
from grader.inert import visible
from grader.results import GRADER_FAILURE, GradeReport, Mode
from grader.store import Store
from grader.verdict import Verdict

PREFERRED = ("solution.cu", "mine.cu", "main.cu")
SHOWN_NAMES = 5
"""At most this many file names are listed in one skip reason."""


@dataclass(frozen=True)
class Submission:
    user: str
    path: Path
    source: sources.Source
    """The file as discovery read it, once: what is graded, hashed and stored (empty if unreadable)."""
    unreadable: sources.SourceError | None = None
    """Why the file could not be read (empty, binary, too large, gone): the student is recorded as a
    compile error saying so, rather than left out of the gradebook."""


@dataclass(frozen=True)
class Skipped:
    """An entry of the batch folder (or of a student's folder) that is not graded, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class Discovery:
    folder: Path
    submissions: tuple[Submission, ...]
    skipped: tuple[Skipped, ...]

    def require_submissions(self) -> tuple[Submission, ...]:
        """The submissions, or a UsageError when there are none. Separate from `discover` so the caller
        can show the skipped entries first: they usually say why nothing was found."""
        if not self.submissions:
            raise UsageError(f"no submissions in {self.folder}",
                             hint="expected NAME.cu files, or NAME/ folders with one .cu file")
        return self.submissions


@dataclass(frozen=True)
class GraderFailure:
    """The grader itself failed on one submission (a grader bug, not a verdict on the student's code)."""

    user: str
    path: Path
    error: str
    """The exception's type and message."""
    traceback: str


@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    """Submissions graded before, in an earlier run of the batch."""
    verdicts: Counter = field(default_factory=Counter)
    fastest: tuple[str, float] | None = None
    """(user, geometric-mean median ms) of the fastest accepted submission graded now."""
    failures: list[GraderFailure] = field(default_factory=list)
    """Submissions the grader failed on; each is also recorded as RUNTIME_ERROR, saying so."""


SYMLINK = "a symbolic link: submissions must be regular files (links are not followed)"
NOT_REGULAR = "not a regular file or folder"


def discover(folder: Path) -> Discovery:
    """Every submission in `folder`, and every entry skipped with its reason (see the module docstring)."""
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder", hint="pass the folder that holds one .cu file or folder per student")
    submissions: list[Submission] = []
    skipped: list[Skipped] = []
    for entry in _visible_entries(folder, skipped) or ():
        if entry.is_symlink():
            skipped.append(Skipped(entry, SYMLINK))
        elif entry.is_dir():
            chosen = _from_student_folder(entry, skipped)
            if chosen is not None:
                submissions.append(_submission(entry.name, chosen))
        elif not entry.is_file():
            skipped.append(Skipped(entry, NOT_REGULAR))
        elif entry.suffix == ".cu":
            submissions.append(_submission(entry.stem, entry))
        else:
            skipped.append(Skipped(entry, "not a .cu file"))
    return Discovery(folder, tuple(submissions), tuple(skipped))


def _submission(user: str, path: Path) -> Submission:
    """The student's file, read now and only now (no link followed, at most the size cap), so a file
    changed while the class is graded cannot be graded as one text and stored as another."""
    display = f"{user}/{path.name}"
    try:
        return Submission(user, path, sources.read(path, display))
    except sources.SourceError as error:
        return Submission(user, path, sources.from_bytes(b"", display), unreadable=error)


def _visible_entries(folder: Path, skipped: list[Skipped]) -> list[Path] | None:
    """The folder's entries in name order, without hidden ones; None (and the folder skipped) when it
    cannot be listed."""
    try:
        entries = sorted(folder.iterdir())
    except OSError as error:
        skipped.append(Skipped(folder, f"cannot be read: {error.strerror}"))
        return None
    return [e for e in entries if not e.name.startswith(".")]


def _from_student_folder(folder: Path, skipped: list[Skipped]) -> Path | None:
    """The .cu file to grade in a student's folder, or None; whatever is not taken goes into `skipped`.
    Only regular .cu files directly in the folder count; other files (notes, headers) are ignored."""
    entries = _visible_entries(folder, skipped)
    if entries is None:
        return None
    sources: list[Path] = []
    for entry in entries:
        if entry.is_symlink():
            if entry.suffix == ".cu":
                skipped.append(Skipped(entry, SYMLINK))
        elif entry.is_dir():
            skipped.append(Skipped(entry, f"a folder inside {folder.name}/: only .cu files directly in a "
                                          "student's folder are graded"))
        elif entry.suffix == ".cu":
            if entry.is_file():
                sources.append(entry)
            else:
                skipped.append(Skipped(entry, NOT_REGULAR))
    if len(sources) == 1:
        return sources[0]
    chosen = next((s for name in PREFERRED for s in sources if s.name == name), None)
    if chosen is None:
        skipped.append(Skipped(folder, _no_choice(sources)))
        return None
    for source in sources:
        if source != chosen:
            skipped.append(Skipped(source, f"not graded: {chosen.name} is the one taken from this folder"))
    return chosen


def _no_choice(sources: list[Path]) -> str:
    if not sources:
        return "no .cu file"
    names = ", ".join(s.name for s in sources[:SHOWN_NAMES]) + (", …" if len(sources) > SHOWN_NAMES else "")
    return (f"{len(sources)} .cu files ({names}) and none named {', '.join(PREFERRED[:-1])} or {PREFERRED[-1]}: "
            f"keep one, or name the one to grade {PREFERRED[0]}")


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


def grade_all(submissions, challenge, backend, store: Store, options: pipeline.Options,
              progress=None) -> Summary:
    """Grade (with placement, where there is a ladder) and store each submission not graded before."""
    summary = Summary()
    gpu = backend.environment().gpu
    if progress:
        progress.stage("grading submissions", total=len(submissions))
    for sub in submissions:
        if progress:
            # the progress bar reads rich markup, and a folder named "[/]" would end the batch
            progress.advance(escape(visible(sub.user)))
        if store.already_graded(sub.user, challenge.slug, sub.source.sha256, __version__, gpu, secret=True):
            summary.skipped += 1
            continue
        report, failure = _grade_one(sub, challenge, backend, options)
        if failure is not None:
            summary.failures.append(failure)
        store.record(report, sub.user, sub.path, sub.source, secret_seed=True)
        _count(summary, sub.user, report)
    return summary


def _grade_one(sub: Submission, challenge, backend, options: pipeline.Options) -> tuple[GradeReport, GraderFailure | None]:
    """One submission's report. An unexpected exception is caught and becomes that student's report, so
    the rest of the class is still graded. A GraderError is not caught: a broken challenge (a SpecError
    from reference.py), a missing compiler or a database error would fail every student the same way,
    and recording it against each would blame them for it. KeyboardInterrupt is not caught either."""
    display = sub.source.display_path
    if sub.unreadable is not None:
        return pipeline.unreadable(sub.unreadable, display, challenge, backend, options), None
    started = time.perf_counter()
    try:
        # the batch's progress shows one line per student: the job's own stages are not shown
        return job.grade_job(job.Job(sub.source, challenge, options), backend), None
    except GraderError:
        raise
    except Exception as error:
        failure = GraderFailure(sub.user, sub.path, _describe(error), traceback.format_exc())
        return _failure_report(display, challenge, backend, options, failure, time.perf_counter() - started), failure


def _describe(error: Exception, limit_chars: int = 300) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= limit_chars else text[:limit_chars] + "…"


def _failure_report(display: str, challenge, backend, options: pipeline.Options, failure: GraderFailure,
                    wall_s: float) -> GradeReport:
    """A report saying the grader failed on this file. RUNTIME_ERROR, the nearest verdict there is, with
    a message that says it is the grader's failure and not a judgement of the code."""
    message = (f"{GRADER_FAILURE} ({visible(failure.error)}); this is not a judgement of the "
               "submission: please report it, and grade this file again once the grader is fixed")
    return GradeReport(
        submission=display, challenge=challenge.slug, challenge_version=challenge.version,
        functional_version=challenge.functional_version, performance_version=challenge.performance_version,
        mode=options.mode, seed=options.seed, verdict=Verdict.RUNTIME_ERROR, message=message, build=None,
        cases=(), performance=(), environment=backend.environment(), baseline_label=challenge.baseline_label,
        grader_version=__version__, wall_s=wall_s, kernel_s=0.0, secret=options.secret)


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
