"""The static leaderboard page (grader.html): a self-contained document, every user-controlled string
shown as text (in the table, the SVG charts and the embedded report JSON), charts that match the data,
the empty board, the gradebook's unranked students, and the live page a server serves.
tests/test_browser.py drives the same page in a real browser."""

from __future__ import annotations

import base64
import contextlib
import copy
import dataclasses
import functools
import hashlib
import http.server
import json
import math
import re
import threading
from html.parser import HTMLParser

import pytest
from markupsafe import escape

from grader import html
from grader.leaderboard import Attempt, Board, Standing, Status
from grader.verdict import Verdict

XSS_USER = "<script>alert(1)</script>"
XSS_MESSAGE = "</script><script>alert(2)</script>"
XSS_OUTPUT = "<img src=x onerror=alert(3)> & 'quotes' \"too\""
CASES = ["leetgpu 8192×6144×4096", "square 4096×4096×4096", "irregular 4095×4097×4093"]
FLOPS = {CASES[0]: 2 * 8192 * 6144 * 4096, CASES[1]: 2 * 4096 ** 3, CASES[2]: 2 * 4095 * 4097 * 4093}
BASELINE_MS = {CASES[0]: 8.14, CASES[1]: 2.05, CASES[2]: 2.31}
LEVELS = [
    (1, "naive global memory"), (2, "shared-memory tiling"), (3, "1-D thread tiles, conflict-free shared memory"),
    (4, "2-D register tiles, 128-bit loads"), (5, "warp tiles, double buffering, occupancy tuning"),
    (6, "tensor cores (3xTF32) with cp.async"), (7, "split-K & autotuned tiles <experimental>"),
]


def _report(user: str, level: int | None, medians: dict[str, float], *, seed: int, backend: str = "cuda",
            verdict: str = "ACCEPTED", message: str = "", worker_output: str = "") -> dict:
    """A report shaped like grader.results.to_json(GradeReport)."""
    performance = []
    for case in CASES:
        ms = medians.get(case)
        stats = None if ms is None else {
            "samples_ms": [round(ms * f, 4) for f in (0.99, 1.0, 1.0, 1.01, 1.02)], "median_ms": ms,
            "mean_ms": ms * 1.004, "min_ms": ms * 0.99, "max_ms": ms * 1.02, "q1_ms": ms, "q3_ms": ms * 1.01,
            "rse": 0.002, "reps": 5, "spread_pct": 1.0}
        performance.append({
            "label": case, "dims": dict(zip("MNK", map(int, case.split(" ")[1].split("×")))), "flops": FLOPS[case],
            "verdict": verdict if stats else "SKIPPED", "message": "", "stats": stats,
            "baseline": {"median_ms": BASELINE_MS[case]} if stats else None, "fp32_peak_gflops": 66900.0,
            "gflops": FLOPS[case] / (ms * 1e6) if ms else None,
            "percent_of_baseline": 100 * BASELINE_MS[case] / ms if ms else None,
        })
    return {
        "submission": f"submissions/{user}/matmul.cu", "challenge": "matmul", "challenge_version": 1,
        "functional_version": 1, "performance_version": 1, "mode": "submit", "seed": seed, "verdict": verdict,
        "message": message,
        "build": {"status": "ok", "cached": False, "seconds": 2.4, "diagnostics": [], "notes": []},
        "cases": [
            {"kind": "functional", "label": "dot 1×257×1", "dims": {"M": 1, "N": 257, "K": 1}, "verdict": verdict,
             "message": "", "comparisons": [{"output": "C", "shape": [1, 1], "passed": True, "scaled_error": 0.012,
                                             "relative_frobenius": 1.1e-7, "bad_count": 0, "nonfinite_count": 0,
                                             "first_bad": [], "diagnosis": None}], "call_s": 0.00021},
            {"kind": "recheck", "label": "square 4096×4096×4096", "dims": {"M": 4096, "N": 4096, "K": 4096},
             "verdict": verdict, "message": "", "comparisons": [], "call_s": None},
        ],
        "performance": performance if backend == "cuda" else [],
        "environment": {"backend": backend, "gpu": "NVIDIA H200" if backend == "cuda" else None,
                        "compute_capability": "9.0", "driver": "580.95", "nvcc": "V13.0.88"},
        "baseline_label": "cuBLAS FP32", "grader_version": "0.1.0", "wall_s": 41.3, "kernel_s": 3.21,
        "worker_output": worker_output,
        "placement": None if level is None else {"level": level, "levels": 7, "name": dict(LEVELS).get(level, "")},
        "sanitizer": None,
    }


