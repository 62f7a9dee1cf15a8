"""Leaderboards from a store of synthetic runs: ranking, best per user, charts' data, CSV."""

from __future__ import annotations

import csv
import dataclasses
import io

import pytest
from rich.console import Console

from grader import leaderboard, place, report, store
from grader.verdict import Verdict

from conftest import text_source
from test_report import grade_report, perf


def timed(ms: float, verdict: Verdict = Verdict.ACCEPTED, level: int | None = None):
    p = perf()
    stats = dataclasses.replace(p.stats, median_ms=ms, samples_ms=(ms,))
    result = grade_report(verdict, performance=[dataclasses.replace(p, stats=stats)])
    if level is not None:
        placement = place.Placement(level, 6, "x", 1.0, None, None, None, None, {})
        result = dataclasses.replace(result, placement=placement)
    return result


@pytest.fixture
def results(tmp_path):
    s = store.Store.open(tmp_path / "r.sqlite3")
    for user, ms, verdict, level in [("alice", 20.0, Verdict.ACCEPTED, 3), ("alice", 9.0, Verdict.ACCEPTED, 5),
                                     ("bob", 12.0, Verdict.ACCEPTED, 4), ("carol", 5.0, Verdict.WRONG_ANSWER, None),
                                     ("<script>alert(1)</script>", 30.0, Verdict.ACCEPTED, 2),
                                     ("dave", 11.0, Verdict.ACCEPTED, 4),
                                     ("=HYPERLINK(\"http://x\")\x1b[2J", 40.0, Verdict.ACCEPTED, 1)]:
        s.record(timed(ms, verdict, level), user, "x.cu", text_source(f"{user}{ms}"), secret_seed=True)
    s.record(timed(1.0), "eve", "x.cu", text_source("unsecret"), secret_seed=False)  # practice runs never rank
    yield s
    s.close()


def test_best_accepted_run_per_user_ranked_by_time(results, matmul):
    data = leaderboard.board(results, matmul)
    assert [e["user"] for e in data["entries"]][:4] == ["alice", "dave", "bob", "<script>alert(1)</script>"]
    alice = data["entries"][0]
    assert alice["rank"] == 1 and alice["attempts"] == 2 and alice["level"] == 5
    assert alice["median_ms"] == {"leetgpu 8192×6144×4096": 9.0}
    assert data["distribution"] == {"1": 1, "2": 1, "4": 2, "5": 1}
    assert [a["median_ms"] for a in data["history"]["alice"]] == [20.0, 9.0]
    assert data["history"]["carol"][0]["verdict"] == "WRONG_ANSWER"
    assert data["gpu"] == "NVIDIA H200"


def test_csv_for_the_gradebook(results, matmul):
    rows = list(csv.reader(io.StringIO(leaderboard.as_csv(leaderboard.board(results, matmul)))))
    assert rows[0][:3] == ["rank", "user", "level"] and rows[1][:3] == ["1", "alice", "5"]
    assert len(rows) == 6
    # a name that a spreadsheet would run as a formula is written as text, its escape made visible
    assert rows[5][1] == "'=HYPERLINK(\"http://x\")\\x1b[2J"


def test_terminal_table_shows_names_as_text(results, matmul):
    console = Console(record=True, width=200)
    report.render_leaderboard(leaderboard.board(results, matmul), console)
    text = console.export_text()
    assert "<script>alert(1)</script>" in text and "alice" in text and "9.000" in text
    assert "\x1b" not in text and "\\x1b[2J" in text  # the escape is shown, not obeyed


def test_empty_board(tmp_path, matmul):
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        data = leaderboard.board(s, matmul)
    assert data["entries"] == [] and data["gpu"] == "CPU emulator"


def test_a_memory_bound_challenge_ranks_by_time_and_shows_gb_per_s(tmp_path):
    """vector_add counts bytes, not flops: its board's rate column is GB/s in every format."""
    from grader import html, spec
    from test_report import memory_bound_perf
    from conftest import CHALLENGES

    vector_add = spec.load(CHALLENGES, "vector_add")
    run = dataclasses.replace(grade_report(performance=[memory_bound_perf()]), challenge="vector_add")
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        s.record(run, "alice", "a.cu", text_source("a", "a.cu"), secret_seed=True)
        data = leaderboard.board(s, vector_add)
    assert data["rate_label"] == "GB/s" and round(data["entries"][0]["rate"]) == 3660
    console = Console(record=True, width=200)
    report.render_leaderboard(data, console)
    table = console.export_text()
    assert "GB/s" in table and "3,660" in table and "GFLOP/s" not in table
    assert next(csv.reader(io.StringIO(leaderboard.as_csv(data))))[-5] == "GB/s"
    page = html.render(data)
    assert 'data-rate-label="GB/s"' in page and 'data-rate-field="gbps"' in page and "3,660" in page
