"""Faults injected for real into a running class server (`grader serve` on 127.0.0.1, the CPU emulator
grading tests/challenges/tiny_add), and at its start:

- the grading process or the sandboxed worker killed from outside while a job runs: graded once more,
  with the verdict the code deserves; killed twice, GRADER_ERROR, no attempt counted; a submission that
  kills itself keeps its own RUNTIME_ERROR (locally too, where a kill from outside says so);
- the database deleted while serving: work refused (503), nothing stored, no new file; no restart on it;
- a database damaged, read-only, locked or replaced by an empty file at the start: exit 5, saying why.

Kills land while the worker waits at a gate the test opens (tests/faults.py), never by timing luck."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys

import httpx
import pytest

from class_server import Server, add_person, grader
from conftest import ROOT
from faults import GATE, SELF_KILL, gated_worker, grading_process, read_only, wait_for
from test_server_load import CHALLENGES

TINY = ("--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add")


def _boxed() -> bool:
    from grader import sandbox
    return sandbox.make(sandbox.SandboxMode.AUTO, []).active


needs_box = pytest.mark.skipif(not _boxed(), reason="no sandbox here: a SIGKILL's sender cannot be told without it")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("faults")
    db = folder / "class.sqlite3"
    token = add_person(db, "alice")
    running = Server(db, folder / "server.log", *TINY, "--cache-dir", str(folder / "cache"))
    running.start()
    yield running, token, folder
    running.stop()


def _submit(running: Server, token: str, text: str) -> int:
    answer = httpx.post(running.url + "/api/submissions", files={"file": ("gate.cu", text.encode())},
                        data={"challenge": "tiny_add"}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def _finished(running: Server, token: str, submission: int) -> dict:
    wait_for(running.db, f"SELECT state FROM submissions WHERE id = {submission}", ("done",))
    answer = httpx.get(f"{running.url}/api/submissions/{submission}", headers={"Authorization": f"Bearer {token}"})
    return answer.json()


def _claims(running: Server, submission: int) -> int:
    with sqlite3.connect(running.db) as c:
        return c.execute("SELECT claims FROM submissions WHERE id = ?", (submission,)).fetchone()[0]


def _attempts(running: Server) -> dict[str, int]:
    """Each student's attempts, from the instructor's gradebook (the public board shows no attempts)."""
    book = grader("leaderboard", "tiny_add", "--db", str(running.db), "--format", "json", "--reveal", *TINY[:2])
    assert book.returncode == 0, book.stderr
    return {row["user"]: row["attempts"] for row in json.loads(book.stdout)["students"] if row["attempts"]}


@needs_box
def test_a_killed_worker_is_graded_again_and_twice_killed_is_the_graders_error(served):
    running, token, _ = served
    first = _submit(running, token, GATE)
    killed = gated_worker(running.process.pid)
    os.kill(killed, signal.SIGKILL)  # from outside, while its job runs
    again = gated_worker(running.process.pid, exclude=(killed,))
    os.kill(again, signal.SIGUSR1)  # the second grading is let through: the code deserves ACCEPTED
    report = _finished(running, token, first)
    assert report["verdict"] == "ACCEPTED", report
    assert _claims(running, first) == 2, "graded once more after the kill, not charged as a crash"
    assert _attempts(running) == {"alice": 1}

    second = _submit(running, token, GATE)
    one = gated_worker(running.process.pid)
    os.kill(one, signal.SIGKILL)
    os.kill(gated_worker(running.process.pid, exclude=(one,)), signal.SIGKILL)
    report = _finished(running, token, second)
    assert report["verdict"] == "GRADER_ERROR", report
    assert "killed from outside" in report["report"]["message"]
    assert _claims(running, second) == 2
    assert _attempts(running) == {"alice": 1}, "a grading the grader lost is no attempt of the student's"


@needs_box
def test_a_killed_grading_process_is_replaced_and_the_job_graded_again(served):
    running, token, _ = served
    submission = _submit(running, token, GATE)
    old = gated_worker(running.process.pid)  # the job is running in the grading process now
    os.kill(grading_process(running.process.pid), signal.SIGKILL)
    os.kill(gated_worker(running.process.pid, exclude=(old,)), signal.SIGUSR1)  # a new grading process, a new worker
    report = _finished(running, token, submission)
    assert report["verdict"] == "ACCEPTED" and _claims(running, submission) == 2, report


@needs_box
def test_a_submission_that_kills_itself_keeps_its_own_crash(served):
    running, token, _ = served
    report = _finished(running, token, _submit(running, token, SELF_KILL))
    assert report["verdict"] == "RUNTIME_ERROR", report
    assert "SIGSYS" in report["report"]["message"] and "raise(SIGKILL)" in report["report"]["message"]


@needs_box
def test_grader_submit_says_a_worker_killed_from_outside_is_not_the_students(tmp_path):
    source = tmp_path / "gate.cu"
    source.write_text(GATE)
    local = subprocess.Popen([sys.executable, "-m", "grader", "submit", str(source), *TINY, "--backend", "emulator",
                              "--json", "--cache-dir", str(tmp_path / "cache")],
                             cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        os.kill(gated_worker(local.pid), signal.SIGKILL)
        out, err = local.communicate(timeout=120)
    finally:
        if local.poll() is None:
            local.kill()
    report = json.loads(out)
    assert report["verdict"] == "GRADER_ERROR" and local.returncode != 1, err
    assert "the grader's worker was killed from outside" in report["message"] and "grade it again" in report["message"]


def test_a_database_deleted_while_serving_stops_the_server_taking_work(tmp_path):
    db = tmp_path / "class.sqlite3"
    token = add_person(db, "alice")
    running = Server(db, tmp_path / "server.log", *TINY)
    running.start()
    try:
        wal = db.with_name(db.name + "-wal")
        db.unlink()
        before = wal.stat()
        upload = httpx.post(running.url + "/api/submissions", files={"file": ("a.cu", GATE.encode())},
                            data={"challenge": "tiny_add"}, headers={"Authorization": f"Bearer {token}"}, timeout=30)
        assert upload.status_code == 503 and "database went away" in upload.json()["error"], upload.text
        health = httpx.get(running.url + "/api/health")
        assert health.status_code == 503 and "database went away" in health.json()["error"]
        page = httpx.get(running.url + "/")
        assert page.status_code == 503 and "text/html" in page.headers["content-type"]
        assert not db.exists(), "no new, empty class made at the path"
        after = wal.stat()
        assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns), "nothing written"
        assert str(tmp_path) not in upload.text, "the database's path is the instructor's, not told to students"
    finally:
        running.stop()
    assert "was deleted while this server was serving it" in " ".join((tmp_path / "server.log").read_text().split())
    restart = _serve(db)
    assert restart.returncode == 5 and "missing, but a class server served one there" in restart.stderr, restart.stderr
    assert not db.exists()


def _served_once(db) -> None:
    """The serve command's start without the rest of the server: the database checked, made, recorded."""
    from grader.classroom import schema
    with schema.serving(db) as lock:
        schema.start(db, lock)


