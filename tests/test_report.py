"""Report rendering and JSON, from a synthetic grading result (no GPU)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from rich.console import Console

from grader import place, report, spec
from grader.check import Comparison, Mismatch
from grader.backends import Environment
from grader.build import BuildResult, BuildStatus, Diagnostic
from grader.results import CaseKind, CaseResult, GradeReport, JobLimit, Mode, PerformanceResult
from grader.timing import summarize
from grader.verdict import Verdict

from conftest import CHALLENGES

ENV = Environment("cuda", "NVIDIA H200", "9.0", "13.0", "Cuda compilation tools, release 13.0, V13.0.88", 66908.0, "14.2.0")
BUILD = BuildResult(BuildStatus.OK, "compiled", seconds=0.9, command=("nvcc",))


def passing(shape=(3, 5, 7)) -> CaseResult:
    comparison = Comparison("C", (3, 7), True, 6.1e-8, 4.4e-8, 0, 0, (), None)
    return CaseResult(CaseKind.FUNCTIONAL, "×".join(map(str, shape)), dict(zip("MNK", shape)),
                      Verdict.ACCEPTED, "", (comparison,), 0.00016)


def grade_report(verdict=Verdict.ACCEPTED, cases=None, performance=(), message="", mode=Mode.SUBMIT):
    return GradeReport("solutions/mine.cu", "matmul", 1, 1, 1, mode, 42, verdict, message, BUILD,
                       tuple(cases or [passing()]), tuple(performance), ENV, "cuBLAS FP32", "0.1.0", 5.5, 1.44)


def perf() -> PerformanceResult:
    return PerformanceResult("leetgpu 8192×6144×4096", {"M": 8192, "N": 6144, "K": 4096}, 2 * 8192 * 6144 * 4096,
                             Verdict.ACCEPTED, "", summarize([81.6, 81.7, 81.5]), summarize([8.14, 8.15, 8.13]),
                             66908.0)


def rendered(r: GradeReport, width: int = 220) -> str:
    console = Console(record=True, width=width)
    report.render(r, console)
    return console.export_text()


def test_accepted_submit_shows_cases_performance_and_verdict():
    text = rendered(grade_report(performance=[perf()]))
    assert "matmul v1" in text and "seed 42" in text and "NVIDIA H200" in text and "nvcc 13.0.88" in text
    assert "3×5×7" in text and "6.1e-08" in text
    assert "81.600" in text and "5,053" in text and "10%" in text and "cuBLAS FP32 ms" in text
    assert "ACCEPTED" in text and "1.44 s of it inside solve" in text


def test_wrong_answer_shows_the_message():
    bad = Comparison("C", (3, 7), False, float("inf"), float("inf"), 7, 7, (Mismatch((2, 0), float("nan"), 1.5),), "never written")
    case = CaseResult(CaseKind.FUNCTIONAL, "3×5×7", {"M": 3, "N": 5, "K": 7}, Verdict.WRONG_ANSWER, "C[2, 0] = nan", (bad,))
    text = rendered(grade_report(Verdict.WRONG_ANSWER, [case], message="functional case 3×5×7: C[2, 0] = nan"))
    assert "WRONG_ANSWER" in text and "C[2, 0] = nan" in text and "inf" in text


def test_compile_error_shows_diagnostics_without_a_case_table():
    build = BuildResult(BuildStatus.COMPILE_ERROR, "x", seconds=0.3, command=("nvcc",),
                        diagnostics=(Diagnostic("error", 'identifier "scale" is undefined', "solutions/mine.cu", 16),))
    r = GradeReport("solutions/mine.cu", "matmul", 1, 1, 1, Mode.RUN, 1, Verdict.COMPILE_ERROR,
                    'solutions/mine.cu:16: error: identifier "scale" is undefined', build, (), (), ENV,
                    "cuBLAS FP32", "0.1.0", 0.4, 0.0)
    text = rendered(r)
    assert "COMPILE_ERROR" in text and "solutions/mine.cu:16" in text and "correctness" not in text


def test_run_mode_says_it_did_not_time():
    assert "grader submit" in rendered(grade_report(mode=Mode.RUN))


def test_json_carries_the_report_and_the_environment():
    data = json.loads(report.as_json(grade_report(performance=[perf()])))
    assert data["verdict"] == "ACCEPTED" and data["seed"] == 42 and data["mode"] == "submit"
    assert data["environment"]["gpu"] == "NVIDIA H200" and data["grader_version"] == "0.1.0"
    assert data["build"]["status"] == "ok" and data["build"]["seconds"] == 0.9
    p = data["performance"][0]
    assert p["stats"]["samples_ms"] == [81.6, 81.7, 81.5] and round(p["gflops"]) == 5053
    assert round(p["percent_of_baseline"]) == 10 and p["stats"]["reps"] == 3
    assert data["cases"][0]["kind"] == "functional" and data["cases"][0]["verdict"] == "ACCEPTED"


def test_json_turns_infinities_into_null():
    bad = Comparison("C", (1, 1), False, float("inf"), float("inf"), 1, 1, (), "x")
    case = CaseResult(CaseKind.FUNCTIONAL, "1×1×1", {"M": 1, "N": 1, "K": 1}, Verdict.WRONG_ANSWER, "x", (bad,))
    text = report.as_json(grade_report(Verdict.WRONG_ANSWER, [case]))
    assert "Infinity" not in text and json.loads(text)["cases"][0]["comparisons"][0]["scaled_error"] is None


def placed_with_a_lag():
    """A float4 kernel at level-5 speed on the aligned shapes, scalar fallback on 4095×4097×4093."""
    matmul = spec.load(CHALLENGES, "matmul")
    labels = [s.label() for s in matmul.performance]
    measured = {n: dict(zip(labels, ms)) for n, ms in
                {1: (81.6, 25.5, 23.5), 2: (47.9, 16.1, 16.1), 3: (20.1, 6.84, 6.9), 4: (12.9, 4.25, 4.27),
                 5: (10.0, 3.38, 3.58), 6: (7.8, 2.64, 3.19)}.items()}
    return place.place(dict(zip(labels, (10.0, 3.4, 17.0))), measured, matmul.levels, matmul.performance), matmul


def test_a_shape_far_below_the_others_gets_the_advice_instead_of_the_next_rung():
    placement, matmul = placed_with_a_lag()
    text = rendered(dataclasses.replace(grade_report(performance=[perf()]), placement=placement))
    assert "level 3 of 7" in text and "level per shape: leetgpu 5 · square 5 · irregular 1" in text
    assert "your kernel reaches level 5 on leetgpu and square but level 1 on irregular (4095×4097×4093), where" in text
    assert "not multiples of 4" in text and "next: likely a fallback path" in text and "aligned rows" in text
    assert matmul.levels[3].technique[:40] not in text  # level 4's float4 advice: the kernel has it


def test_json_carries_the_level_of_each_shape():
    placement, _ = placed_with_a_lag()
    data = json.loads(report.as_json(dataclasses.replace(grade_report(performance=[perf()]), placement=placement)))
    assert data["placement"]["level"] == 3
    assert data["placement"]["shape_levels"] == {"leetgpu 8192×6144×4096": 5, "square 4096×4096×4096": 5,
                                                 "irregular 4095×4097×4093": 1}
    lag = data["placement"]["lag"]
    assert lag["case"] == "irregular 4095×4097×4093" and lag["cause"] == "unaligned" and lag["multiple"] == 4


def memory_bound_perf() -> PerformanceResult:
    """vector add of 2^25 floats: 402,653,184 bytes in 0.110 ms is 3,660 GB/s, 89% of 4,100 GB/s."""
    return PerformanceResult("large 33554432", {"N": 33554432}, None, Verdict.ACCEPTED, "",
                             summarize([0.110, 0.111, 0.109]), summarize([0.175, 0.176, 0.174]), 66908.0,
                             12 * 33554432, 4100.0)


def test_a_memory_bound_challenge_shows_bandwidth_not_flops():
    p = memory_bound_perf()
    assert p.gflops is None and round(p.gbps) == 3660 and round(p.percent_of_bandwidth) == 89
    text = rendered(grade_report(performance=[p]))
    assert "GB/s" in text and "% bandwidth" in text and "3,660" in text and "89%" in text
    assert "GFLOP/s" not in text and "% FP32 peak" not in text
    data = json.loads(report.as_json(grade_report(performance=[p])))
    assert round(data["performance"][0]["gbps"]) == 3660 and data["performance"][0]["gflops"] is None


def test_a_batch_summary_names_who_was_not_accepted():
    """`grader grade` ends with the students to talk to, by verdict: 20 names at most per verdict (the
    gradebook has them all), folder names shown as text, never as markup or terminal escapes."""
    from grader import batch

    summary = batch.Summary()
    for n in range(25):
        batch._count(summary, f"student{n:02d}", grade_report(Verdict.WRONG_ANSWER))
    batch._count(summary, "[red]mallory[/red]\x1b[2J", grade_report(Verdict.COMPILE_ERROR))
    batch._count(summary, "alice", grade_report(performance=[perf()]))
    assert summary.not_accepted == {"WRONG_ANSWER": [f"student{n:02d}" for n in range(25)],
                                    "COMPILE_ERROR": ["[red]mallory[/red]\x1b[2J"]}
    matmul = spec.load(CHALLENGES, "matmul")
    plan = batch.Plan(tuple((None, matmul) for _ in range(27)), ())
    console = Console(record=True, width=400)
    report.render_batch_summary(summary, plan, ["grader leaderboard matmul --db results.sqlite3"], console)
    text = console.export_text()
    assert "batch: 27 submissions (27 graded now, 0 graded before): matmul 27" in text
    assert "WRONG_ANSWER (25): student00, student01, " in text and "student19 and 5 more" in text
    assert "student20" not in text
    assert "COMPILE_ERROR (1): [red]mallory[/red]\\x1b[2J" in text and "\x1b" not in text
    assert text.index("WRONG_ANSWER (25)") < text.index("COMPILE_ERROR (1)")  # the most common first
    assert "fastest accepted on matmul: alice" in text and "ACCEPTED (" not in text
    assert text.strip().splitlines()[-1] == "grader leaderboard matmul --db results.sqlite3"


def test_the_batch_summary_s_commands_are_never_wrapped():
    """A copied command must run: rich would break a long one into lines at the terminal's width."""
    from grader import batch

    command = "grader leaderboard matmul --db '/a/very/long/path/" + "x" * 100 + "/results.sqlite3'"
    console = Console(record=True, width=60)
    report.render_batch_summary(batch.Summary(), batch.Plan((), ()), [command], console)
    assert command in console.export_text().splitlines()


