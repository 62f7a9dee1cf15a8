"""Leaderboards from a store of synthetic runs: ranking, best per user, charts' data, CSV, and the
gradebook beside the ranking: every roster student and every graded user, accepted or not."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import re

import pytest
from rich.console import Console

from grader.classroom.schema import open_class
from grader import leaderboard, place, report
from grader.classroom import roster
from grader.verdict import Verdict

from conftest import text_source
from test_report import grade_report, perf



def board(store, challenge, **options) -> leaderboard.Board:
    """The board as its front ends make it: with the class's roster (the CLI's and the server's own)."""
    return leaderboard.board(store, challenge, on_roster=roster.students(store), **options)

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
    s = open_class(tmp_path / "r.sqlite3")
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
    data = board(results, matmul)
    assert [e.user for e in data.entries][:4] == ["alice", "dave", "bob", "<script>alert(1)</script>"]
    alice = data.entries[0]
    assert alice.rank == 1 and alice.attempts == 2 and alice.level == 5
    assert alice.median_ms == {"leetgpu 8192×6144×4096": 9.0}
    assert data.distribution == {1: 1, 2: 1, 4: 2, 5: 1}
    assert [a.median_ms for a in data.history["alice"]] == [20.0, 9.0]
    assert data.history["carol"][0].verdict is Verdict.WRONG_ANSWER
    assert data.gpu == "NVIDIA H200"


def test_csv_for_the_gradebook(results, matmul):
    rows = list(csv.reader(io.StringIO(leaderboard.as_csv(board(results, matmul)))))
    assert rows[0][:5] == ["rank", "user", "status", "best verdict", "level"]
    assert rows[1][:5] == ["1", "alice", "accepted", "ACCEPTED", "5"]
    assert len(rows) == 7  # six ranked, then carol, who has no accepted run; eve's practice run counts for nothing
    # a name that a spreadsheet would run as a formula is written as text, its escape made visible
    assert rows[5][1] == "'=HYPERLINK(\"http://x\")\\x1b[2J"
    assert rows[6][:5] == ["", "carol", "not accepted", "WRONG_ANSWER", ""]


def test_terminal_table_shows_names_as_text(results, matmul):
    console = Console(record=True, width=200)
    report.render_leaderboard(board(results, matmul), console)
    text = console.export_text()
    assert "<script>alert(1)</script>" in text and "alice" in text and "9.000" in text
    assert "\x1b" not in text and "\\x1b[2J" in text  # the escape is shown, not obeyed


def test_empty_board(tmp_path, matmul):
    with open_class(tmp_path / "r.sqlite3") as s:
        data = board(s, matmul)
    assert data.entries == () and data.gpu == "CPU emulator"


def test_a_memory_bound_challenge_ranks_by_time_and_shows_gb_per_s(tmp_path):
    """vector_add counts bytes, not flops: its board's rate column is GB/s in every format."""
    from grader import html, spec
    from test_report import memory_bound_perf
    from conftest import CHALLENGES

    vector_add = spec.load(CHALLENGES, "vector_add")
    run = dataclasses.replace(grade_report(performance=[memory_bound_perf()]), challenge="vector_add")
    with open_class(tmp_path / "r.sqlite3") as s:
        s.record(run, "alice", "a.cu", text_source("a", "a.cu"), secret_seed=True)
        data = board(s, vector_add)
    assert data.rate_label == "GB/s" and round(data.entries[0].rate) == 3660
    console = Console(record=True, width=200)
    report.render_leaderboard(data, console)
    table = console.export_text()
    assert "GB/s" in table and "3,660" in table and "GFLOP/s" not in table
    assert next(csv.reader(io.StringIO(leaderboard.as_csv(data))))[-6] == "GB/s"
    page = html.render(data)
    assert 'data-rate-label="GB/s"' in page and 'data-rate-field="gbps"' in page and "3,660" in page


# --------------------------------------------------------------------------- the gradebook: every student

ROSTER = ["ann", "bea", "cal", "dan", "eve"]


