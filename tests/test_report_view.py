"""The submission page's report, built from the report's data (grader.classroom.report_view) and rendered
by its partials (report.html.j2, source.html.j2) through the class server's template environment: no
grading. The reports are GradeReports as the pipeline makes them, turned into the dict the page gets
(to_json for a practice run, public_json for a secret one); one Chromium test checks the layout at a
laptop's and a phone's width."""

from __future__ import annotations

import re

import pytest

from conftest import ROOT
from grader.backends import Environment
from grader.build import BuildResult, BuildStatus, Diagnostic, EPILOGUE_NAME
from grader.check import Comparison, Mismatch
from grader.classroom import render
from grader.classroom.report_view import CASES_LISTED, page_views, report_view
from grader.place import Lag, LagCause, Placement
from grader.results import (CaseKind, CaseResult, GradeReport, Mode, Parity, PerformanceResult, public_json,
                            to_json)
from grader.timing import Sources, TimedBy, TimingStats
from grader.verdict import Verdict

GPU = Environment("cuda", "NVIDIA H100 80GB HBM3", "9.0", "550.54", "Cuda compilation tools, V12.4.131", 60000.0,
                  "13.0")
SOURCE = "#include <cuda_runtime.h>\n\nint x = 1\n__global__ void k() {}\n// end\n"
WORD = "x" * 5000
HOSTILE = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}", "\u202e", WORD)


def _report(**changes) -> GradeReport:
    base = dict(submission="k.cu", challenge="matmul", challenge_version=3, functional_version=1,
                performance_version=1, mode=Mode.SUBMIT, seed=20261122, verdict=Verdict.ACCEPTED, message="",
                build=BuildResult(BuildStatus.OK, "compiled", seconds=1.5), cases=(), performance=(), environment=GPU,
                baseline_label="cuBLAS", grader_version="test", wall_s=12.5, kernel_s=0.75, libraries="none")
    return GradeReport(**{**base, **changes})


def _case(label: str, verdict: Verdict = Verdict.ACCEPTED, message: str = "", kind: CaseKind = CaseKind.FUNCTIONAL,
          n: int = 64, error: float = 1e-7) -> CaseResult:
    comparison = Comparison("C", (n,), verdict is Verdict.ACCEPTED, error, error / 10, 0 if error < 1 else n, 0,
                            () if error < 1 else (Mismatch((0,), 2.0, 1.0),), None)
    return CaseResult(kind, label, {"N": n}, verdict, message, (comparison,), 0.00125)


def _stats(median_ms: float) -> TimingStats:
    return TimingStats((median_ms * 0.98, median_ms, median_ms * 1.04), median_ms, median_ms, median_ms * 0.98,
                       median_ms * 1.04, median_ms * 0.99, median_ms * 1.01, 0.01)


def _timed(label: str, median_ms: float, baseline_ms: float, timing: Sources | None = None) -> PerformanceResult:
    return PerformanceResult(label, {"M": 4096, "N": 4096, "K": 4096}, 2 * 4096 ** 3, Verdict.ACCEPTED,
                             stats=_stats(median_ms), baseline=_stats(baseline_ms), fp32_peak_gflops=60000.0,
                             timing=timing)


def _placement(**changes) -> Placement:
    base = dict(level=2, levels=5, name="shared-memory tiles", ratio_to_level=1.31, next_level=3,
                next_name="register tiles", ratio_to_next=0.62, next_technique="Each thread computes a 4×4 block "
                "of C from registers.", ratios={1: 4.0, 2: 1.31, 3: 0.62},
                shape_levels={"square 4096×4096×4096": 2, "leetgpu 8192×6144×4096": 2})
    return Placement(**{**base, **changes})


def _html(data: dict, source: str | None = SOURCE, filename: str | None = "k.cu") -> str:
    view = report_view(data, source, filename)
    html = render.env().get_template("report.html.j2").render(view=view)
    if view.source is not None:
        html += render.env().get_template("source.html.j2").render(source=view.source)
    return html


def _section(html: str, name: str) -> str:
    found = re.search(rf'<section[^>]* id="rv-{name}">.*?</section>', html, re.S)
    assert found, f"no {name} section"
    return found.group(0)


