"""Secrets stay secret: a run graded with a secret seed shows neither the seed nor the randomized shapes
drawn from it, nor anything that grows with them (error sizes, call times, wall time, what the submission
printed), in anything a student or the public sees (the terminal report, its JSON, the leaderboard as a
table, CSV, JSON and HTML), while the instructor's --reveal shows them all and the store keeps them. The
public view is an allow-list: a field is shown only where it is named. First on reports built by hand
(every form of message the grader writes), then on real runs through the emulator, by the pipeline and by
`grader grade`, whose files each get a seed of their own. tests/test_server_secrets.py attacks a real
class server."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader import cli, html, leaderboard, pipeline, report, results, seeds, store
from grader.build import BuildResult, BuildStatus, Diagnostic
from grader.check import Comparison, Mismatch
from grader.results import (HIDDEN_CASE, PUBLIC_BUILD, PUBLIC_CASE, PUBLIC_REPORT, CaseKind, CaseResult, GradeReport,
                            Isolation, JobLimit, Mode, hidden_label, public, public_json, shape_text, shown_json,
                            to_json)
from grader.verdict import Verdict

from conftest import NAIVE, SUBMISSIONS, read, text_source
from test_report import grade_report, passing, perf

SEED = 5550123498761
"""A seed no figure of a report can contain by accident."""
EMULATED_SEED = 7316459624
"""Its randomized matmul shapes are 132×601×466, 337×95×13, 362×27×259, 18×46×249, 73×169×14 and
312×32×760: none is, or is inside, a functional or performance shape, and only the first has an
inner dimension N in [530, 1000), where WRONG_ON_MID_N goes wrong."""

WRONG_ON_MID_N = """
// Right on every functional shape (none has 530 <= N < 1000), wrong in the last row of C otherwise.
#include <cuda_runtime.h>

__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;
    float acc = 0.0f;
    for (int n = 0; n < N; ++n) acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    if (N >= 530 && N < 1000 && row == M - 1) acc += 1.0f;
    C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul<<<grid, block>>>(A, B, C, M, N, K);
}
"""

needs_emulator = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")


# --------------------------------------------------------------------------- what must not show


def _public_dims(challenge) -> set[int]:
    return {v for s in challenge.functional + challenge.performance for v in s.dims.values()}


def leaks(text: str, secret: GradeReport, public_dims: set[int] = frozenset()) -> list[str]:
    """Every way the grader writes the seed or a randomized shape that occurs in `text`: the seed, a
    case's label (random3 1358×23×798) and shape, and, for a dimension no public shape has, its
    `M=1358`, `M: 1358` and `"M": 1358` forms, the last row or column (M−1) and the element count (M·K)
    that the grader's messages quote; and what grows with the shape: a randomized case's error sizes and
    call time, as reports write them, where no public case has the same figure."""
    found = []
    text = readable(text)

    def look(pattern: str, what: str) -> None:
        if re.search(rf"(?<![\d.]){pattern}(?![\d])", text):
            found.append(what)

    public_figures = {figure for case in secret.cases if case.kind is not CaseKind.RANDOMIZED
                      for figure in _figures(case)}
    for case in secret.cases:
        if case.kind is CaseKind.RANDOMIZED:
            for figure in _figures(case) - public_figures:
                look(re.escape(figure), f"figure {figure} of {case.label}")
    look(re.escape(str(secret.seed)), f"seed {secret.seed}")
    for case in secret.cases:
        if case.kind is not CaseKind.RANDOMIZED:
            continue
        assert case.label and shape_text(case.dims), "the secret report must hold its randomized shapes"
        look(re.escape(case.label), case.label)
        look(re.escape(shape_text(case.dims)), shape_text(case.dims))
        for name, value in case.dims.items():
            if value >= 10 and value not in public_dims:
                look(rf"{name}\s*=\s*{value}", f"{name}={value}")
                look(rf"\"?{name}\"?\s*:\s*{value}", f"{name}: {value}")
                look(rf"(row|column)s? {value - 1}", f"row/column {value - 1}")
        total = case.dims.get("M", 0) * case.dims.get("K", 0)
        if total >= 100:
            look(rf"of {total} elements", f"{total} elements")
    return found


def _figures(case: CaseResult) -> set[str]:
    """A case's error sizes and call time as the report (2 figures), the JSON (repr) and the page write them."""
    values = [v for c in case.comparisons for v in (c.scaled_error, c.relative_frobenius)
              if v is not None and v == v and abs(v) != float("inf")]
    found = {f"{v:.2g}" for v in values} | {repr(v) for v in values}
    if case.call_s is not None:
        found |= {f"{case.call_s * 1e3:.2f}", repr(case.call_s)}
    return found