@pytest.fixture
def gradebook(tmp_path):
    """A class of five on the roster: ann accepted; bea failing (WRONG_ANSWER, then COMPILE_ERROR); cal
    with nothing; dan with a practice run only; eve accepted late. zed has runs and is not on the
    roster; ivy is an instructor, not a student."""
    s = open_class(tmp_path / "r.sqlite3")
    for name in ROSTER:
        roster.add(s, name)
    roster.add(s, "ivy", roster.Role.INSTRUCTOR)
    runs = [("ann", timed(10.0, level=4), True, False), ("bea", timed(5.0, Verdict.WRONG_ANSWER), True, False),
            ("bea", timed(5.0, Verdict.COMPILE_ERROR), True, False), ("dan", timed(8.0, level=5), False, False),
            ("eve", timed(12.0, level=3), True, True), ("zed", timed(15.0, level=2), True, False)]
    for n, (user, result, secret, late) in enumerate(runs):
        s.record(result, user, "x.cu", text_source(f"{user}{n}"), secret_seed=secret, late=late)
    yield s
    s.close()


def by_user(data: leaderboard.Board) -> dict[str, leaderboard.Standing]:
    return {row.user: row for row in data.students}


def test_the_gradebook_lists_every_student(gradebook, matmul):
    data = board(gradebook, matmul)
    assert [row.user for row in data.students] == ["ann", "eve", "zed", "bea", "cal", "dan"]
    assert [e.user for e in data.entries] == ["ann", "eve", "zed"]
    assert data.roster_size == 5 and data.practice_included is False
    rows = by_user(data)
    assert [rows[u].rank for u in ("ann", "eve", "zed", "bea", "cal", "dan")] == [1, 2, 3, None, None, None]
    Status = leaderboard.Status
    assert {u: rows[u].status for u in rows} == {
        "ann": Status.ACCEPTED, "eve": Status.ACCEPTED, "zed": Status.ACCEPTED, "bea": Status.NOT_ACCEPTED,
        "cal": Status.NO_SUBMISSION, "dan": Status.NO_SUBMISSION}
    assert rows["bea"].verdict is Verdict.COMPILE_ERROR and rows["bea"].attempts == 2  # the latest run's verdict
    assert rows["eve"].late is True and rows["ann"].late is False and rows["eve"].time_ms == 12.0
    assert rows["zed"].on_roster is False and rows["ann"].on_roster is True
    assert rows["cal"] == dataclasses.replace(rows["dan"], user="cal") and rows["cal"].report is None
    assert rows["cal"].verdict is None and rows["cal"].attempts == 0
    assert rows["bea"].report["verdict"] == "COMPILE_ERROR" and rows["bea"].run_id is not None
    json_rows = {row["user"]: row for row in data.to_json()["students"]}
    assert set(json_rows["cal"]) == set(json_rows["ann"]) == set(json_rows["bea"])  # every row has every key


def test_practice_runs_count_only_when_asked(gradebook, matmul):
    data = board(gradebook, matmul, include_practice=True)
    rows = by_user(data)
    assert data.practice_included is True
    assert [row.user for row in data.students] == ["dan", "ann", "eve", "zed", "bea", "cal"]
    assert rows["dan"].practice is True and rows["dan"].rank == 1 and rows["ann"].practice is False
    assert [e.user for e in data.entries] == ["dan", "ann", "eve", "zed"]


def test_a_secret_run_is_counted_before_a_faster_practice_run(gradebook, matmul):
    gradebook.record(timed(1.0, level=6), "ann", "x.cu", text_source("ann practice"), secret_seed=False)
    rows = by_user(board(gradebook, matmul, include_practice=True))
    assert rows["ann"].practice is False and rows["ann"].median_ms == {"leetgpu 8192×6144×4096": 10.0}
    assert rows["ann"].attempts == 2


def gradebook_csv(data: leaderboard.Board) -> dict[str, dict[str, str]]:
    lines = list(csv.DictReader(io.StringIO(leaderboard.as_csv(data))))
    assert len(lines) == len(data.students)
    return {line["user"]: line for line in lines}


