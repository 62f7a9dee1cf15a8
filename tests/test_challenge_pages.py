"""The class server's challenge pages (grader.classroom.challenge_pages) and the student's home (/me), through
Starlette's TestClient, no grading: a statement rendered from its Markdown with raw HTML escaped, an official
LeetGPU statement shown as text, the starter as a download, the ladder and the checks; uploading a file or
pasting the source from a challenge's page, an empty upload said so, a failed upload leading back to the page it
came from under the same header; the home's table of every challenge with the student's best verdict, level,
attempts, deadline and late flag."""

from __future__ import annotations

import dataclasses
import datetime
import shutil
import warnings

import pytest
with warnings.catch_warnings():
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader import __version__, spec
from grader.backends import Environment
from grader.classroom import app, challenge_pages, queue, roster
from grader.classroom.schema import open_class
from grader.cli import DEFAULT_CHALLENGES
from grader.place import Placement
from grader.results import GradeReport, Mode
from grader.source import Source
from grader.verdict import Verdict

from conftest import ROOT

ORIGIN = "http://testserver"
HOSTILE = ('<script>alert(1)</script> <img src=x onerror=alert(1)> [click](javascript:alert(1)) {{7*7}} \u202eevil '
           + "w" * 3000)
FIXTURE_CHECKOUT = ROOT / "tests" / "leetgpu_fixture" / "challenges" / "easy" / "1_vector_add"


def _client(db, challenges, limits=queue.Limits(max_pending=3, hourly_cap=30)):
    settings = app.Settings(db, challenges, limits, engine="test engine")
    return TestClient(app.create_app(settings), follow_redirects=False, headers={"Origin": ORIGIN})


@pytest.fixture
def site(tmp_path):
    db = tmp_path / "class.sqlite3"
    challenges = {slug: spec.load(DEFAULT_CHALLENGES, slug) for slug in ("vector_add", "matmul")}
    with open_class(db) as store:
        tokens = {"amy": roster.add(store, "amy").token, "prof": roster.add(store, "prof", roster.Role.INSTRUCTOR).token}
    with _client(db, challenges) as client:
        yield client, db, tokens, challenges


def _login(client, token):
    assert client.post("/login", data={"token": token}).status_code == 303


def _record(db, challenge, user, verdict, level=None, late=False) -> int:
    """A submission of `user` queued, claimed and kept with a run of `verdict` at `level`."""
    data = b'extern "C" void solve(const float* A, const float* B, float* C, int N) {}\n'
    with open_class(db) as store:
        from grader.source import from_bytes
        sub = queue.enqueue(store, user, challenge.slug, "k.cu", from_bytes(data, "k.cu"), len(data), queue.Limits(3, 30))
        claimed = queue.claim(store)
        report = GradeReport(
            submission="k.cu", challenge=challenge.slug, challenge_version=challenge.version,
            functional_version=challenge.functional_version, performance_version=challenge.performance_version,
            mode=Mode.SUBMIT, seed=1, verdict=verdict, message="", build=None, cases=(), performance=(),
            environment=Environment("emulator", None, None, None, None, None, None), baseline_label=None,
            grader_version=__version__, wall_s=0.0, kernel_s=0.0,
            placement=Placement(level, len(challenge.levels), "rung", 1.0, None, None, None, None, {}) if level else None)
        store.record(report, user, claimed.filename, Source(claimed.source, "k.cu", claimed.source_hash),
                     secret_seed=False, submission_id=sub.id, late=late, then=queue.finish(sub.id, "t"))
        if late:  # as enqueue flags a submission made after its challenge's deadline
            store.db.execute("UPDATE submissions SET late = 1 WHERE id = ?", (sub.id,))
            store.db.commit()
    return sub.id


# -- the challenge's page ------------------------------------------------------------------------------------

def test_the_page_shows_statement_signature_checks_shapes_starter_and_ladder(site):
    client, db, _, challenges = site
    c = challenges["matmul"]
    page = client.get("/challenges/matmul")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    text = page.text
    first_heading = next(line for line in c.statement_path.read_text().splitlines() if line.startswith("# "))
    assert f"<h1>{first_heading[2:].strip()}</h1>".replace("(", "(") in text  # Markdown rendered, not shown raw
    assert "extern &#34;C&#34; void solve(const float* A, const float* B, float* C, int M, int N, int K)" in text
    assert f"relative Frobenius error at most {c.tolerance.max_relative_frobenius:g}" in text
    for shape in c.functional:
        assert shape.label() in text
    for level in c.levels:
        assert f"<td>{level.name}</td>" in text or level.name.replace("'", "&#39;") in text
    assert 'href="/challenges/matmul/starter.cu"' in text and 'href="/leaderboard/matmul"' in text
    assert 'id="deadline">none<' in text
    assert 'href="/login">Log in</a> to submit' in text and 'name="source"' not in text  # no form for no one
    assert "<script" not in text and "script-src 'none'" in page.headers["content-security-policy"]