def readable(text: str) -> str:
    """JSON's \\u escapes written out: the JSON outputs and the page's report block write × as \\u00d7."""
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)


def assert_hidden(text: str, secret: GradeReport, public_dims: set[int] = frozenset()) -> None:
    assert not leaks(text, secret, public_dims), leaks(text, secret, public_dims)


def assert_shown(text: str, secret: GradeReport, public_dims: set[int] = frozenset()) -> None:
    """The instructor's view has the seed and every randomized shape (so the checks above can fail)."""
    shown = leaks(text, secret, public_dims)
    assert str(secret.seed) in " ".join(shown)
    for case in secret.cases:
        if case.kind is CaseKind.RANDOMIZED:
            assert shape_text(case.dims) in shown


def rendered(r: GradeReport, reveal: bool = False) -> str:
    console = Console(record=True, width=240)
    report.render(r, console, reveal=reveal)
    return console.export_text()


# --------------------------------------------------------------------------- reports built by hand


def randomized(number: int, dims: tuple[int, int, int], verdict=Verdict.ACCEPTED, message: str = "",
               comparison: Comparison | None = None) -> CaseResult:
    m, n, k = dims
    comparison = comparison or Comparison("C", (m, k), True, 3.1e-8, 2.2e-8, 0, 0, (), None)
    return CaseResult(CaseKind.RANDOMIZED, f"random{number} {m}×{n}×{k}", {"M": m, "N": n, "K": k}, verdict, message,
                      (comparison,), 0.0123)


def wrong_last_row(dims: tuple[int, int, int]) -> CaseResult:
    """A randomized case failed as the grader words it: counts, indices and the last row, all from the shape."""
    m, n, k = dims
    bad = Comparison("C", (m, k), False, 0.83, 0.0457, k, 0,
                     (Mismatch((m - 1, 0), 1.5, 0.5), Mismatch((m - 1, 1), 2.5, 1.5)),
                     f"{k} of {m * k} elements differ from the reference beyond the tolerance; every element of "
                     f"row {m - 1} (the last row) is wrong, and nothing else")
    message = (f"{bad.diagnosis}\n  C[{m - 1}, 0] = 1.5, expected 0.5\n  C[{m - 1}, 1] = 2.5, expected 1.5\n"
               f"  max scaled error 0.83 (limit 1.5e-06), relative Frobenius error 0.0457 (limit 5e-05)")
    return randomized(2, dims, Verdict.WRONG_ANSWER, message, bad)


SHAPES = [(1471, 29, 863), (617, 1123, 47), (1187, 5, 1409)]


def secret_report(cases: list[CaseResult], verdict=Verdict.ACCEPTED, message="", output="") -> GradeReport:
    r = grade_report(verdict, cases=[passing(), *cases, passing((129, 257, 127))], performance=[perf()], message=message)
    return dataclasses.replace(r, seed=SEED, secret=True, worker_output=output)


def failing_on_a_randomized_case() -> GradeReport:
    cases = [randomized(1, SHAPES[0]), wrong_last_row(SHAPES[1]), randomized(3, SHAPES[2])]
    message = f"randomized case {cases[1].label}: {cases[1].message}"  # as pipeline._first_failure words it
    return secret_report(cases, Verdict.WRONG_ANSWER, message, output=f"debug: M={SHAPES[1][0]} N={SHAPES[1][1]}\n")


