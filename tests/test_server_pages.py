"""The class server's web pages (grader.classroom.pages) through Starlette's TestClient, no browser and
no grading: logging in and out, the upload form and the submission pages, refusals shown as pages,
the cross-site form check, the gradebook's access, the leaderboards' policies, and every person-made
string (names, file names, report text) shown as text. tests/test_server_browser.py drives a real
server in Chromium."""

from __future__ import annotations

import base64
import dataclasses
import datetime
import hashlib
import json
import re
import warnings
from pathlib import Path

import pytest
with warnings.catch_warnings():  # starlette suggests httpx2 for its TestClient; httpx is what this project has
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader.classroom.schema import open_class
from grader import __version__
from grader.backends import Environment
from grader.build import BuildResult, BuildStatus
from grader.classroom import app, queue, roster
from grader.cli import DEFAULT_CHALLENGES
from grader.results import GradeReport, Mode
from grader.source import Source, from_bytes
from grader.spec import load
from grader.verdict import Verdict

NAIVE = DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu"
HOSTILE_FILE = '<img src=x onerror=alert(1)>&"x".cu'
HOSTILE_NAME = "<b>mallory</b>"
XSS = "<script>alert(1)</script>"
ORIGIN = "http://testserver"
"""The TestClient's own origin: a browser names it in Origin with every form it posts from these pages."""


@pytest.fixture
def site(tmp_path):
    """A server with no dispatcher (nothing is graded), two challenges, two students, an instructor and
    a student on the roster who never submits."""
    db = tmp_path / "class.sqlite3"
    challenges = {slug: load(DEFAULT_CHALLENGES, slug) for slug in ("vector_add", "matmul")}
    settings = app.Settings(db, challenges, queue.Limits(max_pending=1, hourly_cap=30), engine="test engine")
    with open_class(db) as store:
        tokens = {name: roster.add(store, name).token for name in ("amy", "bob", "carol")}
        tokens["prof"] = roster.add(store, "prof", roster.Role.INSTRUCTOR).token
    with TestClient(app.create_app(settings), follow_redirects=False, headers={"Origin": ORIGIN}) as client:
        yield client, db, tokens, challenges


def _login(client, token: str):
    return client.post("/login", data={"token": token})


def _upload(client, name: str = "1_naive.cu", data: bytes | None = None, challenge: str = "vector_add", **kwargs):
    return client.post("/submit", files={"file": (name, NAIVE.read_bytes() if data is None else data, "text/plain")},
                       data={"challenge": challenge}, **kwargs)


def _queued(db) -> dict:
    with open_class(db) as store:
        return {state.value: n for state, n in queue.counts(store).items()}


def _enqueue(db, user: str, filename: str = "k.cu", challenge: str = "vector_add") -> int:
    data = NAIVE.read_bytes()
    with open_class(db) as store:
        return queue.enqueue(store, user, challenge, filename, from_bytes(data, filename), len(data), queue.Limits()).id


def _policy(response) -> str:
    return response.headers["content-security-policy"]


def _assert_scripts_allowed(response) -> None:
    """Every inline script of the page is allowed by its hash, and no other script is."""
    scripts = re.findall(r"<script>(.*?)</script>", response.text, re.S)
    policy = _policy(response)
    allowed = re.search(r"script-src ([^;]*)", policy).group(1).split()
    hashes = ["'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'" for s in scripts]
    assert sorted(hashes) == sorted(allowed) if scripts else allowed == ["'none'"]


def _report(challenge, message: str = "") -> GradeReport:
    return GradeReport(
        submission="amy/1_naive.cu", challenge=challenge.slug, challenge_version=challenge.version,
        functional_version=challenge.functional_version, performance_version=challenge.performance_version,
        mode=Mode.SUBMIT, seed=20261122, verdict=Verdict.ACCEPTED, message=message, build=None, cases=(),
        performance=(), environment=Environment("emulator", None, None, None, None, None, None),
        baseline_label=None, grader_version=__version__, wall_s=0.0, kernel_s=0.0)


