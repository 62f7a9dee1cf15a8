"""The server's dispatcher: claims queued submissions (round-robin, grader.classroom.queue), hands
each to the engine while it has a free slot, and keeps each report as it comes back, in the
transaction that marks the submission done.

It runs in a thread of the server process, with a database connection of its own. When it stops, the
jobs still running are put back in the queue, as a restart would find them.

It cannot die of a fault: any failure of a turn of its loop (the database full or locked past the busy
timeout, the store failing, the engine refusing a job) is logged, reported to the server's shared health
(grader.classroom.health: the server then answers 503 and takes no uploads), and the turn is tried again
after a back-off (1 s, doubling, at most 30 s), on a fresh connection. Nothing is lost meanwhile: a report
that came back and could not be kept is kept later from memory (the unique run per submission keeps a
second one out), and a job claimed but never handed to the engine goes back to the queue. The first turn
that succeeds clears the stall: grading resumes by itself.
"""

from __future__ import annotations

import concurrent.futures
import io
import logging
import sqlite3
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from grader import job, pipeline, report as reports, seeds
from grader.classroom import queue
from grader.classroom.health import Cause, Health, Part, cause_of
from grader.classroom.schema import ServedDatabase, open_class
from grader.engines import Engine, Failure, Outcome, Task, fingerprint
from grader.results import GradeReport, Mode, public
from grader.source import Source
from grader.spec import Challenge
from grader.store import AlreadyGraded, Store, StoreError

log = logging.getLogger("grader.serve")

REPORT_WIDTH = 80
"""Reports are kept rendered at this width: the narrowest terminal a student is likely to use."""
POLL_S = 0.2
"""How often an idle dispatcher looks at the queue."""
GRADER_ERROR_TRIES = 3
"""A submission the grader fails on (a bug of the grader's, on this one job) goes back to the queue until
it has been tried this often; then its GRADER_ERROR report is kept, shown to the student as the grader's
failure, never as their verdict."""
LOST_TRIES = 2
"""A job whose grading was lost (the grading process died, the sandboxed worker was killed from outside:
grader.errors.Failure.LOST) is graded once more; then its GRADER_ERROR report is kept, never a verdict of
the student's, never an attempt of theirs. (A report the store could not keep is not lost: it is kept
from memory once the store works again, see `Dispatcher.finished`.)"""
FATAL_PAUSE_S = 30.0
"""After a failure that would fail every job (no GPU), the job goes back to the queue and the
dispatcher waits this long before trying again, saying so in the log and in the server's health."""
BACKOFF_S = (1.0, 30.0)
"""After a failed turn of the loop, the first wait before the next try, and the longest (each failure in
a row doubles it)."""


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


class Backoff:
    """The waits between tries of a failing loop: BACKOFF_S's first, doubled each time, at most its last;
    back to the first once a try succeeds."""

    def __init__(self, first_s: float = BACKOFF_S[0], most_s: float = BACKOFF_S[1]):
        self.first_s, self.most_s = first_s, most_s
        self.next_s = first_s

    def take(self) -> float:
        wait, self.next_s = self.next_s, min(self.next_s * 2, self.most_s)
        return wait

    def reset(self) -> None:
        self.next_s = self.first_s


_STORE_FAULTS = (sqlite3.Error, StoreError, OSError)
"""Failures of the database (and of the disk under it), not of the job being kept: waited out and tried
again. Any other failure to keep one job's report is a grader bug on that job, handled as the grader's
failure on it (tried again, then kept as GRADER_ERROR), so one bad report cannot stall a class."""