def test_the_terminal_report_hides_the_seed_and_the_randomized_shapes():
    secret = failing_on_a_randomized_case()
    text = rendered(secret)
    assert_hidden(text, secret)
    assert "secret seed" in text and report.SECRET_NOTE.split(":")[0] in text
    assert "hidden case 1 (randomized)" in text and "hidden case 2 (randomized)" in text
    assert re.search(r"│ hidden case 2 \(randomized\): WRONG_ANSWER +│", text), "the message: its name and verdict"
    assert "0.83" not in text and "0.046" not in text and "12.30" not in text, "a hidden case's figures grow with it"
    assert "3×5×7" in text and "129×257×127" in text and "6.1e-08" in text, "functional shapes are public"
    assert "8192×6144×4096" in text and "81.600" in text, "performance shapes and timings are public"
    assert "the submission's output" not in text, "it ran on the secret shapes and can print them"
    assert "graded in" not in text and "5.5 s" not in text and "1.44 s" not in text, "times grow with the hidden shapes"


def test_the_json_report_hides_them_too_and_keeps_each_hidden_case_s_name_and_verdict_only():
    secret = failing_on_a_randomized_case()
    text = report.as_json(secret)
    assert_hidden(text, secret)
    data = json.loads(text)
    assert data["secret"] is True and "seed" not in data and "worker_output" not in data
    assert "wall_s" not in data and "kernel_s" not in data
    hidden = [c for c in data["cases"] if c["kind"] == "randomized"]
    assert hidden == [{"kind": "randomized", "verdict": verdict, "label": hidden_label(n)}
                      for n, verdict in enumerate(("ACCEPTED", "WRONG_ANSWER", "ACCEPTED"), 1)]
    assert data["cases"][0]["label"] == "3×5×7" and data["cases"][0]["dims"] == {"M": 3, "N": 5, "K": 7}
    assert data["cases"][0]["comparisons"][0]["scaled_error"] == 6.1e-8, "a functional case is shown whole"


def test_reveal_shows_everything_as_before():
    secret = failing_on_a_randomized_case()
    assert_shown(rendered(secret, reveal=True), secret)
    assert "secret seed 5550123498761" in rendered(secret, reveal=True)
    assert json.loads(report.as_json(secret, reveal=True)) == to_json(secret)


def test_a_report_that_is_not_secret_is_unchanged():
    practice = dataclasses.replace(failing_on_a_randomized_case(), secret=False)
    assert public(practice) is practice
    assert report.as_json(practice) == json.dumps(to_json(practice), indent=2)
    text = rendered(practice)
    assert f"seed {SEED}" in text and "617×1123×47" in text and "secret" not in text


def test_a_functional_failure_keeps_its_message():
    bad = dataclasses.replace(passing(), verdict=Verdict.WRONG_ANSWER, message="C[2, 0] = nan")
    secret = secret_report([randomized(1, SHAPES[0])], Verdict.WRONG_ANSWER, "functional case 3×5×7: C[2, 0] = nan")
    secret = dataclasses.replace(secret, cases=(bad, *secret.cases[1:]))
    assert public(secret).message == "functional case 3×5×7: C[2, 0] = nan"
    assert_hidden(rendered(secret), secret)


@pytest.mark.parametrize("verdict, message", [
    (Verdict.TIMEOUT, "the call did not finish within 31.4 s, the emulator's limit for this shape"),
    (Verdict.RUNTIME_ERROR, "the submission crashed: SIGSEGV; it printed M=1471 K=863"),
    (Verdict.OUT_OF_BOUNDS, "wrote outside C: up to 5084 bytes past its end"),
])
def test_other_failures_of_a_hidden_case_give_the_verdict_alone(verdict, message):
    case = dataclasses.replace(randomized(1, SHAPES[0]), verdict=verdict, message=message, comparisons=())
    skipped = dataclasses.replace(randomized(2, SHAPES[1]), verdict=Verdict.SKIPPED, comparisons=())
    secret = secret_report([case, skipped], verdict, f"randomized case {case.label}: {message}")
    shown = public(secret)
    assert shown.message == f"hidden case 1 (randomized): {verdict.name}"
    assert message not in rendered(secret) and message not in report.as_json(secret)
    assert_hidden(rendered(secret) + report.as_json(secret), secret)


