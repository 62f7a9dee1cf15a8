"""One grading job, as every front end runs it: grade → place → sanitize (`grade_job`), then keep
(`keep`). `grader run`/`submit`, `grader grade` (a batch, through an engine) and the class server's
dispatcher (through an engine) all grade and keep here, and a job the grader itself failed on becomes a
GRADER_ERROR report here (`report_of`), never the student's verdict. Showing a report is the front
end's (`report.py`, the server's pages).
"""

from __future__ import annotations

import dataclasses
import sqlite3
from dataclasses import dataclass
from typing import Callable

from grader import pipeline
from grader.backends import Backend
from grader import __version__
from grader.build import BuildStatus
from grader.errors import Failure
from grader.inert import visible
from grader.results import GRADER_FAILURE, GradeReport
from grader.source import Source
from grader.spec import Challenge
from grader.verdict import Verdict


@dataclass(frozen=True)
class Job:
    source: Source
    """The submission as the front end read it, once: what is graded is what the front end stores. Its
    `display_path` names it in reports: the user's path, or STUDENT/FILE in a batch."""
    challenge: Challenge
    options: pipeline.Options
    placement: bool = True
    """Place an accepted, timed submission on the challenge's reference ladder (measured once per GPU)."""
    sanitize: bool = False
    """Also run the functional cases under compute-sanitizer (GPU only)."""


def grade_job(job: Job, backend: Backend, progress: pipeline.Progress | None = None) -> GradeReport:
    progress = progress or pipeline.NoProgress()
    report = pipeline.grade(job.source, job.challenge, backend, job.options, progress)
    if job.placement and report.accepted and report.performance and job.challenge.levels:
        report = with_placement(report, job.challenge, backend, job.options, progress)
    if job.sanitize and report.build and report.build.status is BuildStatus.OK:
        from grader import sanitize
        findings = sanitize.sanitize(job.challenge, backend, report.build, job.source.display_path,
                                     job.options.seed, progress)
        report = dataclasses.replace(report, sanitizer=findings)
    return report


def with_placement(report: GradeReport, challenge: Challenge, backend: Backend, options: pipeline.Options,
                   progress: pipeline.Progress) -> GradeReport:
    """The report with its level: the ladder from the cache, or measured now (and cached) with the ladder's
    own public seed, not this run's: the ladder serves every later run alike."""
    from grader import ladder, place

    measured = ladder.load(options.cache_dir, challenge, backend.environment())
    if measured is None:
        measured = ladder.measure(challenge, backend, options.cache_dir, ladder.SEED, progress, options.timing_budget_s)
    submission_ms = {p.label: p.stats.median_ms for p in report.performance if p.stats}
    placement = place.place(submission_ms, measured.measured(), challenge.levels, challenge.performance)
    return dataclasses.replace(report, placement=placement)


# --------------------------------------------------------------------------- keeping a result


@dataclass(frozen=True)
class Keeping:
    """Whose result it is and where it came from, as the store keeps it with the report."""

    user: str
    source_path: str
    secret_seed: bool
    """Graded with a secret seed (derived from the class's: a batch, the server): counted on the class leaderboard."""
    submission_id: int | None = None
    """The class server's queued submission this run grades (at most one run per submission)."""
    late: bool = False
    then: Callable[[sqlite3.Connection, int], None] | None = None
    """Done in the run's own transaction (grader.store.Store.record): the class server marks its submission
    done there (grader.classroom.queue.finish)."""


def keep(store, report: GradeReport, source: Source, keeping: Keeping) -> int:
    """Keep one run (grader.store.Store.record): the one place results are written, whichever front end
    graded them. Returns the run's id."""
    return store.record(report, keeping.user, keeping.source_path, source, keeping.secret_seed,
                        keeping.submission_id, keeping.late, keeping.then)


def report_of(outcome, display_path: str, challenge: Challenge, environment, options: pipeline.Options,
              wall_s: float) -> GradeReport:
    """The report of a job an engine ran (grader.engines.Outcome). A failure that would repeat for every
    job (no GPU, a broken challenge) is raised: it is nobody's result. A grader bug on this one job is a
    GRADER_ERROR report, saying so."""
    outcome.raise_fatal()
    if outcome.report is not None:
        return outcome.report
    return grader_error(display_path, challenge, environment, options, failure_text(outcome), wall_s,
                        bug=getattr(outcome, "failure", Failure.BUG) is Failure.BUG)


def failure_text(outcome, limit_chars: int = 300) -> str:
    """A grader failure's text as reports and summaries show it: its first `limit_chars` characters."""
    error = outcome.error or "unknown failure"
    return error if len(error) <= limit_chars else error[:limit_chars] + "…"


def grader_error(display_path: str, challenge: Challenge, environment, options: pipeline.Options, error: str,
                 wall_s: float, bug: bool = True) -> GradeReport:
    """A report saying the grader failed on this file (`error`, failure_text's): GRADER_ERROR, never counted
    against the student. `bug` false: the grading was lost (a process killed from outside), nothing to report."""
    message = (f"{GRADER_FAILURE} ({visible(error)}); this is not a judgement of the submission: grade it again "
               "(the next `grader grade` and the class server do so by themselves)" + ("; please report it" if bug else ""))
    c = challenge
    return GradeReport(
        submission=display_path, challenge=c.slug, challenge_version=c.version,
        functional_version=c.functional_version, performance_version=c.performance_version,
        mode=options.mode, seed=options.seed, verdict=Verdict.GRADER_ERROR, message=message, build=None,
        cases=(), performance=(), environment=environment, baseline_label=c.baseline_label,
        grader_version=__version__, wall_s=wall_s, kernel_s=0.0, secret=options.secret,
        libraries=options.libraries.value)
