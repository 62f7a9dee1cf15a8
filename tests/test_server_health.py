"""Grading goes on through faults, in-process: the dispatcher's loop, stepped in the test's thread, meets a
real lock held past the busy timeout, an engine that fails and a report it cannot keep, and survives each
(stalled, said in /api/health and in refused uploads, then resumed by itself); an upload sent again with its
key is the one stored; the client retries an upload with its key and waits with a deadline.
The same faults against a real server (a full disk, a lock) are tests/test_server_faults.py."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import sqlite3

import httpx
import pytest

from grader import cli, spec, store as stores
from grader.classroom import app as apps, client, dispatch, health, queue, roster
from grader.classroom.schema import open_class
from grader.engines import Outcome
from grader.errors import ServerError
from grader.exitcodes import ExitCode
from grader.source import Source
from grader.verdict import Verdict
from test_report import grade_report
from test_server_api import KERNEL, MATMUL, make_client, post

from starlette.testclient import TestClient

LIMITS = queue.Limits(max_pending=1, hourly_cap=100)


TOKENS: dict[str, str] = {}


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setattr(stores, "BUSY_TIMEOUT_S", 0.2)  # a lock held past it fails at once
    path = tmp_path / "class.sqlite3"
    with open_class(path) as store:
        TOKENS.update({name: roster.add(store, name).token for name in ("alice", "bob", "carol")})
    return path


def token(db, name: str) -> str:
    return TOKENS[name]


@pytest.fixture
def matmul():
    return spec.load(cli.DEFAULT_CHALLENGES, "matmul")


class Engine:
    """A stand-in engine: each job's future is finished by the test (`finish`), or at once (`instant`)."""

    name, environment = "stand-in", grade_report().environment

    def __init__(self, slots: int = 1, instant: bool = True, fail_submits: int = 0):
        self.slots, self.instant, self.fail_submits = slots, instant, fail_submits
        self.submitted: list[int] = []
        self.pending: dict[int, concurrent.futures.Future] = {}

    def submit(self, task):
        if self.fail_submits:
            self.fail_submits -= 1
            raise RuntimeError("the engine lost its worker")
        self.submitted.append(task.key)
        future = concurrent.futures.Future()
        if self.instant:
            future.set_result(accepted(task.key))
        else:
            self.pending[task.key] = future
        return future

    def finish(self) -> None:
        for key, future in self.pending.items():
            future.set_result(accepted(key))
        self.pending = {}


def accepted(key: int) -> Outcome:
    return Outcome(key, dataclasses.replace(grade_report(), secret=True))


def queued(db, *users: str, challenge: str = "matmul") -> list[int]:
    with open_class(db) as store:
        return [queue.enqueue(store, user, challenge, "a.cu", Source("x", "a.cu", "h"), 1, LIMITS).id for user in users]


def dispatcher_for(db, engine, matmul) -> dispatch.Dispatcher:
    made = dispatch.Dispatcher(db, engine, dispatch.Class({"matmul": matmul}, seed=1))
    made.backoff = dispatch.Backoff(0.01, 0.05)  # the test steps it: no need to wait a second between tries
    return made


@pytest.fixture
def locked(db):
    """Take the database's write lock from another connection (another process's, to SQLite): `hold()`,
    `release()`."""
    connection = sqlite3.connect(db, isolation_level=None)

    class Lock:
        def hold(self):
            connection.execute("BEGIN IMMEDIATE")

        def release(self):
            connection.execute("ROLLBACK")

    yield Lock()
    if connection.in_transaction:
        connection.execute("ROLLBACK")
    connection.close()


def turn_until(dispatcher, done, turns: int = 20) -> None:
    store = None
    for _ in range(turns):
        store = dispatcher._turn(store)
        if done():
            break
    if store is not None:
        store.close()
    assert done(), "the dispatcher did not get there"


def states(db) -> dict[str, int]:
    with open_class(db) as store:
        return {state.value: n for state, n in queue.counts(store).items()}


def runs_per_submission(db) -> dict[int, int]:
    with open_class(db) as store:
        return dict(store.db.execute("SELECT submission_id, COUNT(*) FROM runs GROUP BY submission_id").fetchall())


