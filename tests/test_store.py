"""The results database: migrations, records, concurrency and failure handling (no GPU)."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import signal
import sqlite3
import subprocess
import sys

import pytest

from grader import store
from grader.exitcodes import ExitCode
from grader.results import Mode
from grader.verdict import Verdict

from conftest import text_source
from test_report import grade_report, perf


def test_migrations_are_applied_once_and_recorded(tmp_path):
    db = tmp_path / "r.sqlite3"
    with store.Store.open(db) as s:
        assert s.migrations() == [name for name, _ in store.MIGRATIONS]
    with store.Store.open(db) as s:  # reopening applies nothing twice
        assert len(s.migrations()) == len(store.MIGRATIONS)


def test_a_run_is_kept_whole(tmp_path):
    report = grade_report(performance=[perf()])
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        source = text_source("__global__ void k() {}", "alice.cu")
        run_id = s.record(report, "alice", tmp_path / "alice.cu", source, secret_seed=True)
        row = s.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        assert (row["user"], row["verdict"], row["gpu"], row["seed"], row["secret_seed"]) == ("alice", "ACCEPTED", "NVIDIA H200", 42, 1)
        assert row["source"] == "__global__ void k() {}"
        assert row["source_hash"] == source.sha256 == hashlib.sha256(b"__global__ void k() {}").hexdigest()
        assert s.db.execute("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,)).fetchone()[0] == 1
        timing = s.db.execute("SELECT * FROM timings WHERE run_id = ?", (run_id,)).fetchone()
        assert timing["median_ms"] == pytest.approx(81.6) and timing["samples_ms"] == "[81.6, 81.7, 81.5]"
        assert s.already_graded("alice", "matmul", row["source_hash"], "0.1.0", "NVIDIA H200", secret=True)
        assert not s.already_graded("alice", "matmul", row["source_hash"], "0.1.0", "NVIDIA H100", secret=True)
        assert not s.already_graded("bob", "matmul", row["source_hash"], "0.1.0", "NVIDIA H200", secret=True)
        (run,) = s.runs("matmul", "NVIDIA H200", secret_only=True)
        assert run.medians_ms == {"leetgpu 8192×6144×4096": pytest.approx(81.6)}


def test_missing_database_says_what_to_do(tmp_path):
    with pytest.raises(store.StoreError) as error:
        store.Store.existing(tmp_path / "none.sqlite3")
    assert error.value.exit_code == ExitCode.DATABASE and "grade something first" in error.value.hint


def test_damaged_database_says_what_to_do(tmp_path):
    db = tmp_path / "r.sqlite3"
    db.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(store.StoreError) as error:
        store.Store.existing(db)
    assert "damaged" in error.value.message and "mv " in error.value.hint


def test_locked_database_times_out_with_a_clear_error(tmp_path, monkeypatch):
    db = tmp_path / "r.sqlite3"
    store.Store.open(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    monkeypatch.setattr(store, "BUSY_TIMEOUT_S", 0.3)
    with pytest.raises(store.StoreError, match="locked"):
        with store.Store.open(db) as s:
            s.record(grade_report(), "bob", tmp_path / "b.cu", text_source("x"), secret_seed=False)
    holder.execute("ROLLBACK")


KILLED_WRITER = """
import os, signal, sys
sys.path.insert(0, sys.argv[2])
from grader import store
s = store.Store.open(__import__("pathlib").Path(sys.argv[1]))
s.db.execute("BEGIN IMMEDIATE")
s.db.execute("INSERT INTO runs (user, challenge, challenge_version, source_path, source_hash, source, backend, "
             "grader_version, seed, secret_seed, mode, verdict, message, wall_s, graded_at, report) "
             "VALUES ('ghost', 'matmul', 1, 'x', 'h', 's', 'cuda', '0', 1, 1, 'run', 'ACCEPTED', '', 0, 'now', '{}')")
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_writer_killed_mid_run_leaves_the_database_consistent(tmp_path):
    db = tmp_path / "r.sqlite3"
    with store.Store.open(db) as s:
        s.record(grade_report(), "alice", tmp_path / "a.cu", text_source("x"), secret_seed=True)
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(db), os.getcwd()])
    assert proc.returncode == -signal.SIGKILL
    with store.Store.existing(db) as s:
        assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [r.user for r in s.runs("matmul")] == ["alice"]