def test_the_gradebook_csv_has_a_line_for_every_student(gradebook, matmul):
    lines = gradebook_csv(board(gradebook, matmul))
    assert list(lines) == ["ann", "eve", "zed", "bea", "cal", "dan"]
    assert "practice" not in lines["ann"]
    expected = {"ann": ("1", "accepted", "ACCEPTED", "no"), "eve": ("2", "accepted", "ACCEPTED", "yes"),
                "zed": ("3", "accepted", "ACCEPTED", "no"), "bea": ("", "not accepted", "COMPILE_ERROR", "no"),
                "cal": ("", "no submission", "", "no"), "dan": ("", "no submission", "", "no")}
    for user, (rank, status, verdict, late) in expected.items():
        line = lines[user]
        assert (line["rank"], line["status"], line["best verdict"], line["late"]) == (rank, status, verdict, late), user
    assert lines["ann"]["leetgpu 8192×6144×4096 median ms"] == "10" and lines["ann"]["level"] == "4"
    assert lines["cal"]["leetgpu 8192×6144×4096 median ms"] == "" and lines["cal"]["submitted_at"] == ""
    assert lines["cal"]["attempts"] == "0" and lines["bea"]["attempts"] == "2" and lines["ann"]["backend"] == "cuda"


def test_the_gradebook_csv_flags_practice_runs_when_they_count(gradebook, matmul):
    lines = gradebook_csv(board(gradebook, matmul, include_practice=True))
    assert (lines["dan"]["rank"], lines["dan"]["status"], lines["dan"]["practice"]) == ("1", "accepted", "yes")
    assert lines["ann"]["practice"] == "no" and lines["cal"]["practice"] == "no"


def test_the_gradebook_json_carries_every_student(gradebook, matmul):
    data = json.loads(json.dumps(board(gradebook, matmul).to_json()))
    assert [row["user"] for row in data["students"]] == ["ann", "eve", "zed", "bea", "cal", "dan"]


def test_the_json_of_a_board_is_the_one_it_has_always_been(gradebook, matmul):
    """Board.to_json is the wire format (`grader leaderboard --format json`, the class server's API): its
    keys and their order are the same for every board, and a row with no submission has every key too."""
    data = board(gradebook, matmul).to_json()
    assert list(data) == ["challenge", "title", "gpu", "generated_at", "baseline_label", "cases", "revealed",
                          "rate_label", "levels", "entries", "distribution", "history", "students", "roster_size",
                          "practice_included"]
    run = ["rank", "user", "verdict", "level", "level_name", "median_ms", "rate", "gflops", "gbps",
           "percent_of_baseline", "submitted_at", "attempts", "run_id", "submission_id", "backend", "late", "practice",
           "report"]
    assert list(data["entries"][0]) == run and data["entries"][0]["verdict"] == "ACCEPTED"
    rows = {row["user"]: row for row in data["students"]}
    assert list(rows["bea"]) == run + ["status", "best_verdict", "time_ms", "on_roster"]
    assert (rows["bea"]["status"], rows["bea"]["best_verdict"]) == ("not accepted", "COMPILE_ERROR")
    assert list(rows["cal"]) == ["rank", "user", "verdict", "status", "best_verdict", "level", "level_name", "time_ms",
                                 "median_ms", "rate", "gflops", "gbps", "percent_of_baseline", "attempts", "late",
                                 "practice", "submitted_at", "run_id", "submission_id", "backend", "report", "on_roster"]
    assert data["history"]["bea"][-1] == {"submitted_at": rows["bea"]["submitted_at"], "median_ms": 5.0,
                                          "verdict": "COMPILE_ERROR"}
    assert data["distribution"] == {"2": 1, "3": 1, "4": 1}


