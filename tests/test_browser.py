"""The leaderboard page in a real headless Chromium (Debian's `chromium` package, driven by Playwright for
Python; tests/browser_setup.sh installs both): it loads from file:// with no request to anywhere else,
sorts, opens and closes the report view, shows hostile names as text and never runs them, and leaves a
full-page screenshot in test-artifacts/leaderboard.png. Skipped where Playwright or chromium is missing."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from grader import html
from grader.leaderboard import Board
from test_html import CASES, XSS_MESSAGE, XSS_OUTPUT, XSS_USER, make_board, with_entry

CHROMIUM = shutil.which("chromium")
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOT = ARTIFACTS / "leaderboard.png"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run"]
DASH = "—"


@pytest.fixture(scope="module")
def board() -> Board:
    return make_board()


@pytest.fixture(scope="module")
def chromium():
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="Playwright for Python is not installed (bash tests/browser_setup.sh)")
    if CHROMIUM is None:
        pytest.skip("no chromium on PATH (Debian package `chromium`; bash tests/browser_setup.sh)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=LAUNCH_ARGS, timeout=60000)
        try:
            yield browser
        finally:
            browser.close()


def watched(page) -> dict:
    """What `page` does from now on: dialogs (dismissed), script errors, console errors and warnings, and
    every request; the tests assert the first three stay empty and the requests stay at home."""
    events = {"dialogs": [], "errors": [], "console": [], "requests": []}

    def on_dialog(dialog):
        events["dialogs"].append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("pageerror", lambda exc: events["errors"].append(str(exc)))
    page.on("console", lambda msg: events["console"].append(f"{msg.type}: {msg.text}")
            if msg.type in ("error", "warning") else None)
    page.on("request", lambda request: events["requests"].append(request.url))
    return events


@pytest.fixture
def load(chromium, tmp_path):
    """load(board) -> (page, events): a fresh page showing the board from a file:// URL, and the record of
    what it did; at the end of the test, no dialog, no script error, no console error, no other request."""
    opened = []

    def load(board: Board):
        path = tmp_path / f"leaderboard-{len(opened)}.html"
        path.write_text(html.render(board), encoding="utf-8")
        context = chromium.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(15000)
        events = watched(page)
        page.goto(path.as_uri(), wait_until="load")
        opened.append((context, events))
        return page, events

    yield load
    for context, events in opened:
        context.close()
        assert events["dialogs"] == [], "the page opened a dialog: a script from the data ran"
        assert events["errors"] == [], "the page's script threw"
        assert events["console"] == [], "console errors (a CSP violation shows up here)"
        assert [u for u in events["requests"] if not u.startswith("file://")] == [], "the page fetched something"


def _column(page, key: str) -> list[str]:
    """The visible text of one column, in the current row order."""
    index = page.eval_on_selector(f'#board thead th[data-key="{key}"]', "th => th.cellIndex")
    return page.eval_on_selector_all("#board tbody tr", f"rows => rows.map(r => r.cells[{index}].innerText.trim())")


def _users(page) -> list[str]:
    return page.eval_on_selector_all("#board tbody tr", "rows => rows.map(r => r.cells[1].dataset.sort)")


def _ms(text: str) -> float | None:
    return None if text == DASH else float(text.replace(",", ""))


def test_leaderboard_in_chromium(load, board):
    page, events = load(board)
    entries = board.entries
    users = [e.user for e in entries]

    assert page.title() == "Matrix multiplication (FP32) — leaderboard"
    assert page.locator("#board tbody tr").count() == len(entries)
    assert _users(page) == users                                           # rank order as rendered
    assert page.locator("#board thead th[data-key=rank]").get_attribute("aria-sort") == "ascending"

    # the hostile user name is literal text in the table, the chart legend and nowhere a live element
    xss_cell = page.locator("#board tbody td.user").nth(users.index(XSS_USER))
    assert xss_cell.inner_text() == XSS_USER
    assert page.locator(".series-legend .who", has_text=XSS_USER).count() == 1
    assert page.locator("script").count() == 2 and page.locator("img").count() == 0

    # sort by user: alphabetical, then reversed
    user_button = page.locator("#board thead th[data-key=user] button")
    user_button.click()
    expected = sorted(users, key=str.casefold)
    assert _users(page) == expected
    assert page.locator("#board thead th[data-key=user]").get_attribute("aria-sort") == "ascending"
    user_button.click()
    assert _users(page) == expected[::-1]
    assert page.locator("#board thead th[data-key=user]").get_attribute("aria-sort") == "descending"

    # sort by a median time: numeric ascending, the missing ones ("—") last, in either direction
    key = "case-2"
    page.locator(f"#board thead th[data-key='{key}'] button").click()
    values = [_ms(t) for t in _column(page, key)]
    timed = [v for v in values if v is not None]
    assert timed == sorted(timed) and len(timed) == sum(1 for e in entries if CASES[2] in e.median_ms)
    assert values[len(timed):] == [None] * (len(values) - len(timed)) and len(values) - len(timed) == 2
    assert timed[0] == 2.9 and timed[-1] == 344.0                          # 2.9 < 27.7 < 101 < 344: not as text
    page.locator(f"#board thead th[data-key='{key}'] button").click()
    values = [_ms(t) for t in _column(page, key)]
    assert values[:len(timed)] == sorted(timed, reverse=True) and values[len(timed):] == [None, None]

    # GFLOP/s sorts best first on its first click
    page.locator("#board thead th[data-key=gflops] button").click()
    gflops = [_ms(t) for t in _column(page, "gflops")]
    numbers = [g for g in gflops if g is not None]
    assert numbers == sorted(numbers, reverse=True) and gflops[-1] is None

    # a row opens that submission's report; Close hides it
    detail = page.locator("#detail")
    assert detail.is_hidden()
    alice = entries[users.index("alice")]
    page.locator("#board tbody tr:has(td.user[data-sort='alice'])").click()
    assert detail.is_visible()
    assert page.locator("#detail-title").inner_text() == f"#{alice.rank} · alice"
    assert page.locator("#detail-verdict").inner_text() == alice.report["verdict"] == "ACCEPTED"
    assert "level 5 · warp tiles" in detail.inner_text()
    assert "10.050" in page.locator("#detail table.mini").first.inner_text()
    assert "submissions/alice/matmul.cu" in detail.inner_text()
    page.locator("#detail-close").click()
    assert detail.is_hidden()

    # the keyboard: focus a row, Enter opens it; Escape closes it
    bob_row = page.locator("#board tbody tr:has(td.user[data-sort='bob'])")
    bob_row.focus()
    page.keyboard.press("Enter")
    assert detail.is_visible() and page.locator("#detail-title").inner_text().endswith("· bob")
    page.keyboard.press("Escape")
    assert detail.is_hidden()

    # the hostile user's report: its message and raw JSON are text, nothing runs
    page.locator("#board tbody td.user").filter(has_text=XSS_USER).click()
    assert page.locator("#detail-title").inner_text() == f"#{users.index(XSS_USER) + 1} · {XSS_USER}"
    assert XSS_MESSAGE in detail.inner_text()
    page.locator("#detail-raw-box summary").click()
    raw = page.locator("#detail-raw").inner_text()
    assert json.dumps(XSS_OUTPUT, ensure_ascii=False) in raw and '"<b>notes</b>"' in raw
    assert page.locator("#detail script, #detail img, #detail b").count() == 0
    assert page.locator("script").count() == 2
    assert events["dialogs"] == []

    # the screenshot: fresh page, rank order, alice's report open
    page.reload(wait_until="load")
    page.locator("#board tbody tr:has(td.user[data-sort='alice'])").click()
    page.evaluate("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.is_file() and SCREENSHOT.stat().st_size > 10_000
    assert events["dialogs"] == []


def test_detail_view_of_odd_reports(load):
    """Reports missing, of the wrong type or missing every known field still open, as far as they go."""
    board = with_entry(make_board(), 0, report=None)
    board = with_entry(board, 1, report=["not", "a", "dict"])
    board = with_entry(board, 2, report={"verdict": "WRONG_ANSWER", "cases": [{"label": 7, "comparisons": "?"}],
                                         "performance": {}})
    page, events = load(board)
    rows = page.locator("#board tbody tr")
    rows.nth(0).click()
    assert page.locator("#detail-verdict").inner_text() == DASH
    assert "carries no report" in page.locator("#detail").inner_text()
    rows.nth(1).click()
    assert "carries no report" in page.locator("#detail").inner_text()
    rows.nth(2).click()
    assert page.locator("#detail-verdict").inner_text() == "WRONG_ANSWER"
    assert page.locator("#detail table.mini").count() == 1
    assert page.locator("#detail-title").inner_text() == "#3 · bob"


def test_empty_board_in_chromium(load):
    page, _ = load(make_board({}))
    assert page.locator("#empty").inner_text().startswith("No accepted submissions yet.")
    assert page.locator("#board").count() == 0
