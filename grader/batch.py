"""Batch grading: every submission in a folder, resumable, each run stored as soon as it is graded.

A submission is either `NAME.cu` directly in the folder, or a folder `NAME/` holding one `.cu` file
(or several, of which `solution.cu`, `mine.cu` or `main.cu` is taken, in that order). Everything else
in the folder is skipped and said why, since a teacher otherwise finds out which student was left out
only when the student asks: other files, folders without a `.cu` file to take, folders inside a
student's folder, and symbolic links, which are never followed (a student's link could point anywhere
on the grading machine). Names starting with "." are ignored silently.

Each file is read once, when it is found: that text is what is graded and stored, and its hash is
what a later batch compares. Each is graded against the challenge `--challenge` names, else the one
whose `solve` signature it has (as `grader run` chooses, grader.signature); a file whose signature
names no challenge, or several, is graded against none and said so: a guess would grade it as the
wrong challenge. Each file is graded with a seed of its own, derived from the class's secret seed, the
student and the file's hash (grader.seeds.for_source): a changed file draws fresh hidden shapes, the same
file the same ones. A student's source graded before (same hash, grader version and GPU,
with the secret seed) is skipped, so a batch that was stopped resumes where it stopped. A batch never
stops on one student's file: if the grader itself fails on it, the failure is recorded against that
student and the batch goes on.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from rich.markup import escape

from grader import __version__, job, pipeline, seeds, signature, source as sources
from grader.errors import UsageError
from grader.inert import visible
from grader.results import GradeReport
from grader.spec import Challenge
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


@dataclass(frozen=True)
class Undecided:
    """A submission graded against no challenge: its `solve` signature names none, or several."""

    user: str
    path: Path
    why: str
    matches: tuple[str, ...]
    """The challenges its signature matches, when several do."""

    @property
    def hint(self) -> str:
        if self.matches:
            return (" or ".join(f"--challenge {slug}" for slug in self.matches) +
                    " grades it (and every other file of the folder) against that challenge")
        return ("--challenge SLUG grades it (and every other file of the folder) against one challenge, "
                "where a solve that differs is an INTERFACE_ERROR")


@dataclass(frozen=True)
class Plan:
    """Each submission to grade with its challenge, and those graded against none."""

    jobs: tuple[tuple[Submission, Challenge], ...]
    undecided: tuple[Undecided, ...]

    @property
    def challenges(self) -> tuple[Challenge, ...]:
        """The challenges graded, each once, in the order of their first submission."""
        return tuple({c.slug: c for _, c in self.jobs}.values())


def plan(submissions, challenges, forced: Challenge | None = None) -> Plan:
    """Each submission with its challenge: `forced` (--challenge) for all, else the one whose entry
    point's parameter types its definition has (grader.signature)."""
    if forced is not None:
        return Plan(tuple((sub, forced) for sub in submissions), ())
    jobs, undecided = [], []
    for sub in submissions:
        choice = signature.choose(sub.source.text, list(challenges))
        if choice.challenge is not None:
            jobs.append((sub, next(c for c in challenges if c.slug == choice.challenge)))
        else:
            why = f"{sub.unreadable.message}, so its challenge cannot be told" if sub.unreadable else choice.why
            undecided.append(Undecided(sub.user, sub.path, why, choice.matches))
    return Plan(tuple(jobs), tuple(undecided))


@dataclass
class Summary:
    graded: int = 0
    skipped: int = 0
    """Submissions graded before, in an earlier run of the batch."""
    verdicts: Counter = field(default_factory=Counter)
    fastest: dict[str, tuple[str, float]] = field(default_factory=dict)
    """Challenge -> (user, geometric-mean median ms) of its fastest accepted submission graded now."""
    failures: list[GraderFailure] = field(default_factory=list)
    """Submissions the grader failed on; each is also recorded as GRADER_ERROR, saying so."""
    not_accepted: dict[str, list[str]] = field(default_factory=dict)
    """Verdict name -> the users graded now with that verdict, in grading order: the summary names them."""


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


