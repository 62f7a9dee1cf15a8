"""The score rule (grader.gradebook.ScoreRule: its arithmetic, its text, its refusals) and the LMS file
Canvas and Moodle import (`lms_csv`, `lms_file`), from standings made by hand and from a store of
synthetic runs; the `--score-rule` option of `grader leaderboard` and `grader serve`; and the example
docs/gradebook.md shows, checked against what the code writes."""

from __future__ import annotations

import csv
import io
import re

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader import cli, gradebook
from grader.classroom import roster
from grader.classroom.schema import open_class
from grader.errors import UsageError
from grader.gradebook import DEFAULT_RULE, RULE_SYNTAX, ScoreRule, parse_rule
from grader.leaderboard import Standing, Status, board as make_board
from grader.verdict import Verdict

from conftest import ROOT, text_source
from test_leaderboard import timed

FORMULA = "=cmd|' /C calc'!A0"


def standing(status: Status = Status.ACCEPTED, level: int | None = 3, late: bool = False) -> Standing:
    verdict = {Status.ACCEPTED: Verdict.ACCEPTED, Status.NOT_ACCEPTED: Verdict.WRONG_ANSWER}.get(status)
    return Standing("ann", status, on_roster=True, verdict=verdict, level=level if verdict else None, late=late)


# -- the rule's arithmetic ----------------------------------------------------------------------------------

@pytest.mark.parametrize("case, expected", [
    (standing(level=6), 100.0),                        # the top of a 6-level ladder: everything
    (standing(level=3), 80.0),                         # half of it: 60 + 40 × 3/6
    (standing(level=1), 66.67),                        # rounded to cents
    (standing(level=0), 60.0),                         # accepted, slower than level 1
    (standing(level=None), 60.0),                      # untimed: placed on no level
    (standing(level=9), 100.0),                        # past the ladder's top counts as its top
    (standing(level=6, late=True), 50.0),              # late: half
    (standing(Status.NOT_ACCEPTED), 0.0),
    (standing(Status.NO_SUBMISSION), 0.0),
])
def test_the_default_rule(case, expected):
    assert DEFAULT_RULE.points(case, top_level=6) == expected
    assert DEFAULT_RULE.points_possible == 100


def test_a_challenge_without_a_ladder_gives_the_level_points_with_acceptance():
    assert DEFAULT_RULE.points(standing(level=None), top_level=0) == 100.0
    assert DEFAULT_RULE.points(standing(Status.NOT_ACCEPTED), top_level=0) == 0.0


def test_max_caps_the_score_and_is_the_points_possible():
    rule = ScoreRule(accepted=60, levels=50, max_score=100)
    assert rule.points_possible == 100
    assert rule.points(standing(level=4), top_level=4) == 100.0       # 110, capped
    assert rule.points(standing(level=2), top_level=4) == 85.0
    assert ScoreRule(late=0).points(standing(level=4, late=True), 4) == 0.0
    assert ScoreRule(late=1).points(standing(level=4, late=True), 4) == 100.0


# -- the rule's text ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, rule", [
    (RULE_SYNTAX, ScoreRule(60, 40, 0.5, 100)),
    ("late=1", ScoreRule(late=1)),
    (" Accepted = 50 , levels=50 ", ScoreRule(accepted=50, levels=50)),
    ("accepted=100,levels=0,late=0", ScoreRule(100, 0, 0)),
    ("levels=12.5,max=70", ScoreRule(levels=12.5, max_score=70)),
])
def test_rules_are_read_from_their_text(text, rule):
    assert parse_rule(text) == rule
    assert parse_rule(str(rule)) == rule, "str() writes what parse_rule reads"


@pytest.mark.parametrize("text, why", [
    ("", "empty"), ("  ", "empty"), ("bonus=5", "'bonus=5' is not one of"), ("accepted", "is not one of"),
    ("accepted=sixty", "not a number"), ("accepted=-1", "not a number of 0 or more"), ("levels=inf", "not a number"),
    ("late=nan", "not a number"), ("late=1.5", "late is a factor from 0"), ("late=1,late=0", "late is given twice"),
    ("accepted=0,levels=0", "out of 0 points"), ("max=0", "out of 0 points"), ("accepted=60;levels=40", "not a number"),
    ("accepted=60,,levels=40", "'' is not one of"),
])
def test_bad_rules_are_refused_with_the_syntax(text, why):
    with pytest.raises(UsageError) as refused:
        parse_rule(text)
    assert why in refused.value.message and repr(text) in refused.value.message
    assert RULE_SYNTAX in refused.value.hint and "--score-rule" in refused.value.hint


