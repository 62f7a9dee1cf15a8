"""The class server's API, roster and queue, in-process (Starlette's TestClient, no grading): tokens,
limits, round-robin, queue positions, deadlines, and a job kept exactly once."""

from __future__ import annotations

import dataclasses
import datetime
import hashlib

import pytest
from starlette.testclient import TestClient

from conftest import ROOT
from grader.classroom.schema import open_class
from grader import cli, spec
from grader.classroom import app as apps, queue, roster, server as servers
from grader.source import Source
from grader.store import AlreadyGraded
from test_report import grade_report

KERNEL = (ROOT / "challenges" / "vector_add" / "levels" / "1_naive.cu").read_bytes()
MATMUL = (ROOT / "challenges" / "matmul" / "levels" / "1_naive.cu").read_bytes()


@pytest.fixture
def db(tmp_path):
    return tmp_path / "class.sqlite3"


@pytest.fixture
def tokens(db) -> dict[str, str]:
    with open_class(db) as store:
        found = {name: roster.add(store, name).token for name in ("alice", "bob", "carol")}
        found["teacher"] = roster.add(store, "teacher", roster.Role.INSTRUCTOR).token
    return found


def make_client(db, limits=queue.Limits()) -> TestClient:
    challenges = {slug: spec.load(cli.DEFAULT_CHALLENGES, slug) for slug in ("vector_add", "matmul")}
    return TestClient(apps.create_app(apps.Settings(db, challenges, limits)))


def post(client, token, data=KERNEL, name="mine.cu", challenge=None):
    fields = {"challenge": challenge} if challenge else {}
    return client.post("/api/submissions", files={"file": (name, data)}, data=fields,
                       headers={"Authorization": f"Bearer {token}"} if token else {})


def count_submissions(db) -> int:
    with open_class(db) as store:
        return store.db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def test_tokens_are_stored_hashed_and_a_bad_token_stores_nothing(db, tokens):
    with open_class(db) as store:
        hashes = [r[0] for r in store.db.execute("SELECT token_hash FROM people")]
    assert tokens["alice"] not in "".join(hashes)
    assert hashlib.sha256(tokens["alice"].encode()).hexdigest() in hashes
    client = make_client(db)
    for bad in (None, "", "nope", tokens["alice"][:-1], tokens["alice"] + "x"):
        answer = post(client, bad)
        assert answer.status_code == 401, bad
        assert "token" in answer.json()["error"]
    assert client.get("/api/submissions/1").status_code == 401
    assert count_submissions(db) == 0


def test_an_upload_is_queued_with_its_challenge_detected_from_the_signature(db, tokens):
    client = make_client(db)
    answer = post(client, tokens["alice"])
    assert answer.status_code == 201, answer.text
    body = answer.json()
    assert (body["challenge"], body["state"], body["position"], body["user"]) == ("vector_add", "queued", 0, "alice")
    mine = client.get(f"/api/submissions/{body['id']}", headers={"Authorization": f"Bearer {tokens['alice']}"})
    assert mine.json()["state"] == "queued"
    theirs = client.get(f"/api/submissions/{body['id']}", headers={"Authorization": f"Bearer {tokens['bob']}"})
    assert theirs.status_code == 404, "a student sees only their own submissions"
    teacher = client.get(f"/api/submissions/{body['id']}", headers={"Authorization": f"Bearer {tokens['teacher']}"})
    assert teacher.status_code == 200


@pytest.mark.parametrize("data, name, status, words", [
    (b"\0\1binary", "mine.cu", 400, "not a text file"),
    (b"   \n", "mine.cu", 400, "empty"),
    (KERNEL, "mine.py", 400, "ending in .cu"),
    (b"// nothing that looks like any solve\n", "mine.cu", 400, "choose the challenge"),
    (KERNEL + b"//" + b"x" * 300_000, "mine.cu", 413, "at most"),
])
def test_uploads_the_grader_would_not_read_are_refused_and_nothing_is_stored(db, tokens, data, name, status, words):
    answer = post(make_client(db), tokens["alice"], data, name)
    assert answer.status_code == status, answer.text
    assert words in answer.json()["error"] + (answer.json()["hint"] or "")
    assert count_submissions(db) == 0