def test_the_first_failing_case_decides_what_the_message_is_about():
    """Whatever words the pipeline chooses: the first failing case, by position, decides (never the text)."""
    cases = [randomized(1, SHAPES[0]), wrong_last_row(SHAPES[1])]
    secret = secret_report(cases, Verdict.WRONG_ANSWER, "the shape 617×1123×47 failed")
    assert public(secret).message == "hidden case 2 (randomized): WRONG_ANSWER"
    # the first failing case decides even when the message names none (a pipeline worded otherwise)
    secret = dataclasses.replace(secret, message="something went wrong")
    assert public(secret).message.startswith("hidden case 2 (randomized)")
    # but a shape inside a longer number is not that shape
    other = secret_report([randomized(1, SHAPES[0])], Verdict.RUNTIME_ERROR, "after the last case: 11471×29×8630")
    assert public(other).message == "after the last case: 11471×29×8630"


def test_a_hidden_case_s_error_is_not_shown_however_it_reads():
    nan = Comparison("C", (617, 47), False, float("inf"), float("inf"), 29, 29, (), "never written")
    case = randomized(1, SHAPES[1], Verdict.WRONG_ANSWER, "29 of 28999 elements are NaN", nan)
    secret = secret_report([case], Verdict.WRONG_ANSWER, f"randomized case {case.label}: {case.message}")
    assert public(secret).message == "hidden case 1 (randomized): WRONG_ANSWER"
    assert "inf" not in report.as_json(secret) and "not finite" not in rendered(secret)
    assert public_json(to_json(secret)) == public_json(to_json(public(secret)))


def test_the_stored_form_is_shown_exactly_like_the_report():
    """The report's view (which the terminal renders) and the stored JSON's view (the API's, the pages') say
    the same, and the view of a view is itself."""
    secret = failing_on_a_randomized_case()
    shown = public(secret)
    assert public_json(to_json(secret)) == shown_json(shown) == shown_json(secret)
    assert public(shown) == shown
    # a report stored before reports said they were secret: the store's column says so instead
    old = to_json(dataclasses.replace(secret, secret=False))
    del old["secret"]
    assert public_json(old) == shown_json(secret)


# --------------------------------------------------------------------------- the allow-list


def everything() -> GradeReport:
    """A secret report with every field filled, the build's record included, and figures no other field has."""
    build = BuildResult(BuildStatus.OK, "compiled", artifact=Path("/var/cache/grader/ab12/libsolve.so"),
                        diagnostics=(Diagnostic("warning", "unused variable 'x'", "mine.cu", 3, 9),),
                        log="mine.cu:3:9: warning: unused variable 'x'\n   int x = 1357; // the source, quoted",
                        command=("/opt/cuda/bin/nvcc", "-o", "/var/cache/grader/ab12/libsolve.so"), seconds=1.25,
                        cached=True, notes=("mine.cu:7: legacy warp-synchronous code",))
    return dataclasses.replace(failing_on_a_randomized_case(), build=build, job_limit=JobLimit(60.0, "the challenge's"),
                               isolation=Isolation(True, "bubblewrap", 1900000007, 2, 6 << 30), sanitizer=())


def test_the_public_json_holds_exactly_the_allowed_fields():
    data = json.loads(report.as_json(everything()))
    assert set(data) == PUBLIC_REPORT.names
    assert set(data["build"]) == PUBLIC_BUILD.names == {"status", "message", "diagnostics", "notes", "seconds"}
    cases = {c["kind"]: c for c in data["cases"]}
    assert set(cases["functional"]) == PUBLIC_CASE.names and set(cases["randomized"]) == HIDDEN_CASE.names
    assert HIDDEN_CASE.names == {"kind", "label", "verdict"}
    assert {"seed", "wall_s", "kernel_s", "worker_output"}.isdisjoint(PUBLIC_REPORT.names)
    text = report.as_json(everything()) + rendered(everything())
    for private in ("/var/cache", "/opt/cuda", "1357", "the source, quoted", "cached"):
        assert private not in text, private
    assert "unused variable" in text and "legacy warp-synchronous" in text, "the student's own diagnostics and notes"