def test_concurrent_writers_lose_nothing(tmp_path):
    db = tmp_path / "r.sqlite3"
    script = ("import sys; sys.path.insert(0, sys.argv[3]); from pathlib import Path; from grader import store; "
              "from grader.source import from_bytes; from test_report import grade_report; "
              "s = store.Store.open(Path(sys.argv[1])); "
              "[s.record(grade_report(), sys.argv[2], Path('x.cu'), from_bytes(b'%d' % i, 'x.cu'), True) "
              "for i in range(20)]")
    env = dict(os.environ, PYTHONPATH=os.path.join(os.getcwd(), "tests"))
    procs = [subprocess.Popen([sys.executable, "-c", script, str(db), f"user{i}", os.getcwd()], env=env) for i in range(8)]
    assert [p.wait(timeout=120) for p in procs] == [0] * 8
    with store.Store.existing(db) as s:
        assert len(s.runs("matmul")) == 160


def test_a_new_database_and_its_journal_are_readable_by_the_owner_only(tmp_path):
    import stat
    path = tmp_path / "class" / "results.sqlite3"
    with store.Store.open(path) as s:
        s.record(grade_report(), "alice", tmp_path / "a.cu", text_source("x"), secret_seed=True)
        for file in [path, path.with_name(path.name + "-wal")]:
            assert file.exists() and stat.S_IMODE(file.stat().st_mode) & 0o077 == 0, oct(file.stat().st_mode)


def test_a_database_from_before_the_bandwidth_columns_is_migrated_with_nothing_lost(tmp_path, monkeypatch):
    from test_report import memory_bound_perf
    db = tmp_path / "r.sqlite3"
    monkeypatch.setattr(store, "MIGRATIONS", store.MIGRATIONS[:1])
    with store.Store.open(db) as old:  # a run recorded before the migration: the old INSERT, by hand
        run_id = old.db.execute(
            "INSERT INTO runs (user, challenge, challenge_version, source_path, source_hash, source, backend, "
            "grader_version, seed, secret_seed, mode, verdict, message, wall_s, graded_at, report) VALUES "
            "('alice', 'matmul', 1, 'a.cu', 'h', 'x', 'cuda', '0', 1, 0, 'submit', 'ACCEPTED', '', 1.0, "
            "'2026-01-01T00:00:00+00:00', '{}')").lastrowid
        old.db.execute("INSERT INTO timings (run_id, case_label, verdict, median_ms, gflops, baseline_ms, "
                       "percent_of_baseline, samples_ms) VALUES (?, 'leetgpu', 'ACCEPTED', 81.6, 50525, 8.14, 10, '[]')",
                       (run_id,))
    monkeypatch.undo()
    with store.Store.open(db) as s:
        assert s.migrations() == [name for name, _ in store.MIGRATIONS]
        kept = s.db.execute("SELECT median_ms, gflops, gbps FROM timings WHERE case_label = 'leetgpu'").fetchone()
        assert tuple(kept) == (81.6, 50525, None)
        run_id = s.record(grade_report(performance=[memory_bound_perf()]), "bob", tmp_path / "b.cu", text_source("x"),
                          False)
        row = s.db.execute("SELECT gflops, gbps, percent_of_bandwidth FROM timings WHERE run_id = ?", (run_id,)).fetchone()
        assert row["gflops"] is None and round(row["gbps"]) == 3660 and round(row["percent_of_bandwidth"]) == 89


