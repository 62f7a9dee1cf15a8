"""The class server's sessions, origin checks, token expiry and response headers, in-process
(Starlette's TestClient, no grading): the login cookie is a session, never the token; logging out
ends it on the server; a cookie request that could change something must come from the server's own
origin; tokens and sessions expire; ids are ASCII digits; every answer says nosniff, every API
answer no-store. tests/test_server_hardening.py drives a real server for the same and for slow
clients."""

from __future__ import annotations

import datetime
import hashlib
import json
import warnings

import pytest
with warnings.catch_warnings():  # starlette suggests httpx2 for its TestClient; httpx is what this project has
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader import cli
from grader.classroom import app, client as clients, queue, roster, server as servers, sessions
from grader.classroom.schema import open_class
from grader.errors import UsageError
from grader.spec import load
from test_cli import invoke

KERNEL = (cli.DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu").read_bytes()
OWN = "http://testserver"
PUBLIC = "https://class.example.edu"
UTC = datetime.timezone.utc


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "class.sqlite3"
    with open_class(path) as store:
        roster.add(store, "amy")
    return path


def make_app(db, **settings):
    challenges = {"vector_add": load(cli.DEFAULT_CHALLENGES, "vector_add")}
    return app.create_app(app.Settings(db, challenges, queue.Limits(max_pending=10, hourly_cap=100), **settings))


def token_of(db, name: str = "amy", **kwargs) -> str:
    with open_class(db) as store:
        return roster.new_token(store, name, **kwargs).token


def log_in(client, token: str, origin: str = OWN):
    done = client.post("/login", data={"token": token}, headers={"Origin": origin}, follow_redirects=False)
    assert done.status_code == 303, done.text
    return done


def upload(client, **headers):
    return client.post("/api/submissions", files={"file": ("mine.cu", KERNEL)}, data={"challenge": "vector_add"},
                       headers=headers)


def stored(db) -> int:
    with open_class(db) as store:
        return store.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def past(hours: float = 1) -> datetime.datetime:
    return datetime.datetime.now(UTC) - datetime.timedelta(hours=hours)


# -- the origin check -------------------------------------------------------------------------------------

def test_a_cookie_post_from_another_origin_is_refused_and_stores_nothing(db):
    client = TestClient(make_app(db))
    token = token_of(db)
    log_in(client, token)
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {},
                    {"Referer": "http://evil.example/page"}, {"Origin": "http://evil.example", "Referer": OWN + "/me"},
                    {"Origin": "https://testserver"}):
        refused = upload(client, **headers)
        assert refused.status_code == 403, headers
        assert refused.headers["content-type"] == "application/json" and "server's pages" in refused.json()["error"]
    assert stored(db) == 0
    assert upload(client, Origin=OWN).status_code == 201
    assert upload(client, Referer=OWN + "/me").status_code == 201, "Referer stands in for a missing Origin"
    assert stored(db) == 2
    # a bearer token is not a browser's: no Origin needed, and another origin's does not matter
    assert upload(client, Authorization=f"Bearer {token}").status_code == 201
    client.cookies.clear()
    assert upload(client, Authorization=f"Bearer {token}", Origin="http://evil.example").status_code == 201
    anonymous = upload(client)
    assert anonymous.status_code == 401, "an API call with no credential at all is refused for that"
    assert stored(db) == 4


def test_the_page_forms_are_checked_like_the_api(db):
    client = TestClient(make_app(db), follow_redirects=False)
    log_in(client, token_of(db))
    for path in ("/logout", "/submit"):
        refused = client.post(path, headers={"Origin": "http://evil.example"})
        assert refused.status_code == 403 and refused.headers["content-type"].startswith("text/html"), path
    assert client.get("/api/me").status_code == 200, "a refused logout logged no one out"


def test_behind_an_https_proxy_the_cookie_is_secure_and_host_prefixed(db):
    """With --public-url https://…, the page's own origin is the public one (the proxy talks plain HTTP
    to the server, with whatever Host it likes), and the cookie is Secure with the __Host- prefix."""
    client = TestClient(make_app(db, public_origin=PUBLIC), base_url="http://127.0.0.1:8000", follow_redirects=False)
    token = token_of(db)
    refused = client.post("/login", data={"token": token}, headers={"Origin": "http://127.0.0.1:8000"})
    assert refused.status_code == 403
    cookie = log_in(client, token, PUBLIC).headers["set-cookie"]
    assert cookie.startswith(sessions.SECURE_COOKIE + "=") and "; Secure" in cookie and "Path=/" in cookie
    assert "Domain" not in cookie and token not in cookie
    session_id = cookie.split("=", 1)[1].split(";", 1)[0]
    me = client.get("/api/me", headers={"Cookie": f"{sessions.SECURE_COOKIE}={session_id}"})
    assert me.status_code == 200 and me.json()["name"] == "amy"
    plain = client.get("/api/me", headers={"Cookie": f"{sessions.COOKIE}={session_id}"})
    assert plain.status_code == 401, "over HTTPS only the __Host- cookie counts"


