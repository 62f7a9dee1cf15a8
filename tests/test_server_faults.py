"""Grading goes on through real faults of a real `grader serve` (the CPU emulator grades
tests/challenges/tiny_add): the class database's disk filled up (a tmpfs of its own, mounted as root;
skipped where mounting is not allowed), another process holding the database's write lock past the busy
timeout, and an upload whose answer comes after the client stopped waiting. Each time: /api/health says
503 with the cause while it lasts, uploads are refused as JSON with nothing stored (never refused and
stored), grading resumes by itself when the fault clears, and every stored submission is graded exactly
once with the verdict its code deserves."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest

from class_server import Server, grader
from conftest import ROOT, write_lock_when
from test_server_load import CHALLENGES, sources, wait_until

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server's grading processes are Linux-only")

VERDICTS = {"accepted_naive": "ACCEPTED", "accepted_float4": "ACCEPTED",
            "wrong": "RUNTIME_ERROR",  # tiny_add's N = 1: a launch of 0 blocks
            "writes_input": "INPUT_MODIFIED", "compile_error": "COMPILE_ERROR"}
KINDS = tuple(VERDICTS)
RESUME_S = 120
"""Longest wait for grading to resume once a fault clears: the dispatcher's back-off is at most 30 s."""


def make_class(folder: Path, db: Path, names: list[str], *serve_args: str) -> tuple[Server, dict[str, str]]:
    (db.parent / (db.name + ".secret-seed")).write_text("20261122")
    roster_csv = folder / "roster.csv"
    roster_csv.write_text("name\n" + "\n".join(names) + "\n")
    made = grader("roster", "import", str(roster_csv), "--db", str(db))
    assert made.returncode == 0, made.stderr
    tokens = dict(line.split(",") for line in made.stdout.strip().splitlines()[1:])
    server = Server(db, folder / "server.log", "--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add",
                    "--max-pending", "4", "--hourly-cap", "100", "--cache-dir", str(folder / "cache"), *serve_args)
    return server, tokens


def upload(server: Server, token: str, kind: str, key: str) -> httpx.Response:
    return httpx.post(server.url + "/api/submissions", files={"file": (f"{kind}.cu", sources()[kind])},
                      data={"challenge": "tiny_add"}, timeout=120,
                      headers={"Authorization": f"Bearer {token}", "Idempotency-Key": key})


def health(server: Server) -> httpx.Response:
    return httpx.get(server.url + "/api/health", timeout=30)


def rows(db: Path, sql: str, args=()) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=60) as c:
        return c.execute(sql, args).fetchall()


def check_graded_once(db: Path, kinds: dict[str, str]) -> None:
    """Every stored submission graded, exactly once, with the verdict of its file (`kinds`: key -> file)."""
    stored = rows(db, "SELECT s.upload_key, s.state, r.verdict, (SELECT COUNT(*) FROM runs x WHERE "
                      "x.submission_id = s.id) FROM submissions s LEFT JOIN runs r ON r.id = s.run_id")
    assert sorted(key for key, *_ in stored) == sorted(kinds), "the uploads told stored, and no others"
    for key, state, verdict, count in stored:
        assert (state, count) == ("done", 1), (key, state, count)
        assert verdict == VERDICTS[kinds[key]], (key, kinds[key], verdict)


def stalled_with(server: Server, cause: str) -> dict:
    answer = health(server)
    return answer.json() if answer.status_code == 503 and answer.json().get("grading") == "stalled" \
        and answer.json()["stalled"][0]["cause"] == cause else {}


def refused_and_not_taken(answer: httpx.Response) -> bool:
    return (answer.status_code == 503 and answer.headers["content-type"] == "application/json"
            and "nothing was taken" in answer.json()["error"] and bool(answer.json()["hint"]))


# -- a full disk ----------------------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A 16 MiB tmpfs of its own for the class database, so that filling it fills nothing else."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    where = tmp_path / "disk"
    where.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(where)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield where
    finally:
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)


def fill_when(db: Path, filler: Path, ready, timeout_s: float) -> None:
    """Fill the database's disk while holding its write lock, at a moment `ready(connection)` holds and its
    write-ahead log is empty (checkpointed and truncated just before the lock was taken): SQLite rewrites
    a log it has checkpointed in place, so with a log of any size left, the next writes might fit in it
    and the disk be full to no one. With none, the server's next write needs room the disk lacks."""
    deadline = time.monotonic() + timeout_s
    while True:
        c = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=60, isolation_level=None)
        try:
            c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            c.execute("BEGIN IMMEDIATE")
            wal = db.with_name(db.name + "-wal")
            if ready(c) and (not wal.exists() or wal.stat().st_size == 0):
                fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
                try:
                    while True:
                        os.write(fd, b"\0" * 65536)
                except OSError as error:
                    assert error.errno == 28, error  # ENOSPC: full
                finally:
                    os.close(fd)
                return
        finally:
            if c.in_transaction:
                c.execute("ROLLBACK")
            c.close()
        if time.monotonic() > deadline:
            pytest.fail(f"no moment with {ready.__doc__} and an empty write-ahead log in {timeout_s:.0f} s")
        time.sleep(0.05)