def _serve(db, env=None) -> subprocess.CompletedProcess:
    """`grader serve` on `db`, its stderr's lines joined (the terminal wraps long messages)."""
    done = grader("serve", "--db", str(db), "--port", "0", "--backend", "emulator", *TINY,
                  env={**os.environ, **(env or {})})
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, " ".join(done.stderr.split()))


def test_a_database_replaced_by_an_empty_file_is_not_served(tmp_path):
    db = tmp_path / "class.sqlite3"
    add_person(db, "alice")
    _served_once(db)
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    os.replace(empty, db)
    started = _serve(db)
    assert started.returncode == 5 and "none of the class's tables" in started.stderr, started.stderr
    assert db.stat().st_size == 0


def test_a_damaged_database_is_refused_at_the_start_with_what_to_do(tmp_path):
    db = tmp_path / "class.sqlite3"
    add_person(db, "alice")
    with contextlib.closing(sqlite3.connect(db, isolation_level=None)) as c:  # pages enough to damage one inside
        c.execute("BEGIN")
        c.executemany("INSERT INTO deadlines VALUES (?, ?)", [(f"c{i}" * 40, "x" * 900) for i in range(300)])
        c.execute("COMMIT")
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    page = 4096
    data[page * 20:page * 21] = b"\x55" * page
    db.write_bytes(bytes(data))
    started = _serve(db)
    assert started.returncode == 5, started.stderr
    assert "damaged" in started.stderr and "grader backup" in started.stderr and "mv " in started.stderr
    assert "-wal" in started.stderr, "a restore removes the log a replay would mix in"


def test_a_read_only_database_is_refused_at_the_start(tmp_path):
    db = tmp_path / "class.sqlite3"
    add_person(db, "alice")
    with read_only(db):
        started = _serve(db)
    assert started.returncode == 5 and "cannot be written" in started.stderr, started.stderr


def test_a_database_locked_by_another_process_is_refused_after_the_busy_timeout(tmp_path):
    db = tmp_path / "class.sqlite3"
    add_person(db, "alice")
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = _serve(db, {"GRADER_DB_BUSY_TIMEOUT_S": "0.5"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert started.returncode == 5 and "stayed locked for 0.5 s" in started.stderr, started.stderr