def test_the_rule_in_words():
    assert DEFAULT_RULE.describe() == (
        "ACCEPTED earns 60 points, and the ladder level reached up to 40 more (40 × level ÷ the challenge's top "
        "level; below level 1 or untimed: none; a challenge with no ladder: all of them); late work earns 0.5× its "
        "points (a student's on-time run counts where it earns more); out of 100.")
    assert "late work counts in full" in ScoreRule(late=1).describe()
    assert "late work earns nothing" in ScoreRule(late=0).describe()
    assert ScoreRule(levels=50, max_score=100).describe().endswith("out of 100, capped at 100.")
    assert "capped" not in ScoreRule(max_score=150).describe()


def test_numbers_as_an_lms_reads_them():
    assert [gradebook.number(x) for x in (100.0, 66.666, 0.5, 0.0, -0.0, 1e6, 12.30)] == \
           ["100", "66.67", "0.5", "0", "0", "1000000", "12.3"]


# -- the LMS file -------------------------------------------------------------------------------------------

CLASS = ["ann", "bea", "cal", "eve", FORMULA]
"""The roster of `klass` (the formula name is put in by SQL: roster.add refuses such a name)."""


@pytest.fixture
def klass(tmp_path):
    """A class on matmul (7 levels): ann accepted on time at level 4; bea failing twice; cal never
    submitted; eve accepted at level 2 on time, then level 5 late; the formula-named student accepted at
    level 7 late with nothing on time; zed has runs and is not on the roster."""
    s = open_class(tmp_path / "class.sqlite3")
    for name in CLASS[:-1]:
        roster.add(s, name)
    s.db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES (?, 'student', 'x', '2026-01-01')",
                 (FORMULA,))
    roster.add(s, "ivy", roster.Role.INSTRUCTOR)
    runs = [("ann", timed(10.0, level=4), False), ("bea", timed(5.0, Verdict.WRONG_ANSWER), False),
            ("bea", timed(5.0, Verdict.COMPILE_ERROR), False), ("eve", timed(12.0, level=2), False),
            ("eve", timed(8.0, level=5), True), (FORMULA, timed(2.0, level=7), True),
            ("zed", timed(15.0, level=2), False)]
    for n, (user, result, late) in enumerate(runs):
        s.record(result, user, "x.cu", text_source(f"{user}{n}"), secret_seed=True, late=late)
    yield s
    s.close()


def lms_rows(text: str) -> dict[str, dict[str, str]]:
    return {row["SIS Login ID"]: row for row in csv.DictReader(io.StringIO(text))}


def test_the_lms_file_has_every_roster_student_with_a_score_and_a_status(klass, matmul):
    board = make_board(klass, matmul, on_roster=roster.students(klass))
    text = gradebook.lms_file(klass, matmul, board)
    header = text.splitlines()[0].split(",")
    assert header == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "matmul", "Points Possible", "Status"]
    rows = lms_rows(text)
    assert set(rows) == {"ann", "bea", "cal", "eve", "'" + FORMULA}, "the roster's students: not zed, not ivy"
    assert {u: r["matmul"] for u, r in rows.items()} == {
        "ann": "82.86", "bea": "0", "cal": "0", "eve": "71.43", "'" + FORMULA: "50"}
    assert all(r["Points Possible"] == "100" and r["Student"] == u and r["ID"] == r["SIS User ID"] == r["Section"] == ""
               for u, r in rows.items())
    assert rows["cal"]["Status"] == "no submission"
    assert rows["bea"]["Status"] == "not accepted (latest verdict COMPILE_ERROR, 2 attempts)"
    assert rows["ann"]["Status"] == "accepted, level 4 (2-D register tiles, 128-bit loads)"
    # eve: level 5 late is (60 + 40·5/7)·0.5 = 44.29; her on-time level 2 earns 60 + 40·2/7 = 71.43, and counts
    assert rows["eve"]["Status"].startswith("accepted, level 2 (shared-memory tiling), on-time run counted")
    assert rows["'" + FORMULA]["Status"] == "accepted, level 7 (autotuned Hopper kernel (wgmma, 3xTF32)), late"


