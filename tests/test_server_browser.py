"""A real class server (`python -m grader serve`, grading on the CPU emulator) driven in headless
Chromium (Debian's `chromium`, through Playwright; tests/browser_setup.sh installs both): a student
logs in with their token, uploads a kernel, watches it wait and get graded; a leaderboard page that
was opened before (and never reloaded) shows the new entry by itself, with nothing behind its row (the
public board carries no report); the instructor's gradebook lists the student, and their report opens
from the row. No page throws, logs an error or asks anything of another origin. Leaves
test-artifacts/server.png (the gradebook with the report open) and test-artifacts/server-report.png (the
submission page). Skipped where Playwright or chromium is missing."""

from __future__ import annotations

import re

import pytest

from class_server import Server, add_person
from conftest import ROOT
from test_browser import chromium, watched  # noqa: F401  (chromium: the fixture)

ARTIFACTS = ROOT / "test-artifacts"
NAIVE = ROOT / "challenges" / "vector_add" / "levels" / "1_naive.cu"
SEED = "20261122"
GRADE_TIMEOUT_MS = 120_000
LIVE_TIMEOUT_MS = 30_000


# the chromium fixture (Playwright driving Debian's chromium, skipped where either is missing) is test_browser's


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A class server on a free port: vector_add and matmul on the emulator, a student (amy) and an
    instructor (prof) on its roster, the class's secret seed pinned. Yields (origin, tokens)."""
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    (folder / (db.name + ".secret-seed")).write_text(SEED)
    tokens = {"amy": add_person(db, "amy"), "prof": add_person(db, "prof", instructor=True)}
    log = folder / "server.log"
    running = Server(db, log, "--challenge", "vector_add", "--challenge", "matmul")
    try:
        health = running.start(timeout_s=60)
        assert health["challenges"] == ["matmul", "vector_add"]
        yield running.url, tokens
    finally:
        running.stop()
    assert "Traceback" not in log.read_text(), log.read_text()


@pytest.fixture
def browse(chromium, server):
    """browse() -> page: a page in a fresh browser context (cookies and downloads of its own), or
    browse(page): another page beside that one (its cookies); each watched: at the end of the test, no
    dialog, no script error, no console error and no request to another origin. `browse.events[page]` is
    what a page did so far, for a test that expects an event (a refusal's status in the console)."""
    origin, _ = server
    opened = []

    def browse(beside=None):
        context = beside.context if beside is not None else chromium.new_context(
            viewport={"width": 1280, "height": 900}, accept_downloads=True)
        page = context.new_page()
        page.set_default_timeout(15000)
        events = watched(page)
        opened.append((context, events))
        browse.events[page] = events
        return page

    browse.events = {}
    yield browse
    for context, _ in opened:
        context.close()
    for _, events in opened:
        assert events["dialogs"] == [], "a page opened a dialog"
        assert events["errors"] == [], "a page's script threw"
        assert events["console"] == [], "console errors (a CSP violation shows up here)"
        assert events["requests"], "nothing was loaded"
        elsewhere = [u for u in events["requests"] if not (u.startswith(origin + "/") or u.startswith("data:"))]
        assert elsewhere == [], "a page asked another origin"


def _log_in(page, origin: str, token: str) -> None:
    page.goto(f"{origin}/login", wait_until="load")
    page.fill("input[name=token]", token)
    page.locator("main form button[type=submit]").click()
    page.wait_for_url(re.compile(re.escape(origin) + "/(me|instructor)$"))  # a student's home, an instructor's