# user: (level, medians of the best run or None per case, backend, attempts as (first-case ms, verdict))
_USERS = {
    "carol": (6, (9.8, 2.5, 2.9), "cuda",
              [(95.0, "ACCEPTED"), (None, "WRONG_ANSWER"), (12.1, "ACCEPTED"), (9.8, "ACCEPTED")]),
    "alice": (5, (10.05, 2.61, 3.02), "cuda", [(340.0, "ACCEPTED"), (41.0, "ACCEPTED"), (10.05, "ACCEPTED")]),
    "bob": (3, (38.2, 9.7, None), "cuda",
            [(None, "COMPILE_ERROR"), (120.0, "ACCEPTED"), (38.2, "ACCEPTED"), (44.0, "ACCEPTED")]),
    XSS_USER: (2, (95.5, 24.1, 27.7), "cuda", [(410.0, "ACCEPTED"), (95.5, "ACCEPTED")]),
    "dave": (1, (352.0, 88.0, 101.0), "cuda", [(None, "RUNTIME_ERROR"), (352.0, "ACCEPTED")]),
    "frank": (0, (1210.0, 300.0, 344.0), "cuda", [(1210.0, "ACCEPTED"), (1500.0, "WRONG_ANSWER")]),
    "erin": (None, (None, None, None), "emulator", [(None, "WRONG_ANSWER"), (None, "ACCEPTED"), (None, "ACCEPTED")]),
}


def make_board(users: dict | None = None) -> Board:
    """A realistic board as grader.leaderboard.board makes it: seven users ranked (one named like a script
    tag, one graded only on the emulator, one below level 1) plus one who never got accepted, in the
    history only; every student ranked (`make_gradebook` adds the unranked ones)."""
    users = _USERS if users is None else users
    entries, history = [], {}
    for rank, (user, (level, times, backend, attempts)) in enumerate(users.items(), 1):
        medians = {case: ms for case, ms in zip(CASES, times) if ms is not None}
        hostile = user == XSS_USER
        report = _report(user, level, medians, seed=1000 + rank, backend=backend,
                         message=XSS_MESSAGE if hostile else "", worker_output=XSS_OUTPUT if hostile else "")
        if hostile:
            report["<b>notes</b>"] = {"</script>": ["<!--", "]]>", "\u2028line separator"]}
        first = report["performance"][0] if report["performance"] else {}
        entries.append(Standing(
            user=user, status=Status.ACCEPTED, on_roster=True, rank=rank, verdict=Verdict.ACCEPTED, level=level,
            level_name=dict(LEVELS).get(level), median_ms=medians, rate=first.get("gflops"),
            gflops=first.get("gflops"), percent_of_baseline=first.get("percent_of_baseline"),
            submitted_at=f"2026-11-{10 + rank:02d}T{8 + rank:02d}:30:00+00:00", attempts=len(attempts),
            run_id=100 + rank, backend=backend, report=report))
        history[user] = tuple(Attempt(f"2026-11-{1 + i:02d}T12:00:00+00:00", ms, Verdict[v])
                              for i, (ms, v) in enumerate(attempts))
    history["mallory"] = (Attempt("2026-11-03T09:00:00+00:00", None, Verdict.WRONG_ANSWER),)
    return Board(
        challenge="matmul", title="Matrix multiplication (FP32)", gpu="NVIDIA H200",
        generated_at="2026-11-21T13:00:00+00:00", baseline_label="cuBLAS FP32", cases=tuple(CASES), revealed=False,
        rate_label="GFLOP/s", levels=dict(LEVELS), entries=tuple(entries), history=history, students=tuple(entries),
        roster_size=0, practice_included=False)


def with_entry(board: Board, index: int, **changes) -> Board:
    """`board` with its ranked row at `index` changed."""
    entries = list(board.entries)
    entries[index] = dataclasses.replace(entries[index], **changes)
    return dataclasses.replace(board, entries=tuple(entries))


