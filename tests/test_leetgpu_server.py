"""A class server publishing official LeetGPU challenges by their folder names (issue 27), from the fixture
checkout: students submit as to any challenge, each submission graded on its own draw of the file's cases;
a strict class counts the checks beyond LeetGPU's judge; deadlines take the official names."""

from __future__ import annotations

import json
import os

import pytest

from conftest import ROOT
from class_server import Server, grader

pytest.importorskip("torch", reason="the leetgpu extra (PyTorch) is not installed")

FIXTURE = ROOT / "tests" / "leetgpu_fixture"
SUBMISSIONS = ROOT / "tests" / "submissions" / "leetgpu"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    added = grader("roster", "add", "alice", "--db", str(db))
    assert added.returncode == 0, added.stderr
    running = Server(db, folder / "server.log", "--leetgpu", str(FIXTURE), "--challenge", "904_min_max",
                     "--challenge", "903_value_count", "--strict", "--cache-dir", str(folder / "cache"))
    running.start()
    yield running, added.stdout.strip().splitlines()[-1]
    running.stop()


def submit(running, token, path, slug=None):
    args = ["submit", str(path), "--server", running.url, "--token", token, "--json"]
    done = grader(*args, *(["--challenge", slug] if slug else []), env={**os.environ})
    return done, json.loads(done.stdout) if done.stdout.strip() else None


def test_official_challenges_are_served_by_their_folder_names(server):
    running, token = server
    done, report = submit(running, token, SUBMISSIONS / "min_max_right.cu")  # chosen by its signature
    assert done.returncode == 0, done.stderr
    assert report["challenge"] == "904_min_max" and report["verdict"] == "ACCEPTED"
    assert report["parity"]["strict"] and report["parity"]["extras_run"] > 0


def test_a_strict_class_counts_the_checks_beyond_leetgpus_judge(server):
    running, token = server
    done, report = submit(running, token, SUBMISSIONS / "value_count_unzeroed.cu", "903_value_count")
    assert done.returncode == 1 and report["verdict"] == "WRONG_ANSWER", done.stderr
    assert report["message"].startswith("strict case")


def test_deadlines_take_official_names(server):
    running, _ = server
    set_ = grader("deadline", "904_min_max", "2030-01-01T12:00", "--db", str(running.db), "--leetgpu", str(FIXTURE))
    assert set_.returncode == 0 and "due 2030-01-01" in set_.stdout, set_.stderr
    unknown = grader("deadline", "904_min_max", "2030-01-01T12:00", "--db", str(running.db))
    assert unknown.returncode == 2, "without the checkout the name is unknown"