def test_a_lock_past_the_busy_timeout_stalls_grading_which_says_so_and_resumes_by_itself(db, matmul, locked):
    ids = queued(db, "alice", "bob")
    engine = Engine()
    dispatcher = dispatcher_for(db, engine, matmul)
    site = TestClient(apps.create_app(apps.Settings(db, {"matmul": matmul}, LIMITS), dispatcher))
    assert site.get("/api/health").json()["grading"] == "ok"
    locked.hold()
    assert dispatcher._turn(None) is None, "the turn failed: a fresh connection next time"
    state = dispatcher.health.state()
    assert not state.ok and state.stalls[0].cause is health.Cause.LOCKED
    assert state.stalls[0].part is health.Part.DISPATCHER and "locked" in state.stalls[0].detail
    answer = site.get("/api/health")
    assert answer.status_code == 503 and answer.json()["grading"] == "stalled"
    assert "write lock" in answer.json()["error"] and answer.json()["stalled"][0]["cause"] == "database locked"
    assert str(db) not in answer.text, "what anyone reads is said from the cause, not the error's text"
    refused = post(site, token(db, "carol"), MATMUL)
    assert refused.status_code == 503 and "nothing was taken" in refused.json()["error"], refused.text
    assert refused.json()["hint"]
    mine = site.get(f"/api/submissions/{ids[0]}", headers={"Authorization": f"Bearer {token(db, 'alice')}"})
    assert "write lock" in mine.json()["stalled"], "a waiting submission says grading is stalled"
    dispatcher._turn(None)
    assert dispatcher.health.state().stalls[0].since == state.stalls[0].since, "stalled since the first failure"
    locked.release()
    turn_until(dispatcher, lambda: states(db)["done"] == 2)
    assert dispatcher.health.state().ok and site.get("/api/health").status_code == 200
    assert runs_per_submission(db) == {ids[0]: 1, ids[1]: 1} and sorted(engine.submitted) == ids
    assert states(db) == {"queued": 0, "running": 0, "done": 2}, "carol's refused upload was not stored"


def test_a_report_the_store_cannot_keep_is_kept_later_not_graded_again(db, matmul, locked):
    [sub] = queued(db, "alice")
    engine = Engine(instant=False)
    dispatcher = dispatcher_for(db, engine, matmul)
    store = dispatcher._turn(None)
    assert engine.submitted == [sub] and states(db)["running"] == 1
    locked.hold()
    engine.finish()
    assert dispatcher._turn(store) is None and not dispatcher.health.state().ok
    assert [s.id for s, _ in dispatcher.finished] == [sub], "the report waits in memory"
    dispatcher._turn(None)  # still locked: the job stays running, claimed by no one else
    locked.release()
    turn_until(dispatcher, lambda: states(db)["done"] == 1)
    assert engine.submitted == [sub], "graded once: the report kept was the one that came back"
    assert runs_per_submission(db) == {sub: 1} and dispatcher.health.state().ok and not dispatcher.finished


def test_a_job_claimed_when_the_engine_failed_goes_back_to_the_queue_and_is_graded(db, matmul):
    [sub] = queued(db, "alice")
    engine = Engine(fail_submits=1)
    dispatcher = dispatcher_for(db, engine, matmul)
    assert dispatcher._turn(None) is None
    assert dispatcher.health.state().stalls[0].cause is health.Cause.INTERNAL
    assert states(db)["running"] == 1, "claimed, and no grader has it"
    turn_until(dispatcher, lambda: states(db)["done"] == 1)
    assert engine.submitted == [sub] and runs_per_submission(db) == {sub: 1} and dispatcher.health.state().ok


def test_a_bug_keeping_one_report_is_the_graders_failure_on_that_job_not_a_stall(db, matmul, monkeypatch):
    [sub] = queued(db, "alice")
    real = dispatch.shown_text
    calls = []

    def broken_once(report):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("a report the renderer trips on")
        return real(report)

    monkeypatch.setattr(dispatch, "shown_text", broken_once)
    engine = Engine()
    dispatcher = dispatcher_for(db, engine, matmul)
    turn_until(dispatcher, lambda: states(db)["done"] == 1)
    assert engine.submitted == [sub, sub], "tried again, as after any failure of the grader's on one job"
    with open_class(db) as store:
        kept = queue.get(store, sub)
        assert kept.claims == 2 and store.run(kept.run_id).verdict is Verdict.ACCEPTED
    assert dispatcher.health.state().ok


def test_a_failure_that_would_fail_every_job_stalls_grading_until_a_job_is_graded(db, matmul):
    from grader.errors import BackendUnavailable

    [sub] = queued(db, "alice")
    dispatcher = dispatcher_for(db, Engine(), matmul)
    with open_class(db) as store:
        claimed = queue.claim(store)
        dispatcher._keep(store, claimed, Outcome(sub, None, "no GPU", None, fatal=BackendUnavailable("no GPU")))
    [stall] = dispatcher.health.state().stalls
    assert (stall.part, stall.cause) == (health.Part.ENGINE, health.Cause.ENGINE)
    assert states(db)["queued"] == 1 and dispatcher.paused_until > 0
    dispatcher.paused_until = 0.0
    turn_until(dispatcher, lambda: states(db)["done"] == 1)
    assert dispatcher.health.state().ok