def _finish(db, challenge, sub_id: int, shown_text: str, message: str = "") -> None:
    with open_class(db) as store:
        claimed = queue.claim(store)
        assert claimed is not None and claimed.id == sub_id
        store.record(_report(challenge, message), claimed.user, claimed.filename,
                     Source(claimed.source, f"{claimed.user}/{claimed.filename}", claimed.source_hash),
                     secret_seed=True, submission_id=sub_id, late=False, then=queue.finish(sub_id, shown_text))


# -- the start page, logging in and out -------------------------------------------------------------------

def test_start_page_lists_the_challenges_and_the_queue(site):
    client, db, tokens, challenges = site
    _enqueue(db, "bob")
    page = client.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    assert f"cuda-grader {__version__}" in text and "test engine" in text
    for slug, challenge in challenges.items():
        assert f'href="/leaderboard/{slug}"' in text and challenge.title in text
        assert "extern &#34;C&#34; void solve(" in text  # the signature, escaped
    assert '<dd id="count-queued">1</dd>' in text
    assert 'href="/login"' in text and "logged in as" not in text and "/gradebook/" not in text
    policy = _policy(page)
    for directive in ("default-src 'none'", "style-src 'unsafe-inline'", "connect-src 'self'", "form-action 'self'",
                      "img-src data:", "base-uri 'none'", "frame-ancestors 'none'"):
        assert directive in policy
    _assert_scripts_allowed(page)

    _login(client, tokens["prof"])
    text = client.get("/").text
    assert '<strong id="who">prof</strong> (instructor)' in text and 'href="/gradebook/vector_add"' in text
    assert 'action="/logout"' in text


def test_login_sets_a_session_cookie_and_logout_ends_the_session(site):
    """The cookie holds a session's id, never the token (cookies reach every port of the host), and
    logging out ends the session on the server: a copy of the cookie logs no one in afterwards."""
    client, db, tokens, _ = site
    assert client.get("/me").headers["location"] == "/login"
    form = client.get("/login")
    assert 'type="password" name="token"' in form.text
    done = _login(client, tokens["amy"])
    assert done.status_code == 303 and done.headers["location"] == "/me"
    cookies = done.headers.get_list("set-cookie")
    assert len(cookies) == 1 and tokens["amy"] not in cookies[0]
    session_id = re.match(rf"{app.COOKIE}=([A-Za-z0-9_-]{{40,}});", cookies[0]).group(1)
    for attribute in ("HttpOnly", "SameSite=strict", "Path=/", f"Max-Age={12 * 3600}"):
        assert attribute in cookies[0]
    assert "Secure" not in cookies[0] and "Domain" not in cookies[0]
    with open_class(db) as store:
        kept = [tuple(row) for row in store.db.execute("SELECT * FROM sessions")]
    assert len(kept) == 1 and session_id not in repr(kept) and hashlib.sha256(session_id.encode()).hexdigest() in kept[0]
    me = client.get("/me")
    assert me.status_code == 200 and '<strong id="who">amy</strong>' in me.text
    assert "No submissions yet." in me.text and "<script>" not in me.text  # nothing to wait for: no script
    assert client.get("/api/me").json() == {"name": "amy", "role": "student"}

    out = client.post("/logout")
    assert out.status_code == 303 and out.headers["location"] == "/"
    assert "Max-Age=0" in out.headers["set-cookie"] or "expires=" in out.headers["set-cookie"].lower()
    assert client.get("/me").status_code == 303
    client.cookies.set(app.COOKIE, session_id)  # the old cookie, kept by someone who copied it
    after = client.get("/api/me")
    assert after.status_code == 401 and "logged out" in after.json()["error"]
    assert client.get("/me").headers["location"] == "/login"
    with open_class(db) as store:
        assert store.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0


def test_login_with_a_bad_token_is_refused_and_nothing_is_kept(site):
    client, _, tokens, _ = site
    refused = _login(client, tokens["amy"] + "x")
    assert refused.status_code == 401 and "unknown token" in refused.text
    assert "set-cookie" not in refused.headers and tokens["amy"] not in refused.text
    assert _login(client, "").status_code == 401
    assert client.post("/login", content=b"token=" + b"x" * 8192,
                       headers={"Content-Type": "application/x-www-form-urlencoded"}).status_code == 413
    assert client.get("/me").status_code == 303


