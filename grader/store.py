"""The store stage: every grading run kept in SQLite, for leaderboards and the gradebook.

One transaction per run, so a process killed mid-write leaves the database as it was before that
run; WAL mode and a busy timeout let many `grader submit` processes write at once without losing
any. The schema changes through named, ordered migrations recorded in the database itself.
"""

from __future__ import annotations

import datetime
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from grader.errors import GraderError
from grader.exitcodes import ExitCode
from grader.results import GRADER_FAILURE, GradeReport, to_json
from grader.source import Source
from grader.verdict import Verdict

BUSY_TIMEOUT_S = 60.0

MIGRATIONS: tuple[tuple[str, str], ...] = (
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
)


class StoreError(GraderError):
    exit_code = ExitCode.DATABASE


@dataclass(frozen=True)
class Run:
    id: int
    user: str
    challenge: str
    source_hash: str
    backend: str
    gpu: str | None
    verdict: str
    level: int | None
    graded_at: str
    secret_seed: bool
    report: dict

    @property
    def secret(self) -> bool:
        """Graded with the class's secret seed: by the store's column (runs stored before reports said
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
    """A results database. Open with `Store.open(path)` (creates it) or `Store.existing(path)`."""

    def __init__(self, path: Path, connection: sqlite3.Connection):
        self.path, self.db = path, connection

    @classmethod
    def open(cls, path: Path) -> "Store":
        path.parent.mkdir(parents=True, exist_ok=True)
        _create_private(path)
        return cls._connect(path)

    @classmethod
    def existing(cls, path: Path) -> "Store":
        if not path.is_file():
            raise StoreError(f"no results database at {path}",
                             hint="grade something first (grader submit --user NAME, grader grade DIR), "
                                  "or point --db at the right file")
        return cls._connect(path)

    @classmethod
    def _connect(cls, path: Path) -> "Store":
        try:
            db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA foreign_keys=ON")
            store = cls(path, db)
            store._migrate()
            return store
        except sqlite3.DatabaseError as exc:
            raise _explain(exc, path) from exc

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- schema
    def _migrate(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
        try:
            self.db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
            done = {row["name"] for row in self.db.execute("SELECT name FROM schema_migrations")}
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                for statement in filter(str.strip, sql.split(";")):
                    self.db.execute(statement)
                self.db.execute("INSERT INTO schema_migrations VALUES (?, ?)", (name, _now()))
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def migrations(self) -> list[str]:
        return [row["name"] for row in self.db.execute("SELECT name FROM schema_migrations ORDER BY name")]

    # -- writing
    def record(self, report: GradeReport, user: str, source_path: Path, source: Source, secret_seed: bool) -> int:
        """Keep one grading run, all of it or nothing: the whole report, secret seed and randomized shapes
        included (the database is the instructor's, owner-only); what students see is redacted where
        it is made (grader.results.public). A report marked secret is stored as secret either way.
        `source` is the Source that was graded, text and hash as read (the hash of the file's bytes)."""
        secret_seed = secret_seed or report.secret
        data = to_json(report)
        env = report.environment
        placement = report.placement
        row = (user, report.challenge, report.challenge_version, str(source_path), source.sha256, source.text,
               env.backend, env.gpu, env.driver, env.nvcc, report.grader_version, report.seed, int(secret_seed),
               report.mode.value, report.verdict.name, report.message, placement.level if placement else None,
               report.wall_s, _now(), json.dumps(data))
        try:
            self.db.execute("BEGIN IMMEDIATE")
            run_id = self.db.execute(
                "INSERT INTO runs (user, challenge, challenge_version, source_path, source_hash, source, backend, gpu, "
                "driver, nvcc, grader_version, seed, secret_seed, mode, verdict, message, level, wall_s, graded_at, "
                "report) VALUES (" + ", ".join("?" * len(row)) + ")", row).lastrowid
            self._record_cases(run_id, report)
            self._record_timings(run_id, report)
            self.db.execute("COMMIT")
            return run_id
        except sqlite3.DatabaseError as exc:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
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
        finish (results.GRADER_FAILURE) does not count: the next batch grades that file again."""
        rows = self.db.execute(
            "SELECT verdict, report FROM runs WHERE user = ? AND challenge = ? AND source_hash = ? "
            "AND grader_version = ? AND gpu IS ? AND secret_seed = ?",
            (user, challenge, digest, grader_version, gpu, int(secret))).fetchall()
        return any(not _grader_failure(verdict, report) for verdict, report in rows)

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
        return [Run(r["id"], r["user"], r["challenge"], r["source_hash"], r["backend"], r["gpu"], r["verdict"], r["level"],
                    r["graded_at"], bool(r["secret_seed"]), json.loads(r["report"])) for r in rows]

    def gpus(self, challenge: str) -> list[tuple[str | None, int]]:
        return [(r[0], r[1]) for r in self.db.execute(
            "SELECT gpu, COUNT(*) FROM runs WHERE challenge = ? GROUP BY gpu ORDER BY COUNT(*) DESC", (challenge,))]


def _explain(exc: sqlite3.DatabaseError, path: Path) -> StoreError:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return StoreError(f"the results database {path} stayed locked for {BUSY_TIMEOUT_S:g} s: {text}",
                          hint="another grader process holds it; wait for it to finish, or check for a hung process")
    if "not a database" in text or "malformed" in text or "corrupt" in text:
        return StoreError(f"the results database {path} is damaged: {text}",
                          hint=f"move it aside (mv {path} {path}.damaged) to start a new one, or restore a backup")
    return StoreError(f"the results database {path} failed: {text}", hint="check the file's permissions and free disk space")


def _finite(value: float | None) -> float | None:
    return value if value is not None and value == value and abs(value) != float("inf") else None


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _grader_failure(verdict: str, report_json: str) -> bool:
    if verdict != Verdict.RUNTIME_ERROR.name:
        return False
    try:
        return str(json.loads(report_json).get("message", "")).startswith(GRADER_FAILURE)
    except (ValueError, AttributeError):
        return False
