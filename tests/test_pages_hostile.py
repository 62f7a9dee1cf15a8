"""Every page of the class server, with every string a student controls made hostile at once: their name, their
file's name, their source, the compiler's output about it, what their kernel printed, the report's messages
and labels. Each page a route serves (every GET route of the app, its parameters filled in) is fetched as the
hostile student and as the instructor, and no hostile string may reach it as markup: the tests look for the
markup the strings would make, which autoescaping turns into text. A route added later is swept too."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader import __version__
from grader.backends import Environment
from grader.build import BuildResult, BuildStatus, Diagnostic
from grader.classroom import app, queue, roster
from grader.classroom.schema import open_class
from grader.cli import DEFAULT_CHALLENGES
from grader.results import CaseKind, CaseResult, GradeReport, Mode
from grader.source import Source, from_bytes
from grader.spec import load
from grader.verdict import Verdict

ORIGIN = "http://testserver"
SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
TEMPLATE = "{{7*7}}{% raw %}"
BIDI = "\u202e"
HOSTILE = f"{SCRIPT}{IMG}{TEMPLATE}{BIDI}</textarea></pre></code>"
NAME = f"<b>mal</b>{IMG}"
FILENAME = f"{IMG}&x.cu"
MARKUP = ("<script>alert(1)", "<img src=x", "<b>mal</b>", "</textarea></pre>")
"""What the hostile strings would be if any reached a page as markup."""


def _source() -> bytes:
    base = (DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu").read_text()
    return (f"// {HOSTILE}\n" + base + f'\n/* {HOSTILE} */\nstatic const char* s = "{SCRIPT}";\n').encode()


def _report(challenge, filename: str) -> GradeReport:
    diagnostics = (Diagnostic("error", HOSTILE, filename, 1, 3), Diagnostic("warning", HOSTILE, f"/x/{IMG}.h", 2, 1))
    build = BuildResult(BuildStatus.OK, HOSTILE, diagnostics=diagnostics, log=HOSTILE, notes=(HOSTILE,))
    cases = tuple(CaseResult(CaseKind.FUNCTIONAL, f"{HOSTILE} {i}", {"N": i + 1}, Verdict.WRONG_ANSWER, HOSTILE)
                  for i in range(3))
    return GradeReport(
        submission=filename, challenge=challenge.slug, challenge_version=challenge.version,
        functional_version=challenge.functional_version, performance_version=challenge.performance_version,
        mode=Mode.SUBMIT, seed=7, verdict=Verdict.WRONG_ANSWER, message=HOSTILE, build=build, cases=cases,
        performance=(), environment=Environment("emulator", None, None, None, None, None, None),
        baseline_label=None, grader_version=__version__, wall_s=0.0, kernel_s=0.0, worker_output=HOSTILE)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    db = folder / "class.sqlite3"
    challenges = {slug: load(DEFAULT_CHALLENGES, slug) for slug in ("vector_add", "matmul")}
    with open_class(db) as store:
        tokens = {NAME: "mallory-token", "twin": roster.add(store, "twin").token,
                  "prof": roster.add(store, "prof", roster.Role.INSTRUCTOR).token}
        # past the roster's own check on names (an older database, a bug): the pages must hold anyway
        store.db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES (?, 'student', ?, ?)",
                         (NAME, roster.token_hash("mallory-token"), "2026-01-01T00:00:00+00:00"))
        store.db.commit()
        data = _source()
        ids = []
        for user in (NAME, "twin"):  # two alike sources: the similarity report pairs them
            sub = queue.enqueue(store, user, "vector_add", FILENAME, from_bytes(data, FILENAME), len(data),
                                queue.Limits(3, 30))
            claimed = queue.claim(store)
            store.record(_report(challenges["vector_add"], FILENAME), user, FILENAME,
                         Source(claimed.source, FILENAME, claimed.source_hash), secret_seed=False,
                         submission_id=sub.id, then=queue.finish(sub.id, HOSTILE))
            ids.append(sub.id)
        queue.enqueue(store, NAME, "matmul", FILENAME, from_bytes(data, FILENAME), len(data), queue.Limits(3, 30))
    settings = app.Settings(db, challenges, queue.Limits(max_pending=3, hourly_cap=30), engine=HOSTILE)
    application = app.create_app(settings)
    return application, tokens, ids


def _paths(application, ids: list[int]) -> list[str]:
    """Every GET page of the app (not the JSON API, which the API tests cover), parameters filled in."""
    fill = {"{slug}": "vector_add", "{id}": str(ids[0]), "{a}": str(ids[0]), "{b}": str(ids[1])}
    paths = []
    for route in application.routes:
        path = getattr(route, "path", "")
        if "GET" not in (getattr(route, "methods", None) or ()) or path.startswith("/api/") or path == "/favicon.ico":
            continue
        for key, value in fill.items():
            path = path.replace(key, value)
        assert "{" not in path, f"a route this test cannot fill: {route.path}"
        paths.append(path)
    return paths


@pytest.mark.parametrize("who", [NAME, "prof"])
def test_no_page_shows_a_student_s_string_as_markup(site, who):
    application, tokens, ids = site
    with TestClient(application, follow_redirects=False, headers={"Origin": ORIGIN}) as client:
        assert client.post("/login", data={"token": tokens[who]}).status_code == 303
        seen = 0
        for path in _paths(application, ids):
            page = client.get(path)
            if page.status_code in (303, 403):  # the instructor's pages, for the student
                continue
            assert page.status_code == 200, (path, page.status_code)
            text = page.text
            for markup in MARKUP:
                assert markup not in text, (path, markup)
            assert "onerror=alert" not in text.replace("onerror=alert(1)&gt;", ""), path
            assert "49" not in text.replace("2049", "") or TEMPLATE not in text, path
            seen += 1
        assert seen >= (6 if who == "prof" else 4)


def test_the_sweep_covers_the_pages_of_issue_23(site):
    application, _, ids = site
    paths = _paths(application, ids)
    for wanted in ("/challenges/vector_add", "/challenges/vector_add/starter.cu", "/me", f"/submissions/{ids[0]}",
                   "/instructor", "/instructor/challenges/vector_add", "/instructor/roster",
                   "/instructor/similarity/vector_add", f"/instructor/similarity/vector_add/{ids[0]}/{ids[1]}",
                   "/gradebook/vector_add", "/leaderboard/vector_add"):
        assert wanted in paths, wanted


def test_the_hostile_strings_are_there_as_text(site):
    """The sweep would pass on pages that dropped the strings; they are shown, escaped."""
    application, tokens, ids = site
    with TestClient(application, follow_redirects=False, headers={"Origin": ORIGIN}) as client:
        client.post("/login", data={"token": tokens["prof"]})
        report = client.get(f"/submissions/{ids[0]}").text
        pair = client.get(f"/instructor/similarity/vector_add/{ids[0]}/{ids[1]}").text
    for text in (report, pair):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
        assert "&lt;b&gt;mal&lt;/b&gt;" in text
    assert Path(FILENAME).name.replace("&", "&amp;").replace('"', "&#34;").replace("<", "&lt;").replace(">", "&gt;") \
        in report