class _Tags(HTMLParser):
    """Every start tag with its attributes; script/style bodies are raw text to the parser, as to a browser."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _tags(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    parser.close()
    return parser


def _svg(page: str, svg_id: str) -> str:
    found = re.search(rf'<svg id="{svg_id}".*?</svg>', page, re.S)
    assert found, f"no <svg id={svg_id}>"
    return found.group(0)


def _embedded_json(page: str):
    found = re.search(r'<script type="application/json" id="reports">(.*?)</script>', page, re.S)
    assert found, "no embedded report JSON"
    return found.group(1), json.loads(found.group(1), parse_constant=lambda c: pytest.fail(f"{c} in JSON"))


@pytest.fixture(scope="module")
def board() -> Board:
    return make_board()


@pytest.fixture(scope="module")
def page(board) -> str:
    return html.render(board)


def test_filters():
    assert html.fmt_ms(10.0456) == "10.046"
    assert html.fmt_ms(1234.5) == "1,234.500"
    assert html.fmt_gflops(41042.0) == "41,042"
    assert html.fmt_pct(81.0) == "81%"
    assert html.fmt_pct(3.25) == "3.2%"
    assert html.fmt_date("2026-11-21T12:00:00+00:00") == "2026-11-21 12:00 UTC"
    assert html.fmt_date("2026-11-21T14:00:00+02:00") == "2026-11-21 12:00 UTC"
    assert html.fmt_date("2026-11-21T12:00:00Z") == "2026-11-21 12:00 UTC"
    assert html.fmt_date("yesterday") == "yesterday"
    for f in (html.fmt_ms, html.fmt_gflops, html.fmt_pct, html.fmt_date, html.fmt_int):
        assert f(None) == "—"
    for bad in (float("nan"), float("inf"), "12", True):
        assert html.fmt_ms(bad) == "—"
    assert html.sort_key(None) == "" and float(html.sort_key(10.05)) == 10.05


def test_autoescape_applies_to_the_template():
    env = html._env()
    assert env.autoescape(html.TEMPLATE) is True
    assert env.get_template(html.TEMPLATE).render  # the .html.j2 file is found by the loader


def test_complete_document(page, board):
    assert page.lstrip().lower().startswith("<!doctype html>")
    assert page.rstrip().endswith("</html>")
    assert '<html lang="en">' in page and '<meta charset="utf-8">' in page
    assert "<title>Matrix multiplication (FP32) — leaderboard</title>" in page
    for fact in ("NVIDIA H200", "cuBLAS FP32", "2026-11-21 13:00 UTC"):
        assert fact in page
    tags = _tags(page)
    assert [t for t, _ in tags.tags].count("table") >= 1
    assert [a.get("id") for t, a in tags.tags if t == "table"] == ["board"]


def test_every_user_and_case_appears(page, board):
    for entry in board.entries:
        assert f'<td class="user" data-sort="{escape(entry.user)}">{escape(entry.user)}' in page
    for case in CASES:
        assert escape(case) in page or case.split(" ")[0] in page
    rows = re.findall(r'<tr tabindex="0" data-index="(\d+)"', page)
    assert rows == [str(i) for i in range(len(board.entries))]


def test_table_cells(page, board):
    alice = re.search(r'<tr tabindex="0" data-index="1".*?</tr>', page, re.S).group(0)
    assert 'class="badge lvl-5"' in alice and 'title="level 5: warp tiles, double buffering, occupancy tuning"' in alice
    assert ">10.050<" in alice and ">2.610<" in alice and ">3.020<" in alice
    assert f">{html.fmt_gflops(FLOPS[CASES[0]] / 10.05e6)}<" in alice and ">81%<" in alice
    assert ">2026-11-12 10:30<" in alice and html.fmt_day_time(None) == "—"
    erin = re.search(r'<tr tabindex="0" data-index="6".*?</tr>', page, re.S).group(0)
    assert 'class="badge lvl-none"' in erin and erin.count('data-sort=""') == len(CASES) + 3
    assert '<span class="tag">emulator</span>' in erin


def test_self_contained(page):
    assert "http://" not in page and "https://" not in page
    tags = _tags(page)
    for tag, attrs in tags.tags:
        assert tag not in ("link", "iframe", "object", "embed", "img", "base", "form", "audio", "video"), tag
        for name in ("src", "href", "xlink:href", "action", "formaction", "poster", "srcset", "data", "background"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith("#") or value.startswith("data:"), f"<{tag} {name}={value!r}>"
        if tag == "script":
            assert "src" not in attrs
    for style in re.findall(r"<style>(.*?)</style>", page, re.S):
        assert "@import" not in style
        assert all(u.startswith("data:") for u in re.findall(r"url\(\s*['\"]?([^'\")]*)", style))
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src \'none\';', page)


def test_csp_allows_exactly_the_page_script(page):
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)
    allowed = re.search(r"script-src '(sha256-[^']+)'", policy).group(1)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert allowed == f"sha256-{digest}"
    assert "innerHTML" not in scripts[0] and "insertAdjacentHTML" not in scripts[0] and "eval(" not in scripts[0]


def test_user_controlled_strings_are_text(page):
    for raw in (XSS_USER, XSS_MESSAGE, "<img", "<b>notes</b>", "<!--", "<experimental>"):
        assert raw not in page, raw
    escaped = "&lt;script&gt;alert(1)&lt;/script&gt;"
    assert f'<td class="user" data-sort="{escaped}">{escaped}</td>' in page
    assert _svg(page, "chart-history").count(escaped) >= 2          # polyline title, point titles
    assert f'<span class="who">{escaped}</span>' in page              # the chart's legend
    assert "split-K &amp; autotuned tiles &lt;experimental&gt;" in page
    text, data = _embedded_json(page)
    assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e" in text
    assert not re.search(r"[<>&']", text)
    tags = [t for t, _ in _tags(page).tags]
    assert tags.count("script") == 2 and "img" not in tags and "b" not in tags


def test_embedded_reports_round_trip(page, board):
    _, data = _embedded_json(page)
    assert [item["user"] for item in data] == [e.user for e in board.entries]
    assert [item["report"] for item in data] == [e.report for e in board.entries]
    assert data[3]["report"]["message"] == XSS_MESSAGE
    assert data[3]["report"]["<b>notes</b>"]["</script>"][2] == "\u2028line separator"


def test_non_finite_numbers_and_odd_values_in_a_report():
    board = make_board()
    report = board.entries[0].report
    report["wall_s"], report["kernel_s"], report["odd"] = float("nan"), float("inf"), {"tuple": (1, 2), "set": {3}}
    _, data = _embedded_json(html.render(with_entry(board, 0, rate=float("nan"))))
    assert data[0]["report"]["wall_s"] is None and data[0]["report"]["kernel_s"] is None
    assert data[0]["report"]["odd"] == {"tuple": [1, 2], "set": "{3}"}


def test_hostile_board_fields():
    board = dataclasses.replace(make_board(), title=XSS_USER, challenge='"><img src=x onerror=alert(4)>',
                                gpu=XSS_MESSAGE, baseline_label="<b>cuBLAS</b>", cases=tuple(f"{c} <i>" for c in CASES),
                                levels={**dict(LEVELS), 1: "<svg onload=alert(5)>"})
    page = html.render(board)
    for raw in (XSS_USER, XSS_MESSAGE, "<img", "<b>", "<i>", "<svg onload"):
        assert raw not in page, raw
    assert "<title>&lt;script&gt;alert(1)&lt;/script&gt; — leaderboard</title>" in page
    assert [t for t, _ in _tags(page).tags].count("script") == 2


def test_level_distribution_chart(page, board):
    svg = _svg(page, "chart-levels")
    bars = re.findall(r'<rect class="bar" data-level="(\d+)" data-count="(\d+)"', svg)
    assert [int(level) for level, _ in bars] == list(range(0, 8))      # level 0 (below level 1) and 1..7
    counts = {int(level): int(count) for level, count in bars}
    assert counts == {level: board.distribution.get(level, 0) for level in range(8)}
    assert sum(counts.values()) == len(board.entries) - 1              # erin has no timings
    for level in range(1, 8):
        assert f'<g class="lvl-{level}">' in svg
    assert "(1 not timed, not shown)" in page


def test_history_chart(page, board):
    svg = _svg(page, "chart-history")
    timed = [u for u, attempts in board.history.items()
             if any(a.median_ms is not None and a.verdict is Verdict.ACCEPTED for a in attempts)]
    assert len(timed) == 6 and "erin" not in timed and "mallory" not in timed
    assert svg.count("<polyline") == len(timed)
    users = re.findall(r'<g class="user-series" data-user="([^"]*)">', svg)
    assert users == [str(escape(u)) for u in timed]                     # rank order
    assert "log scale" in page                                          # 9.8 .. 1210 ms
    carol = re.search(r'data-user="carol">\s*<polyline class="series" points="([^"]+)"', svg).group(1)
    points = [tuple(map(float, p.split(","))) for p in carol.split()]
    ys = [y for _, y in points]
    assert ys == sorted(ys) and len(points) >= 4                         # best time only goes down (y grows)
    for user in timed:
        assert f'<span class="who">{escape(user)}</span>' in page


def test_history_without_timings_says_so():
    users = {"erin": _USERS["erin"], "zoe": (None, (None, None, None), "emulator", [(None, "ACCEPTED")])}
    page = html.render(make_board(users))
    assert 'id="chart-history"' not in page
    assert "No timings yet (emulated runs)" in page
    assert len(re.findall(r'<rect class="bar"', _svg(page, "chart-levels"))) == 8


def test_more_users_than_colours_are_capped():
    many = {f"user{i:02d}": (3, (50.0 + i, 12.0, 14.0), "cuda", [(60.0 + i, "ACCEPTED"), (50.0 + i, "ACCEPTED")])
            for i in range(20)}
    page = html.render(make_board(many))
    assert _svg(page, "chart-history").count("<polyline") == html.HISTORY_SERIES_MAX
    assert "(8 more not shown)" in page


def test_empty_board():
    board = make_board({})
    page = html.render(board)
    assert page.lstrip().lower().startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert "No accepted submissions yet." in page
    assert 'id="board"' not in page and "application/json" not in page
    untitled = html.render(dataclasses.replace(board, title=""))
    assert "No accepted submissions yet." in untitled and "<title>matmul — leaderboard</title>" in untitled


def test_render_does_not_modify_the_board(board):
    before = copy.deepcopy(board)
    html.render(board)
    assert board == before
    assert not math.isnan(board.entries[0].median_ms[CASES[0]])


def test_an_instructor_page_says_so_and_a_public_one_does_not(board):
    """`grader leaderboard --reveal` puts the secret seed and shapes in the reports; the page then says
    it is not for students."""
    revealed = html.render(dataclasses.replace(board, revealed=True))
    assert 'id="revealed"' in revealed and "Do not publish this page" in revealed
    assert 'id="revealed"' not in html.render(board)


def test_the_detail_view_writes_a_hidden_seed_as_secret(page):
    """A secret run's public report has no "seed" and "secret": true; the page shows "secret", not a dash."""
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    assert "function seedText(report)" in script and 'return "secret"' in script
    assert "seedText(report)]" in script