def test_one_pending_submission_per_student_across_challenges_and_an_hourly_cap(db, tokens):
    client = make_client(db, queue.Limits(max_pending=1, hourly_cap=3))
    assert post(client, tokens["alice"]).status_code == 201
    second = post(client, tokens["alice"])
    assert second.status_code == 429 and "waiting" in second.json()["error"]
    other = post(client, tokens["alice"], MATMUL)
    assert other.status_code == 429, "another challenge is no second queue: five challenges would fill five GPUs"
    assert "any challenge" in other.json()["error"]
    assert post(client, tokens["bob"]).status_code == 201, "another student is not held back"
    with open_class(db) as store:  # alice's is graded: she may submit again, until the hourly cap
        store.db.execute("UPDATE submissions SET state = 'done' WHERE user = 'alice'")
    assert post(client, tokens["alice"], MATMUL).status_code == 201
    with open_class(db) as store:
        store.db.execute("UPDATE submissions SET state = 'done' WHERE user = 'alice'")
    assert post(client, tokens["alice"]).status_code == 201
    with open_class(db) as store:
        store.db.execute("UPDATE submissions SET state = 'done' WHERE user = 'alice'")
    capped = post(client, tokens["alice"])
    assert capped.status_code == 429 and "last hour" in capped.json()["error"]
    assert count_submissions(db) == 4


def test_the_limits_are_checked_before_the_upload_is_read(db, tokens, monkeypatch):
    """A student over a limit costs a query, not the reading of their file (its text, its signature)."""
    client = make_client(db, queue.Limits(max_pending=1, hourly_cap=30))
    assert post(client, tokens["alice"]).status_code == 201
    read = []
    monkeypatch.setattr(servers.sources, "checked", lambda *args: read.append("checked") or pytest.fail("read"))
    monkeypatch.setattr(servers.signature, "choose", lambda *args: read.append("choose") or pytest.fail("read"))
    refused = post(client, tokens["alice"], b"\0\1binary")
    assert refused.status_code == 429 and read == [], "refused for the limit, before the text was looked at"
    assert post(client, tokens["alice"], KERNEL, "mine.py").status_code == 429


def test_an_upload_refused_between_the_first_check_and_the_queue_stores_nothing(db, tokens):
    """The check before reading is only a shortcut: enqueue checks again in its transaction."""
    limits = queue.Limits(max_pending=1, hourly_cap=30)
    with open_class(db) as store:
        queue.admit(store, "alice", 10, limits)
        queue.enqueue(store, "alice", "vector_add", "a.cu", Source("x", "a.cu", "h"), 10, limits)
        with pytest.raises(queue.Refused) as refused:  # a second upload that passed admit at the same time
            queue.enqueue(store, "alice", "matmul", "b.cu", Source("y", "b.cu", "h2"), 10, limits)
        assert refused.value.why is queue.Refusal.PENDING
        with pytest.raises(queue.Refused):
            queue.admit(store, "alice", 10, limits)
        with pytest.raises(queue.Refused) as large:
            queue.admit(store, "bob", limits.max_bytes + 1, limits)
        assert large.value.why is queue.Refusal.TOO_LARGE
    assert count_submissions(db) == 1


def test_the_queue_is_round_robin_between_students_and_positions_say_so(db, tokens):
    limits = queue.Limits(max_pending=5, hourly_cap=100)
    with open_class(db) as store:
        def add(user):
            return queue.enqueue(store, user, "vector_add", "a.cu", Source("x", "a.cu", "h"), 1, limits).id

        alice = [add("alice") for _ in range(3)]
        bob = [add("bob") for _ in range(2)]
        carol = [add("carol")]
        expected = [alice[0], bob[0], carol[0], alice[1], bob[1], alice[2]]
        positions = {i: queue.position(store, i) for i in alice + bob + carol}
        assert sorted(positions, key=positions.get) == expected
        assert sorted(positions.values()) == list(range(6))
        order = []
        for _ in range(6):  # each job finished before the next is claimed: one grading slot
            order.append(queue.claim(store).id)
            store.db.execute("UPDATE submissions SET state = 'done' WHERE id = ?", (order[-1],))
        assert order == expected
        assert queue.claim(store) is None