def test_login_posted_from_another_site_is_refused(site):
    client, _, tokens, _ = site
    for origin in ("http://evil.example", "null", "http://testserver.evil.example"):
        refused = client.post("/login", data={"token": tokens["amy"]}, headers={"Origin": origin})
        assert refused.status_code == 403 and "set-cookie" not in refused.headers, origin
        assert refused.headers["content-type"].startswith("text/html")


# -- submitting -------------------------------------------------------------------------------------------

def test_upload_queues_and_the_submission_page_shows_its_place(site):
    client, db, tokens, _ = site
    _enqueue(db, "bob")                      # bob's job is ahead of amy's
    _login(client, tokens["amy"])
    me = client.get("/me")
    assert '<input type="file" name="file" accept=".cu" required>' in me.text
    assert '<option value="">detect from the signature</option>' in me.text
    assert '<option value="matmul">' in me.text and 'enctype="multipart/form-data"' in me.text

    sent = _upload(client, headers={"Origin": "http://testserver"})
    assert sent.status_code == 303
    sub_id = int(re.fullmatch(r"/submissions/(\d+)", sent.headers["location"]).group(1))
    page = client.get(f"/submissions/{sub_id}")
    assert page.status_code == 200
    assert '<dd id="state" class="state-queued">queued</dd>' in page.text
    assert '<dd id="queue">1 ahead</dd>' in page.text
    assert f'data-submission="{sub_id}" data-state="queued"' in page.text
    _assert_scripts_allowed(page)
    assert "/api/submissions/" in page.text   # it polls while it waits

    me = client.get("/me")
    row = re.search(rf'<tr data-id="{sub_id}".*?</tr>', me.text, re.S).group(0)
    assert f'href="/submissions/{sub_id}"' in row and "1_naive.cu" in row and ">vector_add<" in row
    assert '<td class="c-state state-queued">queued</td>' in row and '<td class="c-queue">1 ahead</td>' in row
    _assert_scripts_allowed(me)
    assert '"/api/submissions"' in me.text
    assert _queued(db)["queued"] == 2


def test_deadlines_show_and_a_late_submission_is_flagged(site):
    client, db, tokens, _ = site
    with open_class(db) as store:
        queue.set_deadline(store, "vector_add", datetime.datetime(2020, 3, 1, 12, 0, tzinfo=datetime.timezone.utc))
    assert "due 2020-03-01 12:00 UTC" in client.get("/").text
    _login(client, tokens["amy"])
    page = client.get(_upload(client).headers["location"])
    assert '<dd class="late" id="late">late</dd>' in page.text
    assert '<td class="c-late"><span class="late">late</span></td>' in client.get("/me").text


def test_upload_detects_the_challenge_from_the_signature(site):
    client, db, tokens, _ = site
    _login(client, tokens["amy"])
    sent = _upload(client, challenge="")
    assert sent.status_code == 303
    assert ">vector_add<" in client.get(sent.headers["location"]).text


def test_upload_posted_from_another_site_is_refused_and_nothing_is_queued(site):
    client, db, tokens, _ = site
    _login(client, tokens["amy"])
    refused = _upload(client, headers={"Origin": "http://evil.example"})
    assert refused.status_code == 403 and "another site" in refused.text
    assert _upload(client, headers={"Origin": "null"}).status_code == 403
    assert _queued(db) == {"queued": 0, "running": 0, "done": 0}


def test_upload_refusals_are_pages_with_a_way_back(site):
    client, db, tokens, _ = site
    anonymous = _upload(client)
    assert anonymous.status_code == 401 and 'href="/login"' in anonymous.text
    _login(client, tokens["amy"])
    wrong = _upload(client, name="notes.txt")
    assert wrong.status_code == 400 and "not a CUDA source file" in wrong.text and 'href="/me"' in wrong.text
    assert wrong.headers["content-security-policy"].startswith("default-src 'none'")
    assert _upload(client).status_code == 303
    again = _upload(client)
    assert again.status_code == 429 and "waiting or being graded" in again.text
    assert _queued(db)["queued"] == 1


