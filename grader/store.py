"""The store stage: every grading run kept in SQLite, for leaderboards and the gradebook.

One transaction per run, so a process killed mid-write leaves the database as it was before that
run; WAL mode and a busy timeout let many `grader submit` processes write at once without losing
any. The schema changes through named, ordered migrations recorded in the database itself.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import sqlite3
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader.errors import GraderError
from grader.exitcodes import ExitCode
from grader.results import GRADER_FAILURE, GradeReport, to_json
from grader.source import Source
from grader.verdict import Verdict

BUSY_TIMEOUT_S = 60.0
"""How long a writer waits for another's lock before the store says the database stayed locked."""
BUSY_TIMEOUT_ENV = "GRADER_DB_BUSY_TIMEOUT_S"
"""Overrides BUSY_TIMEOUT_S (seconds) for every database this process opens: a class server's host may
want a locked database to be reported sooner, and the tests wait less."""

Step = str | Callable[[sqlite3.Connection], None]
"""A migration's work: SQL statements separated by semicolons, or a function given the connection."""

MIGRATIONS: tuple[tuple[str, Step], ...] = (
    ("0001_runs_cases_timings", """
        CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            user TEXT NOT NULL,
            challenge TEXT NOT NULL,
            challenge_version INTEGER NOT NULL,
            source_path TEXT NOT NULL,
            source_hash TEXT NOT NULL,
            source TEXT NOT NULL,
            backend TEXT NOT NULL,
            gpu TEXT,
            driver TEXT,
            nvcc TEXT,
            grader_version TEXT NOT NULL,
            seed INTEGER NOT NULL,
            secret_seed INTEGER NOT NULL,
            mode TEXT NOT NULL,
            verdict TEXT NOT NULL,
            message TEXT NOT NULL,
            level INTEGER,
            wall_s REAL NOT NULL,
            graded_at TEXT NOT NULL,
            report TEXT NOT NULL
        );
        CREATE INDEX runs_by_source ON runs (user, challenge, source_hash, grader_version, gpu);
        CREATE INDEX runs_by_board ON runs (challenge, gpu, secret_seed, verdict);
        CREATE TABLE cases (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            kind TEXT NOT NULL,
            label TEXT NOT NULL,
            verdict TEXT NOT NULL,
            scaled_error REAL,
            relative_frobenius REAL,
            call_s REAL
        );
        CREATE TABLE timings (
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_label TEXT NOT NULL,
            verdict TEXT NOT NULL,
            median_ms REAL,
            gflops REAL,
            baseline_ms REAL,
            percent_of_baseline REAL,
            samples_ms TEXT NOT NULL
        );
    """),
    # Memory-bound challenges: GB/s and % of the measured bandwidth beside GFLOP/s (existing rows keep NULL).
    ("0002_timings_bandwidth", """
        ALTER TABLE timings ADD COLUMN gbps REAL;
        ALTER TABLE timings ADD COLUMN percent_of_bandwidth REAL
    """),
    # A run may grade a queued submission (the class server's, grader.classroom, whose own tables are its
    # own migrations) and may be late; at most one run grades a submission (a job is graded exactly once).
    # Databases made before the classroom owned its tables have these columns already, from the classroom's
    # "0003_classroom": the step adds only what is missing.
    ("0003_runs_for_submissions", lambda db: _add_missing(db, "runs", (
        "submission_id INTEGER",
        "late INTEGER NOT NULL DEFAULT 0",
    ), "CREATE UNIQUE INDEX IF NOT EXISTS runs_by_submission ON runs (submission_id) WHERE submission_id IS NOT NULL")),
)


class StoreError(GraderError):
    exit_code = ExitCode.DATABASE


class AlreadyGraded(Exception):
    """A queued submission's run was offered twice: the second is dropped (never a user's error)."""


@dataclass(frozen=True)
class Run:
    id: int
    user: str
    challenge: str
    source_hash: str
    backend: str
    gpu: str | None
    verdict: Verdict
    level: int | None
    graded_at: str
    secret_seed: bool
    report: dict
    late: bool = False
    """Graded for a submission made after its challenge's deadline (the class server)."""
    submission_id: int | None = None

    @property
    def secret(self) -> bool:
        """Graded with a secret seed (derived from the class's): by the store's column (runs stored before reports said
        so have it too) or by the report itself. Either one is enough, so a mistake hides, never shows."""
        return self.secret_seed or bool(self.report.get("secret"))

    @property
    def medians_ms(self) -> dict[str, float]:
        return {p["label"]: p["stats"]["median_ms"] for p in self.report.get("performance", []) if p.get("stats")}


