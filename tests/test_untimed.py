"""The timed shapes an emulated submit checks for correctness (it cannot time them): which ones, on which
values, and what the report says. The end-to-end case is the corpus file
challenges/softmax/wrong/one_block_long_sums.cu (`// graded-with: submit`), which fails only there."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
from rich.console import Console

from grader import case as cases, pipeline, report, spec
from grader.backends import Environment
from grader.results import CaseKind, CaseResult, Mode
from grader.verdict import Verdict

from conftest import CHALLENGES
from test_report import grade_report

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
EMULATED = Environment("emulator", None, None, None, None, None, None)


@pytest.fixture(scope="module")
def emulator():
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


def test_the_emulator_checks_the_timed_shapes_of_sums_and_leaves_out_the_costly_ones(emulator):
    """By the work a challenge counts, not by this machine's speed: softmax's and reduction's 2^25-element
    shapes (256 MiB moved at most) are checked; the elementwise challenges' larger ones and matmul's are not."""
    wanted = {"softmax": (0, 1, 2), "reduction": (0, 1, 2), "matmul": (), "vector_add": (), "matrix_transpose": ()}
    assert {slug: emulator.untimed_checks(spec.load(CHALLENGES, slug)) for slug in wanted} == wanted


class _Timing:
    measures_time = True

    def untimed_checks(self, challenge):
        raise AssertionError("a backend that times checks the timed shapes while timing them")


def test_only_an_emulated_submit_plans_the_timed_shapes_with_the_values_a_gpu_times(emulator):
    softmax = spec.load(CHALLENGES, "softmax")
    seed = 11
    run_plan = pipeline._plan(softmax, seed, pipeline._untimed(softmax, emulator, pipeline.Options(Mode.RUN, seed, None)))
    assert CaseKind.TIMED not in {kind for kind, _, _ in run_plan}
    assert pipeline._untimed(softmax, _Timing(), pipeline.Options(Mode.SUBMIT, seed, None)) == ()
    plan = pipeline._plan(softmax, seed, pipeline._untimed(softmax, emulator, pipeline.Options(Mode.SUBMIT, seed, None)))
    timed = [(shape, rng) for kind, shape, rng in plan if kind is CaseKind.TIMED]
    assert [shape for shape, _ in timed] == list(softmax.performance)
    assert plan[-1][0] is CaseKind.RECHECK, "the re-check stays last"
    for index, (_, rng) in enumerate(timed):  # the GPU's timed case draws from the same generator
        assert rng.random() == cases.rng_for(seed, cases.Purpose.TIMED, index).random()


def _timed_case(label: str, verdict=Verdict.ACCEPTED) -> CaseResult:
    return CaseResult(CaseKind.TIMED, label, {"N": 1}, verdict)


def _text(r) -> str:
    console = Console(record=True, width=200)
    report.render(r, console)
    return " ".join(line.strip("│ ") for line in console.export_text().splitlines())  # the panel's lines, joined


def test_the_emulated_report_says_which_timed_shapes_were_checked():
    emulated = lambda cases, mode=Mode.SUBMIT: dataclasses.replace(  # noqa: E731
        grade_report(mode=mode), environment=EMULATED, cases=tuple(cases))
    base = grade_report().cases
    assert "3 timed shapes checked for correctness (once each)" in _text(
        emulated(base + tuple(_timed_case(f"t{i}") for i in range(3))))
    assert "the timed shapes not checked (too much work to emulate)" in _text(emulated(base))
    run_text = _text(emulated(base, Mode.RUN))
    assert "timed shape" not in run_text and "no timings" in run_text