def test_hostile_file_names_and_names_are_text(site):
    client, db, tokens, _ = site
    sub_id = _enqueue(db, HOSTILE_NAME, filename=HOSTILE_FILE)
    with open_class(db) as store:           # past the roster's own check: the page must hold anyway
        store.db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES (?, 'student', ?, ?)",
                         (HOSTILE_NAME, roster.token_hash("mallory-token"), "2026-01-01T00:00:00+00:00"))
    _login(client, "mallory-token")
    for path in ("/me", f"/submissions/{sub_id}", "/"):
        text = client.get(path).text
        assert "<img" not in text and "<b>mallory" not in text, path
        assert "&lt;b&gt;mallory&lt;/b&gt;" in text, path
    assert "&lt;img src=x onerror=alert(1)&gt;&amp;&#34;x&#34;.cu" in client.get("/me").text
    # an uploaded name loses its markup characters on the way in, and what is left is escaped
    _login(client, tokens["amy"])
    sent = _upload(client, name="a&b<i>.cu")
    assert "a&amp;bi.cu" in client.get(sent.headers["location"]).text


# -- a graded submission ----------------------------------------------------------------------------------

def test_a_graded_report_is_shown_from_its_data_with_the_source(site):
    """The page renders the report's data (grader.classroom.report_view), not its terminal text, and the
    source as sent, numbered: both escaped, no script on a finished page."""
    client, db, tokens, challenges = site
    _login(client, tokens["amy"])
    source = NAIVE.read_bytes() + f"// {XSS}\n".encode()
    sub_id = int(_upload(client, data=source).headers["location"].rsplit("/", 1)[1])
    waiting = client.get(f"/submissions/{sub_id}").text
    assert 'id="L1"' in waiting and 'id="report-view"' not in waiting, "the source shows while it waits"
    _finish(db, challenges["vector_add"], sub_id, "shown", message="<b>bold</b> claim")
    page = client.get(f"/submissions/{sub_id}")
    text = page.text
    assert page.status_code == 200
    assert '<dd id="verdict" class="verdict-ACCEPTED">ACCEPTED</dd>' in text
    assert '<dd id="state" class="state-done">done</dd>' in text
    view = re.search(r'<section class="card" id="report">.*?<section class="card" id="submitted-source">', text,
                     re.S).group(0)
    assert '<span class="rv-v rv-ok">ACCEPTED</span>' in view and "&lt;b&gt;bold&lt;/b&gt; claim" in view
    lines = source.decode().count("\n")
    assert f'id="L{lines}"' in text and f'id="L{lines + 1}"' not in text
    assert "// &lt;script&gt;alert(1)&lt;/script&gt;</code>" in text and XSS not in text
    assert "<pre class=report>" not in text, "the terminal rendering is gone from the page"
    raw = re.search(r'<details id="raw">.*?</details>', text, re.S).group(0)
    assert "&#34;verdict&#34;: &#34;ACCEPTED&#34;" in raw and "&lt;b&gt;bold&lt;/b&gt; claim" in raw
    assert "<script>" not in text  # done: nothing to poll
    _assert_scripts_allowed(page)

    row = re.search(rf'<tr data-id="{sub_id}".*?</tr>', client.get("/me").text, re.S).group(0)
    assert ">ACCEPTED<" in row and '<td class="c-state state-done">done</td>' in row


def test_other_peoples_submissions_are_not_found(site):
    client, db, tokens, _ = site
    bobs = _enqueue(db, "bob")
    _login(client, tokens["amy"])
    assert client.get(f"/submissions/{bobs}").status_code == 404
    for path in ("/submissions/999", "/submissions/x1"):
        missing = client.get(path)
        assert missing.status_code == 404 and missing.headers["content-type"].startswith("text/html")
    _login(client, tokens["prof"])
    seen = client.get(f"/submissions/{bobs}")
    assert seen.status_code == 200 and '<dd id="user">bob</dd>' in seen.text
    client.cookies.clear()
    assert client.get(f"/submissions/{bobs}").headers["location"] == "/login"


# -- leaderboards and gradebooks --------------------------------------------------------------------------