def test_without_the_on_time_board_the_late_run_counts(klass, matmul):
    board = make_board(klass, matmul, on_roster=roster.students(klass))
    assert lms_rows(gradebook.lms_csv(board))["eve"]["matmul"] == "44.29"
    assert lms_rows(gradebook.lms_file(klass, matmul, board, ScoreRule(late=1)))["eve"]["matmul"] == "88.57"


def test_formula_names_are_data_in_every_cell(klass, matmul):
    klass.record(timed(3.0, level=1), "@SUM(A1)", "x.cu", text_source("at"), secret_seed=True)
    klass.db.execute("DELETE FROM people")  # no roster: every graded user is listed
    board = make_board(klass, matmul, on_roster=roster.students(klass))
    text = gradebook.lms_csv(board)
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert "zed" in cells and "'@SUM(A1)" in cells and "'" + FORMULA in cells
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)


def test_the_example_in_the_docs_is_what_the_code_writes(tmp_path, matmul):
    example = re.search(r"\n    (Student,ID,.*?)\n\n", (ROOT / "docs" / "gradebook.md").read_text(), re.S).group(1)
    s = open_class(tmp_path / "docs.sqlite3")
    for name in ("ann", "bea", "cal", "eve"):
        roster.add(s, name)
    for n, (user, result, late) in enumerate([
            ("ann", timed(10.0, level=4), False), ("eve", timed(12.0, level=3), True),
            ("bea", timed(5.0, Verdict.WRONG_ANSWER), False), ("bea", timed(5.0, Verdict.COMPILE_ERROR), False)]):
        s.record(result, user, "x.cu", text_source(f"{user}{n}"), secret_seed=True, late=late)
    written = gradebook.lms_file(s, matmul, make_board(s, matmul, on_roster=roster.students(s)))
    s.close()
    assert written.replace("\r\n", "\n") == "\n".join(line.strip() for line in example.splitlines()) + "\n"


# -- the command line ---------------------------------------------------------------------------------------

def invoke(*args: str):
    terminal = cli.Terminal(Console(record=True, width=240), Console(record=True, width=240, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.err.export_text()


def test_grader_leaderboard_writes_the_lms_file(klass):
    result, _ = invoke("leaderboard", "matmul", "--db", str(klass.path), "--format", "lms")
    assert result.exit_code == 0, result.output
    assert lms_rows(result.output)["eve"]["matmul"] == "71.43"
    result, _ = invoke("leaderboard", "matmul", "--db", str(klass.path), "--format", "lms",
                       "--score-rule", "accepted=10,levels=0")
    assert result.exit_code == 0 and lms_rows(result.output)["ann"]["matmul"] == "10"
    assert lms_rows(result.output)["ann"]["Points Possible"] == "10"


@pytest.mark.parametrize("args, said", [
    (["--format", "lms", "--score-rule", "bonus=1"], "is not a score rule"),
    (["--format", "lms", "--score-rule", "late=2"], "late is a factor"),
    (["--format", "csv", "--score-rule", "late=1"], "--score-rule is for --format lms"),
])
def test_grader_leaderboard_refuses_a_bad_score_rule(klass, args, said):
    result, err = invoke("leaderboard", "matmul", "--db", str(klass.path), *args)
    assert result.exit_code == 2 and said in err and "hint" in err


def test_grader_serve_refuses_a_bad_score_rule_before_anything_starts(tmp_path):
    db = tmp_path / "never.sqlite3"
    result, err = invoke("serve", "--db", str(db), "--port", "0", "--score-rule", "levels=-4")
    assert result.exit_code == 2, result.output
    assert "is not a score rule" in err and "accepted=60,levels=40,late=0.5,max=100" in err
    assert not db.exists(), "no database made, no port taken"