# --------------------------------------------------------------------------- the gradebook: every student

XSS_NAME = "<svg onload=alert(7)>"


def _unranked(user: str, verdict: Verdict | None, seed: int) -> Standing:
    """A gradebook row below the ranking: nothing accepted (`verdict`, with its report) or no submission."""
    if verdict is None:
        return Standing(user, Status.NO_SUBMISSION, on_roster=True)
    report = _report(user, None, {}, seed=seed, verdict=verdict.name, message=f"{verdict.name} here")
    return Standing(user, Status.NOT_ACCEPTED, on_roster=True, verdict=verdict, attempts=2,
                    submitted_at="2026-11-04T10:00:00+00:00", run_id=300 + seed, backend="cuda", report=report)


def make_gradebook(users: dict | None = None) -> Board:
    """make_board's class as grader.leaderboard.board gives it, with `students`: the ranked users
    (alice's run late), then two with nothing accepted (one named like a tag), then two with no submission."""
    board = make_board(users)
    entries = tuple(dataclasses.replace(e, late=e.user == "alice") for e in board.entries)
    unranked = (_unranked("mallory", Verdict.WRONG_ANSWER, 1), _unranked(XSS_NAME, Verdict.COMPILE_ERROR, 2),
                _unranked("nora", None, 3), _unranked("oscar", None, 4))
    return dataclasses.replace(board, entries=entries, students=entries + unranked)