def test_stored_verdicts_come_back_typed_and_old_grader_failures_as_grader_errors(tmp_path):
    """Before GRADER_ERROR, a run the grader failed on was kept as RUNTIME_ERROR whose message began with
    results.GRADER_FAILURE: such rows read back as GRADER_ERROR, and neither kind stops a regrade."""
    from grader.results import GRADER_FAILURE

    source = text_source("// a", "a.cu")
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        old = s.record(dataclasses.replace(grade_report(Verdict.RUNTIME_ERROR), message=f"{GRADER_FAILURE} (boom)"),
                       "amy", "a.cu", source, True)
        crashed = s.record(grade_report(Verdict.RUNTIME_ERROR, message="the submission crashed"), "bob", "a.cu",
                           source, True)
        assert s.run(old).verdict is Verdict.GRADER_ERROR and s.run(crashed).verdict is Verdict.RUNTIME_ERROR
        env = grade_report().environment
        assert not s.already_graded("amy", "matmul", source.sha256, grade_report().grader_version, env.gpu, True)
        assert s.already_graded("bob", "matmul", source.sha256, grade_report().grader_version, env.gpu, True)
        new = s.record(grade_report(Verdict.GRADER_ERROR), "amy", "a.cu", source, True)
        assert s.run(new).verdict is Verdict.GRADER_ERROR
        assert not s.already_graded("amy", "matmul", source.sha256, grade_report().grader_version, env.gpu, True)


def test_the_core_store_has_no_class_tables_and_the_classroom_adds_its_own(tmp_path):
    from grader.classroom import schema
    db = tmp_path / "r.sqlite3"
    with store.Store.open(db) as s:
        tables = {r[0] for r in s.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"runs", "cases", "timings"} <= tables and not tables & {"people", "submissions", "deadlines"}
    with schema.open_class(db) as s:
        tables = {r[0] for r in s.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"people", "submissions", "deadlines"} <= tables
        assert s.migrations() == sorted([name for name, _ in store.MIGRATIONS] + [name for name, _ in schema.MIGRATIONS])
    with pytest.raises(store.StoreError, match="no results database"):
        schema.open_class(tmp_path / "missing.sqlite3", create=False)


# The schema of databases made when the core store created the class server's tables (migration
# "0003_classroom"), as it was: such a database must open under the split schema with nothing lost.
OLD_CLASSROOM_MIGRATION = """
    CREATE TABLE people (name TEXT PRIMARY KEY, role TEXT NOT NULL, token_hash TEXT NOT NULL UNIQUE,
                         added_at TEXT NOT NULL);
    CREATE TABLE submissions (id INTEGER PRIMARY KEY, user TEXT NOT NULL, challenge TEXT NOT NULL,
        filename TEXT NOT NULL, source TEXT NOT NULL, source_hash TEXT NOT NULL, submitted_at TEXT NOT NULL,
        late INTEGER NOT NULL, state TEXT NOT NULL, claim_seq INTEGER, claims INTEGER NOT NULL DEFAULT 0,
        run_id INTEGER REFERENCES runs(id), finished_at TEXT, report_text TEXT);
    CREATE INDEX submissions_by_state ON submissions (state, id);
    CREATE INDEX submissions_by_user ON submissions (user, challenge, state);
    CREATE TABLE deadlines (challenge TEXT PRIMARY KEY, due_at TEXT NOT NULL);
    ALTER TABLE runs ADD COLUMN submission_id INTEGER;
    ALTER TABLE runs ADD COLUMN late INTEGER NOT NULL DEFAULT 0;
    CREATE UNIQUE INDEX runs_by_submission ON runs (submission_id) WHERE submission_id IS NOT NULL
"""


def test_a_database_whose_class_tables_the_core_made_opens_with_nothing_lost(tmp_path, monkeypatch):
    from grader.classroom import queue, roster, schema
    db = tmp_path / "class.sqlite3"
    monkeypatch.setattr(store, "MIGRATIONS", store.MIGRATIONS[:2])
    with store.Store.open(db) as old:
        old.apply((("0003_classroom", OLD_CLASSROOM_MIGRATION),))
        token = "alice's token"  # added as the grader of that time did (the roster has had columns since)
        old.db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES ('alice', 'student', ?, ?)",
                       (roster.token_hash(token), store.now()))
        sub = old.db.execute(  # as that version queued it: its table has no upload key
            "INSERT INTO submissions (user, challenge, filename, source, source_hash, submitted_at, late, state) "
            "VALUES ('alice', 'vector_add', 'a.cu', 'x', 'h', '2026-01-01T00:00:00+00:00', 0, 'queued')").lastrowid
    monkeypatch.undo()
    with schema.open_class(db) as s:
        assert "0003_classroom" in s.migrations() and "0003_runs_for_submissions" in s.migrations()
        assert "classroom_0003_upload_keys" in s.migrations()
        assert roster.authenticate(s, token).name == "alice" and queue.get(s, sub).state is queue.State.QUEUED
        claimed = queue.claim(s)
        s.record(grade_report(), "alice", "a.cu", text_source("x"), True, submission_id=claimed.id,
                 then=queue.finish(claimed.id, "shown"))
        assert queue.get(s, sub).state is queue.State.DONE
        with pytest.raises(store.AlreadyGraded):  # the old unique index still holds: one run per submission
            s.record(grade_report(), "alice", "a.cu", text_source("x"), True, submission_id=claimed.id)


