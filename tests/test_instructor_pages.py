"""The instructor's pages (grader.classroom.instructor_pages) through Starlette's TestClient, no grading:
who may see them (the instructor; a student gets 403, no one the login page), what the home, a
challenge's summary and the roster show, every person-made name shown as text, no token ever shown,
no script; and the gradebook API's LMS file (format=lms) under the server's score rule."""

from __future__ import annotations

import csv
import datetime
import hashlib
import io
import warnings

import pytest
with warnings.catch_warnings():  # starlette suggests httpx2 for its TestClient; httpx is what this project has
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader.classroom import app, queue, roster
from grader.classroom.schema import open_class
from grader.cli import DEFAULT_CHALLENGES
from grader.gradebook import DEFAULT_RULE, parse_rule
from grader.source import from_bytes
from grader.spec import load
from grader.verdict import Verdict

from conftest import text_source
from test_leaderboard import timed
from test_server_pages import NAIVE, ORIGIN, _assert_scripts_allowed, _login, _policy, _report

PAGES = ("/instructor", "/instructor/challenges/matmul", "/instructor/roster")
HOSTILE = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{7*7}}", "rtl\u202eevil.cu",
           "w" * 400]


def make_site(tmp_path, rule=DEFAULT_RULE):
    db = tmp_path / "class.sqlite3"
    challenges = {slug: load(DEFAULT_CHALLENGES, slug) for slug in ("matmul", "vector_add")}
    settings = app.Settings(db, challenges, queue.Limits(max_pending=1, hourly_cap=30), engine="test engine",
                            score_rule=rule)
    with open_class(db) as store:
        tokens = {name: roster.add(store, name).token for name in ("amy", "bob", "carol")}
        tokens["prof"] = roster.add(store, "prof", roster.Role.INSTRUCTOR).token
    application = app.create_app(settings)
    return TestClient(application, follow_redirects=False, headers={"Origin": ORIGIN}), db, tokens, challenges


@pytest.fixture
def site(tmp_path):
    """A server with no dispatcher, matmul and vector_add, students amy, bob and carol and the instructor
    prof; on matmul, amy is accepted at level 4 and bob failed twice, the second time late; carol never
    submitted. A run kept before any submission (on vector_add) puts run ids one past submission ids."""
    client, db, tokens, challenges = make_site(tmp_path)
    with open_class(db) as store:
        store.record(_report(challenges["vector_add"]), "local", "k.cu", text_source("local"), secret_seed=True)
    with client:
        graded = {"amy": _graded(db, "amy", timed(10.0, level=4)),
                  "bob": _graded(db, "bob", timed(5.0, Verdict.WRONG_ANSWER))}
        graded["bob"] = _graded(db, "bob", timed(5.0, Verdict.COMPILE_ERROR), late=True)
        yield client, db, tokens, graded


def _graded(db, user: str, report, late: bool = False) -> int:
    """`user`'s matmul submission queued, claimed and kept with `report` (a synthetic H200 run): its id."""
    data = NAIVE.read_bytes()
    with open_class(db) as store:
        sub = queue.enqueue(store, user, "matmul", "k.cu", from_bytes(data, "k.cu"), len(data), queue.Limits())
        claimed = queue.claim(store)
        assert claimed.id == sub.id
        store.record(report, user, "k.cu", text_source(f"{user}{sub.id}"), secret_seed=True, submission_id=sub.id,
                     late=late, then=queue.finish(sub.id, "shown"))
    return sub.id


# -- who may see them -----------------------------------------------------------------------------------------

def test_the_pages_are_the_instructors(site):
    client, _, tokens, _ = site
    for path in PAGES:
        assert client.get(path).headers["location"] == "/login", path
    _login(client, tokens["amy"])
    for path in PAGES:
        refused = client.get(path)
        assert refused.status_code == 403 and "the instructor&#39;s token" in refused.text, path
        assert "your own submissions are on /me" in refused.text and "carol" not in refused.text
    _login(client, tokens["prof"])
    for path in PAGES:
        page = client.get(path)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html"), path
        assert "script-src 'none'" in _policy(page) and "<script" not in page.text, "no script at all"
        _assert_scripts_allowed(page)
        assert '<strong id="who">prof</strong> (instructor)' in page.text


