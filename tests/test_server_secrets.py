"""Issue 26, played against a real class server (`grader serve` on 127.0.0.1, grading tests/challenges/tiny_add
on the CPU emulator): a hostile student whose kernel is right on the public shapes and scales its answer by
(1 + N·10⁻⁶) elsewhere, so that its error size spells every hidden N, learns none of them from anything the
server shows (the client's output, the API's report and its text, the submission's page), and each of its
submissions is graded on hidden shapes of its own, which the instructor reproduces from the seed the run
keeps. The anonymous leaderboard (API and page) is the ranking and nothing behind it: no student who failed
or never submitted, no attempt, roster size, report, build record or path."""

from __future__ import annotations

import json
import re
import sqlite3
import sys

import httpx
import pytest

from class_server import Server, add_person, grader
from conftest import ROOT
from grader import pipeline, seeds, spec
from grader.results import CaseKind
from test_server_load import CHALLENGES

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the server's grading processes are Linux-only")

CLASS_SEED = 20261256
"""Pinned so the runs below are the same on every machine. It draws hidden sizes of 100 and more for the
attacker's submissions (3 and 4: 907 and 593, then 228 and 713), so that no digit of the report could be
taken for one; the test reads them from the runs, not from here."""
GOOD = ROOT / "challenges" / "vector_add" / "levels" / "1_naive.cu"
SCALED = """
// Right on tiny_add's public shapes (its functional cases: N = 1, 33, 257), wrong elsewhere by a factor
// 1 + N·1e-6: the error size of a hidden case is N·1e-6, so a report that showed it would give N away.
#include <cuda_runtime.h>

__global__ void add(const float* A, const float* B, float* C, int N, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = (A[i] + B[i]) * scale;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    bool seen = N == 1 || N == 33 || N == 257;
    float scale = seen ? 1.0f : 1.0f + N * 1e-6f;
    add<<<(N + 255) / 256, 256>>>(A, B, C, N, scale);
}
"""
BROKEN = 'extern "C" void solve(const float* A, const float* B, float* C, int N) { not C++ }\n'
PUBLIC_BOARD = {"challenge", "title", "gpu", "generated_at", "cases", "levels", "entries", "distribution"}
PUBLIC_ENTRY = {"rank", "user", "level", "level_name", "median_ms", "time_ms"}


@pytest.fixture(scope="module")
def classroom(tmp_path_factory):
    """A class of four and an instructor; bob submits a correct kernel, dave one that does not compile, alice
    the scaling kernel twice, carol nothing. Yields what each saw and where the server keeps it."""
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    (folder / (db.name + ".secret-seed")).write_text(str(CLASS_SEED))
    tokens = {name: add_person(db, name) for name in ("alice", "bob", "carol", "dave")}
    tokens["prof"] = add_person(db, "prof", instructor=True)
    (folder / "scaled.cu").write_text(SCALED)
    (folder / "broken.cu").write_text(BROKEN)
    log = folder / "server.log"
    running = Server(db, log, "--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add", "--cache-dir",
                     str(folder / "cache"))
    running.start()
    try:
        seen = {}
        for user, path in (("bob", GOOD), ("dave", folder / "broken.cu"), ("alice", folder / "scaled.cu"),
                           ("alice", folder / "scaled.cu")):
            done = grader("submit", str(path), "--server", running.url, "--token", tokens[user], "--challenge",
                          "tiny_add")
            sub_id = int(re.search(r"submitted as (\d+)", done.stderr).group(1))
            seen[sub_id] = (user, done)
        yield running, tokens, seen, folder
    finally:
        running.stop()
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def _stored(db, sub_id: int) -> tuple[int, dict]:
    """The instructor's view: the run's seed and its report, as the database keeps them."""
    with sqlite3.connect(db) as c:
        seed, report = c.execute("SELECT seed, report FROM runs WHERE submission_id = ?", (sub_id,)).fetchone()
    return seed, json.loads(report)