def test_the_back_off_doubles_to_thirty_seconds_and_starts_again_after_a_success():
    backoff = dispatch.Backoff()
    assert [backoff.take() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    backoff.reset()
    assert backoff.take() == 1


def test_the_dispatcher_thread_lives_through_a_fault(db, matmul, locked):
    """The thread itself, as the server runs it: a lock held past the busy timeout, released; the thread
    is alive all along and grades everything once."""
    import threading
    queued(db, "alice", "bob")
    dispatcher = dispatcher_for(db, Engine(), matmul)
    stalled = threading.Event()
    locked.hold()
    dispatcher.start()
    try:
        for _ in range(500):
            if not dispatcher.health.state().ok:
                stalled.set()
                break
            dispatcher.stop_requested.wait(0.02)
        assert stalled.is_set() and dispatcher.thread.is_alive()
        assert states(db)["done"] == 0
        locked.release()
        for _ in range(500):
            if states(db)["done"] == 2 and dispatcher.health.state().ok:
                break
            dispatcher.stop_requested.wait(0.02)
        assert states(db)["done"] == 2 and dispatcher.health.state().ok and dispatcher.thread.is_alive()
    finally:
        dispatcher.stop()
    assert not dispatcher.thread.is_alive()


# -- uploads -------------------------------------------------------------------------------------------------

def keyed(site, who: str, key: str, data=KERNEL):
    return site.post("/api/submissions", files={"file": ("mine.cu", data)},
                     headers={"Authorization": f"Bearer {who}", client.UPLOAD_KEY_HEADER: key})


def test_an_upload_sent_again_with_its_key_is_the_one_stored(db):
    site = make_client(db, LIMITS)
    alice, bob = token(db, "alice"), token(db, "bob")
    first = keyed(site, alice, "key-00000001")
    again = keyed(site, alice, "key-00000001")
    assert (first.status_code, again.status_code) == (201, 200), again.text
    assert again.json()["id"] == first.json()["id"], "the same submission, not a refusal for the pending limit"
    other = keyed(site, alice, "key-00000001", MATMUL)
    assert other.status_code == 409 and "another file" in other.json()["error"]
    assert keyed(site, bob, "key-00000001").status_code == 201, "a key is the student's own"
    assert keyed(site, alice, "no").status_code == 400
    with open_class(db) as store:
        rows = store.db.execute("SELECT user, upload_key FROM submissions ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("alice", "key-00000001"), ("bob", "key-00000001")]


def test_the_queue_stores_one_submission_per_key_whoever_looked_first(db):
    """Two tries of one upload that both looked before either was stored (one waited behind the other's
    lock): the second is refused inside its transaction, and the unique index holds below that."""
    with open_class(db) as store:
        first = queue.enqueue(store, "alice", "matmul", "a.cu", Source("x", "a.cu", "h"), 1, LIMITS, key="key-0001")
        with pytest.raises(queue.Repeated) as repeated:
            queue.enqueue(store, "alice", "matmul", "a.cu", Source("x", "a.cu", "h"), 1, LIMITS, key="key-0001")
        assert repeated.value.submission.id == first.id and queue.by_key(store, "alice", "key-0001") == first
        with pytest.raises(sqlite3.IntegrityError):
            store.db.execute("INSERT INTO submissions (user, challenge, filename, source, source_hash, submitted_at, "
                             "late, state, upload_key) VALUES ('alice', 'matmul', 'b.cu', 'y', 'i', 'now', 0, 'done', "
                             "'key-0001')")
        assert store.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] == 1


def test_while_grading_is_stalled_a_new_upload_is_refused_and_a_stored_one_is_still_told(db, matmul):
    dispatcher = dispatcher_for(db, Engine(), matmul)
    site = TestClient(apps.create_app(apps.Settings(db, {"matmul": matmul, "vector_add": spec.load(
        cli.DEFAULT_CHALLENGES, "vector_add")}, LIMITS), dispatcher))
    alice = token(db, "alice")
    stored = keyed(site, alice, "key-00000002")
    assert stored.status_code == 201
    dispatcher.health.stall(health.Part.DATABASE, health.Cause.DATABASE, "the file is gone")
    again = keyed(site, alice, "key-00000002")
    assert again.status_code == 200 and again.json()["id"] == stored.json()["id"], "stored: told so, stalled or not"
    assert again.json()["stalled"] and "cannot be written" in again.json()["stalled"]
    refused = keyed(site, token(db, "bob"), "key-00000003")
    assert refused.status_code == 503 and "nothing was taken" in refused.json()["error"]
    assert site.get("/api/health").status_code == 503
    assert "Grading is stalled" in site.get("/").text
    dispatcher.health.clear(health.Part.DATABASE)
    assert site.get("/api/health").status_code == 200
    assert keyed(site, token(db, "bob"), "key-00000003").status_code == 201
    assert states(db)["queued"] == 2


def test_an_upload_the_database_cannot_store_is_a_json_503_and_nothing_is_stored(db, locked):
    site = make_client(db, LIMITS)
    alice = token(db, "alice")
    locked.hold()
    refused = post(site, alice)
    locked.release()
    assert refused.status_code == 503 and refused.headers["content-type"] == "application/json", refused.text
    assert "nothing was taken" in refused.json()["error"] and "write lock" in refused.json()["error"]
    assert states(db) == {"queued": 0, "running": 0, "done": 0}


def test_anything_else_that_fails_a_request_is_answered_in_the_api_s_form(db, monkeypatch):
    from grader.classroom import server as servers
    monkeypatch.setattr(servers.Server, "challenge_list", lambda self: 1 / 0)
    site = TestClient(apps.create_app(apps.Settings(db, {})), raise_server_exceptions=False)
    answer = site.get("/api/challenges")
    assert answer.status_code == 500 and "bug" in answer.json()["error"] and answer.json()["hint"]
    page = site.get("/")
    assert page.status_code == 500 and page.headers["content-type"].startswith("text/html")


# -- the client ----------------------------------------------------------------------------------------------

VIEW = {"id": 7, "user": "alice", "challenge": "vector_add", "filename": "mine.cu", "state": "queued",
        "submitted_at": "2026-01-01T00:00:00+00:00", "finished_at": None, "late": False, "position": 0,
        "verdict": None, "level": None, "exit_code": None}


def fake_clock():
    now = [0.0]
    return now, (lambda s: now.__setitem__(0, now[0] + s)), (lambda: now[0])


def test_an_upload_whose_answer_was_lost_is_sent_again_with_its_key_and_found_stored():
    keys, stored, retries = [], {}, []

    def server(request):
        key = request.headers[client.UPLOAD_KEY_HEADER]
        keys.append(key)
        if len(keys) == 1:  # stored, then the answer is lost
            stored[key] = VIEW
            raise httpx.ReadTimeout("no answer", request=request)
        return httpx.Response(200 if key in stored else 201, json=stored.setdefault(key, VIEW))

    now, sleep, clock = fake_clock()
    remote = client.Client(client.Login("http://class", "t"), transport=httpx.MockTransport(server), sleep=sleep,
                           clock=clock)
    view = remote.submit("mine.cu", b"x", None, on_retry=retries.append)
    assert view.id == 7 and len(keys) == 2 and len(set(keys)) == 1 and len(stored) == 1
    assert [(r.attempt, r.maybe_stored) for r in retries] == [(1, True)] and "no answer" in retries[0].why


def test_an_upload_never_confirmed_says_it_may_be_stored_and_one_never_sent_that_nothing_was():
    tries = []

    def lost_then_down(request):  # a try that may have been stored, then the server restarting
        tries.append(1)
        if len(tries) == 1:
            raise httpx.ReadTimeout("no answer", request=request)
        raise httpx.ConnectError("connection refused", request=request)

    def refused(request):
        tries.append(1)
        raise httpx.ConnectError("connection refused", request=request)

    for transport, said, retried in ((lost_then_down, "may have been stored", True),
                                     (refused, "cannot reach the class server", False)):
        tries.clear()
        now, sleep, clock = fake_clock()
        remote = client.Client(client.Login("http://class", "t"), transport=httpx.MockTransport(transport),
                               sleep=sleep, clock=clock)
        with pytest.raises(ServerError) as failed:
            remote.submit("mine.cu", b"x", None)
        assert said in failed.value.message and now[0] <= client.UPLOAD_DEADLINE_S
        assert (len(tries) > 3) is retried, "a server never reached is said at once: nothing was sent to it"
    assert "nothing was stored" in failed.value.message


def test_waiting_says_when_grading_is_stalled_asks_again_after_no_answer_and_ends_at_its_deadline():
    answers = [{**VIEW, "stalled": "the disk holding the class's database is full (since 12:00)"},
               httpx.ConnectError("down"), {**VIEW, "state": "running", "position": None}]

    def server(request):
        answer = answers.pop(0) if answers else {**VIEW, "state": "running", "position": None}
        if isinstance(answer, Exception):
            raise answer
        return httpx.Response(200, json=answer)

    now, sleep, clock = fake_clock()
    remote = client.Client(client.Login("http://class", "t"), transport=httpx.MockTransport(server), sleep=sleep,
                           clock=clock)
    lines = []
    with pytest.raises(client.NotGradedYet) as waited:
        remote.wait(7, 60, lines.append)
    assert "stalled on the server: the disk" in lines[0] and "no answer" in lines[1] and lines[2] == "grading"
    error = waited.value
    assert error.exit_code is ExitCode.PENDING and int(error.exit_code) == 7
    assert "submission 7 is stored" in error.message and "http://class/submissions/7" in error.hint
    assert "do not submit it again" in error.hint and error.details["submission"] == 7
    assert 60 - client.POLL_S[1] <= now[0] <= 60