def test_a_field_added_to_a_report_is_not_public_until_it_is_named():
    """The view is built from PUBLIC_REPORT's names, so a new field of a report, or of anything in it, is
    left out; a new field with no default stops `public` until someone decides what students see of it."""
    data = to_json(everything())
    data["new_field"] = "4242"
    data["build"]["new_field"] = "4242"
    data["cases"][0]["new_field"] = data["cases"][1]["new_field"] = "4242"
    data["cases"][0]["comparisons"][0]["new_field"] = "4242"
    data["performance"][0]["stats"]["new_field"] = "4242"
    assert "4242" not in json.dumps(public_json(data))

    extended = dataclasses.make_dataclass("GradeReport", [("new_field", str, dataclasses.field(default="none"))],
                                          bases=(GradeReport,), frozen=True)
    secret = extended(**{f.name: getattr(everything(), f.name) for f in dataclasses.fields(GradeReport)},
                      new_field="4242")
    assert public(secret).new_field == "none" and "4242" not in report.as_json(secret) + rendered(secret)
    required = dataclasses.make_dataclass("GradeReport", [("new_field", str, dataclasses.field(kw_only=True))],
                                          bases=(GradeReport,), frozen=True)
    with pytest.raises(TypeError, match="new_field"):
        public(required(**{f.name: getattr(everything(), f.name) for f in dataclasses.fields(GradeReport)},
                        new_field="4242"))


def test_every_name_the_allow_list_shows_is_a_field_of_its_record():
    """A name misspelt in the allow-list would withhold a field silently: each must be one its record has."""
    from grader.backends import Environment
    from grader.check import Mismatch
    from grader.place import Lag, Placement
    from grader.sanitize import Finding
    from grader.timing import Sources, TimingStats

    kinds = {t.__name__: t for t in (GradeReport, BuildResult, Diagnostic, CaseResult, Comparison, Mismatch,
                                     results.PerformanceResult, TimingStats, Sources, Environment, Placement, Lag,
                                     Finding, Isolation, JobLimit, results.Parity)}
    seen = []

    def walk(rule) -> None:
        if isinstance(rule, results.Each):
            walk(rule.record)
        elif isinstance(rule, results.Shown):
            kind = kinds[rule.kind]
            known = {f.name for f in dataclasses.fields(kind)} | set(results._DERIVED.get(rule.kind, ()))
            assert rule.names <= known, (rule.kind, rule.names - known)
            assert set(rule.blanks) <= known - rule.names, rule.kind
            seen.append(rule.kind)
            for sub in rule.fields.values():
                walk(sub)

    for rule in (PUBLIC_REPORT, PUBLIC_CASE, HIDDEN_CASE, results._JOB_LIMIT):
        walk(rule)
    assert set(seen) == set(kinds), set(kinds) - set(seen)


# --------------------------------------------------------------------------- the store and the leaderboard


def accepted_secret() -> GradeReport:
    return secret_report([randomized(n, shape) for n, shape in enumerate(SHAPES, 1)],
                         output=f"printed M={SHAPES[0][0]}")


def board_texts(data: leaderboard.Board) -> dict[str, str]:
    console = Console(record=True, width=240)
    report.render_leaderboard(data, console)
    return {"table": console.export_text(), "csv": leaderboard.as_csv(data),
            "json": json.dumps(data.to_json(), indent=2), "html": html.render(data)}


@pytest.fixture
def class_db(tmp_path):
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        s.record(accepted_secret(), "alice", tmp_path / "a.cu", text_source("a"), secret_seed=True)
        # graded by a grader whose reports did not say `secret`: the column alone marks it
        s.record(dataclasses.replace(accepted_secret(), secret=False), "bob", tmp_path / "b.cu", text_source("b"),
                 secret_seed=True)
        s.record(failing_on_a_randomized_case(), "carol", tmp_path / "c.cu", text_source("c"), secret_seed=True)
        yield s