def _hidden_figures(report: dict) -> dict[str, str]:
    """Every figure of a hidden case that follows from its shape, as a report could write it: N, the last index
    N−1, its error sizes in the forms the terminal (2 digits), the JSON (repr) and messages (3, 4 digits) use,
    its count of wrong elements, its call time (unless a public case's, which the page shows, is the same to
    the 0.01 ms), and every number of three digits or more its message quotes that no public case's message
    does (the tolerance's limits, say)."""
    number = r"\d+(?:\.\d+)?(?:e[-+]?\d+)?"
    public = {figure for case in report["cases"] if case["kind"] != CaseKind.RANDOMIZED.value
              for figure in re.findall(number, case["message"] + case["label"])}
    public_ms = {f"{case['call_s'] * 1e3:.2f}" for case in report["cases"]
                 if case["kind"] != CaseKind.RANDOMIZED.value and case["call_s"] is not None}
    found = {}
    for case in report["cases"]:
        if case["kind"] != CaseKind.RANDOMIZED.value:
            continue
        n = case["dims"]["N"]
        found.update({str(n): "N", str(n - 1): "N-1"})
        for comparison in case["comparisons"]:
            for key in ("scaled_error", "relative_frobenius"):
                value = comparison[key]
                found.update({form: key for form in (f"{value:.2g}", f"{value:.3g}", f"{value:.4g}", repr(value))})
            if comparison["bad_count"] >= 100:
                found[str(comparison["bad_count"])] = "bad_count"
        if case["call_s"] is not None:
            found[repr(case["call_s"])] = "call_s"
            if f"{case['call_s'] * 1e3:.2f}" not in public_ms:  # the page shows the public cases' call times: a
                found[f"{case['call_s'] * 1e3:.2f}"] = "call ms"  # tiny kernel's 0.06 ms there is not this case's
        for figure in set(re.findall(number, case["message"])) - public:
            if len(re.sub(r"\D", "", figure)) >= 3:
                found[figure] = "message"
    return found


def _numbers_in(text: str, figures: dict[str, str]) -> list[str]:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # the report's colours, as ANSI codes, are not figures
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    return [f"{figure} ({what})" for figure, what in figures.items()
            if re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d])", text)]


def test_the_scaling_kernel_learns_no_hidden_size_and_sees_fresh_ones_each_time(classroom):
    running, tokens, seen, folder = classroom
    attacks = [sub_id for sub_id, (user, _) in seen.items() if user == "alice"]
    assert len(attacks) == 2
    tiny_add = spec.load(CHALLENGES, "tiny_add")
    hidden_shapes = []
    for sub_id in attacks:
        seed, stored = _stored(running.db, sub_id)
        assert stored["verdict"] == "WRONG_ANSWER" and stored["seed"] == seed, stored["message"]
        hidden = [c for c in stored["cases"] if c["kind"] == "randomized"]
        assert [c["verdict"] for c in hidden] == ["WRONG_ANSWER"] * len(hidden), "its error is there to be read"
        assert seed == seeds.for_submission(CLASS_SEED, sub_id) != CLASS_SEED
        drawn = [s.label() for kind, s, _ in pipeline._plan(tiny_add, seed) if kind is CaseKind.RANDOMIZED]
        assert [c["label"] for c in hidden] == drawn, "the run's seed reproduces its hidden shapes"
        ns = [c["dims"]["N"] for c in hidden]
        assert min(ns) >= 100, f"the pinned class seed was to draw sizes of 100 and more, not {ns}"
        hidden_shapes.append(ns)
        figures = _hidden_figures(stored)
        assert _numbers_in(json.dumps(stored), figures), "the instructor's view has them: the check can fail"

        _, done = seen[sub_id]
        assert done.returncode == 1, done.stderr
        view = httpx.get(f"{running.url}/api/submissions/{sub_id}",
                         headers={"Authorization": f"Bearer {tokens['alice']}"}).json()
        page = httpx.get(f"{running.url}/submissions/{sub_id}",
                         headers={"Authorization": f"Bearer {tokens['alice']}"}).text
        report, text = view["report"], view["report_text"]
        assert report["verdict"] == "WRONG_ANSWER" and "seed" not in report and "wall_s" not in report
        assert report["message"] == "hidden case 1 (randomized): WRONG_ANSWER"
        assert [c for c in report["cases"] if c["kind"] == "randomized"] == [
            {"kind": "randomized", "verdict": "WRONG_ANSWER", "label": f"hidden case {n} (randomized)"}
            for n in range(1, len(hidden) + 1)]
        assert "hidden case 2 (randomized)" in text and "257" in text, "the public cases are shown whole"
        for what, shown in (("the client's output", done.stdout), ("the API's report", json.dumps(report)),
                            ("the report's text", text), ("the submission's page", page)):
            assert not _numbers_in(shown, figures), f"{what} shows {_numbers_in(shown, figures)}"
            assert str(seed) not in shown and str(CLASS_SEED) not in shown, what
    assert hidden_shapes[0] != hidden_shapes[1], "each submission is graded on hidden shapes of its own"