def test_a_challenge_the_server_does_not_serve_is_not_found(site):
    client, _, tokens, _ = site
    _login(client, tokens["prof"])
    missing = client.get("/instructor/challenges/nope")
    assert missing.status_code == 404 and "no challenge &#39;nope&#39;" in missing.text


# -- what they show -------------------------------------------------------------------------------------------

def test_the_home_lists_every_challenge_with_its_summary_links_and_the_rule(site):
    client, db, tokens, _ = site
    with open_class(db) as store:
        queue.set_deadline(store, "matmul", datetime.datetime(2020, 3, 1, 12, 0, tzinfo=datetime.timezone.utc))
    _login(client, tokens["prof"])
    text = client.get("/instructor").text
    for slug in ("matmul", "vector_add"):
        for href in (f"/instructor/challenges/{slug}", f"/gradebook/{slug}", f"/api/gradebook/{slug}?format=csv",
                     f"/api/gradebook/{slug}?format=lms", f"/instructor/similarity/{slug}"):
            assert f'href="{href}"' in text, href
    matmul = text[text.index('data-slug="matmul"'):text.index('data-slug="vector_add"')]
    assert "Matrix multiplication" in matmul and "2020-03-01 12:00" in matmul
    assert "accepted 1 of 3, not accepted 1, not submitted 1, 1 late" in matmul
    vector_add = text[text.index('data-slug="vector_add"'):]
    assert "no deadline" in vector_add and "accepted 0 of 3, not accepted 0, not submitted 3" in vector_add
    assert 'href="/instructor/roster"' in text
    assert "ACCEPTED earns 60 points" in text and "out of 100" in text
    assert '--score-rule "accepted=60,levels=40,late=0.5"</code>' in text


def test_a_challenges_summary_counts_levels_and_lists_who_is_missing(site):
    client, _, tokens, graded = site
    _login(client, tokens["prof"])
    text = client.get("/instructor/challenges/matmul").text
    assert '<dd id="accepted">1 of 3</dd>' in text and '<dd id="not-accepted">1</dd>' in text
    assert '<dd id="not-submitted">1</dd>' in text and '<dd id="late-count">1</dd>' in text
    levels = text[text.index('<table id="levels">'):text.index("</table>", text.index('<table id="levels">'))]
    assert levels.count("<tr>") == 1 + 7, "the header and every level of the ladder"
    assert '<tr><td>4</td><td>2-D register tiles, 128-bit loads</td><td class="num">1</td></tr>' in levels
    assert '<tr><td>1</td><td>naive global memory</td><td class="num">0</td></tr>' in levels
    accepted = text[text.index('id="accepted-students"'):text.index('id="failing-students"')]
    assert f'<a href="/submissions/{graded["amy"]}">amy</a>' in accepted, "the submission's page, not the run's id"
    assert f'/submissions/{graded["amy"] + 1}"' not in text
    assert "4 (2-D register tiles, 128-bit loads)" in accepted and '<td class="num">82.86</td>' in accepted
    failing = text[text.index('id="failing-students"'):text.index('id="not-submitted-names"')]
    assert f'<a href="/submissions/{graded["bob"]}">bob</a>' in failing and "COMPILE_ERROR" in failing
    assert '<td class="num">2</td>' in failing and '<span class="late">late</span>' in failing
    assert "<li>carol</li>" in text[text.index('id="not-submitted-names"'):]
    assert "local" not in text, "a vector_add run is not matmul's"


def test_a_student_whose_submission_waits_is_said_to_be_waiting(site):
    """The board counts runs: carol's queued submission is not one yet, and the summary says it waits."""
    client, db, tokens, _ = site
    data = NAIVE.read_bytes()
    with open_class(db) as store:
        queue.enqueue(store, "carol", "matmul", "k.cu", from_bytes(data, "k.cu"), len(data), queue.Limits())
    _login(client, tokens["prof"])
    absent = client.get("/instructor/challenges/matmul").text
    absent = absent[absent.index('id="not-submitted-names"'):]
    assert '<li>carol <span class="muted waiting">(one is waiting to be graded)</span></li>' in absent