def test_the_store_keeps_everything(class_db):
    row = class_db.db.execute("SELECT seed, secret_seed, report FROM runs WHERE user = 'alice'").fetchone()
    assert row["seed"] == SEED and row["secret_seed"] == 1
    assert_shown(row["report"], accepted_secret())
    labels = [r[0] for r in class_db.db.execute("SELECT label FROM cases WHERE kind = 'randomized'")]
    assert "random2 617×1123×47" in labels


def test_a_report_marked_secret_is_stored_as_secret(tmp_path):
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        s.record(accepted_secret(), "alice", tmp_path / "a.cu", text_source("a"), secret_seed=False)
        (run,) = s.runs("matmul", secret_only=True)
    assert run.secret_seed and run.secret


def test_the_leaderboard_in_every_format_hides_them(class_db, matmul):
    data = leaderboard.board(class_db, matmul)
    assert [e.user for e in data.entries] == ["alice", "bob"] and data.revealed is False
    for fmt, text in board_texts(data).items():
        assert_hidden(text, accepted_secret())
        assert "hidden case 3 (randomized)" in text or fmt in ("table", "csv"), fmt
    for entry in data.entries:
        assert "seed" not in entry.report and "worker_output" not in entry.report and "log" not in entry.report["build"]
    assert 'id="revealed"' not in board_texts(data)["html"]
    for text in (json.dumps(data.public().to_json()), html.render(data.public())):
        assert_hidden(text, accepted_secret())
        assert "carol" not in text and "hidden case" not in text, "the public board has no report, no failing student"


def test_reveal_gives_the_instructor_every_report_as_stored(class_db, matmul):
    data = leaderboard.board(class_db, matmul, reveal=True)
    assert data.revealed is True
    for fmt in ("json", "html"):
        assert_shown(board_texts(data)[fmt], accepted_secret())
    assert 'id="revealed"' in board_texts(data)["html"]
    assert data.entries[0].report == to_json(accepted_secret())


def invoke(*args: str):
    terminal = cli.Terminal(Console(record=True, width=240), Console(record=True, width=240, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.out.export_text() + result.output


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "html"])
def test_grader_leaderboard_hides_them_unless_revealed(class_db, fmt, tmp_path):
    args = ("leaderboard", "matmul", "--db", str(class_db.path), "--format", fmt)
    result, text = invoke(*args)
    assert result.exit_code == 0, text
    assert_hidden(text, accepted_secret())
    written = tmp_path / f"board.{fmt}"
    result, _ = invoke(*args, "--output", str(written))
    assert result.exit_code == 0 and written.is_file()
    assert_hidden(written.read_text(), accepted_secret())
    if fmt in ("json", "html"):
        result, text = invoke(*args, "--reveal")
        assert result.exit_code == 0
        assert_shown(text, accepted_secret())


# --------------------------------------------------------------------------- real runs through the emulator


@pytest.fixture(scope="module")
def emulated(matmul, tmp_path_factory):
    """The naive level, a corpus file wrong on odd M, and one wrong on a randomized case only: graded
    with a secret seed through the pipeline."""
    from grader.backends.emulator import EmulatorBackend

    folder = tmp_path_factory.mktemp("secret-run")
    wrong = folder / "wrong_on_mid_n.cu"
    wrong.write_text(WRONG_ON_MID_N)
    backend = EmulatorBackend()
    options = pipeline.Options(Mode.SUBMIT, EMULATED_SEED, folder / "cache", secret=True)
    return {path.stem: pipeline.grade(read(path, f"alice/{path.name}"), matmul, backend, options)
            for path in (NAIVE, SUBMISSIONS / "skip_last_row_odd_m.cu", wrong)}