def _row_of(page: str, user: str) -> str:
    cell = re.escape(f'<td class="user" data-sort="{escape(user)}">')
    found = re.search(rf"<tr[^>]*>\s*<td[^>]*>[^<]*</td>\s*{cell}.*?</tr>", page, re.S)
    assert found, user
    return found.group(0)


def test_the_gradebook_page_lists_every_student():
    board = make_gradebook()
    page = html.render(board)
    ranked = len(board.entries)
    assert re.findall(r'<tr[^>]*data-index="(\d+)"', page) == [str(i) for i in range(ranked + 4)]
    assert re.findall(r'<tr tabindex="0" data-index="(\d+)"', page) == [str(i) for i in range(ranked + 2)]
    assert 'data-key="status"' in page and "2 not accepted · 2 no submission" in page
    mallory = _row_of(page, "mallory")
    assert 'class="unranked"' in mallory and ">WRONG_ANSWER<" in mallory and 'class="num rank missing"' in mallory
    nora = _row_of(page, "nora")
    assert 'class="unranked no-report"' in nora and "tabindex" not in nora and ">no submission<" in nora
    assert ">accepted<" in _row_of(page, "carol") and '<span class="tag tag-late">late</span>' in _row_of(page, "alice")
    assert XSS_NAME not in page and str(escape(XSS_NAME)) in _row_of(page, XSS_NAME)
    _, reports = _embedded_json(page)
    assert [item and item["user"] for item in reports] == [e.user for e in board.entries] + [
        "mallory", XSS_NAME, None, None]
    assert reports[ranked]["status"] == "WRONG_ANSWER" and reports[ranked]["report"]["verdict"] == "WRONG_ANSWER"
    assert "status" not in reports[0]