def test_the_instructor_reproduces_a_run_from_the_seed_it_keeps(classroom):
    """`grader submit FILE --seed S` (the run's seed, from the database) grades the file on the same hidden
    shapes, to the same verdict, here and in full."""
    running, _, seen, folder = classroom
    sub_id = max(sub_id for sub_id, (user, _) in seen.items() if user == "alice")
    seed, stored = _stored(running.db, sub_id)
    again = grader("submit", str(folder / "scaled.cu"), "--seed", str(seed), "--challenge", "tiny_add",
                   "--challenges-dir", str(CHALLENGES), "--backend", "emulator", "--sandbox", "auto", "--cache-dir",
                   str(folder / "cache"), "--json")
    report = json.loads(again.stdout)
    assert report["seed"] == seed and report["verdict"] == stored["verdict"]
    labels = lambda r: [(c["label"], c["verdict"]) for c in r["cases"] if c["kind"] == "randomized"]
    assert labels(report) == labels(stored)


def test_the_anonymous_leaderboard_is_the_ranking_and_nothing_behind_it(classroom):
    running, tokens, seen, folder = classroom
    answer = httpx.get(f"{running.url}/api/leaderboard/tiny_add")
    assert answer.status_code == 200
    board = answer.json()
    assert set(board) == PUBLIC_BOARD and [e["user"] for e in board["entries"]] == ["bob"]
    assert set(board["entries"][0]) == PUBLIC_ENTRY and board["entries"][0]["rank"] == 1
    page = httpx.get(f"{running.url}/leaderboard/tiny_add").text
    assert '<td class="user" data-sort="bob">bob' in page
    text = json.dumps(board)
    assert "/" not in text, "no path, of any kind"
    for word in ("history", "roster", "attempt", "report", "build", "status", "verdict"):
        assert word not in text, word
    for shown in (text, page):  # the page's own script speaks of reports: what it must not carry is data
        for private in ("alice", "carol", "dave", "WRONG_ANSWER", "COMPILE_ERROR", "not C++", "scaled.cu",
                        "1_naive.cu", str(folder), "/tmp", "hidden case", str(CLASS_SEED)):
            assert private not in shown, private
    assert 'id="reports"' not in page and "chart-history" not in page and 'data-key="attempts"' not in page
    for sub_id in seen:
        assert str(_stored(running.db, sub_id)[0]) not in page, "no run's seed"

    gradebook = httpx.get(f"{running.url}/api/gradebook/tiny_add", headers={"Authorization": f"Bearer {tokens['prof']}"})
    students = {s["user"]: s["status"] for s in gradebook.json()["students"]}
    assert students == {"bob": "accepted", "alice": "not accepted", "dave": "not accepted",
                        "carol": "no submission"}, "the instructor's gradebook has them all"
    assert httpx.get(f"{running.url}/api/gradebook/tiny_add").status_code == 401
