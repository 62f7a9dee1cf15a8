"""Text from a submission is shown inert: control characters escaped, long text cut, no formulas."""

from __future__ import annotations

import dataclasses

from rich.console import Console

from grader import report
from grader.inert import spreadsheet_cell, visible
from grader.verdict import Verdict

from test_report import grade_report

ATTACK = "\x1b[2J\x1b[H\x1b[32mACCEPTED\x1b[0m\x1b]0;owned\x07\r\x08\u202e"


def test_control_characters_are_written_out_and_tab_and_newline_kept():
    shown = visible("a\tb\n" + ATTACK)
    assert shown.startswith("a\tb\n")
    assert not any(ord(ch) < 0x20 and ch not in "\t\n" for ch in shown) and "\u202e" not in shown
    assert "\\x1b[2J" in shown and "\\x07" in shown and "\\u202e" in shown


def test_long_text_keeps_its_end_and_says_what_was_cut():
    shown = visible("x" * 50 + "END", limit_chars=10)
    assert shown.endswith("xxxxxxxEND") and "43 characters not shown" in shown


def test_spreadsheet_cells_never_start_a_formula():
    for text in ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"]:
        assert spreadsheet_cell(text).startswith("'") or spreadsheet_cell(text).startswith("\\x")
    assert spreadsheet_cell("alice") == "alice"


def test_a_report_never_sends_the_submission_s_escapes_to_the_terminal():
    rejected = dataclasses.replace(grade_report(Verdict.RUNTIME_ERROR), message="crashed: " + ATTACK,
                                   worker_output="printed " + ATTACK * 2000, submission="sol\x1b[2J.cu")
    console = Console(record=True, width=120, force_terminal=True)
    report.render(rejected, console)
    raw = console.export_text(styles=False)
    assert "\x1b" not in raw and "\x07" not in raw and "\u202e" not in raw
    assert "\\x1b[2J" in raw and "characters not shown" in raw