def _create_private(path: Path) -> None:
    """Create the database readable by its owner only (it holds every student's source and results;
    SQLite gives its -wal and -shm files the same mode). An existing file is left as it is."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass


class Store:
    """A results database. Open with `Store.open(path)` (creates it) or `Store.existing(path)` (never
    creates: a path with no database is a StoreError, even one that vanishes between the look and the open)."""

    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path, self.db = path, connection

    @classmethod
    def open(cls, path: Path) -> "Store":
        orphan = path.with_name(path.name + "-wal")
        if not path.exists() and orphan.is_file() and orphan.stat().st_size > 0:
            raise StoreError(f"no results database at {path}, but its write-ahead log {orphan} is there: the last "
                             "writes of a database that was deleted, which SQLite would replay into a new one",
                             hint=f"restore the database ({restore(path)}), or move {orphan} and {path}-shm aside "
                                  "to start a new one")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _create_private(path)
        except OSError as error:
            raise StoreError(f"cannot create the results database {path}: {error.strerror or error}",
                             hint="give this user write access to its folder, or point --db elsewhere") from error
        return cls._connect(path)

    @classmethod
    def existing(cls, path: Path, migrate: bool = True) -> "Store":
        """The database at `path`, which must exist. `migrate` false: the schema is taken as it is (a class
        server migrates once, at its start; its request threads only connect)."""
        if not path.is_file():
            raise StoreError(f"no results database at {path}",
                             hint="grade something first (grader submit --user NAME, grader grade DIR), "
                                  "or point --db at the right file")
        return cls._connect(path, create=False, migrate=migrate)

    @classmethod
    def _connect(cls, path: Path, create: bool = True, migrate: bool = True) -> "Store":
        try:
            # mode=rw never makes a file: a database deleted after the look is an error, not a new empty one
            where = path if create else f"file:{urllib.parse.quote(str(path))}?mode=rw"
            db = sqlite3.connect(where, timeout=busy_timeout_s(), isolation_level=None, uri=not create)
        except sqlite3.DatabaseError as exc:
            if not create and not path.is_file():
                raise StoreError(f"no results database at {path} (it went away while it was being opened)",
                                 hint="point --db at the right file, or restore it from a backup") from exc
            raise _explain(exc, path) from exc
        try:
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            # commits reach the WAL file before they return, with no fsync each: a process killed at any
            # point (kill -9 included) loses nothing committed; only a power cut may lose the last ones
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA foreign_keys=ON")
            store = cls(path, db)
            if migrate:
                store._migrate()
            return store
        except BaseException as exc:
            db.close()
            if isinstance(exc, sqlite3.DatabaseError):
                raise _explain(exc, path) from exc
            raise

    def close(self) -> None:
        self.db.close()

    def check(self) -> None:
        """StoreError unless SQLite's quick check finds every page sound (a file with damaged pages opens
        and serves until a read meets them: a server checks at its start instead)."""
        try:
            problems = [row[0] for row in self.db.execute("PRAGMA quick_check(5)")]
        except sqlite3.DatabaseError as exc:
            raise _explain(exc, self.path) from exc
        if problems != ["ok"]:
            raise _explain(sqlite3.DatabaseError("database disk image is malformed: " + "; ".join(problems)), self.path)

    def check_writable(self) -> None:
        """StoreError unless this process can write the database now: a read-only file (or folder, or file
        system) and a lock another process holds past the busy timeout are said at once, not at the first
        write (a class server checks at its start)."""
        try:
            with self.transaction():
                self.db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
                self.db.execute("DELETE FROM schema_migrations WHERE name = ''")  # a write that changes nothing
        except sqlite3.DatabaseError as exc:
            raise _explain(exc, self.path) from exc

    @contextlib.contextmanager
    def transaction(self):
        """A write transaction, all of it or nothing. Writers in one process queue on a lock first, so
        they never meet in SQLite's busy handler, which sleeps in steps of up to 100 ms (a class
        server's 50 uploads at once waited 600 ms there); other processes still wait on the file lock.
        The wait for that lock is bounded as SQLite's is: writers queued behind one that waits on another
        process's lock would otherwise wait one after the other, each for the whole busy timeout, and hold
        every thread of a server that should be answering."""
        lock = _writer_lock(self.path)
        if not lock.acquire(timeout=busy_timeout_s()):
            raise _explain(sqlite3.OperationalError("database is locked (by a writer of this process)"), self.path)
        try:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
                self.db.execute("COMMIT")
            except BaseException:
                if self.db.in_transaction:
                    self.db.execute("ROLLBACK")
                raise
        finally:
            lock.release()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema
    def _migrate(self) -> None:
        self.apply(MIGRATIONS)

    def apply(self, migrations: tuple[tuple[str, Step], ...]) -> None:
        """Apply the named migrations this database has not had yet, in order, all in one transaction, and
        record them. The core's are applied on opening; a layer with tables of its own (the class server)
        applies its own, under names of its own, when it opens the store. Whether any is due is read
        first, without a write lock: a database that has them all is opened without waiting for a writer."""
        if not self._pending(migrations):
            return
        self.db.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
        try:
            self.db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {row["name"] for row in self.db.execute("SELECT name FROM schema_migrations")}
            for name, step in migrations:
                if name in done:
                    continue
                if callable(step):
                    step(self.db)
                else:
                    for statement in filter(str.strip, step.split(";")):
                        self.db.execute(statement)
                self.db.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, _now()))
            self.db.execute("COMMIT")
        except BaseException as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
            if isinstance(exc, sqlite3.DatabaseError):
                raise _explain(exc, self.path) from exc
            raise

    def _pending(self, migrations: tuple[tuple[str, Step], ...]) -> list[str]:
        """The migrations not recorded yet, by a plain read (all of them where nothing is recorded)."""
        try:
            done = {row[0] for row in self.db.execute("SELECT name FROM schema_migrations")}
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise _explain(exc, self.path) from exc
            done = set()
        return [name for name, _ in migrations if name not in done]

    def migrations(self) -> list[str]:
        return [row["name"] for row in self.db.execute("SELECT name FROM schema_migrations ORDER BY name")]

    # -- writing
    def record(self, report: GradeReport, user: str, source_path: Path | str, source: Source, secret_seed: bool,
               submission_id: int | None = None, late: bool = False,
               then: Callable[[sqlite3.Connection, int], None] | None = None) -> int:
        """Keep one grading run, all of it or nothing: the whole report, secret seed and randomized shapes
        included (the database is the instructor's, owner-only); what students see is redacted where
        it is made (grader.results.public). A report marked secret is stored as secret either way.
        `source` is the Source that was graded, text and hash as read (the hash of the file's bytes).
        `submission_id` names the queued submission (the class server's) the run grades: at most one run
        may name it, so a second report for one job raises AlreadyGraded and nothing is kept. `then(db,
        run_id)` runs inside the same transaction, so the run and what the caller records with it (the
        class server marks its submission done: grader.classroom.queue.finish) are kept together or not at
        all; it may raise AlreadyGraded too."""
        secret_seed = secret_seed or report.secret
        data = to_json(report)
        env = report.environment
        placement = report.placement
        row = (user, report.challenge, report.challenge_version, str(source_path), source.sha256, source.text,
               env.backend, env.gpu, env.driver, env.nvcc, report.grader_version, report.seed, int(secret_seed),
               report.mode.value, report.verdict.name, report.message, placement.level if placement else None,
               report.wall_s, _now(), json.dumps(data), submission_id, int(late))
        try:
            with self.transaction():
                run_id = self.db.execute(
                    "INSERT INTO runs (user, challenge, challenge_version, source_path, source_hash, source, backend, "
                    "gpu, driver, nvcc, grader_version, seed, secret_seed, mode, verdict, message, level, wall_s, "
                    "graded_at, report, submission_id, late) VALUES (" + ", ".join("?" * len(row)) + ")", row).lastrowid
                self._record_cases(run_id, report)
                self._record_timings(run_id, report)
                if then is not None:
                    then(self.db, run_id)
            return run_id
        except sqlite3.IntegrityError as exc:
            if submission_id is not None and "submission_id" in str(exc):
                raise AlreadyGraded(f"submission {submission_id} has a run already") from exc
            raise _explain(exc, self.path) from exc
        except sqlite3.DatabaseError as exc:
            raise _explain(exc, self.path) from exc

    def _record_cases(self, run_id: int, report: GradeReport) -> None:
        for position, case in enumerate(report.cases):
            first = case.comparisons[0] if case.comparisons else None
            self.db.execute("INSERT INTO cases VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                            (run_id, position, case.kind.value, case.label, case.verdict.name,
                             _finite(first.scaled_error) if first else None,
                             _finite(first.relative_frobenius) if first else None, case.call_s))

    def _record_timings(self, run_id: int, report: GradeReport) -> None:
        for p in report.performance:
            samples = list(p.stats.samples_ms) if p.stats else []
            self.db.execute("INSERT INTO timings (run_id, case_label, verdict, median_ms, gflops, baseline_ms, "
                            "percent_of_baseline, samples_ms, gbps, percent_of_bandwidth) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            (run_id, p.label, p.verdict.name, p.stats.median_ms if p.stats else None, p.gflops,
                             p.baseline.median_ms if p.baseline else None, p.percent_of_baseline, json.dumps(samples),
                             p.gbps, p.percent_of_bandwidth))

    # -- reading
    def already_graded(self, user: str, challenge: str, digest: str, grader_version: str, gpu: str | None,
                       secret: bool) -> bool:
        """This user's source graded before by this grader version on this GPU (a copy under another
        name is another student's submission and is graded again). A run the grader itself could not
        finish (GRADER_ERROR) does not count: the next batch grades that file again."""
        rows = self.db.execute(
            "SELECT verdict, message FROM runs WHERE user = ? AND challenge = ? AND source_hash = ? "
            "AND grader_version = ? AND gpu IS ? AND secret_seed = ?",
            (user, challenge, digest, grader_version, gpu, int(secret))).fetchall()
        return any(_verdict(verdict, message).judges for verdict, message in rows)

    def runs(self, challenge: str, gpu: str | None = None, secret_only: bool = False) -> list[Run]:
        sql = "SELECT * FROM runs WHERE challenge = ?"
        args: list = [challenge]
        if gpu is not None:
            sql, args = sql + " AND gpu IS ?", args + [gpu]
        if secret_only:
            sql += " AND secret_seed = 1"
        try:
            rows = self.db.execute(sql + " ORDER BY id", args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise _explain(exc, self.path) from exc
        return [_run(r) for r in rows]

    def run(self, run_id: int) -> Run | None:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        return _run(row) if row else None

    def gpus(self, challenge: str) -> list[tuple[str | None, int]]:
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT gpu, COUNT(*) FROM runs WHERE challenge = ? GROUP BY gpu ORDER BY COUNT(*) DESC", (challenge,))]


_WRITERS: dict[str, threading.Lock] = {}
_WRITERS_LOCK = threading.Lock()


def _writer_lock(path: Path) -> threading.Lock:
    with _WRITERS_LOCK:
        return _WRITERS.setdefault(str(path), threading.Lock())


def busy_timeout_s() -> float:
    """BUSY_TIMEOUT_S, or the seconds BUSY_TIMEOUT_ENV gives."""
    text = os.environ.get(BUSY_TIMEOUT_ENV)
    if text is None:
        return BUSY_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value < 86400:
        raise StoreError(f"{BUSY_TIMEOUT_ENV}={text!r} is not a number of seconds",
                         hint=f"unset it (the default is {BUSY_TIMEOUT_S:g} s) or give a positive number")
    return value


def _run(r: sqlite3.Row) -> Run:
    return Run(r["id"], r["user"], r["challenge"], r["source_hash"], r["backend"], r["gpu"],
               _verdict(r["verdict"], r["message"]), r["level"], r["graded_at"], bool(r["secret_seed"]),
               json.loads(r["report"]), bool(r["late"]), r["submission_id"])


def restore(path: Path) -> str:
    """How to put a backup in place of the database at `path`: its -wal and -shm files go first, since
    SQLite would replay a write-ahead log left there into the restored file."""
    return f"rm -f {path}-wal {path}-shm; cp BACKUP {path}, with a copy `grader backup` made"


def explain(exc: sqlite3.DatabaseError, path: Path) -> StoreError:
    """SQLite's error on the database at `path` as a StoreError saying what to do."""
    return _explain(exc, path)


def _explain(exc: sqlite3.DatabaseError, path: Path) -> StoreError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(f"the results database {path} stayed locked for {busy_timeout_s():g} s: {text}",
                          hint="another grader process holds it; wait for it to finish, or check for a hung process")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreError(f"the results database {path} is damaged: {text}",
                          hint=f"restore a backup ({restore(path)}), or move it aside "
                               f"(mv {path} {path}.damaged) to start a new one")
    if "readonly" in text or "read-only" in text or "unable to open" in text:
        return StoreError(f"the results database {path} cannot be written: {text}",
                          hint="the file, its folder (SQLite writes its -wal and -shm files there) or its file system "
                               "is read-only, or the file is immutable (lsattr); give this user write access to both")
    return StoreError(f"the results database {path} failed: {text}", hint="check the file's permissions and free disk space")


def _add_missing(db: sqlite3.Connection, table: str, columns: tuple[str, ...], *then: str) -> None:
    """Add each column ("name TYPE ...") the table lacks, then run the statements given (idempotent ones)."""
    have = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
    for column in columns:
        if column.split()[0] not in have:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column}")
    for statement in then:
        db.execute(statement)


def _finite(value: float | None) -> float | None:
    return value if value is not None and value == value and abs(value) != float("inf") else None


def now() -> str:
    """The store's clock: UTC, ISO 8601, to the second."""
    return _now()


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _verdict(name: str, message: str) -> Verdict:
    """A stored verdict, typed. Runs the grader failed on were kept as RUNTIME_ERROR with a message saying so
    (results.GRADER_FAILURE) before GRADER_ERROR existed: they read back as what they are."""
    verdict = Verdict[name]
    if verdict is Verdict.RUNTIME_ERROR and message.startswith(GRADER_FAILURE):
        return Verdict.GRADER_ERROR
    return verdict
