"""`grader roster`, `grader deadline`, `grader login` and `grader submit --server` against a real class
server (the CPU emulator grades tests/challenges/tiny_add): the same report and exit codes as a local
run, secret cases hidden, a bad token refused with nothing stored, and the options a server chooses
refused on the student's side."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest

from conftest import ROOT
from class_server import Server, grader
from test_server_load import CHALLENGES, EACH

GOOD = ROOT / "challenges" / "vector_add" / "levels" / "1_naive.cu"
WRONG = ROOT / "challenges" / "vector_add" / "wrong" / "writes_input.cu"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    (folder / "class.sqlite3.secret-seed").write_text("20261122")
    added = grader("roster", "add", "alice", "--db", str(db))
    assert added.returncode == 0, added.stderr
    running = Server(db, folder / "server.log", "--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add",
                     "--max-pending", str(EACH), "--cache-dir", str(folder / "cache"))
    running.start()
    yield running, added.stdout.strip().splitlines()[-1]
    running.stop()


def submit(*args: str, env=None):
    return grader("submit", *args, env={**os.environ, **(env or {})})


def runs(db) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]


def test_roster_add_prints_the_token_last_and_keeps_only_its_hash(server):
    running, token = server
    assert len(token) >= 40
    with sqlite3.connect(running.db) as c:
        assert token not in json.dumps(c.execute("SELECT * FROM people").fetchall())
    listed = grader("roster", "list", "--db", str(running.db), "--json")
    assert [p["name"] for p in json.loads(listed.stdout)] == ["alice"]
    again = grader("roster", "add", "alice", "--db", str(running.db))
    assert again.returncode == 2 and "already" in again.stderr


def test_submit_to_the_server_prints_the_report_and_exits_as_a_local_run(server):
    running, token = server
    good = submit(str(GOOD), "--server", running.url, "--token", token, "--challenge", "tiny_add")
    assert good.returncode == 0, good.stderr
    assert "ACCEPTED" in good.stdout and "hidden case" in good.stdout and "secret seed" in good.stdout
    assert "20261122" not in good.stdout, "the class's seed is never shown"
    wrong = submit(str(WRONG), "--server", running.url, "--token", token, "--challenge", "tiny_add", "--json")
    assert wrong.returncode == 1, wrong.stderr
    report = json.loads(wrong.stdout)
    assert report["verdict"] == "INPUT_MODIFIED" and "seed" not in report, "the run's own seed is not shown either"


def test_a_bad_token_is_refused_and_nothing_is_stored(server):
    running, _ = server
    before = runs(running.db)
    refused = submit(str(GOOD), "--server", running.url, "--token", "not-a-token")
    assert refused.returncode == 2 and "does not know this token" in refused.stderr
    with sqlite3.connect(running.db) as c:
        assert c.execute("SELECT COUNT(*) FROM submissions WHERE user != 'alice'").fetchone()[0] == 0
    assert runs(running.db) == before


def test_no_wait_and_the_environment_and_login(server, tmp_path):
    running, token = server
    env = {"GRADER_SERVER": running.url, "GRADER_TOKEN": token}
    queued = submit(str(GOOD), "--challenge", "tiny_add", "--no-wait", env=env)
    assert queued.returncode == 0 and queued.stdout.strip().isdigit(), queued.stderr
    home = {"HOME": str(tmp_path)}
    logged = grader("login", "--server", running.url, "--token", token, env={**os.environ, **home})
    assert logged.returncode == 0 and "as alice" in logged.stdout, logged.stderr
    saved = tmp_path / ".config" / "cuda-grader" / "login.json"
    assert saved.stat().st_mode & 0o077 == 0, "the token is readable by its owner only"
    again = submit(str(GOOD), "--server", "--challenge", "tiny_add", env=home)
    assert again.returncode == 0, again.stderr


def test_options_the_server_chooses_are_refused_with_server(server):
    running, token = server
    for flag in (["--seed", "3"], ["--backend", "emulator"], ["--user", "bob"]):
        refused = submit(str(GOOD), "--server", running.url, "--token", token, *flag)
        assert refused.returncode == 2 and "the class server chooses" in refused.stderr, flag
    unreachable = submit(str(GOOD), "--server", "http://127.0.0.1:9", "--token", token)
    assert unreachable.returncode == 6 and "cannot reach" in unreachable.stderr


def test_deadline_flags_later_submissions_late(server):
    running, token = server
    set_it = grader("deadline", "tiny_add", "2020-01-01T00:00", "--db", str(running.db),
                    "--challenges-dir", str(CHALLENGES))
    assert set_it.returncode == 0 and "due 2020-01-01" in set_it.stdout, set_it.stderr
    late = submit(str(GOOD), "--server", running.url, "--token", token, "--challenge", "tiny_add")
    assert late.returncode == 0 and "late" in late.stderr
    cleared = grader("deadline", "tiny_add", "--clear", "--db", str(running.db), "--challenges-dir", str(CHALLENGES))
    assert "no deadline" in cleared.stdout