@pytest.mark.parametrize("url, origin", [("https://Class.Example.edu/", "https://class.example.edu"),
                                         ("http://10.0.0.5:8000", "http://10.0.0.5:8000")])
def test_a_public_url_is_an_origin(url, origin):
    assert servers.public_origin(url) == origin


@pytest.mark.parametrize("url", ["class.example.edu", "ftp://x", "https://x/path", "https://x/?q", "https://u@x",
                                 "http://x:port", "http://x:99999"])
def test_a_public_url_that_is_no_origin_is_bad_usage(url):
    with pytest.raises(UsageError, match="not a public URL"):
        servers.public_origin(url)


# -- sessions and tokens that end -------------------------------------------------------------------------

def test_a_session_ends_at_its_expiry(db):
    client = TestClient(make_app(db), headers={"Origin": OWN}, follow_redirects=False)
    token = token_of(db)
    log_in(client, token)
    assert client.get("/api/me").status_code == 200
    session_id = client.cookies.get(sessions.COOKIE)
    with open_class(db) as store:
        later = (datetime.datetime.now(UTC) + datetime.timedelta(seconds=sessions.LIFETIME_S + 1)).isoformat()
        assert sessions.find(store, session_id, at=later).ended is sessions.Ended.EXPIRED
        store.db.execute("UPDATE sessions SET expires_at = ?", (past().isoformat(timespec="seconds"),))
    ended = client.get("/api/me")
    assert ended.status_code == 401 and "expired" in ended.json()["error"] and "log in again" in ended.json()["hint"]
    assert client.get("/me").headers["location"] == "/login"
    other = TestClient(make_app(db), headers={"Origin": OWN})
    log_in(other, token)  # a new login sweeps the ended session out
    with open_class(db) as store:
        assert store.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    log_in(other, token)  # and ends the one its browser had
    log_in(client, token)
    with open_class(db) as store:
        assert store.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 2