def test_a_page_without_students_has_no_status_column(page):
    assert 'data-key="status"' not in page and 'class="unranked' not in page


def test_a_class_with_nothing_accepted_yet_still_lists_its_students():
    page = html.render(make_gradebook({}))
    assert "No accepted submissions yet." in page and 'id="board"' in page and 'id="chart-levels"' not in page
    assert [_row_of(page, user) for user in ("mallory", "nora", "oscar")]


def test_a_public_page_shows_the_ranking_and_nothing_behind_it():
    """Board.public, as the class server's /leaderboard page serves it: rank, user, level and each case's time
    of the ranked students, sortable, the levels chart; no report to open, no attempt, date, rate or other
    student, and no history chart (it plots every attempt)."""
    gradebook = make_gradebook()
    page = html.render(gradebook.public(), live=True)
    ranked = len(gradebook.entries)
    assert re.findall(r'<tr[^>]*data-index="(\d+)"', page) == [str(i) for i in range(ranked)]
    assert 'tabindex="0"' not in page and 'id="reports"' not in page and "application/json" not in page
    for private in ("mallory", "nora", "oscar", escape(XSS_NAME), XSS_MESSAGE, escape(XSS_MESSAGE), "submissions/",
                    "Attempts", 'data-key="attempts"', 'data-key="submitted_at"', 'data-key="gflops"', "chart-history",
                    "Baseline", "<span class=\"tag tag-late\">", "WRONG_ANSWER", "COMPILE_ERROR"):
        assert str(private) not in page, private
    alice = re.search(r'<tr data-index="1".*?</tr>', page, re.S).group(0)
    assert 'class="no-report"' in alice and ">10.050<" in alice and 'class="badge lvl-5"' in alice
    assert 'data-key="level"' in page and 'id="chart-levels"' in page and "(1 not timed, not shown)" in page
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    assert f"script-src '{html.csp_hash(script)}'" in _policy(page) and "fetch(" in script
    assert f'data-stamp="{html.stamp(gradebook.public())}"' in page


# --------------------------------------------------------------------------- live mode

def _policy(page: str) -> str:
    return re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page).group(1)