def grade_all(jobs, engine, store: Store, options: pipeline.Options, progress=None) -> Summary:
    """Grade (with placement, where there is a ladder) and store each (submission, challenge) of `jobs`
    (`Plan.jobs`) not graded before, as many at once as the engine has slots (grader.engines:
    this process, a process per GPU, or Ray tasks); each report is stored as soon as it comes back.
    `options.seed` is the class's secret seed where `options.secret`: each file is graded with its own
    seed derived from it (`options_for`)."""
    from grader.engines import Task, fingerprint

    summary = Summary()
    if progress:
        progress.stage("grading submissions", total=len(jobs))
    todo = []
    for index, (sub, challenge) in enumerate(jobs):
        if store.already_graded(sub.user, challenge.slug, sub.source.sha256, __version__, engine.environment.gpu,
                                secret=True):
            summary.skipped += 1
            _advance(progress, sub)
        else:
            todo.append(index)
    out: dict = {}
    marks = {challenge.slug: fingerprint(challenge) for _, challenge in jobs}
    while todo or out:
        while todo and len(out) < engine.slots:
            index = todo.pop(0)
            sub, challenge = jobs[index]
            own = options_for(sub, options)
            if sub.unreadable is not None:
                _keep(summary, store, sub, pipeline.unreadable(sub.unreadable, sub.source.display_path, challenge,
                                                                engine.environment, own), progress)
                continue
            task = Task(index, sub.source, challenge.slug, own.seed, own.secret, fingerprint=marks[challenge.slug])
            out[engine.submit(task)] = (sub, challenge, time.perf_counter())
        if out:
            done, _ = concurrent.futures.wait(out, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:
                sub, challenge, started = out.pop(future)
                report = _report_of(future.result(), sub, challenge, engine.environment, options_for(sub, options),
                                    summary, started)
                _keep(summary, store, sub, report, progress)
    return summary


def options_for(sub: Submission, options: pipeline.Options) -> pipeline.Options:
    """How one file of the batch is graded: with its own seed (grader.seeds.for_source) where the batch's
    is the class's secret seed, so that no two sources share hidden shapes and the same source (graded
    again after a grader failure, or by a newer grader) draws the same ones."""
    if not options.secret:
        return options
    return dataclasses.replace(options, seed=seeds.for_source(options.seed, sub.user, sub.source.sha256))


def _advance(progress, sub: Submission) -> None:
    if progress:  # the progress bar reads rich markup, and a folder named "[/]" would end the batch
        progress.advance(escape(visible(sub.user)))


def _keep(summary: Summary, store: Store, sub: Submission, report: GradeReport, progress) -> None:
    job.keep(store, report, sub.source, job.Keeping(sub.user, str(sub.path), secret_seed=True))
    _count(summary, sub.user, report)
    _advance(progress, sub)


def _report_of(outcome, sub: Submission, challenge, environment, options: pipeline.Options, summary: Summary,
               started: float) -> GradeReport:
    """The job's report. A grader bug on this one file becomes that student's GRADER_ERROR report (the
    next batch grades the file again), and the rest of the class is still graded. A fatal failure (a
    broken challenge, no GPU) would fail every student the same way: it stops the batch instead."""
    report = job.report_of(outcome, sub.source.display_path, challenge, environment, options,
                           time.perf_counter() - started)
    if report.verdict is Verdict.GRADER_ERROR:
        summary.failures.append(GraderFailure(sub.user, sub.path, job.failure_text(outcome), outcome.traceback or ""))
    return report


def _count(summary: Summary, user: str, report: GradeReport) -> None:
    summary.graded += 1
    summary.verdicts[report.verdict.name] += 1
    if not report.accepted and report.verdict.judges:  # the grader's failures are listed on their own
        summary.not_accepted.setdefault(report.verdict.name, []).append(user)
    medians = [p.stats.median_ms for p in report.performance if p.stats]
    if report.accepted and medians:
        product = 1.0
        for m in medians:
            product *= m
        mean = product ** (1 / len(medians))
        fastest = summary.fastest.get(report.challenge)
        if fastest is None or mean < fastest[1]:
            summary.fastest[report.challenge] = (user, mean)