def test_the_roster_page_shows_names_roles_and_dates_never_tokens(site):
    client, db, tokens, _ = site
    with open_class(db) as store:
        roster.set_expiry(store, "bob", datetime.datetime(2020, 1, 2, 3, 4, tzinfo=datetime.timezone.utc))
        hashes = [row[0] for row in store.db.execute("SELECT token_hash FROM people")]
    _login(client, tokens["prof"])
    text = client.get("/instructor/roster").text
    for name, role in (("amy", "student"), ("bob", "student"), ("carol", "student"), ("prof", "instructor")):
        assert f'<td class="user">{name}</td>\n          <td>{role}</td>' in text
    assert "2020-01-02 03:04" in text and "(expired)" in text and "3 students" in text
    for secret in [*tokens.values(), *hashes, *(hashlib.sha256(t.encode()).hexdigest() for t in tokens.values())]:
        assert secret not in text


def test_person_made_names_are_text_on_every_page(site):
    client, db, tokens, _ = site
    with open_class(db) as store:
        for n, name in enumerate(HOSTILE):
            store.record(timed(20.0 + n, level=2), name, "x.cu", text_source(f"hostile{n}"), secret_seed=True)
            store.db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES (?, 'student', ?, ?)",
                             (name + "!", f"hash{n}", "2026-01-01T00:00:00+00:00"))   # past roster.add's check
    _login(client, tokens["prof"])
    for path in PAGES:
        text = client.get(path).text
        assert "<script>alert" not in text and "<img" not in text and "\u202e" not in text, path
    summary, names = client.get("/instructor/challenges/matmul").text, client.get("/instructor/roster").text
    for text in (summary, names):
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in text
        assert "{{7*7}}" in text and "rtl\\u202eevil.cu" in text and "w" * 400 in text
    assert "(not on the roster)" in summary
    assert f'<td class="user">{"w" * 400} <span' in summary, "a long name wraps (td.user: overflow-wrap)"


# -- the LMS file through the API -----------------------------------------------------------------------------

def test_the_lms_file_is_the_instructors_and_has_every_student(site):
    client, _, tokens, _ = site
    assert client.get("/api/gradebook/matmul?format=lms").status_code == 401
    _login(client, tokens["amy"])
    refused = client.get("/api/gradebook/matmul?format=lms")
    assert refused.status_code == 403 and refused.json()["error"] == "this needs the instructor's token"
    _login(client, tokens["prof"])
    answer = client.get("/api/gradebook/matmul?format=lms")
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert answer.headers["content-disposition"] == 'attachment; filename="matmul-lms.csv"'
    rows = {row["SIS Login ID"]: row for row in csv.DictReader(io.StringIO(answer.text))}
    assert set(rows) == {"amy", "bob", "carol"}
    assert (rows["amy"]["matmul"], rows["bob"]["matmul"], rows["carol"]["matmul"]) == ("82.86", "0", "0")
    assert rows["carol"]["Status"] == "no submission" and rows["amy"]["Points Possible"] == "100"
    assert client.get("/api/gradebook/nope?format=lms").status_code == 404
    assert "rank" in client.get("/api/gradebook/matmul?format=csv").text, "format=csv is as it was"


def test_the_lms_file_follows_the_servers_score_rule(tmp_path):
    client, db, tokens, _ = make_site(tmp_path, parse_rule("accepted=50,levels=50,late=0,max=80"))
    with client:
        _graded(db, "amy", timed(10.0, level=2))
        _graded(db, "bob", timed(9.0, level=7), late=True)
        _login(client, tokens["prof"])
        rows = {row["SIS Login ID"]: row for row in csv.DictReader(io.StringIO(
            client.get("/api/gradebook/matmul?format=lms").text))}
        assert (rows["amy"]["matmul"], rows["bob"]["matmul"]) == ("64.29", "0")   # 50 + 50·2/7; late counts 0
        assert rows["amy"]["Points Possible"] == "80" and rows["bob"]["Status"] == "accepted, level 7 " \
            "(autotuned Hopper kernel (wgmma, 3xTF32)), late"
        home = client.get("/instructor").text
        assert "late work earns nothing" in home and "capped at 80" in home
        assert "accepted=50,levels=50,late=0,max=80" in home