def test_a_submission_from_upload_to_the_live_leaderboard(server, browse):
    from playwright.sync_api import expect

    origin, tokens = server

    # the leaderboard, opened first and never reloaded by the test
    board = browse()
    board.goto(f"{origin}/leaderboard/vector_add", wait_until="load")
    expect(board.locator("#empty")).to_contain_text("No accepted submissions yet.")
    assert board.locator("#board").count() == 0
    board.evaluate("window.__marker = 1")

    # the student logs in, uploads, and watches the submission page until the report is there
    student = browse()
    _log_in(student, origin, tokens["amy"])
    expect(student.locator("#who")).to_have_text("amy")
    expect(student.locator("#no-history")).to_be_visible()
    student.set_input_files("input[name=file]", str(NAIVE))
    student.select_option("select[name=challenge]", "vector_add")
    student.locator("#upload button[type=submit]").click()
    student.wait_for_url(re.compile(re.escape(origin) + r"/submissions/\d+$"))
    sub_id = int(student.url.rsplit("/", 1)[1])
    expect(student.locator("h1")).to_contain_text("1_naive.cu")

    # the history in another tab, opened while the submission waits: its row updates without a reload
    history = browse(student)
    history.goto(f"{origin}/me", wait_until="load")
    history_row = history.locator(f"#history tr[data-id='{sub_id}']")
    assert history_row.get_attribute("data-state") in ("queued", "running")
    history.evaluate("window.__marker = 1")

    expect(student.locator("#verdict")).to_have_text("ACCEPTED", timeout=GRADE_TIMEOUT_MS)
    expect(student.locator("#state")).to_have_text("done")
    expect(student.locator("#report-view .rv-head")).to_contain_text("ACCEPTED")
    expect(student.locator("#source #L1")).to_be_visible()

    # the leaderboard shows amy by itself, on the same document
    amy_row = board.locator("#board tbody tr:has(td.user[data-sort='amy'])")
    expect(amy_row).to_be_visible(timeout=LIVE_TIMEOUT_MS)
    assert board.evaluate("window.__marker") == 1, "the leaderboard was reloaded instead of updated"
    expect(board.locator("#empty")).to_have_count(0)
    amy_row.click()
    expect(board.locator("#detail")).to_be_hidden()  # the public board has no report to open
    assert board.locator("#reports").count() == 0 and board.locator("#chart-history").count() == 0
    board.locator("#board thead th[data-key=user] button").click()  # sorting still works
    expect(board.locator("#board thead th[data-key=user]")).to_have_attribute("aria-sort", "ascending")

    student.evaluate("window.scrollTo(0, 0)")
    ARTIFACTS.mkdir(exist_ok=True)
    student.screenshot(path=str(ARTIFACTS / "server-report.png"), full_page=True)
    student.locator("#raw summary").click()
    expect(student.locator("#raw pre")).to_contain_text('"verdict": "ACCEPTED"')

    expect(history_row.locator("td.c-verdict")).to_have_text("ACCEPTED", timeout=10_000)
    expect(history_row.locator("td.c-state")).to_have_text("done")
    expect(history_row.locator("td.c-queue")).to_have_text("")
    assert history.evaluate("window.__marker") == 1, "the history was reloaded instead of updated"

    # the gradebook is the instructor's
    refused = student.context.request.get(f"{origin}/gradebook/vector_add", max_redirects=0)  # with amy's cookie
    assert refused.status == 403 and "the gradebook is the instructor" in refused.text()

    instructor = browse()
    _log_in(instructor, origin, tokens["prof"])
    instructor.goto(f"{origin}/gradebook/vector_add", wait_until="load")
    expect(instructor.locator("#board tbody td.user[data-sort='amy']")).to_be_visible()
    expect(instructor.locator("a[href='/api/gradebook/vector_add?format=csv']")).to_be_visible()
    instructor.locator("#board tbody tr:has(td.user[data-sort='amy'])").click()
    expect(instructor.locator("#detail")).to_be_visible()
    expect(instructor.locator("#detail-title")).to_contain_text("amy")
    expect(instructor.locator("#detail-verdict")).to_have_text("ACCEPTED")
    instructor.evaluate("window.scrollTo(0, 0)")
    instructor.screenshot(path=str(ARTIFACTS / "server.png"), full_page=True)
    for name in ("server.png", "server-report.png"):
        assert (ARTIFACTS / name).stat().st_size > 10_000