def test_leaderboard_is_public_and_live(site):
    client, _, _, _ = site
    page = client.get("/leaderboard/vector_add")
    assert page.status_code == 200 and "No accepted submissions yet." in page.text
    policy = _policy(page)
    assert "connect-src 'self'" in policy and "frame-ancestors 'none'" in policy and "default-src 'none'" in policy
    _assert_scripts_allowed(page)
    assert "carol" not in page.text   # the roster stays in the gradebook
    missing = client.get("/leaderboard/nope")
    assert missing.status_code == 404 and "no challenge &#39;nope&#39;" in missing.text


BUILD_RECORD = BuildResult(BuildStatus.OK, "compiled", artifact=Path("/var/cache/grader/ab/libsolve.so"),
                           log="k.cu:1: int secret_line;", command=("/opt/cuda/bin/nvcc", "k.cu"), seconds=1.0)


def _graded(db, challenge, user: str, verdict: Verdict) -> None:
    """`user`'s submission queued, claimed and kept with a secret report of `verdict`, its build record
    carrying paths and a line of the source."""
    sub_id = _enqueue(db, user)
    with open_class(db) as store:
        claimed = queue.claim(store)
        report = dataclasses.replace(_report(challenge), verdict=verdict, secret=True, build=BUILD_RECORD,
                                     message="" if verdict is Verdict.ACCEPTED else "k.cu:1: error: expected ';'")
        store.record(report, user, claimed.filename, Source(claimed.source, claimed.filename, claimed.source_hash),
                     secret_seed=True, submission_id=sub_id, then=queue.finish(sub_id, "shown"))


def test_the_leaderboard_shows_the_ranked_students_and_nothing_behind_them(site):
    """The anonymous leaderboard (page and API): amy, accepted, by rank, name, level and time; not bob, whose
    latest run failed to compile, nor carol, who never submitted; no history, roster size, report or path."""
    client, db, tokens, challenges = site
    _graded(db, challenges["vector_add"], "bob", Verdict.ACCEPTED)
    _graded(db, challenges["vector_add"], "bob", Verdict.COMPILE_ERROR)  # bob's best accepted run ranks him...
    _graded(db, challenges["vector_add"], "amy", Verdict.ACCEPTED)
    _graded(db, challenges["vector_add"], "carol", Verdict.COMPILE_ERROR)  # ...carol has nothing accepted
    api = client.get("/api/leaderboard/vector_add").json()
    assert set(api) == {"challenge", "title", "gpu", "generated_at", "cases", "levels", "entries", "distribution"}
    assert [e["user"] for e in api["entries"]] == ["bob", "amy"]
    assert all(set(e) == {"rank", "user", "level", "level_name", "median_ms", "time_ms"} for e in api["entries"])
    page = client.get("/leaderboard/vector_add").text
    for text in (json.dumps(api), page):
        for private in ("carol", "COMPILE_ERROR", "expected ';'", "/var/cache", "/opt/cuda", "secret_line", "k.cu",
                        "20261122", "attempt", "roster"):
            assert private not in text, private
    assert "/" not in json.dumps(api), "no path of any kind"
    assert '<td class="user" data-sort="amy">amy' in page and 'id="reports"' not in page
    _login(client, tokens["prof"])
    gradebook = client.get("/gradebook/vector_add").text
    assert "carol" in gradebook and "COMPILE_ERROR" in gradebook and 'id="reports"' in gradebook, "the instructor's"
    assert "/var/cache" not in gradebook and "secret_line" not in gradebook, "a report's build record is not shown"


def test_gradebook_is_the_instructors(site):
    client, _, tokens, _ = site
    assert client.get("/gradebook/vector_add").headers["location"] == "/login"
    _login(client, tokens["amy"])
    refused = client.get("/gradebook/vector_add")
    assert refused.status_code == 403 and "instructor" in refused.text
    _login(client, tokens["prof"])
    page = client.get("/gradebook/vector_add")
    assert page.status_code == 200 and 'href="/api/gradebook/vector_add?format=csv"' in page.text
    assert "connect-src 'self'" in _policy(page)
    _assert_scripts_allowed(page)
    assert "carol" in page.text      # every roster student, with or without a submission
    csv = client.get("/api/gradebook/vector_add?format=csv")
    assert csv.status_code == 200 and "carol" in csv.text
    assert client.get("/gradebook/nope").status_code == 404