def test_a_deadline_and_the_student_s_standing_show_on_the_page(site):
    client, db, tokens, challenges = site
    with open_class(db) as store:
        queue.set_deadline(store, "matmul", datetime.datetime(2026, 12, 1, 17, 0, tzinfo=datetime.timezone.utc))
    _record(db, challenges["matmul"], "amy", Verdict.WRONG_ANSWER)
    best = _record(db, challenges["matmul"], "amy", Verdict.ACCEPTED, level=3, late=True)
    _record(db, challenges["matmul"], "amy", Verdict.ACCEPTED, level=2)
    _login(client, tokens["amy"])
    text = client.get("/challenges/matmul").text
    assert "2026-12-01 17:00" in text
    assert 'id="attempts">3<' in text
    assert f'<a href="/submissions/{best}">ACCEPTED · level 3</a> <span class="late">late</span>' in text
    assert 'name="challenge" value="matmul"' in text and 'name="source"' in text and 'name="file"' in text


def test_the_starter_is_a_download_never_a_page(site):
    client, _, _, challenges = site
    answer = client.get("/challenges/vector_add/starter.cu")
    assert answer.status_code == 200
    assert answer.content == challenges["vector_add"].starter_path.read_bytes()
    assert answer.headers["content-disposition"] == 'attachment; filename="vector_add-starter.cu"'
    assert answer.headers["content-type"].startswith("text/plain")
    assert "sandbox" in answer.headers["content-security-policy"] and answer.headers["x-content-type-options"] == "nosniff"


def test_an_unknown_challenge_is_a_404_page_under_the_logged_in_header(site):
    client, _, tokens, _ = site
    _login(client, tokens["amy"])
    page = client.get("/challenges/nope")
    assert page.status_code == 404
    assert "no challenge &#39;nope&#39; on this server" in page.text
    assert 'id="who">amy<' in page.text and 'action="/logout"' in page.text  # the header is the usual one
    assert client.get("/challenges/nope/starter.cu").status_code == 404


def test_a_statement_s_raw_html_and_script_links_are_text(tmp_path):
    folder = tmp_path / "challenges"
    shutil.copytree(DEFAULT_CHALLENGES / "vector_add", folder / "vector_add")
    (folder / "vector_add" / "statement.md").write_text(f"# Title {HOSTILE}\n\nBody <b>bold</b> {HOSTILE}\n")
    challenge = spec.load(folder, "vector_add")
    challenge_pages._statement.cache_clear()
    with _client(tmp_path / "c.sqlite3", {"vector_add": challenge}) as client:
        text = client.get("/challenges/vector_add").text
    statement = text[text.index('id="statement"'):text.index('id="facts"')]
    assert "<script>" not in statement and "<img" not in statement and "<b>" not in statement
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in statement and "&lt;b&gt;bold&lt;/b&gt;" in statement
    assert 'href="javascript' not in statement.lower()
    assert "{{7*7}}" in statement and "49" not in statement


def test_an_official_statement_is_shown_as_text(tmp_path):
    """An official challenge (origin LEETGPU) from the fixture checkout's folder: challenge.html as plain text,
    none of its markup on the page."""
    ours = spec.load(DEFAULT_CHALLENGES, "vector_add")
    official = dataclasses.replace(ours, slug="1_vector_add", root=FIXTURE_CHECKOUT, origin=spec.Origin.LEETGPU,
                                   statement_file="challenge.html", starter_file="starter/starter.cu", levels=())
    html_source = official.statement_path.read_text()
    assert "<p>" in html_source or "<h" in html_source  # the fixture's statement is HTML
    with _client(tmp_path / "c.sqlite3", {"1_vector_add": official}) as client:
        page = client.get("/challenges/1_vector_add").text
        starter = client.get("/challenges/1_vector_add/starter.cu")
    statement = page[page.index('id="statement"'):page.index('id="facts"')]
    assert '<pre class="statement-text">' in statement and "<p>" not in statement
    assert "LeetGPU" in page and starter.content == official.starter_path.read_bytes()