def test_opening_a_migrated_database_does_not_wait_behind_a_writer(tmp_path, monkeypatch):
    """Every connection used to migrate inside BEGIN IMMEDIATE, so a class server's read-only requests
    waited behind any other process's write; nothing is due here, so opening only reads."""
    from grader.classroom import schema
    db = tmp_path / "r.sqlite3"
    schema.open_class(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    monkeypatch.setattr(store, "BUSY_TIMEOUT_S", 0.2)  # were a write lock needed, these would fail: "locked"
    try:
        with store.Store.existing(db) as s, schema.open_class(db, create=False) as c:
            assert s.runs("matmul") == [] and c.db.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 0
        with pytest.raises(store.StoreError, match="stayed locked for 0.2 s"):
            with store.Store.existing(db) as s:
                s.check_writable()
    finally:
        holder.execute("ROLLBACK")


def test_an_existing_database_is_never_created_by_opening_it(tmp_path):
    missing = tmp_path / "gone.sqlite3"
    with pytest.raises(store.StoreError, match="no results database"):
        store.Store._connect(missing, create=False)  # the look passed, the file went before the open
    assert not missing.exists()


def test_damaged_pages_are_found_by_the_check_though_the_file_opens(tmp_path):
    from grader.classroom import schema
    db = tmp_path / "r.sqlite3"
    schema.open_class(db).close()
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as c:
        c.execute("BEGIN")
        c.executemany("INSERT INTO deadlines VALUES (?, ?)", [(f"c{i}" * 40, "x" * 900) for i in range(300)])
        c.execute("COMMIT")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    data[4096 * 20:4096 * 21] = b"\x55" * 4096
    db.write_bytes(bytes(data))
    with store.Store.existing(db, migrate=False) as s:
        assert s.db.execute("SELECT COUNT(*) FROM people").fetchone()[0] == 0, "reads that miss the page work"
        with pytest.raises(store.StoreError, match="damaged") as error:
            s.check()
    assert error.value.exit_code == ExitCode.DATABASE and "grader backup" in error.value.hint


def test_a_read_only_database_is_said_at_once(tmp_path):
    from faults import read_only
    db = tmp_path / "r.sqlite3"
    store.Store.open(db).close()
    with read_only(db), store.Store.existing(db) as s:
        assert s.runs("matmul") == []
        with pytest.raises(store.StoreError, match="cannot be written") as error:
            s.check_writable()
    assert error.value.exit_code == ExitCode.DATABASE


def test_a_new_database_is_not_paired_with_a_deleted_ones_write_ahead_log(tmp_path):
    db = tmp_path / "r.sqlite3"
    with store.Store.open(db) as s:
        s.record(grade_report(), "alice", tmp_path / "a.cu", text_source("x"), secret_seed=True)
        wal = db.with_name(db.name + "-wal")
        assert wal.stat().st_size > 0
        db.unlink()
        with pytest.raises(store.StoreError, match="write-ahead log") as error:
            store.Store.open(db)
    assert "aside" in error.value.hint and not db.exists()


def test_the_busy_timeout_can_be_set_for_every_database_of_a_process(monkeypatch):
    monkeypatch.setenv(store.BUSY_TIMEOUT_ENV, "2.5")
    assert store.busy_timeout_s() == 2.5
    monkeypatch.setenv(store.BUSY_TIMEOUT_ENV, "soon")
    with pytest.raises(store.StoreError, match="not a number of seconds"):
        store.busy_timeout_s()
