"""The server's dispatcher: claims queued submissions (round-robin, grader.classroom.queue), hands
each to the engine while it has a free slot, and keeps each report as it comes back, in the
transaction that marks the submission done.

It runs in a thread of the server process, with a database connection of its own. When it stops, the
jobs still running are put back in the queue, as a restart would find them.
"""

from __future__ import annotations

import concurrent.futures
import io
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from grader import job, pipeline, report as reports, seeds
from grader.classroom import queue
from grader.classroom.schema import open_class
from grader.engines import Engine, Task, fingerprint
from grader.results import GradeReport, Mode, public
from grader.source import Source
from grader.spec import Challenge
from grader.store import AlreadyGraded, Store

log = logging.getLogger("grader.serve")

REPORT_WIDTH = 80
"""Reports are kept rendered at this width: the narrowest terminal a student is likely to use."""
POLL_S = 0.2
"""How often an idle dispatcher looks at the queue."""
GRADER_ERROR_TRIES = 3
"""A submission the grader fails on (a bug of the grader's, on this one job) goes back to the queue until
it has been tried this often; then its GRADER_ERROR report is kept, shown to the student as the grader's
failure, never as their verdict."""
FATAL_PAUSE_S = 30.0
"""After a failure that would fail every job (no GPU), the job goes back to the queue and the
dispatcher waits this long before trying again, saying so in the log."""


@dataclass(frozen=True)
class Class:
    """What the dispatcher grades with: the challenges served and the class's secret seed."""

    challenges: dict[str, Challenge]
    seed: int
    """The class's secret seed: the key each submission's own seed is derived from (`seed_of`), never a
    seed anything is graded with, so it stays in this process."""

    def seed_of(self, sub: queue.Submission) -> int:
        """The seed submission `sub` is graded with (grader.seeds): its own draw of the hidden shapes, the
        same when the job is graded again after a restart or a grader failure, kept in its run."""
        return seeds.for_submission(self.seed, sub.id)


def shown_text(report: GradeReport) -> str:
    """The report as a student sees it (a secret run's public view), rendered as in a terminal, with
    its colours as ANSI codes: the client prints it, the web page turns it into HTML."""
    console = Console(record=True, width=REPORT_WIDTH, force_terminal=True, color_system="standard",
                      file=io.StringIO())
    reports.render(public(report), console)
    return console.export_text(styles=True)


def _source(sub: queue.Submission) -> Source:
    """The submission as the job layer grades it, named by its file's name alone: the student reads their
    own file's name in the report, as after a local run, and identical files (a class working from one
    starter) share one cached build, which the name would otherwise make distinct."""
    return Source(sub.source, sub.filename, sub.source_hash)


class Dispatcher:
    def __init__(self, db_path: Path, engine: Engine, served: Class):
        self.db_path, self.engine, self.served = db_path, engine, served
        self.stop_requested = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dispatcher", daemon=True)
        self.out: dict[concurrent.futures.Future, queue.Submission] = {}
        self.paused_until = 0.0
        self.graded = 0

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self.stop_requested.set()
        self.thread.join(timeout_s)

    def _run(self) -> None:
        with open_class(self.db_path) as store:
            try:
                while not self.stop_requested.is_set():
                    self._fill(store)
                    self._collect(store)
            except Exception:  # the dispatcher must not die silently: the server would accept and never grade
                log.exception("the dispatcher failed; jobs stay queued for the next start")
                raise
            finally:
                returned = queue.requeue_running(store)
                if returned:
                    log.info("%d running job(s) put back in the queue", returned)

    def _fill(self, store: Store) -> None:
        while len(self.out) < self.engine.slots and time.monotonic() >= self.paused_until:
            sub = queue.claim(store)
            if sub is None:
                return
            challenge = self.served.challenges.get(sub.challenge)
            task = Task(sub.id, _source(sub), sub.challenge, self.served.seed_of(sub), secret=True,
                        fingerprint=fingerprint(challenge) if challenge else None)
            self.out[self.engine.submit(task)] = sub

    def _collect(self, store: Store) -> None:
        if not self.out:
            self.stop_requested.wait(POLL_S)
            return
        done, _ = concurrent.futures.wait(self.out, timeout=POLL_S, return_when=concurrent.futures.FIRST_COMPLETED)
        for future in done:
            sub = self.out.pop(future)
            self._keep(store, sub, future.result())

    def _keep(self, store: Store, sub: queue.Submission, outcome) -> None:
        if outcome.fatal is not None:
            log.error("grading %s's submission %d failed for every job alike (%s); it goes back to the queue, "
                      "next try in %.0f s", sub.user, sub.id, outcome.fatal.message, FATAL_PAUSE_S)
            queue.requeue(store, sub.id)
            self.paused_until = time.monotonic() + FATAL_PAUSE_S
            return
        if outcome.report is None and sub.claims < GRADER_ERROR_TRIES:
            log.error("the grader failed on %s's submission %d (try %d of %d): %s; it goes back to the queue\n%s",
                      sub.user, sub.id, sub.claims, GRADER_ERROR_TRIES, outcome.error, outcome.traceback)
            queue.requeue(store, sub.id)
            return
        report = self._report(sub, outcome)
        try:
            job.keep(store, report, _source(sub), job.Keeping(sub.user, sub.filename, secret_seed=True,
                                                              submission_id=sub.id, late=sub.late,
                                                              then=queue.finish(sub.id, shown_text(report))))
            self.graded += 1
            log.info("graded %s's submission %d (%s): %s", sub.user, sub.id, sub.challenge, report.verdict.name)
        except AlreadyGraded:
            log.warning("submission %d came back twice; the second report is dropped", sub.id)

    def _report(self, sub: queue.Submission, outcome) -> GradeReport:
        if outcome.report is None:
            log.error("the grader failed on %s's submission %d for the last time: %s\n%s", sub.user, sub.id,
                      outcome.error, outcome.traceback)
        options = pipeline.Options(Mode.SUBMIT, self.served.seed_of(sub), None, secret=True)
        return job.report_of(outcome, sub.filename, self.served.challenges[sub.challenge], self.engine.environment,
                             options, 0.0)
