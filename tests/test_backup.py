"""`grader backup`: a consistent, owner-only, checked copy of a results database, taken while another
process keeps writing to it (as a class server does)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from conftest import ROOT, text_source
from grader import backup, store
from grader.errors import UsageError
from test_report import grade_report

CASES = len(grade_report().cases)


def _writer(db, stop: threading.Event, written: list[int], started: threading.Event) -> None:
    """Keep runs, each with its cases in one transaction, until told to stop."""
    with store.Store.open(db) as s:
        i = 0
        while not stop.is_set():
            written.append(s.record(grade_report(), f"user{i % 7}", "x.cu", text_source(str(i)), secret_seed=True))
            i += 1
            if i == 20:
                started.set()


def _consistent(copy) -> int:
    """The copy opens, passes SQLite's checks, and holds every run with all its cases: no run half-kept."""
    with store.Store.existing(copy) as s:
        assert s.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        runs = s.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        per_run = {n for (n,) in s.db.execute("SELECT COUNT(c.run_id) FROM runs r LEFT JOIN cases c ON c.run_id = r.id "
                                              "GROUP BY r.id")}
    assert per_run <= {CASES}, per_run
    assert not copy.with_name(copy.name + "-wal").exists() or copy.with_name(copy.name + "-wal").stat().st_size == 0
    return runs


def test_backups_taken_while_another_process_writes_are_consistent_and_private(tmp_path):
    db = tmp_path / "class.sqlite3"
    store.Store.open(db).close()
    stop, started, written = threading.Event(), threading.Event(), []
    writer = threading.Thread(target=_writer, args=(db, stop, written, started))
    writer.start()
    try:
        assert started.wait(60), "the writer never got going"
        made = [backup.backup(db, tmp_path / f"copy{i}.sqlite3") for i in range(3)]
        cli = subprocess.run([sys.executable, "-m", "grader", "backup", "--db", str(db), str(tmp_path / "cli.sqlite3"),
                              "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert cli.returncode == 0, cli.stderr
    finally:
        stop.set()
        writer.join(60)
    counts = [_consistent(m.copy) for m in made] + [_consistent(tmp_path / "cli.sqlite3")]
    assert counts == sorted(counts) and counts[0] >= 20 and counts[-1] <= len(written), (counts, len(written))
    assert [m.rows["runs"] for m in made] == counts[:3]
    answer = json.loads(cli.stdout)
    assert answer["check"] == "ok" and answer["rows"]["runs"] == counts[-1] and answer["backup"].endswith("cli.sqlite3")
    for path in [m.copy for m in made] + [tmp_path / "cli.sqlite3"]:
        assert path.stat().st_mode & 0o777 == 0o600, path
    assert not list(tmp_path.glob(".*.partial")), "no partial copy left behind"


def test_a_backup_never_overwrites_unless_forced(tmp_path):
    db = tmp_path / "class.sqlite3"
    with store.Store.open(db) as s:
        s.record(grade_report(), "alice", "a.cu", text_source("a"), secret_seed=True)
    out = tmp_path / "copy.sqlite3"
    out.write_text("my notes")
    with pytest.raises(UsageError, match="exists") as refused:
        backup.backup(db, out)
    assert "--force" in refused.value.hint and out.read_text() == "my notes"
    with pytest.raises(UsageError, match="the database itself"):
        backup.backup(db, db, force=True)
    assert backup.backup(db, out, force=True).rows == {"runs": 1}
    with sqlite3.connect(out) as c:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "delete", "one self-contained file"
    refused = subprocess.run([sys.executable, "-m", "grader", "backup", "--db", str(db), str(out), "--json"],
                             cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and json.loads(refused.stdout)["exit_code"] == 2


def test_a_missing_database_is_not_made_by_a_backup(tmp_path):
    with pytest.raises(store.StoreError, match="no results database"):
        backup.backup(tmp_path / "none.sqlite3", tmp_path / "copy.sqlite3")
    assert not (tmp_path / "none.sqlite3").exists() and not (tmp_path / "copy.sqlite3").exists()
    assert os.listdir(tmp_path) == []