class Dispatcher:
    def __init__(self, db_path: Path, engine: Engine, served: Class, health: Health | None = None,
                 database: ServedDatabase | None = None):
        self.db_path, self.engine, self.served = db_path, engine, served
        self.health = health or Health()
        """Shared with the server (grader.classroom.server.Server): the dispatcher's faults show there."""
        self.database = database
        """The served database (the serve command's): connected to without creating or migrating, and
        no job is claimed or kept once it is gone. None: opened as `open_class` does (in-process tests)."""
        self.stop_requested = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dispatcher", daemon=True)
        self.out: dict[concurrent.futures.Future, queue.Submission] = {}
        self.finished: list[tuple[queue.Submission, Outcome]] = []
        """Jobs whose outcome came back and is not kept yet (the store failed meanwhile): kept first."""
        self.unsettled = False
        """A turn failed since the last one that succeeded: a job may be claimed and not handed out."""
        self.backoff = Backoff()
        self.paused_until = 0.0
        self.graded = 0

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout_s: float = 5.0) -> None:
        self.stop_requested.set()
        self.thread.join(timeout_s)

    # -- the loop
    def _run(self) -> None:
        store = None
        try:
            while not self.stop_requested.is_set():
                store = self._turn(store)
        finally:
            self._put_back(store)

    def _turn(self, store: Store | None) -> Store | None:
        """One turn of the loop on `store` (opened when None); the store to use next, None after a failure
        (the next turn opens a fresh connection: the failed one may be what is wrong)."""
        try:
            store = store or self._connect()
            self._step(store)
        except Exception as error:  # the dispatcher must not die: the server would take work and never grade it
            self._failed(error)
            _close(store)
            self.stop_requested.wait(self.backoff.take())
            return None
        self._recovered()
        return store

    def _connect(self) -> Store:
        return self.database.connect() if self.database else open_class(self.db_path, create=False)

    def _step(self, store: Store) -> None:
        if self.unsettled:
            self._settle(store)
        self._keep_finished(store)
        self._fill(store)
        self._collect(store)

    def _failed(self, error: Exception) -> None:
        """Log the failure (at length when it is a new fault), show it in the server's health."""
        self.unsettled = True
        cause = cause_of(error)
        before = self.health.stall(Part.DISPATCHER, cause, f"{type(error).__name__}: {error}")
        wait_s = self.backoff.next_s
        if before is None or before.cause is not cause:
            log.exception("grading stalls (%s); uploads are refused until it resumes; next try in %.0f s",
                          cause.said, wait_s)
        else:
            log.error("grading still stalls (%s since %s): %s: %s; next try in %.0f s", cause.said,
                      before.since.isoformat(), type(error).__name__, error, wait_s)

    def _recovered(self) -> None:
        self.backoff.reset()
        ended = self.health.clear(Part.DISPATCHER)
        if ended is not None:
            log.info("grading resumes: the fault (%s) began at %s", ended.cause.said, ended.since.isoformat())

    def _settle(self, store: Store) -> None:
        """After a failed turn: a job claimed whose turn failed before the engine took it is running with no
        grader; back in the queue it goes (the jobs out and those waiting to be kept stay running)."""
        held = [sub.id for sub in self.out.values()] + [sub.id for sub, _ in self.finished]
        returned = queue.requeue_running(store, keep=held)
        if returned:
            log.info("%d job(s) claimed when a turn failed go back in the queue", returned)
        self.unsettled = False

    def _put_back(self, store: Store | None) -> None:
        """On stopping: the jobs still running go back in the queue, as a restart would find them (a fault
        here is only logged: the next start puts them back anyway)."""
        try:
            store = store or self._connect()
            returned = queue.requeue_running(store)
            if returned:
                log.info("%d running job(s) put back in the queue", returned)
        except Exception:
            log.exception("could not put the running jobs back in the queue; the next start does")
        finally:
            _close(store)

    # -- the steps (a test may run them in its own thread)
    def _fill(self, store: Store) -> None:
        if self.database is not None and self.database.gone():
            return  # the server refuses work too (503); what is running is kept where it can be, or lost with the file
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
            self.finished.append((self.out.pop(future), future.result()))
        self._keep_finished(store)

    def _keep_finished(self, store: Store) -> None:
        """Keep each outcome that came back, oldest first; one the store fails on stays for the next turn."""
        while self.finished:
            sub, outcome = self.finished[0]
            try:
                self._keep(store, sub, outcome)
            except _STORE_FAULTS:
                raise
            except Exception as error:  # a bug on this job's report: the grader's failure on it
                log.exception("keeping %s's submission %d failed; it counts as the grader's failure on it",
                              sub.user, sub.id)
                self._keep(store, sub, _failed_keeping(outcome, error))
            self.finished.pop(0)

    def _keep(self, store: Store, sub: queue.Submission, outcome: Outcome) -> None:
        if outcome.fatal is not None:
            self._engine_failed(store, sub, outcome)
            return
        self._engine_works()
        tries = LOST_TRIES if outcome.failure is Failure.LOST else GRADER_ERROR_TRIES
        if outcome.report is None and sub.claims < tries:
            log.error("the grader failed on %s's submission %d (try %d of %d): %s; it goes back to the queue\n%s",
                      sub.user, sub.id, sub.claims, tries, outcome.error, outcome.traceback)
            queue.requeue(store, sub.id)
            return
        report = self._report(sub, outcome)
        if self.database is not None:
            self.database.check()  # a report kept in a deleted file would be lost with it: it waits in `finished`
        try:
            job.keep(store, report, _source(sub), job.Keeping(sub.user, sub.filename, secret_seed=True,
                                                              submission_id=sub.id, late=sub.late,
                                                              then=queue.finish(sub.id, shown_text(report))))
            self.graded += 1
            log.info("graded %s's submission %d (%s): %s", sub.user, sub.id, sub.challenge, report.verdict.name)
        except AlreadyGraded:
            log.warning("submission %d came back twice; the second report is dropped", sub.id)

    def _engine_failed(self, store: Store, sub: queue.Submission, outcome: Outcome) -> None:
        """A failure that would fail every job (no GPU): the job goes back, grading pauses, health says so."""
        queue.requeue(store, sub.id)
        self.paused_until = time.monotonic() + FATAL_PAUSE_S
        if self.health.stall(Part.ENGINE, Cause.ENGINE, outcome.fatal.message) is None:
            log.error("grading %s's submission %d failed for every job alike (%s); it goes back to the queue, "
                      "next try in %.0f s", sub.user, sub.id, outcome.fatal.message, FATAL_PAUSE_S)

    def _engine_works(self) -> None:
        ended = self.health.clear(Part.ENGINE)
        if ended is not None:
            log.info("the grading processes grade again (they failed from %s)", ended.since.isoformat())

    def _report(self, sub: queue.Submission, outcome: Outcome) -> GradeReport:
        if outcome.report is None:
            log.error("the grader failed on %s's submission %d for the last time: %s\n%s", sub.user, sub.id,
                      outcome.error, outcome.traceback)
        options = pipeline.Options(Mode.SUBMIT, self.served.seed_of(sub), None, secret=True)
        return job.report_of(outcome, sub.filename, self.served.challenges[sub.challenge], self.engine.environment,
                             options, 0.0)


def _failed_keeping(outcome: Outcome, error: Exception) -> Outcome:
    """The outcome as the grader's own failure on the job (no report), for an error of the grader's in
    keeping its report: tried again, then kept as GRADER_ERROR, as any grader failure on one job."""
    return Outcome(outcome.key, None, f"{type(error).__name__} while keeping the report: {error}",
                   traceback.format_exc())


def _close(store: Store | None) -> None:
    if store is not None:
        try:
            store.close()
        except Exception:  # closing a broken connection: nothing more to do with it
            log.debug("closing the dispatcher's connection failed", exc_info=True)