# -- submitting from the page -----------------------------------------------------------------------------

def test_pasted_source_is_a_submission_of_the_page_s_challenge(site):
    client, db, tokens, _ = site
    _login(client, tokens["amy"])
    source = (DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu").read_text()
    sent = client.post("/submit", files={"file": ("", b"", "application/octet-stream")},
                       data={"challenge": "vector_add", "source": source.replace("\n", "\r\n")})
    assert sent.status_code == 303 and sent.headers["location"].startswith("/submissions/")
    with open_class(db) as store:
        [sub] = queue.history(store, "amy")
    assert (sub.challenge, sub.filename, sub.source) == ("vector_add", "pasted.cu", source)


@pytest.mark.parametrize("file, pasted, said", [
    (("", b""), "", "the upload is empty: no file was chosen and no source was pasted"),
    (("", b""), "   \r\n ", "the upload is empty: no file was chosen and no source was pasted"),
    (("k.cu", b""), "", "k.cu is empty: there is nothing to grade"),
    (("k.cu", b"int x;"), "int y;", "the upload holds a file and pasted source"),
])
def test_an_empty_or_double_upload_says_so_and_leads_back_to_the_challenge(site, file, pasted, said):
    client, db, tokens, _ = site
    _login(client, tokens["amy"])
    answer = client.post("/submit", files={"file": (*file, "text/plain")}, data={"challenge": "matmul", "source": pasted},
                         headers={"Referer": f"{ORIGIN}/challenges/matmul"})
    assert answer.status_code == 400
    assert said in answer.text
    assert '<a href="/challenges/matmul">back to the challenge</a>' in answer.text
    assert 'id="who">amy<' in answer.text
    with open_class(db) as store:
        assert queue.history(store, "amy") == []


def test_a_referer_elsewhere_or_unknown_is_no_way_back(site):
    client, _, tokens, _ = site
    _login(client, tokens["amy"])
    for referer in ("https://evil.example/challenges/matmul", f"{ORIGIN}/challenges/%3Cscript%3E", f"{ORIGIN}/me"):
        answer = client.post("/submit", files={"file": ("", b"", "text/plain")}, data={"challenge": "matmul"},
                             headers={"Referer": referer})
        assert answer.status_code in (400, 403)
        assert "back to the challenge" not in answer.text


# -- the student's home --------------------------------------------------------------------------------------

def test_home_lists_every_challenge_with_the_student_s_best_and_deadline(site):
    client, db, tokens, challenges = site
    with open_class(db) as store:
        queue.set_deadline(store, "vector_add", datetime.datetime(2026, 12, 2, 9, 30, tzinfo=datetime.timezone.utc))
    _record(db, challenges["vector_add"], "amy", Verdict.ACCEPTED, level=2, late=True)
    _record(db, challenges["vector_add"], "amy", Verdict.WRONG_ANSWER)
    _login(client, tokens["amy"])
    text = client.get("/me").text
    table = text[text.index('id="challenges"'):text.index("</table>")]
    vector_add = table[table.index('data-slug="vector_add"'):]
    vector_add = vector_add[:vector_add.index("</tr>")]
    assert ">ACCEPTED</a>" in vector_add and 'class="c-level">2<' in vector_add
    assert 'c-attempts">2<' in vector_add and "2026-12-02 09:30" in vector_add and 'class="late">late' in vector_add
    matmul = table[table.index('data-slug="matmul"'):]
    matmul = matmul[:matmul.index("</tr>")]
    assert 'c-attempts">0<' in matmul and 'href="/challenges/matmul"' in matmul and 'class="late"' not in matmul


def test_standings_rank_accepted_then_level_then_latest(tmp_path):
    challenge = spec.load(DEFAULT_CHALLENGES, "vector_add")
    db = tmp_path / "c.sqlite3"
    with open_class(db) as store:
        roster.add(store, "amy")
    first = _record(db, challenge, "amy", Verdict.ACCEPTED, level=2)
    _record(db, challenge, "amy", Verdict.ACCEPTED, level=1)
    _record(db, challenge, "amy", Verdict.TIMEOUT)
    with open_class(db) as store:
        got = queue.standings(store, "amy")["vector_add"]
    assert (got.attempts, got.best_id, got.best_verdict, got.best_level, got.waiting) == (3, first, "ACCEPTED", 2, False)