def test_an_expired_token_is_refused_with_a_hint_to_ask_the_instructor(db):
    token = token_of(db)
    client = TestClient(make_app(db), headers={"Origin": OWN}, follow_redirects=False)
    log_in(client, token)                         # a session made while the token was good
    with open_class(db) as store:
        roster.set_expiry(store, "amy", past())
    for answer in (client.get("/api/me"), client.get("/api/me", headers={"Authorization": f"Bearer {token}"})):
        assert answer.status_code == 401
        assert "expired on" in answer.json()["error"] and "instructor" in answer.json()["hint"]
    client.cookies.clear()
    page = client.post("/login", data={"token": token})
    assert page.status_code == 401 and "expired on" in page.text and "instructor" in page.text
    assert "set-cookie" not in page.headers
    with open_class(db) as store:
        roster.set_expiry(store, "amy", None)
    assert client.get("/api/me", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_a_session_lasts_no_longer_than_its_token(db):
    soon = datetime.datetime.now(UTC) + datetime.timedelta(hours=1)
    token = token_of(db, expires=soon)
    cookie = log_in(TestClient(make_app(db)), token).headers["set-cookie"]
    max_age = int(cookie.split("Max-Age=", 1)[1].split(";", 1)[0])
    assert 3600 - 60 <= max_age <= 3600
    with open_class(db) as store:
        assert store.db.execute("SELECT expires_at FROM sessions").fetchone()[0] == soon.isoformat(timespec="seconds")


def test_a_new_token_ends_the_sessions_made_with_the_old_one(db):
    client = TestClient(make_app(db), headers={"Origin": OWN})
    log_in(client, token_of(db))
    assert client.get("/api/me").status_code == 200
    token_of(db)  # the instructor replaces a token that leaked
    assert client.get("/api/me").status_code == 401


def test_roster_expiry_is_parsed_kept_listed_and_changed(db, tmp_path):
    assert roster.parse_expiry("never") is None
    assert abs(roster.parse_expiry("now") - datetime.datetime.now(UTC)) < datetime.timedelta(minutes=1)
    assert roster.parse_expiry("2030-01-02T03:04+00:00") == datetime.datetime(2030, 1, 2, 3, 4, tzinfo=UTC)
    with pytest.raises(UsageError, match="not an expiry"):
        roster.parse_expiry("next tuesday")
    name = str(db)
    added, _, err = invoke("roster", "add", "ben", "--db", name, "--expires", "2030-01-02T03:04+00:00")
    assert added.exit_code == 0 and "token (valid until 2030-01-02 03:04 UTC; give" in " ".join(err.split())
    csv = tmp_path / "class.csv"
    csv.write_text("name\ncy\namy\n")
    imported, _, _ = invoke("roster", "import", str(csv), "--db", name, "--expires", "2020-01-01T00:00+00:00")
    assert imported.exit_code == 0
    listed, out, _ = invoke("roster", "list", "--db", name, "--json")
    people = {p["name"]: p for p in json.loads(out)}
    assert people["ben"]["expires_at"] == "2030-01-02T03:04:00+00:00" and people["ben"]["expired"] is False
    assert people["cy"]["expired"] is True and people["amy"]["expires_at"] is None, "a name already there keeps its own"
    changed, out, _ = invoke("roster", "expire", "cy", "never", "--db", name)
    assert changed.exit_code == 0 and "cy's token expires: never" in out
    stopped, out, _ = invoke("roster", "expire", "ben", "now", "--db", name)
    assert stopped.exit_code == 0 and "no longer works" in out
    table, out, _ = invoke("roster", "list", "--db", name)
    assert "(expired)" in out and "never" in out
    unknown, _, err = invoke("roster", "expire", "zed", "never", "--db", name)
    assert unknown.exit_code == 2 and "not on the roster" in err
    kept, _, _ = invoke("roster", "add", "ben", "--db", name, "--new-token")
    with open_class(db) as store:
        ben = roster.authenticate(store, kept.stdout.strip().splitlines()[-1])
    assert ben is None, "a new token keeps the person's expiry (ben's is past)"


# -- ids, headers, URLs -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["²", "١", "1²", "0" * 19, "-1", "x1", " 1"])
def test_an_id_is_ascii_digits_or_no_id_at_all(db, text):
    client = TestClient(make_app(db), headers={"Authorization": f"Bearer {token_of(db)}"})
    answer = client.get(f"/api/submissions/{text}")
    assert answer.status_code == 404 and answer.headers["content-type"] == "application/json"
    assert client.get(f"/submissions/{text}").status_code in (303, 404)


def test_every_answer_says_nosniff_and_api_answers_are_not_cached(db, tmp_path):
    with open_class(db) as store:
        teacher = roster.add(store, "teacher", roster.Role.INSTRUCTOR).token
    client = TestClient(make_app(db), headers={"Authorization": f"Bearer {teacher}"}, follow_redirects=False)
    answers = {path: client.get(path) for path in (
        "/api/health", "/api/me", "/api/gradebook/vector_add?format=csv", "/api/gradebook/vector_add", "/api/nope",
        "/api/submissions/²", "/", "/leaderboard/vector_add", "/nope", "/me", "/favicon.ico")}
    answers["anonymous"] = TestClient(make_app(db)).get("/api/me")
    for path, answer in answers.items():
        assert answer.headers.get("x-content-type-options") == "nosniff", path
        if path.startswith("/api/") or path == "anonymous":
            assert answer.headers.get("cache-control") == "no-store", path
    csv = answers["/api/gradebook/vector_add?format=csv"]
    assert csv.status_code == 200 and csv.headers["content-type"].startswith("text/csv")


def test_a_server_failure_still_says_nosniff(db, monkeypatch):
    application = make_app(db)
    monkeypatch.setattr(application.state.server, "challenge_list", lambda: 1 / 0)
    failed = TestClient(application, raise_server_exceptions=False).get("/api/challenges")
    assert failed.status_code == 500 and failed.headers["x-content-type-options"] == "nosniff"
    assert failed.json()["error"].startswith("the class server failed on this request")


@pytest.mark.parametrize("url", ["notaurl", "gpu-box:8000", "ftp://gpu-box", "http://", "http://h:port"])
def test_a_server_url_that_is_no_url_is_bad_usage(url):
    with pytest.raises(UsageError, match="is not a class server's URL") as refused:
        clients.server_url(url)
    assert "http://HOST:PORT" in refused.value.hint


def test_submit_and_login_with_no_url_exit_2(tmp_path):
    source = cli.DEFAULT_CHALLENGES / "vector_add" / "levels" / "1_naive.cu"
    for args in (["submit", str(source), "--server", "notaurl", "--token", "t"],
                 ["login", "--server", "notaurl", "--token", "t"]):
        result, _, err = invoke(*args)
        assert result.exit_code == 2 and "not a class server's URL" in err, args