def _text(fragment: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", fragment))


# -- an accepted run ----------------------------------------------------------------------------------------------

def test_an_accepted_run_shows_its_timings_its_level_and_its_next_rung():
    cases = tuple(_case(f"edge {n}", n=n) for n in range(1, 25))
    end_to_end = Sources(TimedBy.END_TO_END, events_ms=2.0, end_to_end_ms=3.5, grader_ms=3.6)
    report = _report(cases=cases, performance=(_timed("square 4096×4096×4096", 2.5, 5.0),
                                               _timed("leetgpu 8192×6144×4096", 3.5, 7.0, end_to_end)),
                     placement=_placement())
    view = report_view(to_json(report), SOURCE, "k.cu")
    assert [g.verdict for g in view.groups] == ["ACCEPTED"] and len(view.groups[0].cases) == 24
    html = _html(to_json(report))

    cases_html = _section(html, "cases")
    assert "<summary>24 cases ACCEPTED</summary>" in cases_html and "<details>" in cases_html
    assert cases_html.count('<span class="rv-label">edge 7</span>') == 2, "in the summary's list and the full table"

    head = _text(_section(html, "headline"))
    for shown in ("ACCEPTED", "every case matched", "matmul v3", "submit",
                  "cuda · NVIDIA H100 80GB HBM3 (compute 9.0, driver 550.54)", "library policy none: no library code",
                  "seed 20261122", "graded in 12.5 s, 0.75 s"):
        assert shown in head, shown

    perf = _section(html, "performance")
    row = re.search(r"<tr>\s*<td class=\"rv-label-cell\"><span class=\"rv-label\">square.*?</tr>", perf, re.S).group(0)
    cells = re.findall(r'<td class="num">([^<]*)</td>', row)
    assert cells == ["2.500", "5.000", "2.00×", "54,976", "92%", "2.0%", "3", "2"], cells
    assert "cuBLAS ms" in perf and "vs cuBLAS" in perf and "GFLOP/s" in perf and "GB/s" not in perf
    assert "note: timed end to end: solve took 3.5 ms a call" in perf and "the other 1.5 ms" in perf

    level = _text(_section(html, "placement"))
    assert "Level 2 of 5 · shared-memory tiles — 1.31× the level-2 reference, 0.62× level 3" in level
    assert "Next: level 3, register tiles . Each thread computes a 4×4 block of C from registers." in level
    assert "Level per shape: square 4096×4096×4096 2 · leetgpu 8192×6144×4096 2" in level


def test_a_shape_far_below_the_rest_gets_the_lag_advice_not_the_next_rung():
    lag = Lag("irregular 4095×4097×4093", 1, 4, ("square 4096×4096×4096",), LagCause.UNALIGNED, 4,
              "N = 4097 is not a multiple of 4", 4)
    report = _report(placement=_placement(level=1, lag=lag), performance=(_timed("square 4096×4096×4096", 1, 2),))
    level = _text(_section(_html(to_json(report)), "placement"))
    assert "your kernel reaches level 4 on square" in level and "N = 4097 is not a multiple of 4." in level
    assert "Next: likely a fallback path for sizes that are not multiples of 4" in level
    assert "register tiles" not in level, "the next rung's technique is the wrong advice here"


def test_the_top_of_the_ladder_and_below_level_one():
    top = _report(placement=_placement(level=5, next_level=None, next_name=None, ratio_to_next=None,
                                       next_technique=None))
    assert "The top of the ladder" in _html(to_json(top))
    below = _report(placement=_placement(level=0, name="", ratio_to_level=None, next_level=1, ratio_to_next=0.25))
    assert "Below level 1 — 4.0× slower than the level-1 reference" in _text(_section(_html(to_json(below)),
                                                                                     "placement"))


# -- cases failing alike ------------------------------------------------------------------------------------------

def test_cases_failing_with_one_message_are_one_row_and_failures_come_first():
    same = "C[0] = 2 (expected 1): 64 of 64 elements wrong"
    cases = ((_case("edge 1"), _case("edge 2")) +
             tuple(_case(f"random {i}", Verdict.WRONG_ANSWER, same, CaseKind.RANDOMIZED, error=5.0)
                   for i in range(20)) +
             (_case("edge 3"), _case("big 1", Verdict.RUNTIME_ERROR, "an illegal memory access was encountered"),
              _case("big 2", Verdict.SKIPPED)))
    report = _report(verdict=Verdict.WRONG_ANSWER, message=f"randomized case random 0: {same}", cases=cases)
    view = report_view(to_json(report))
    assert [(g.verdict, len(g.cases)) for g in view.groups] == [
        ("WRONG_ANSWER", 20), ("RUNTIME_ERROR", 1), ("ACCEPTED", 3), ("SKIPPED", 1)]
    html = _html(to_json(report))
    groups = re.search(r'<table class="rv-groups[^"]*">.*?</table>', html, re.S).group(0)
    assert groups.count(same) == 1, "the message once, for the 20 cases it is about"
    assert "20 cases" in groups and f"and {20 - CASES_LISTED} more" in groups
    order = [groups.index(f'rv-bad">{v}') for v in ("WRONG_ANSWER", "RUNTIME_ERROR")]
    assert order == sorted(order) and groups.index("WRONG_ANSWER") < groups.index("ACCEPTED")
    assert "<summary>3 cases ACCEPTED</summary>" in groups and "<summary>1 case SKIPPED</summary>" in groups
    every = re.search(r'<details class="rv-every".*?</details>', html, re.S).group(0)
    assert every.count("<tr>") == 1 + len(cases), "the full table: a row for every case, in the order they ran"
    assert every.count('<td class="num">5</td>') == 20, "each wrong case's own error"


def test_every_verdict_is_whole_and_nothing_is_cut_with_an_ellipsis():
    cases = tuple(_case(f"c{v.name}", v, "m") for v in Verdict)
    html = _html(to_json(_report(verdict=Verdict.IMPOSSIBLE_TIMING, cases=cases)))
    for verdict in Verdict:
        assert f">{verdict.name}</span>" in html
    assert "…" not in _section(html, "cases") and "ellipsis" not in html
    assert re.search(r"\.rv \.rv-v \{[^}]*white-space: nowrap", html)
    assert re.search(r"\.rv td\.rv-vcell \{[^}]*white-space: nowrap", html)
    assert re.search(r"\.rv-scroll \{[^}]*overflow-x: auto", html)
    assert re.search(r"\.rv-msg \{[^}]*overflow-wrap: anywhere", html)


# -- a secret run as its student sees it --------------------------------------------------------------------------

def test_a_secret_run_shows_its_public_view_only():
    """Through public_json: the hidden cases by their hidden labels and verdicts, nothing of their shapes,
    errors, messages or times, no seed, no wall time, no output, no build log."""
    hidden_message = "C[123456] = 1.0123457 (expected 1): 123457 of 123457 elements wrong"
    cases = (_case("edge 257", n=257),
             _case("random 123457", Verdict.WRONG_ANSWER, hidden_message, CaseKind.RANDOMIZED, n=123457,
                   error=0.0123457),
             _case("random 99991", Verdict.WRONG_ANSWER, hidden_message, CaseKind.RANDOMIZED, n=99991, error=0.0099991))
    build = BuildResult(BuildStatus.OK, "compiled", log="/var/cache/grader/secret_line", seconds=1.0,
                        command=("/opt/cuda/bin/nvcc",))
    report = _report(verdict=Verdict.WRONG_ANSWER, message=f"randomized case random 123457: {hidden_message}",
                     cases=cases, secret=True, seed=987654321, build=build, worker_output="N is 123457\n")
    data = public_json(to_json(report))
    view = report_view(data, SOURCE, "k.cu")
    assert [c.label for c in view.cases] == ["edge 257", "hidden case 1 (randomized)", "hidden case 2 (randomized)"]
    hidden = view.groups[0]
    assert (hidden.verdict, hidden.message, [c.dims for c in hidden.cases]) == ("WRONG_ANSWER", "", ["", ""])
    assert view.headline.seed == "secret (not shown)" and view.output == "" and view.secret
    assert view.headline.message == "hidden case 1 (randomized): WRONG_ANSWER"
    html = _html(data)
    for secret in ("123457", "99991", "0.012", "0.0099", "987654321", "12.5 s", "0.75 s", "secret_line",
                   "/var/cache", "/opt/cuda", "N is"):
        assert secret not in html, secret
    assert "hidden case 2 (randomized)" in html and "graded with a secret seed of its own" in html
    assert "edge 257" in html and "N=257" in html, "the public case is shown whole"


# -- a compile error ----------------------------------------------------------------------------------------------

def test_a_compile_error_links_to_its_line_and_marks_it():
    diagnostics = (Diagnostic("error", "expected a \";\"", "k.cu", 3, 10),
                   Diagnostic("warning", "variable \"y\" was declared but never referenced", "k.cu", 4),
                   Diagnostic("error", "declaration is incompatible", EPILOGUE_NAME, 3),
                   Diagnostic("error", "beyond the file", "k.cu", 99),
                   Diagnostic("error", "ptxas: too many resources requested"))
    report = _report(verdict=Verdict.COMPILE_ERROR, message="nvcc rejected k.cu",
                     build=BuildResult(BuildStatus.COMPILE_ERROR, "nvcc failed", diagnostics=diagnostics, seconds=2.0))
    html = _html(to_json(report))
    build = _section(html, "build")
    assert '<a href="#L3">line 3, column 10</a>' in build and '<a href="#L4">line 4</a>' in build
    assert f"{EPILOGUE_NAME}:3" in build and "k.cu:99" in build, "other files and missing lines: named, no link"
    assert build.count("<a href=") == 2 and "ptxas: too many resources requested" in build
    assert "Fix the first error" in build
    line3 = re.search(r'<div class="src-line[^"]*" id="L3">.*?</div></div>', html, re.S).group(0)
    assert 'class="src-line src-error"' in line3 and "expected a &#34;;&#34;" in line3 and "column 10" in line3
    assert re.search(r'<div class="src-line src-warning" id="L4">', html)
    assert re.search(r'<div class="src-line" id="L5">', html) and 'id="L6"' not in html, "5 lines, numbered as nvcc"
    first = '<a class="src-n" href="#L1" aria-label="line 1">1</a><code>#include &lt;cuda_runtime.h&gt;</code>'
    assert f'id="L1">{first}' in html
    assert "declaration is incompatible" not in re.search(r'<div class="src".*', html, re.S).group(0)


def test_without_the_source_nothing_is_linked():
    diagnostics = (Diagnostic("error", "expected a \";\"", "k.cu", 3),)
    data = to_json(_report(verdict=Verdict.COMPILE_ERROR, build=BuildResult(BuildStatus.COMPILE_ERROR, "x",
                                                                            diagnostics=diagnostics)))
    view, source = page_views(data, None, "k.cu")
    assert source is None and view.build.diagnostics[0].anchor is None
    assert "href" not in render.env().get_template("report.html.j2").render(view=view)


def test_a_waiting_submission_shows_its_source_alone():
    view, source = page_views(None, "a\r\nb\r\n", "k.cu")
    assert view is None and [(line.number, line.text) for line in source.lines] == [(1, "a"), (2, "b")]


# -- LeetGPU parity and the rest of the terminal's report ----------------------------------------------------------

def test_an_official_challenge_shows_its_rule_and_the_checks_beyond_its_judge():
    parity = Parity(atol=1e-5, rtol=1e-3, strict=False, extras_run=12, extras_failed=2,
                    first_failure="strict case nan-filled 1024: WRONG_ANSWER: C[3] = nan",
                    notes=("its input B is writable",),
                    widened=("case 4",))
    text = _text(_section(_html(to_json(_report(parity=parity))), "parity"))
    assert "(atol 1e-05, rtol 0.001)" in text and "10 of 12 passed" in text
    assert "not counted in the verdict" in text
    assert "first: strict case nan-filled 1024: WRONG_ANSWER: C[3] = nan" in text
    assert "note: its input B is writable" in text and "at 1 case ( case 4 )" in text


def test_an_older_or_smaller_report_still_renders():
    for data in ({}, {"verdict": "SOMETHING_NEW"}, {"verdict": "ACCEPTED", "cases": [None, 3, {"verdict": None}],
                                                       "performance": [{"label": "x"}], "build": "odd",
                                                       "placement": {"level": "high"}, "sanitizer": [1]}):
        html = _html(data)
        assert 'id="report-view"' in html
    assert '<span class="rv-v rv-bad">SOMETHING_NEW</span>' in _html({"verdict": "SOMETHING_NEW"})


def test_sanitizer_findings_link_to_the_submission_s_lines():
    data = to_json(_report())
    data["sanitizer"] = [{"tool": "memcheck", "what": "Invalid __global__ write of size 4",
                          "where": ["k.cu:4", "x.h:2"]}]
    section = _section(_html(data), "sanitizer")
    assert '<a href="#L4">line 4</a>' in section and section.count("<a href") == 1


# -- hostile strings ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("attack", HOSTILE, ids=["script", "attribute", "template", "rtl-override", "long-word"])
def test_hostile_strings_are_text_wherever_they_come_from(attack):
    name = f"k{attack}.cu"
    source = f"int a; // {attack}\nint b = {attack};\n"
    diagnostics = (Diagnostic("error", f"bad {attack}", name, 2), Diagnostic("warning", f"w {attack}", f"{attack}.h", 1))
    report = _report(submission=name, verdict=Verdict.WRONG_ANSWER, message=f"m {attack}",
                     build=BuildResult(BuildStatus.OK, "ok", diagnostics=diagnostics, notes=(f"n {attack}",)),
                     cases=(_case(f"l {attack}", Verdict.WRONG_ANSWER, f"c {attack}"),),
                     performance=(_timed(f"p {attack}", 1.0, 2.0),),
                     placement=_placement(name=f"lv {attack}", shape_levels={f"p {attack}": 2}),
                     worker_output=f"out {attack}",
                     parity=Parity(1e-5, 1e-3, False, 2, 1, f"f {attack}", (f"note {attack}",), (f"w {attack}",)))
    html = _html(to_json(report), source, name)
    assert "<script>" not in html and "<img" not in html and "onerror=alert(1)>" not in html
    assert "\u202e" not in html
    if attack == "\u202e":
        assert html.count("\\u202e") >= 10, "a reordering mark shows as an escape"
    elif attack == WORD:
        assert html.count(WORD) >= 10, "a long word is kept whole (it wraps anywhere)"
    elif attack == "{{7*7}}":
        assert html.count("{{7*7}}") >= 10 and ">49<" not in html
    else:
        escaped = attack.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&#34;")
        assert html.count(escaped) >= 10
    assert '<a href="#L2">line 2</a>' in html, "the submission, hostile name and all, is still its own file"


# -- the layout in a browser --------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_never_scrolls_sideways_and_verdicts_are_never_cut(width, tmp_path):
    """The whole submission page in Chromium at a laptop's width and a phone's: the body is no wider than
    the window (wide tables scroll inside their wrapper) and every verdict is shown whole."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (tests/browser_setup.sh)")
    import shutil
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("no chromium on PATH (tests/browser_setup.sh)")
    same = "C[0] = 2 (expected 1): " + "64 of 64 elements wrong; " * 6
    cases = (tuple(_case(f"random {i} 4095×4097×4093", Verdict.WRONG_ANSWER, same, CaseKind.RANDOMIZED)
                   for i in range(20)) + (_case("edge " + WORD[:300], Verdict.IMPOSSIBLE_TIMING, WORD),) +
             tuple(_case(f"edge {n}") for n in range(24)))
    report = _report(verdict=Verdict.WRONG_ANSWER, message=same + WORD, cases=cases, placement=_placement(),
                     performance=(_timed("square 4096×4096×4096", 2.5, 5.0), _timed("leetgpu " + WORD[:200], 3, 7)),
                     build=BuildResult(BuildStatus.OK, "ok", diagnostics=(Diagnostic("warning", WORD, "k.cu", 3),)))
    source = SOURCE + "    float acc = 0.0f; " + "acc += a[i] * b[i]; " * 30 + "\n" + WORD + "\n"
    data = to_json(report)
    view, shown = page_views(data, source, "k.cu")
    s = {"id": 7, "filename": "k.cu", "state": "done", "verdict": "WRONG_ANSWER", "level": 2, "challenge": "matmul",
         "user": "amy", "submitted_at": "2026-11-25T10:00:00+00:00", "finished_at": None, "late": False,
         "position": None, "stalled": None}
    who = type("Who", (), {"name": "amy"})()
    page = render.env().get_template("submission.html.j2").render(
        s=s, view=view, source=shown, raw_json="{}", who=who, instructor=False, signed_in=True, script=None)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            tab = browser.new_page(viewport={"width": width, "height": 900})
            tab.set_content(page)
            assert tab.evaluate("document.documentElement.scrollWidth") <= width
            cut = tab.evaluate("[...document.querySelectorAll('.rv-v')].filter(e => e.scrollWidth > e.clientWidth + 1)"
                               ".map(e => e.textContent)")
            assert cut == []
            tab.goto("about:blank")
            (ROOT / "test-artifacts").mkdir(exist_ok=True)
            tab.set_content(page)
            tab.screenshot(path=str(ROOT / "test-artifacts" / f"report-view-{width}.png"), full_page=True)
        finally:
            browser.close()