@needs_emulator
def test_emulated_runs_are_secret_and_say_nothing_of_their_shapes(emulated, matmul):
    public_dims = _public_dims(matmul)
    naive, odd, mid = emulated["1_naive"], emulated["skip_last_row_odd_m"], emulated["wrong_on_mid_n"]
    assert naive.secret and naive.verdict is Verdict.ACCEPTED
    assert odd.verdict is Verdict.WRONG_ANSWER and mid.verdict is Verdict.WRONG_ANSWER
    first = next(c for c in mid.cases if not c.verdict.passed)
    assert first.kind is CaseKind.RANDOMIZED and "132×601×466" in mid.message and "row 131" in mid.message
    assert any(c.kind is CaseKind.RANDOMIZED and "the last row" in c.message for c in odd.cases)
    for secret in emulated.values():
        for text in (rendered(secret), report.as_json(secret)):
            assert_hidden(text, secret, public_dims)
        assert_shown(rendered(secret, reveal=True) + report.as_json(secret, reveal=True), secret, public_dims)
    assert public(mid).message == "hidden case 1 (randomized): WRONG_ANSWER"
    assert "functional case 1×1×1" in public(odd).message, "a functional failure is told in full"


@needs_emulator
def test_emulated_runs_stored_and_ranked_say_nothing_of_their_shapes(emulated, matmul, tmp_path):
    with store.Store.open(tmp_path / "r.sqlite3") as s:
        for user, secret in emulated.items():
            s.record(secret, user, tmp_path / "x.cu", text_source(user), secret_seed=True)
        data = leaderboard.board(s, matmul)
        revealed = leaderboard.board(s, matmul, reveal=True)
    assert [e.user for e in data.entries] == ["1_naive"]
    naive = emulated["1_naive"]
    for text in board_texts(data).values():
        assert_hidden(text, naive, _public_dims(matmul))
    assert_shown(board_texts(revealed)["json"], naive, _public_dims(matmul))


@needs_emulator
def test_grader_grade_marks_the_class_runs_secret(matmul, tmp_path):
    """`grader grade` end to end: its runs are stored whole and marked secret, each graded with a seed of
    its own derived from the class's (the student and the file's hash: grader.seeds), and the leaderboard
    of them hides the seeds and shapes."""
    folder, db = tmp_path / "class", tmp_path / "results.sqlite3"
    folder.mkdir()
    shutil.copy(NAIVE, folder / "alice.cu")
    db.with_name(db.name + ".secret-seed").write_text(str(EMULATED_SEED))
    result, text = invoke("grade", str(folder), "--db", str(db), "--backend", "emulator", "--sandbox", "off",
                          "--cache-dir", str(tmp_path / "cache"))  # the sandbox is not what this tests
    assert result.exit_code == 0, text
    with sqlite3.connect(db) as c:
        verdict, seed, secret, stored, digest = c.execute(
            "SELECT verdict, seed, secret_seed, report, source_hash FROM runs").fetchone()
    assert verdict == "ACCEPTED", json.loads(stored)["message"]  # so the board below has its report
    assert seed == seeds.for_source(EMULATED_SEED, "alice", digest) != EMULATED_SEED
    assert secret == 1 and json.loads(stored)["secret"] is True
    kept = json.loads(stored)
    labels = [c["label"] for c in kept["cases"] if c["kind"] == "randomized"]
    assert labels == [s.label() for kind, s, _ in pipeline._plan(matmul, seed) if kind is CaseKind.RANDOMIZED], \
        "the seed kept in the run reproduces its hidden shapes"
    for fmt in ("json", "html", "csv", "table"):
        result, text = invoke("leaderboard", "matmul", "--db", str(db), "--format", fmt)
        assert result.exit_code == 0, text
        text = readable(text)
        assert str(seed) not in text and not any(label.split(" ")[1] in text for label in labels), fmt
    result, text = invoke("leaderboard", "matmul", "--db", str(db), "--format", "json", "--reveal")
    assert str(seed) in text and all(label in readable(text) for label in labels)


# --------------------------------------------------------------------------- every class seed, every challenge


