"""The classroom workflow end to end through the emulator: a batch of 20 submissions killed halfway
and resumed, 8 concurrent `grader submit --user` writers, and the leaderboard they produce."""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import LEVELS, NAIVE, ROOT, SUBMISSIONS, expectation, write_lock_when

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

FAST_WRONG = ["never_writes", "skip_last_row_odd_m", "write_past_c", "writes_input", "syntax_error", "no_solve",
              "mangled_solve", "wrong_signature"]
FAST_RIGHT = [LEVELS[0], LEVELS[1], LEVELS[2], SUBMISSIONS / "shared_tiled.cu", SUBMISSIONS / "dynamic_smem.cu"]
CLASS_SIZE = 20
"""Every source above once, then copies under other names (a copy is graded again, its build cached).
Each emulated grading takes about 2 s on a 2-core machine: 40 students cost CI 95 s, 20 half that."""
INTERRUPT_AT = 6
"""Runs stored before the first batch is killed: well into the class, well short of its end."""


def grader(*args: str, env=None, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "grader", *args], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def make_class(folder: Path) -> dict[str, str]:
    """CLASS_SIZE students: references and wrong files, then copies under other names. Returns user -> verdict."""
    sources = FAST_RIGHT + [SUBMISSIONS / f"{name}.cu" for name in FAST_WRONG]
    expected = {}
    for i in range(CLASS_SIZE):
        source = sources[i % len(sources)]
        user = f"student{i:02d}"
        if i % 3 == 0:  # a folder per student for some, a file for others
            (folder / user).mkdir()
            shutil.copy(source, folder / user / "solution.cu")
        else:
            shutil.copy(source, folder / f"{user}.cu")
        expected[user] = expectation(source, "emulator")[0]
    return expected


def pin_secret_seed(db: Path, seed: int = 20261122) -> None:
    """A class's secret seed is drawn at random on first use; tests pin it, so the randomized shapes
    (and how long a batch takes) are the same on every run."""
    (db.parent / (db.name + ".secret-seed")).write_text(str(seed))


def source_of(folder: Path, user: str) -> Path:
    single = folder / f"{user}.cu"
    return single if single.exists() else folder / user / "solution.cu"


def count_runs(db: Path) -> int:
    try:
        with sqlite3.connect(db, timeout=30) as c:
            return c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    except sqlite3.DatabaseError:
        return 0


@pytest.mark.parametrize("backend", ["emulator", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_batch_killed_halfway_resumes_and_grades_each_once(tmp_path, backend):
    folder, db, cache = tmp_path / "class", tmp_path / "results.sqlite3", tmp_path / "cache"
    folder.mkdir()
    expected = make_class(folder)
    pin_secret_seed(db)
    if backend == "cuda":
        expected = {user: expectation(source_of(folder, user), "cuda")[0] for user in expected}
    args = ("grade", str(folder), "--challenge", "matmul", "--db", str(db), "--backend", backend, "--cache-dir",
            str(cache), "--timing-budget", "0.1")  # a matmul class: its files with no solve are graded as matmul's
    first = grader(*args, start_new_session=True)

    def stored_enough(c) -> int:
        assert first.poll() is None, "the batch ended before it could be interrupted"
        stored = c.execute("SELECT COUNT(*) FROM runs").fetchone()[0]
        return stored if stored >= INTERRUPT_AT else 0

    with write_lock_when(db, stored_enough, 600, f"{INTERRUPT_AT} runs stored") as interrupted_at:
        os.killpg(first.pid, signal.SIGKILL)  # with the lock held: no run is kept between the count and the kill
        first.wait()
    assert INTERRUPT_AT <= interrupted_at < CLASS_SIZE
    assert count_runs(db) == interrupted_at
    second = grader(*args)
    out, err = second.communicate(timeout=1200)
    assert second.returncode == 0, err[-3000:]
    assert f"{CLASS_SIZE - interrupted_at} graded now, {interrupted_at} graded before" in " ".join(out.split())
    with sqlite3.connect(db) as c:
        rows = c.execute("SELECT user, verdict, secret_seed FROM runs").fetchall()
    assert sorted(u for u, _, _ in rows) == sorted(expected), "every submission graded exactly once"
    assert {u: v for u, v, _ in rows} == expected
    assert all(secret == 1 for _, _, secret in rows)

    board = subprocess.run([sys.executable, "-m", "grader", "leaderboard", "--db", str(db), "--format", "json"],
                           cwd=ROOT, capture_output=True, text=True, check=True)
    entries = json.loads(board.stdout)["entries"]
    assert len(entries) == sum(v == "ACCEPTED" for v in expected.values())
    if os.environ.get("GRADER_CLASSROOM_OUT"):  # keep the database for the benchmark notes
        shutil.copy(db, Path(os.environ["GRADER_CLASSROOM_OUT"]) / f"classroom-{backend}.sqlite3")
    if backend == "emulator":
        with sqlite3.connect(db) as c:
            graded_order = [u for (u,) in c.execute("SELECT user FROM runs WHERE verdict = 'ACCEPTED' ORDER BY id")]
        assert [e["user"] for e in entries] == graded_order, "untimed (emulated) runs rank by when they were graded"
    else:
        means = [e["median_ms"] for e in entries]
        assert all(m for m in means) and entries[0]["level"] is not None
        geomeans = [math.prod(m.values()) ** (1 / len(m)) for m in means]
        assert geomeans == sorted(geomeans), "timed runs rank by the geometric mean of their medians"


def test_concurrent_submits_all_land(tmp_path):
    db, cache = tmp_path / "results.sqlite3", tmp_path / "cache"
    warm = grader("run", str(NAIVE), "--backend", "emulator", "--cache-dir", str(cache), "--seed", "5")  # builds once
    warm.communicate(timeout=300)
    users = [f"user{i}" for i in range(7)] + ["<script>alert(1)</script>"]
    procs = [grader("submit", str(NAIVE), "--user", user, "--db", str(db), "--backend", "emulator",
                    "--cache-dir", str(cache), "--seed", str(i)) for i, user in enumerate(users)]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, [err[-800:] for _, err in results]
    with sqlite3.connect(db) as c:
        assert sorted(u for (u,) in c.execute("SELECT user FROM runs")) == sorted(users)
