"""One grading job, as every front end runs it: grade → place → sanitize. `grader run`/`submit`,
`grader grade` (a batch) and, later, the class server call `grade_job` alike, then keep the report
with the job's `Source` (`store.py`) and show it (`report.py`) themselves.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from grader import pipeline
from grader.backends import Backend
from grader.build import BuildStatus
from grader.results import GradeReport
from grader.source import Source
from grader.spec import Challenge


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
    """The report with its level: the ladder from the cache, or measured now (and cached)."""
    from grader import ladder, place

    measured = ladder.load(options.cache_dir, challenge, backend.environment())
    if measured is None:
        measured = ladder.measure(challenge, backend, options.cache_dir, options.seed, progress, options.timing_budget_s)
    submission_ms = {p.label: p.stats.median_ms for p in report.performance if p.stats}
    placement = place.place(submission_ms, measured.measured(), challenge.levels, challenge.performance)
    return dataclasses.replace(report, placement=placement)