def test_the_report_states_the_bound_in_text_and_json():
    limit = JobLimit(60.0, "the challenge's bound on a whole job on a GPU (limits.job_s in its challenge.yaml)")
    bounded = dataclasses.replace(grade_report(), job_limit=limit)
    text = rendered(bounded)
    assert "whole-job bound: 60 s (the challenge's bound on a whole job on a GPU" in text
    data = json.loads(report.as_json(bounded))
    assert data["job_limit"] == {"seconds": 60.0, "why": limit.why, "shape_dependent": False}


def _every_verdict_report() -> GradeReport:
    """Every verdict on a randomized case, a hidden one and a performance case that was not timed."""
    comparison = Comparison("C", (3, 7), False, 1.2e-3, 4.4e-5, 0, 0, (), None)
    cases, performance = [], [perf()]
    for verdict in Verdict:
        cases.append(CaseResult(CaseKind.RANDOMIZED, "random1 4095×4097×4093", {"M": 4095, "N": 4097, "K": 4093},
                                verdict, "", (comparison,), 12.345))
        cases.append(CaseResult(CaseKind.RANDOMIZED, "hidden case 12 (randomized)", {}, verdict, "", (comparison,)))
        performance.append(dataclasses.replace(perf(), label="irregular 4095×4097×4093", verdict=verdict, stats=None))
    return grade_report(Verdict.WRONG_ANSWER, cases, performance)


