"""The class server under a deadline-night load, on the CPU emulator (CI): 50 students post 4
submissions each at once to a real `grader serve`; the API keeps answering in under 200 ms at the 95th
percentile while grading runs; the server is killed with SIGKILL while jobs are queued and running and
started again; in the end every submission is graded exactly once and every student's gradebook row
is right (the two students who never submitted included).

The challenge is tests/challenges/tiny_add (vector_add with tiny shapes), so that 200 emulated gradings
fit in CI's time; the sources are the same four files for the whole class (a copied solution), so the
emulator builds four times and grades 200 times."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import statistics
import sys
import time
from pathlib import Path

import httpx
import pytest

from class_server import Server, grader
from conftest import ROOT, write_lock_when

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server's grading processes are Linux-only")

CHALLENGES = Path(__file__).resolve().parent / "challenges"
VECTOR_ADD = ROOT / "challenges" / "vector_add"
STUDENTS, EACH = 50, 4
ABSENT = ("zoe-absent", "yan-absent")
COMPILE_ERROR = b'extern "C" void solve(const float* A, const float* B, float* C, int N) { this is not C++ }\n'
P95_LIMIT_S = 0.2
IDLE_FACTOR = 20
"""What students do while their jobs wait (their submission's state, the board, the health page) must be
answered within P95_LIMIT_S at the 95th percentile (about 10 ms measured on a 2-core machine), or within
IDLE_FACTOR times the median of the same calls made before any upload on a machine slower than that (the
limit follows the machine's measured speed: grading must not starve the API, however fast the host). The burst of 200
uploads in the first second is not held to it: on 2 cores shared by the client, the server and a grading
process it is a queue of its own (p95 about 1 s, all of them answered 201); its figures are printed."""
KILL_AFTER_GRADED = 40
"""Jobs graded before the server is killed: well into the queue, far from its end."""


def sources() -> dict[str, bytes]:
    return {
        "accepted_naive": (VECTOR_ADD / "levels" / "1_naive.cu").read_bytes(),
        "accepted_float4": (VECTOR_ADD / "levels" / "3_float4.cu").read_bytes(),
        "wrong": (VECTOR_ADD / "wrong" / "grid_rounds_down.cu").read_bytes(),  # N = 1: a launch of 0 blocks
        "writes_input": (VECTOR_ADD / "wrong" / "writes_input.cu").read_bytes(),
        "compile_error": COMPILE_ERROR,
    }


def plan(index: int) -> list[str]:
    """What student `index` submits, in order: half end up accepted; the other half never do, and their
    last submission (graded last: the queue is first-in first-out per student) writes to an input."""
    if index % 2 == 0:
        return ["accepted_naive", "wrong", "compile_error", "accepted_float4"]
    return ["wrong", "compile_error", "wrong", "writes_input"]


def states(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as c:
        return dict(c.execute("SELECT state, COUNT(*) FROM submissions GROUP BY state").fetchall())


def wait_until(condition, timeout_s: float, what: str, poll_s: float = 0.25) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(poll_s)


@pytest.fixture
def classroom(tmp_path):
    db = tmp_path / "class.sqlite3"
    (tmp_path / "class.sqlite3.secret-seed").write_text("20261122")
    names = [f"student{i:02d}" for i in range(STUDENTS)]
    roster_csv = tmp_path / "roster.csv"
    roster_csv.write_text("name\n" + "\n".join(names + list(ABSENT)) + "\n")
    made = grader("roster", "import", str(roster_csv), "--db", str(db))
    assert made.returncode == 0, made.stderr
    tokens = dict(line.split(",") for line in made.stdout.strip().splitlines()[1:])
    assert sorted(tokens) == sorted(names + list(ABSENT))
    # a cold cache (--cache-dir in tmp_path): the test costs the same on every machine
    server = Server(db, tmp_path / "server.log", "--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add",
                    "--max-pending", str(EACH), "--hourly-cap", "100", "--cache-dir", str(tmp_path / "cache"))
    try:
        yield db, server, {n: tokens[n] for n in names}
    finally:
        server.stop()


def test_fifty_students_four_submissions_each_a_kill_and_a_restart(classroom):
    db, server, tokens = classroom
    files = sources()
    server.start()
    latencies: dict[str, list[float]] = {"post": [], "get": []}

    def timed(call, kind: str = "get"):
        started = time.perf_counter()
        answer = call()
        latencies[kind].append(time.perf_counter() - started)
        return answer

    async def student(c: httpx.AsyncClient, name: str, index: int) -> list[int]:
        ids = []
        for kind in plan(index):
            started = time.perf_counter()
            answer = await c.post("/api/submissions", files={"file": (f"{kind}.cu", files[kind])},
                                  data={"challenge": "tiny_add"}, headers={"Authorization": f"Bearer {tokens[name]}"})
            latencies["post"].append(time.perf_counter() - started)
            assert answer.status_code == 201, answer.text
            ids.append(answer.json()["id"])
        return ids

    async def everyone() -> list[list[int]]:
        limits = httpx.Limits(max_connections=STUDENTS)
        async with httpx.AsyncClient(base_url=server.url, timeout=30, limits=limits) as c:
            return await asyncio.gather(*(student(c, name, i) for i, name in enumerate(tokens)))

    with httpx.Client(base_url=server.url, timeout=30) as c:  # the same calls with nothing to grade
        idle = []
        for _ in range(20):
            for path in ("/api/leaderboard/tiny_add", "/api/health"):
                started_call = time.perf_counter()
                assert c.get(path).status_code == 200
                idle.append(time.perf_counter() - started_call)
    limit_s = max(P95_LIMIT_S, IDLE_FACTOR * statistics.median(idle))
    print(f"idle calls: median {statistics.median(idle) * 1e3:.1f} ms; limit while grading {limit_s * 1e3:.0f} ms")

    posted = asyncio.run(everyone())
    ids = [i for student_ids in posted for i in student_ids]
    assert len(ids) == len(set(ids)) == STUDENTS * EACH, "every upload got a submission of its own"

    # while grading runs: students asking about their submissions, the board, the health page
    started = time.monotonic()
    with httpx.Client(base_url=server.url, timeout=30) as c:
        first = {"Authorization": f"Bearer {tokens['student00']}"}
        while states(db).get("done", 0) < KILL_AFTER_GRADED:
            assert timed(lambda: c.get(f"/api/submissions/{ids[-1]}", headers=first)).status_code == 404
            assert timed(lambda: c.get(f"/api/submissions/{ids[0]}", headers=first)).status_code == 200
            assert timed(lambda: c.get("/api/leaderboard/tiny_add")).status_code == 200
            assert timed(lambda: c.get("/api/health")).status_code == 200
            assert time.monotonic() - started < 600, f"grading stalled: {states(db)}"
            time.sleep(0.1)  # about 40 calls a second: a class polling, not a tight loop stealing the cores
    seconds_per_job = (time.monotonic() - started) / states(db)["done"]
    for kind, values in latencies.items():
        print(f"{len(values)} {kind} calls: median {statistics.median(values) * 1e3:.1f} ms, "
              f"p95 {statistics.quantiles(values, n=20)[-1] * 1e3:.1f} ms, max {max(values) * 1e3:.1f} ms")
    print(f"{seconds_per_job:.2f} s per graded job")
    p95 = statistics.quantiles(latencies["get"], n=20)[-1]
    assert p95 < limit_s, f"95th percentile of the calls made while grading runs: {p95 * 1e3:.0f} ms"

    def a_job_running(c) -> dict[str, int]:
        found = dict(c.execute("SELECT state, COUNT(*) FROM submissions GROUP BY state").fetchall())
        return found if found.get("running", 0) >= 1 else {}

    # with the write lock held, the running job cannot be kept before the kill: it lands mid-job
    with write_lock_when(db, a_job_running, 60, "a job being graded") as before:
        with sqlite3.connect(db, timeout=60) as c:
            kept_before = c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        server.kill()
    assert before.get("queued", 0) >= 1, before
    assert states(db) == before, "nothing was kept while the lock was held"
    assert kept_before == before["done"], "a run is kept with its submission marked done, or neither"

    restarted = time.monotonic()
    server.start()
    remaining = STUDENTS * EACH - before["done"]
    wait_until(lambda: states(db) == {"done": STUDENTS * EACH}, 60 + 4 * remaining * seconds_per_job,
               f"all {STUDENTS * EACH} submissions graded")
    print(f"after the restart: {remaining} jobs in {time.monotonic() - restarted:.1f} s")
    server.stop()

    with sqlite3.connect(db) as c:
        runs = c.execute("SELECT submission_id, COUNT(*) FROM runs GROUP BY submission_id").fetchall()
        claims = dict(c.execute("SELECT id, claims FROM submissions").fetchall())
    assert sorted(s for s, _ in runs) == sorted(ids) and {n for _, n in runs} == {1}, "each graded exactly once"
    assert sum(n > 1 for n in claims.values()) >= 1, "a job was running at the kill and was graded again after"

    book = grader("leaderboard", "tiny_add", "--db", str(db), "--format", "json", "--reveal",  # the gradebook
                  "--challenges-dir", str(CHALLENGES))
    assert book.returncode == 0, book.stderr
    rows = {row["user"]: row for row in json.loads(book.stdout)["students"]}
    assert sorted(rows) == sorted(list(tokens) + list(ABSENT)), "every roster student has a row"
    for index, name in enumerate(tokens):
        accepted = index % 2 == 0
        assert rows[name]["status"] == ("accepted" if accepted else "not accepted"), rows[name]
        assert rows[name]["best_verdict"] == ("ACCEPTED" if accepted else "INPUT_MODIFIED"), rows[name]
        assert rows[name]["attempts"] == EACH, rows[name]
        assert rows[name]["late"] is False
    for name in ABSENT:
        assert rows[name]["status"] == "no submission" and rows[name]["attempts"] == 0