def test_the_public_board_is_the_ranking_s_rank_name_level_and_time_only(gradebook, matmul):
    """Board.public, what anyone may see (the class server's /api/leaderboard): picked field by field from
    the ranked entries, so no failing or absent student, attempt, date, report, roster size or path."""
    full = board(gradebook, matmul)
    public = full.public()
    data = public.to_json()
    assert list(data) == ["challenge", "title", "gpu", "generated_at", "cases", "levels", "entries", "distribution"]
    assert [e["user"] for e in data["entries"]] == ["ann", "eve", "zed"]
    assert data["entries"][0] == {"rank": 1, "user": "ann", "level": 4, "level_name": matmul.levels[3].name,
                                  "median_ms": {"leetgpu 8192×6144×4096": 10.0}, "time_ms": pytest.approx(10.0)}
    assert data["distribution"] == full.to_json()["distribution"]
    text = json.dumps(data)
    for private in ("bea", "cal", "dan", "COMPILE_ERROR", "WRONG_ANSWER", "attempts", "history", "roster", "report",
                    "late", "submitted_at", "/"):
        assert private not in text, private


def test_a_roster_student_graded_on_another_gpu_has_no_submission_on_this_board(gradebook, matmul):
    assert by_user(board(gradebook, matmul, gpu="NVIDIA B200"))["ann"].status is leaderboard.Status.NO_SUBMISSION


def narrow(data: leaderboard.Board) -> str:
    console = Console(width=80, record=True)
    report.render_leaderboard(data, console)
    return console.export_text()


def test_the_terminal_gradebook_fits_80_columns(gradebook, matmul):
    text = narrow(board(gradebook, matmul, include_practice=True))
    assert max(map(len, text.splitlines())) <= 80, text
    for user in ("ann", "bea", "cal", "dan", "eve", "zed"):
        assert user in text
    assert "COMPILE_ERROR" in text and "no submission" in text and "late" in text and "level" in text


def test_the_terminal_gradebook_fits_80_columns_with_hostile_names(results, matmul):
    """A name too long for the rest to fit folds onto a second line; no other column does."""
    text = narrow(board(results, matmul))
    assert max(map(len, text.splitlines())) <= 80, text
    assert "<script>alert(1)" in text and "\\x1b[2J" in text and "\x1b" not in text
    assert "alice" in text and "carol" in text and "WRONG_ANSWER" in text 
    assert len(re.findall(r"\b\d\d-\d\d \d\d:\d\d\b", text)) == 6  # every date whole, if without its year


def test_the_emulator_gradebook_drops_the_columns_it_cannot_fill(tmp_path, matmul):
    """The CPU emulator times nothing: no per-case times, rate, % of the baseline or level columns."""
    from test_report import ENV

    emulated = dataclasses.replace(ENV, backend="emulator", gpu=None)
    with open_class(tmp_path / "r.sqlite3") as s:
        for name in ROSTER:
            roster.add(s, name)
        s.record(dataclasses.replace(grade_report(), environment=emulated), "ann", "a.cu", text_source("a"), True)
        s.record(dataclasses.replace(grade_report(Verdict.WRONG_ANSWER), environment=emulated), "bea", "b.cu",
                 text_source("b"), True, late=True)
        data = board(s, matmul)
    text = narrow(data)
    assert data.gpu == "CPU emulator" and max(map(len, text.splitlines())) <= 80, text
    for user in ROSTER:
        assert user in text
    header = next(line for line in text.splitlines() if "user" in line)
    assert "status" in header and "attempts" in header and "late" in header and "submitted" in header
    assert "level" not in header and "ms" not in text and "GFLOP/s" not in text and "cuBLAS" not in text


def test_grader_leaderboard_counts_practice_runs_when_asked(gradebook):
    from click.testing import CliRunner
    from grader import cli

    def gradebook_of(*flags: str) -> dict[str, dict[str, str]]:
        terminal = cli.Terminal(Console(record=True, width=240), Console(record=True, width=240, stderr=True))
        result = CliRunner().invoke(cli.cli, ["leaderboard", "matmul", "--db", str(gradebook.path), "--format", "csv",
                                              *flags], obj=terminal)
        assert result.exit_code == 0, result.output
        return {line["user"]: line for line in csv.DictReader(io.StringIO(result.output))}

    assert gradebook_of()["dan"]["status"] == "no submission" and "practice" not in gradebook_of()["dan"]
    dan = gradebook_of("--include-practice")["dan"]
    assert (dan["status"], dan["practice"]) == ("accepted", "yes")