@pytest.mark.parametrize("width", [80, 60])
def test_a_narrow_terminal_drops_figures_and_never_cuts_a_verdict_or_a_case(width):
    """COLUMNS=80 squeezed the case table into "WRONG_ANSW…"; now columns are shortened or dropped first."""
    text = rendered(_every_verdict_report(), width)
    assert "…" not in text
    assert all(len(line) <= width for line in text.splitlines())
    tables = text.split("╭─ verdict")[0]
    for verdict in Verdict:
        assert tables.count(verdict.name) >= 3, verdict  # a case, a hidden case and a performance case
    assert tables.count("randomized ") >= 2 * len(Verdict) and tables.count("irregular ") == len(Verdict)


def test_a_wide_terminal_shows_every_figure():
    text = rendered(grade_report(performance=[perf()]), 220)
    for header in ("max scaled err", "rel. Frobenius", "call ms", "IQR", "GFLOP/s", "cuBLAS FP32 ms", "% FP32 peak",
                   "reps"):
        assert header in text


def test_a_time_not_from_the_events_says_which_clock_and_why():
    from grader.timing import Sources, TimedBy
    host = dataclasses.replace(perf(), timing=Sources(TimedBy.END_TO_END, 0.0299, 0.509, 0.512))
    text = " ".join(rendered(grade_report(performance=[host])).split())
    assert "timed end to end: solve took 0.509 ms a call, of which its GPU work took 0.0299 ms; the other 0.479 ms" in text
    clock = dataclasses.replace(perf(), timing=Sources(TimedBy.GRADER_CLOCK, 0.5, 0.5, 1.0))
    assert "timed by the grader's own clock (1 ms a call)" in " ".join(rendered(grade_report(performance=[clock])).split())
    events = dataclasses.replace(perf(), timing=Sources(TimedBy.EVENTS, 81.6, 81.7, 81.8))
    assert "note:" not in rendered(grade_report(performance=[events]))
    assert json.loads(report.as_json(grade_report(performance=[host])))["performance"][0]["timing"] == {
        "timed_by": "end to end", "events_ms": 0.0299, "end_to_end_ms": 0.509, "grader_ms": 0.512}