def test_a_full_disk_stalls_grading_refuses_uploads_and_grading_resumes_once_there_is_room(tmp_path, small_disk):
    db = small_disk / "class.sqlite3"
    names = [f"s{i}" for i in range(8)]
    server, tokens = make_class(tmp_path, db, names)
    kinds: dict[str, str] = {}
    server.start()
    try:
        for i, name in enumerate(names):
            key, kind = str(uuid.uuid4()), ("accepted_naive", "wrong", "writes_input", "compile_error")[i % 4]
            assert upload(server, tokens[name], kind, key).status_code == 201
            kinds[key] = kind

        def jobs_left(c) -> bool:
            """three jobs or more not graded yet"""
            return c.execute("SELECT COUNT(*) FROM submissions WHERE state != 'done'").fetchone()[0] >= 3

        filler = small_disk / "filler"
        fill_when(db, filler, jobs_left, 120)
        refused: list[str] = []
        key = str(uuid.uuid4())  # at once, before the dispatcher may have met the full disk: refused all the same
        answer = upload(server, tokens["s0"], "accepted_float4", key)
        assert refused_and_not_taken(answer), answer.text
        refused.append(key)
        wait_until(lambda: stalled_with(server, "disk full"), 60, "health to say the disk is full")
        said = stalled_with(server, "disk full")
        assert "disk" in said["error"] and said["queue"]["done"] < len(names), said
        for name in names[1:4]:
            key = str(uuid.uuid4())
            answer = upload(server, tokens[name], "accepted_float4", key)
            assert refused_and_not_taken(answer) and "full" in answer.json()["error"], answer.text
            refused.append(key)
        stored = {k for (k,) in rows(db, "SELECT upload_key FROM submissions")}
        assert stored == set(kinds) and not stored & set(refused), "refused and stored: never"
        filler.unlink()

        wait_until(lambda: health(server).status_code == 200, RESUME_S, "grading to resume once there is room")
        wait_until(lambda: rows(db, "SELECT COUNT(*) FROM submissions WHERE state != 'done'") == [(0,)], RESUME_S,
                   "every stored submission graded")
        check_graded_once(db, kinds)
        again = upload(server, tokens["s0"], "accepted_float4", refused[0])
        assert again.status_code == 201, "a refused upload's key was not used: sent again, it is stored now"
        kinds[refused[0]] = "accepted_float4"
        wait_until(lambda: rows(db, "SELECT COUNT(*) FROM submissions WHERE state != 'done'") == [(0,)], RESUME_S,
                   "the upload sent again graded")
        check_graded_once(db, kinds)
        log = server.log.read_text()
        assert "grading stalls" in log and "grading resumes" in log, log[-3000:]
    finally:
        server.stop()


def test_an_upload_to_a_full_disk_with_grading_idle_is_a_json_503_and_nothing_is_stored(tmp_path, small_disk):
    """The upload's own write failing (no dispatcher here to have noticed first): 503 in JSON, never a
    bare 500, and nothing stored."""
    from starlette.testclient import TestClient

    from grader import cli, spec
    from grader.classroom import app as apps, roster
    from grader.classroom.schema import open_class

    db = small_disk / "class.sqlite3"
    with open_class(db) as store:
        alice = roster.add(store, "alice").token
    site = TestClient(apps.create_app(apps.Settings(db, {"vector_add": spec.load(cli.DEFAULT_CHALLENGES,
                                                                                   "vector_add")})))

    def anything(c) -> bool:
        """the database opened"""
        return True

    fill_when(db, small_disk / "filler", anything, 30)
    answer = site.post("/api/submissions", files={"file": ("mine.cu", sources()["accepted_naive"])},
                       headers={"Authorization": f"Bearer {alice}"})
    assert refused_and_not_taken(answer) and "full" in answer.json()["error"], answer.text
    assert site.get("/api/health").status_code == 200, "reads still work on a full disk"
    assert rows(db, "SELECT COUNT(*) FROM submissions") == [(0,)]


# -- a lock held past the busy timeout ------------------------------------------------------------------------