def test_a_student_never_has_two_jobs_running_however_many_slots(db, tokens):
    """Four slots (four GPUs) and alice's three queued jobs: one of hers runs, the others wait for it,
    while bob's and carol's start beside it."""
    limits = queue.Limits(max_pending=5, hourly_cap=100)
    with open_class(db) as store:
        def add(user, challenge="vector_add"):
            return queue.enqueue(store, user, challenge, "a.cu", Source("x", "a.cu", "h"), 1, limits).id

        alice = [add("alice"), add("alice", "matmul"), add("alice")]
        bob, carol = add("bob"), add("carol")
        running = [queue.claim(store) for _ in range(4)]
        assert [s.id for s in running if s is not None] == [alice[0], bob, carol]
        assert running[3] is None, "a free slot stays free rather than take alice's second job"
        store.db.execute("UPDATE submissions SET state = 'done' WHERE id = ?", (alice[0],))
        assert queue.claim(store).id == alice[1]
        assert queue.claim(store) is None
        assert queue.requeue_running(store) == 3  # a restart: the same rule for what it put back
        assert sorted(queue.claim(store).id for _ in range(3)) == sorted([alice[1], bob, carol])
        assert queue.claim(store) is None


def test_a_job_is_kept_once_and_a_restart_requeues_what_was_running(db, tokens):
    limits = queue.Limits()
    with open_class(db) as store:
        sub = queue.enqueue(store, "alice", "vector_add", "a.cu", Source("x", "a.cu", "h"), 1, limits)
        claimed = queue.claim(store)
        assert claimed.id == sub.id and claimed.state is queue.State.RUNNING
        assert queue.requeue_running(store) == 1, "a server that starts finds it running: it was never kept"
        assert queue.claim(store).id == sub.id
        report = dataclasses.replace(grade_report(), secret=True)
        run = store.record(report, "alice", "a.cu", Source("x", "a.cu", "h"), True, submission_id=sub.id,
                           then=queue.finish(sub.id, "shown"))
        with pytest.raises(AlreadyGraded):
            store.record(report, "alice", "a.cu", Source("x", "a.cu", "h"), True, submission_id=sub.id,
                         then=queue.finish(sub.id, "shown"))
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        waiting = queue.enqueue(store, "bob", "vector_add", "b.cu", Source("y", "b.cu", "i"), 1, limits)
        with pytest.raises(AlreadyGraded):  # never claimed: the queue's own step refuses, the run goes with it
            store.record(report, "bob", "b.cu", Source("y", "b.cu", "i"), True, submission_id=waiting.id,
                         then=queue.finish(waiting.id, "shown"))
        assert store.db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
        done = queue.get(store, sub.id)
        assert (done.state, done.run_id) == (queue.State.DONE, run)
        assert queue.requeue_running(store) == 0


def test_a_submission_after_the_deadline_is_graded_and_flagged_late(db, tokens):
    with open_class(db) as store:
        queue.set_deadline(store, "vector_add", datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc))
    client = make_client(db)
    assert post(client, tokens["alice"]).json()["late"] is True
    assert post(client, tokens["bob"], MATMUL).json()["late"] is False, "matmul has no deadline"
    assert client.get("/api/challenges").json()[0]["deadline"].startswith("2020-01-01")