SEEDS = range(1, 121)
"""Class seeds enough that some draw one-digit hidden sizes (asserted), where any digit of a message could
have been taken for a hidden shape."""


def _plan_reports(challenge, seed: int, failing: int, shapes_from: int) -> GradeReport:
    """A secret run of `challenge` whose case `failing` (a position in the plan) fails, worded as the grader
    words its failures (indices, counts and the shape's own numbers), with the randomized shapes drawn from
    class seed `shapes_from`: two such runs differ in nothing but their hidden shapes and what grows with
    them (every case's error sizes and call time, the wall time, the emulator's job bound, the output)."""
    plan = pipeline._plan(challenge, shapes_from)
    results = []
    total = 0
    for position, (kind, shape, _) in enumerate(plan):
        dims = dict(shape.dims)
        size = 1
        for value in dims.values():
            size *= value
        total += size
        comparison = Comparison("out", tuple(dims.values()), position != failing, size * 1e-13 if position != failing
                                else 0.83 + size * 1e-9, size * 1e-14 if position != failing else 1e-6 * size, 0, 0,
                                (), None)
        verdict, message = Verdict.ACCEPTED, ""
        if position == failing:
            verdict = Verdict.WRONG_ANSWER if position % 3 else Verdict.TIMEOUT
            message = (f"{size - 1} of {size} elements differ; out[{size - 1}] = 1.2e-07, expected 2; "
                       f"{'×'.join(map(str, dims.values()))} took {position} s")
        elif position > failing and failing % 3 == 0:  # after a TIMEOUT the worker is gone
            verdict = Verdict.SKIPPED
        results.append(CaseResult(kind, shape.label(), dims, verdict, message, (comparison,), 0.001 * size))
    first = results[failing]
    r = grade_report(first.verdict, cases=results, message=pipeline._first_failure(tuple(results), ()))
    limit = JobLimit(60 + total * 1e-6, f"60 s and {total} elements", shape_dependent=True)
    return dataclasses.replace(r, challenge=challenge.slug, seed=seed, secret=True, worker_output=f"seed {seed} {total}",
                               wall_s=total * 1e-7, kernel_s=total * 1e-8, job_limit=limit)


def _one_digit(challenge, seed: int) -> bool:
    return any(v < 10 for kind, s, _ in pipeline._plan(challenge, seed) if kind is CaseKind.RANDOMIZED
               for v in s.dims.values())


@pytest.mark.parametrize("slug", ["vector_add", "matmul", "matrix_transpose", "reduction", "softmax"])
def test_over_many_class_seeds_the_headline_names_the_first_failure_and_nothing_shows_a_hidden_shape(slug, challenge_named):
    """For every seed and a failing case at every position in turn: the public message names the case that
    failed first (a public case's own message, or "hidden case N"), and what a student sees of the run is
    the same whatever the hidden shapes are (the same run with another seed's shapes gives the same
    public report, byte for byte), so no hidden size can appear in it, however it is written."""
    challenge = challenge_named(slug)
    positions = len(pipeline._plan(challenge, 1))
    assert any(_one_digit(challenge, s) for s in SEEDS), "some seed must draw a one-digit size"
    for seed in SEEDS:
        failing = seed % positions
        secret = _plan_reports(challenge, seed, failing, seed)
        other = _plan_reports(challenge, seed, failing, seed + 10_000)
        shown = public(secret)
        case = secret.cases[failing]
        if case.kind is CaseKind.RANDOMIZED:
            number = [c.kind for c in secret.cases[:failing + 1]].count(CaseKind.RANDOMIZED)
            assert shown.message.startswith(f"{hidden_label(number)}: {case.verdict.name}"), (seed, shown.message)
        else:
            assert shown.message == secret.message and case.label in shown.message, (seed, shown.message)
        assert to_json(shown) == to_json(public(other)), f"seed {seed}: the public report depends on the hidden shapes"
        assert public_json(to_json(secret)) == shown_json(shown) == public_json(to_json(other))
        assert set(shown_json(shown)) == PUBLIC_REPORT.names