def test_a_live_page_may_fetch_itself_and_carries_the_board_stamp(board):
    live, static = html.render(board, live=True), html.render(board)
    assert "connect-src 'self'" in _policy(live) and "connect-src" not in _policy(static)
    assert f'<main class="wrap" data-stamp="{html.stamp(board)}"' in live
    assert "data-stamp" not in static and 'id="live-note"' not in static and 'id="live-note"' in live
    for page in (live, static):
        script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
        assert f"script-src '{html.csp_hash(script)}'" in _policy(page)
        assert "innerHTML" not in script and "insertAdjacentHTML" not in script and "eval(" not in script
    assert "fetch(" in live and "fetch(" not in static and "DOMParser" not in static


def test_the_stamp_changes_with_the_board_and_not_with_the_clock():
    board = make_gradebook()
    later = dataclasses.replace(board, generated_at="2026-11-22T08:00:00+00:00")
    assert html.stamp(later) == html.stamp(board) and re.fullmatch(r"[0-9a-f]{16}", html.stamp(board))
    changed = with_entry(board, 0, median_ms={**board.entries[0].median_ms, CASES[0]: 9.7})
    assert html.stamp(changed) != html.stamp(board)
    changed = dataclasses.replace(board, students=(*board.students[:-1], _unranked("oscar", Verdict.RUNTIME_ERROR, 5)))
    assert html.stamp(changed) != html.stamp(board)


def test_a_live_page_in_chromium_swaps_in_the_new_board(tmp_path):
    """Served over HTTP as the class server serves it: a not-accepted row opens its report, a row with no
    submission opens nothing; when the board changes, the page shows the new one within a few seconds,
    in the reader's sort order, without a reload and without fetching anything but itself."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    from test_browser import CHROMIUM, LAUNCH_ARGS

    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (Debian package `chromium`; bash tests/browser_setup.sh)")
    (tmp_path / "board.html").write_text(html.render(make_gradebook(), live=True), encoding="utf-8")
    with _serving(tmp_path) as origin, sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS, timeout=60000)
        try:
            page = browser.new_page()
            problems, requests = [], []
            page.on("pageerror", lambda exc: problems.append(str(exc)))
            page.on("console", lambda msg: problems.append(msg.text) if msg.type in ("error", "warning") else None)
            page.on("request", lambda request: requests.append(request.url))
            page.goto(f"{origin}/board.html", wait_until="load")
            _check_live_page(page, tmp_path)
        finally:
            browser.close()
    assert problems == [] and {url for url in requests} == {f"{origin}/board.html"}


def _check_live_page(page, folder) -> None:
    row = lambda user: page.locator(f"#board tbody tr:has(td.user[data-sort='{user}'])")
    row("mallory").click()
    assert page.locator("#detail-title").inner_text() == "mallory · WRONG_ANSWER"
    assert "not placed (not accepted)" in page.locator("#detail").inner_text()
    page.locator("#detail-close").click()
    row("nora").click()
    assert page.locator("#detail").is_hidden()
    button = page.locator("#board thead th[data-key=user] button")
    button.click()
    button.click()  # by user, descending
    users = lambda: page.eval_on_selector_all("#board tbody tr", "rows => rows.map(r => r.cells[1].dataset.sort)")
    assert users() == sorted(users(), key=str.casefold, reverse=True)
    gradebook = make_gradebook()
    nora = _unranked("nora", Verdict.RUNTIME_ERROR, 6)
    changed = dataclasses.replace(gradebook, students=(*gradebook.students[:-2], nora, gradebook.students[-1]))
    (folder / "board.html").write_text(html.render(changed, live=True), encoding="utf-8")
    page.locator("#live-note").filter(has_text=re.compile(r"^updated \d\d:\d\d:\d\d$")).wait_for(timeout=20000)
    assert row("nora").locator("td.status").inner_text() == "RUNTIME_ERROR"
    assert users() == sorted(users(), key=str.casefold, reverse=True)
    assert page.locator("#board thead th[data-key=user]").get_attribute("aria-sort") == "descending"
    row("nora").click()
    assert page.locator("#detail-title").inner_text() == "nora · RUNTIME_ERROR"
    assert page.locator("script").count() == 2 and page.locator("#board").count() == 1


@contextlib.contextmanager
def _serving(folder):
    """`folder` over HTTP on a free local port, as the class server would serve the page."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