def test_a_lock_held_past_the_busy_timeout_stalls_grading_and_submit_waits_with_a_deadline(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_DB_BUSY_TIMEOUT_S", "1")  # the server's, and every process this test starts
    db = tmp_path / "class.sqlite3"
    names = ["ann", "ben", "cat", "dan", "eve"]
    server, tokens = make_class(tmp_path, db, names)
    kinds: dict[str, str] = {}
    server.start()
    try:
        for i, name in enumerate(names[:4]):
            for kind in (KINDS[i % len(KINDS)], KINDS[(i + 2) % len(KINDS)]):
                key = str(uuid.uuid4())
                assert upload(server, tokens[name], kind, key).status_code == 201
                kinds[key] = kind
        waiting = subprocess.Popen(
            [sys.executable, "-m", "grader", "submit", str(ROOT / "challenges" / "vector_add" / "levels" /
                                                            "1_naive.cu"), "--server", server.url, "--token", tokens["eve"], "--challenge", "tiny_add", "--wait-timeout", "3",
             "--json"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def eves_stored_not_graded(c) -> dict:
            found = c.execute("SELECT id, upload_key FROM submissions WHERE user = 'eve' AND state != 'done'"
                              ).fetchone()
            return {"id": found[0], "key": found[1]} if found else {}

        with write_lock_when(db, eves_stored_not_graded, 120, "eve's submission stored") as eve:
            wait_until(lambda: stalled_with(server, "database locked"), 60, "health to say the database is locked")
            key = str(uuid.uuid4())
            answer = upload(server, tokens["dan"], "accepted_naive", key)
            assert refused_and_not_taken(answer) and "write lock" in answer.json()["error"], answer.text
            mine = httpx.get(f"{server.url}/api/submissions/{eve['id']}", timeout=30,
                             headers={"Authorization": f"Bearer {tokens['eve']}"}).json()
            assert mine["state"] != "done" and "write lock" in mine["stalled"]
            out, err = waiting.communicate(timeout=120)  # it cannot be graded while the lock is held
        assert waiting.returncode == 7, err
        said = json.loads(out)
        assert said["submission"] == eve["id"] and said["exit_code"] == 7 and said["state"] == "stored"
        assert f"submission {eve['id']} is stored" in " ".join(err.split())
        assert f"/submissions/{eve['id']}" in said["hint"] and "do not submit it again" in said["hint"]
        kinds[eve["key"]] = "accepted_naive"

        wait_until(lambda: health(server).status_code == 200, RESUME_S, "grading to resume once the lock is gone")
        wait_until(lambda: rows(db, "SELECT COUNT(*) FROM submissions WHERE state != 'done'") == [(0,)], RESUME_S,
                   "every stored submission graded")
        check_graded_once(db, kinds)
        assert rows(db, "SELECT COUNT(*) FROM submissions WHERE upload_key = ?", (key,)) == [(0,)]
    finally:
        server.stop()


def test_an_upload_stored_after_the_client_gave_up_on_it_is_found_again_not_stored_twice(tmp_path, monkeypatch):
    """The write lock held across the client's timeout: the first try waits behind it at the server and is
    stored after the client stopped waiting; the client sends it again with its key and is told of that
    one submission (the class allows one pending submission, so a second upload would be refused 429)."""
    from grader.classroom import client

    monkeypatch.setenv("GRADER_DB_BUSY_TIMEOUT_S", "60")  # the server waits for the lock rather than fail
    db = tmp_path / "class.sqlite3"
    server, tokens = make_class(tmp_path, db, ["ann"])
    server.serve_args = tuple(a if a != "4" else "1" for a in server.serve_args)  # --max-pending 1
    server.start()
    holder = sqlite3.connect(db, isolation_level=None)
    retries: list[client.Retry] = []

    def release(retry: client.Retry) -> None:
        retries.append(retry)
        if holder.in_transaction:
            holder.execute("ROLLBACK")

    remote = client.Client(client.Login(server.url, tokens["ann"]), timeout_s=1.0)
    try:
        holder.execute("BEGIN IMMEDIATE")
        view = remote.submit("mine.cu", sources()["accepted_naive"], "tiny_add", on_retry=release)
        assert retries and retries[0].maybe_stored and "no answer" in retries[0].why
        assert rows(db, "SELECT id FROM submissions") == [(view.id,)], "one submission, the one the client was told"
        assert [s["id"] for s in httpx.get(server.url + "/api/submissions", timeout=30,
                                           headers={"Authorization": f"Bearer {tokens['ann']}"}).json()] == [view.id]
        graded = remote.wait(view.id, RESUME_S)
        assert graded.verdict.name == "ACCEPTED"
        assert f"sent submission {view.id}'s upload again" in server.log.read_text(), "the retry was told of it"
    finally:
        remote.close()
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        server.stop()