def test_the_gradebook_is_the_instructors(db, tokens):
    client = make_client(db)
    assert client.get("/api/gradebook/vector_add", headers={"Authorization": f"Bearer {tokens['alice']}"}).status_code == 403
    answer = client.get("/api/gradebook/vector_add?format=csv", headers={"Authorization": f"Bearer {tokens['teacher']}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/csv")
    assert client.get("/api/leaderboard/vector_add").status_code == 200, "the leaderboard is public"
    assert client.get("/api/leaderboard/nope").status_code == 404


def test_roster_names_are_checked_and_a_csv_is_read_whole_or_not_at_all(db, tmp_path):
    from grader.errors import UsageError
    with open_class(db) as store:
        for bad in ("", "a b", "<script>", "../x", "x" * 65):
            with pytest.raises(UsageError):
                roster.add(store, bad)
        roster.add(store, "dora")
        with pytest.raises(UsageError, match="already"):
            roster.add(store, "dora")
        old = roster.authenticate(store, roster.add(store, "eve").token)
        assert old.name == "eve"
    good = tmp_path / "class.csv"
    good.write_text("name,email\nfay,f@x\n\ngus,g@x\n")
    assert roster.read_csv(good) == ["fay", "gus"]
    bad = tmp_path / "bad.csv"
    bad.write_text("fay\nnot ok\n")
    with pytest.raises(UsageError, match="row 2"):
        roster.read_csv(bad)


def test_unknown_addresses_answer_in_the_api_s_form_or_as_a_page(db):
    client = make_client(db)
    api = client.get("/api/nowhere")
    assert api.status_code == 404 and api.json()["error"] == "Not Found"
    page = client.get("/nowhere")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")


def test_the_dispatcher_gives_a_student_one_slot_at_a_time(db, tokens):
    """Three slots, alice's two jobs and bob's one: the engine never holds two of alice's at once."""
    import concurrent.futures
    import threading

    from grader.classroom import dispatch
    from grader.engines import Outcome

    class Slots:
        slots, name, environment = 3, "stand-in", None

        def __init__(self, owners: dict[int, str]):
            self.owners = owners
            self.lock = threading.Lock()
            self.running: dict[int, concurrent.futures.Future] = {}
            self.most_of_alice = 0

        def submit(self, task):
            future = concurrent.futures.Future()
            with self.lock:
                self.running[task.key] = future
                users = [self.owners[key] for key in self.running]
                self.most_of_alice = max(self.most_of_alice, users.count("alice"))
            return future

        def finish_all(self):
            with self.lock:
                done, self.running = self.running, {}
            for key, future in done.items():
                future.set_result(Outcome(key, dataclasses.replace(grade_report(), secret=True)))
            return len(done)

    limits = queue.Limits(max_pending=2, hourly_cap=100)
    matmul = spec.load(cli.DEFAULT_CHALLENGES, "matmul")
    with open_class(db) as store:
        owners = {queue.enqueue(store, user, "matmul", "a.cu", Source("x", "a.cu", "h"), 1, limits).id: user
                  for user in ("alice", "alice", "bob")}
        engine = Slots(owners)
        dispatcher = dispatch.Dispatcher(db, engine, dispatch.Class({"matmul": matmul}, seed=1))
        finished = 0
        for _ in range(3):  # the dispatcher's steps in this thread: claim what it may, then the jobs end
            dispatcher._fill(store)
            finished += engine.finish_all()
            dispatcher._collect(store)
        assert finished == 3 and engine.most_of_alice == 1
        assert queue.counts(store)[queue.State.DONE] == 3


class _Failing:
    """An engine whose first `fail` jobs end in the grader's own failure (no report), then grade."""

    slots, name = 1, "stand-in"
    environment = grade_report().environment

    def __init__(self, fail: int):
        self.fail, self.tries = fail, 0

    def submit(self, task):
        import concurrent.futures

        from grader.engines import Outcome

        self.tries += 1
        future = concurrent.futures.Future()
        if self.tries <= self.fail:
            future.set_result(Outcome(task.key, None, "RuntimeError: the grader tripped", "Traceback: ..."))
        else:
            future.set_result(Outcome(task.key, dataclasses.replace(grade_report(), secret=True)))
        return future


def _dispatch_until_done(db, engine, submission_id: int) -> queue.Submission:
    """Run the dispatcher's steps in this thread (the engine answers at once) until the job is done."""
    from grader.classroom import dispatch

    matmul = spec.load(cli.DEFAULT_CHALLENGES, "matmul")
    dispatcher = dispatch.Dispatcher(db, engine, dispatch.Class({"matmul": matmul}, seed=1))
    with open_class(db) as store:
        for _ in range(10):
            dispatcher._fill(store)
            dispatcher._collect(store)
            sub = queue.get(store, submission_id)
            if sub.state is queue.State.DONE:
                return sub
    raise AssertionError("the job never finished")


def test_a_grader_failure_on_the_server_is_graded_again_and_only_then_kept_as_the_graders(db, tokens):
    from grader import leaderboard
    from grader.classroom import dispatch
    from grader.verdict import Verdict

    limits = queue.Limits(max_pending=2, hourly_cap=100)
    with open_class(db) as store:
        retried = queue.enqueue(store, "alice", "matmul", "a.cu", Source("x", "a.cu", "h"), 1, limits).id
    once = _Failing(fail=1)
    sub = _dispatch_until_done(db, once, retried)
    with open_class(db) as store:
        run = store.run(sub.run_id)
        assert once.tries == 2 and sub.claims == 2 and run.verdict is Verdict.ACCEPTED, "tried again, then graded"
        given_up = queue.enqueue(store, "bob", "matmul", "b.cu", Source("y", "b.cu", "i"), 1, limits).id
    always = _Failing(fail=99)
    sub = _dispatch_until_done(db, always, given_up)
    with open_class(db) as store:
        run = store.run(sub.run_id)
        assert always.tries == dispatch.GRADER_ERROR_TRIES and run.verdict is Verdict.GRADER_ERROR
        assert "not a judgement of the submission" in run.report["message"]
        board = leaderboard.board(store, spec.load(cli.DEFAULT_CHALLENGES, "matmul"), include_practice=True)
    assert "bob" not in board.history, "the grader's failure is not an attempt of bob's"
    answer = make_client(db).get(f"/api/submissions/{given_up}",
                                 headers={"Authorization": f"Bearer {tokens['bob']}"}).json()
    assert answer["verdict"] == "GRADER_ERROR" and answer["exit_code"] == 70, "the client exits as the grader's failure"


def test_each_submission_is_graded_with_a_seed_of_its_own_derived_from_the_class_s(db, tokens):
    """The same file sent twice is graded on two draws of the hidden shapes: each job's seed is derived from the
    class's secret seed and the submission (grader.seeds), is the same when the job is tried again, and is the
    one its run keeps; the class's seed itself reaches no grading process."""
    import concurrent.futures

    from grader import seeds
    from grader.classroom import dispatch
    from grader.engines import Outcome

    class Recording:
        slots, name = 1, "stand-in"
        environment = grade_report().environment

        def __init__(self, fail_first: int):
            self.tasks, self.fail_first = [], fail_first

        def submit(self, task):
            self.tasks.append(task)
            future = concurrent.futures.Future()
            failing = len(self.tasks) <= self.fail_first
            report = None if failing else dataclasses.replace(grade_report(), seed=task.seed, secret=True)
            future.set_result(Outcome(task.key, report, "RuntimeError: tripped" if failing else None))
            return future

    class_seed = 987654321
    limits = queue.Limits(max_pending=5, hourly_cap=100)
    matmul = spec.load(cli.DEFAULT_CHALLENGES, "matmul")
    with open_class(db) as store:
        ids = [queue.enqueue(store, "alice", "matmul", "a.cu", Source("x", "a.cu", "h"), 1, limits).id for _ in range(2)]
    engine = Recording(fail_first=1)  # the first try of the first job fails: it is tried again, on the same seed
    dispatcher = dispatch.Dispatcher(db, engine, dispatch.Class({"matmul": matmul}, seed=class_seed))
    with open_class(db) as store:
        for _ in range(6):
            dispatcher._fill(store)
            dispatcher._collect(store)
        kept = {sub_id: store.run(queue.get(store, sub_id).run_id).report["seed"] for sub_id in ids}
        stored = dict(store.db.execute("SELECT submission_id, seed FROM runs").fetchall())
    expected = {sub_id: seeds.for_submission(class_seed, sub_id) for sub_id in ids}
    assert kept == stored == expected and len(set(expected.values())) == 2
    assert [t.seed for t in engine.tasks] == [expected[ids[0]], expected[ids[0]], expected[ids[1]]]
    assert class_seed not in expected.values() and all(0 <= seed < 2**63 for seed in expected.values())
    assert seeds.for_submission(class_seed + 1, ids[0]) != expected[ids[0]], "the class's seed is the key"


def test_the_submission_answer_round_trips_and_a_malformed_one_is_refused(db, tokens):
    """One dataclass on both ends (classroom/wire.py): what the API sends, the client reads back whole; an
    answer of another form is the server's failure (exit 6), not a KeyError."""
    from grader.classroom.wire import SubmissionView
    from grader.errors import ServerError
    from grader.exitcodes import ExitCode

    sent = post(make_client(db), tokens["alice"]).json()
    view = SubmissionView.from_json(sent)
    assert view.to_json() == sent and view.state == "queued" and view.verdict is None and not view.done
    for broken in ({**sent, "state": "lost"}, {k: v for k, v in sent.items() if k != "id"}, {**sent, "verdict": "GREAT"}, []):
        with pytest.raises(ServerError) as refused:
            SubmissionView.from_json(broken, "http://class")
        assert refused.value.exit_code is ExitCode.SERVER and "http://class" in refused.value.message


def test_a_class_list_adds_only_new_names_and_the_token_file_is_private(db, tmp_path):
    with open_class(db) as store:
        first = roster.add(store, "amy").token
        imported = roster.add_all(store, ["amy", "ben", "cy"])
        assert imported.kept == ("amy",) and [a.person.name for a in imported.added] == ["ben", "cy"]
        assert roster.authenticate(store, first).name == "amy", "a name on the roster keeps its token"
    tokens = tmp_path / "tokens.csv"
    tokens.write_text("old\n")
    tokens.chmod(0o644)
    roster.write_tokens(tokens, imported)
    assert tokens.stat().st_mode & 0o777 == 0o600
    assert tokens.read_text().splitlines() == ["name,token"] + [f"{a.person.name},{a.token}" for a in imported.added]


def test_a_deadline_without_a_zone_is_this_machines_and_a_bad_one_says_how_to_write_it(monkeypatch):
    from grader.errors import UsageError
    monkeypatch.setenv("TZ", "America/New_York")
    import time
    time.tzset()
    try:
        due = queue.parse_due("2026-12-01T23:59")
        assert due.utcoffset() == datetime.timedelta(hours=-5)
        assert queue.parse_due("2026-12-01T23:59+01:00").utcoffset() == datetime.timedelta(hours=1)
        with pytest.raises(UsageError, match="not a date and time") as refused:
            queue.parse_due("next friday")
        assert "2026-12-01T23:59" in refused.value.hint
    finally:
        monkeypatch.undo()
        time.tzset()


def _enqueue(db, user: str) -> int:
    with open_class(db) as store:
        return queue.enqueue(store, user, "matmul", f"{user}.cu", Source(user, f"{user}.cu", user), 1,
                             queue.Limits(max_pending=2, hourly_cap=100)).id


class _Lost(_Failing):
    """An engine whose first `fail` jobs come back lost: the grading process died, or the worker was killed
    from outside (grader.engines.Failure.LOST)."""

    def submit(self, task):
        import concurrent.futures

        from grader.engines import Failure, Outcome

        self.tries += 1
        future = concurrent.futures.Future()
        if self.tries <= self.fail:
            future.set_result(Outcome(task.key, None, "the grading process died", failure=Failure.LOST))
        else:
            future.set_result(Outcome(task.key, dataclasses.replace(grade_report(), secret=True)))
        return future


def test_a_lost_grading_is_graded_once_more_then_kept_as_the_graders_error(db, tokens):
    from grader.classroom import dispatch
    from grader.verdict import Verdict

    regraded = _dispatch_until_done(db, _Lost(fail=1), _enqueue(db, "alice"))
    lost = _Lost(fail=99)
    given_up = _dispatch_until_done(db, lost, _enqueue(db, "bob"))
    with open_class(db) as store:
        assert store.run(regraded.run_id).verdict is Verdict.ACCEPTED and regraded.claims == 2
        run = store.run(given_up.run_id)
    assert lost.tries == dispatch.LOST_TRIES == 2 and run.verdict is Verdict.GRADER_ERROR
    assert "the grading process died" in run.report["message"] and "please report" not in run.report["message"]


def test_a_database_deleted_under_a_running_app_refuses_work_and_makes_no_file(db, tokens):
    with make_client(db) as client:
        assert post(client, tokens["alice"]).status_code == 201
        db.unlink()
        refused = post(client, tokens["bob"])
        assert refused.status_code == 503 and refused.json()["error"] == servers.GONE
        assert client.get("/api/health").status_code == 503
        assert client.get("/api/leaderboard/matmul").status_code == 503
        assert not db.exists()


def test_connections_the_server_accepts_send_without_waiting_for_acks():
    """asyncio turns Nagle's algorithm off only on sockets made as TCP by name: from the listener made with
    protocol 0, every answer on a kept-alive connection (its headers and body two writes) waited 40 ms for
    the client's delayed ACK (44 ms a call measured, 0.9 ms with TCP_NODELAY)."""
    import asyncio
    import socket

    listener = apps.listening_socket("127.0.0.1", 0)
    nodelay = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport):
            nodelay.append(transport.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def accept_one():
        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            reader, writer = await asyncio.open_connection(*listener.getsockname()[:2])
            await reader.read()
            writer.close()

    asyncio.run(accept_one())
    assert nodelay == [1]
