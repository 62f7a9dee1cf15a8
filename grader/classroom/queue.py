"""The submission queue, in the results database: nothing is lost when the server stops.

A submission is `queued` when it is accepted, `running` once a grading slot claims it, `done` when its
run is kept (in the same transaction: `finish`, which grader.store.Store.record runs as its `then`). A server that starts puts every
`running` submission back in the queue: whatever was grading it died with the last server, and its
run, if any, was never committed. The unique run per submission makes a second grading of one job
impossible to keep, so each job is graded exactly once whatever stops when.

Fairness is round-robin between students: the next job is the oldest queued one of the student whose
last job was claimed longest ago (never, first), and never one of a student who has a job running, so
however many GPUs grade, one student holds at most one of them. Limits are checked before an upload is
read (`admit`) and again in the transaction that queues, so many requests at once cannot slip past
them: at most `max_pending` queued-or-running submissions per student, all challenges together (per
challenge, a student with five challenges could fill five GPUs near a deadline), at most `hourly_cap`
submissions per student per hour, at most `max_bytes` of source. A submission after its challenge's
deadline is queued and flagged late.

An upload may carry a key of the client's (`grader submit` makes one per invocation and sends it again
when it retries): a second upload of a student's with a key they used already is that first submission,
never a second one, so a client that lost the answer to an upload that was stored asks again and is
told it was stored (`by_key`, and `enqueue` raising Repeated inside its transaction).
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import sqlite3
from dataclasses import dataclass
from typing import Callable, Collection

from grader.errors import UsageError
from grader.source import MAX_SOURCE_BYTES, Source
from grader.store import AlreadyGraded, Store, StoreError, now


class State(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


@dataclass(frozen=True)
class Limits:
    max_pending: int = 1
    """Queued-or-running submissions per student, all challenges together."""
    hourly_cap: int = 30
    """Submissions per student per hour, all challenges together."""
    max_bytes: int = 256 * 1024
    """Largest source accepted, in bytes (at most the grader's own cap)."""

    def __post_init__(self):
        if self.max_pending < 1 or self.hourly_cap < 1 or not 0 < self.max_bytes <= MAX_SOURCE_BYTES:
            raise ValueError(f"limits out of range: {self}")


class Refusal(enum.Enum):
    PENDING = "pending"
    HOURLY = "hourly"
    TOO_LARGE = "too large"


class Repeated(Exception):
    """An upload whose key (its client's, see the module's docstring) was stored already: `submission`."""

    def __init__(self, submission: "Submission"):
        super().__init__(f"submission {submission.id} was stored with this upload key already")
        self.submission = submission


class Refused(Exception):
    """A submission the limits turn away; nothing was stored. `message` says what to do instead."""

    def __init__(self, why: Refusal, message: str):
        super().__init__(message)
        self.why, self.message = why, message


@dataclass(frozen=True)
class Submission:
    id: int
    user: str
    challenge: str
    filename: str
    source: str
    source_hash: str
    submitted_at: str
    late: bool
    state: State
    run_id: int | None
    finished_at: str | None
    claims: int = 0
    """How many times a grading slot has taken it (a retry after the grader failed on it counts again)."""
    upload_key: str | None = None
    """The key its client sent with the upload (unique per student), if any."""


def _submission(row: sqlite3.Row) -> Submission:
    return Submission(row["id"], row["user"], row["challenge"], row["filename"], row["source"], row["source_hash"],
                      row["submitted_at"], bool(row["late"]), State(row["state"]), row["run_id"], row["finished_at"],
                      row["claims"], row["upload_key"])


def _parse_time(text: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(text)


def admit(store: Store, user: str, size_bytes: int, limits: Limits, at: str | None = None) -> None:
    """Raise Refused if the student may not submit now: checked before anything reads the upload, so a
    student over a limit costs the server nothing more. `enqueue` checks again, atomically."""
    try:
        _check_limits(store.db, user, size_bytes, limits, at or now())
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not read the queue in {store.path}: {exc}") from exc


def _check_limits(db: sqlite3.Connection, user: str, size_bytes: int, limits: Limits, at: str) -> None:
    if size_bytes > limits.max_bytes:
        raise Refused(Refusal.TOO_LARGE, f"the file is {size_bytes:,} bytes; this class accepts at most "
                                         f"{limits.max_bytes:,}")
    pending = db.execute("SELECT COUNT(*) FROM submissions WHERE user = ? AND state != 'done'", (user,)).fetchone()[0]
    if pending >= limits.max_pending:
        raise Refused(Refusal.PENDING, f"you have {pending} submission(s) waiting or being graded, of any challenge "
                                       f"(at most {limits.max_pending} at a time): wait for a report, then submit again")
    hour_ago = (_parse_time(at) - datetime.timedelta(hours=1)).isoformat(timespec="seconds")
    recent = db.execute("SELECT COUNT(*) FROM submissions WHERE user = ? AND submitted_at > ?",
                        (user, hour_ago)).fetchone()[0]
    if recent >= limits.hourly_cap:
        raise Refused(Refusal.HOURLY, f"{recent} submissions in the last hour (at most {limits.hourly_cap}): "
                                      "try again later")


def enqueue(store: Store, user: str, challenge: str, filename: str, source: Source, size_bytes: int,
            limits: Limits, at: str | None = None, key: str | None = None) -> Submission:
    """Queue a submission, or raise Refused (nothing stored). `source` is the upload as
    grader.source.checked made it (text, and the hash of the bytes); `size_bytes` its size. The limits
    are checked in the transaction that inserts, so concurrent uploads cannot slip past them; so is the
    upload's `key`: one of this student's stored already raises Repeated (an earlier try of this upload,
    which was waiting for the same lock), and nothing more is stored."""
    at = at or now()
    try:
        with store.transaction() as db:
            earlier = _by_key(db, user, key)
            if earlier is not None:
                raise Repeated(earlier)
            _check_limits(db, user, size_bytes, limits, at)
            cursor = db.execute(
                "INSERT INTO submissions (user, challenge, filename, source, source_hash, submitted_at, late, state, "
                "upload_key) VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?)",
                (user, challenge, filename, source.text, source.sha256, at, int(_is_late(db, challenge, at)), key))
            return _submission(db.execute("SELECT * FROM submissions WHERE id = ?", (cursor.lastrowid,)).fetchone())
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not queue the submission in {store.path}: {exc}") from exc


def by_key(store: Store, user: str, key: str | None) -> Submission | None:
    """The submission `user` uploaded with `key`, if one is stored."""
    try:
        return _by_key(store.db, user, key)
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not read the queue in {store.path}: {exc}") from exc


def _by_key(db: sqlite3.Connection, user: str, key: str | None) -> Submission | None:
    if key is None:
        return None
    row = db.execute("SELECT * FROM submissions WHERE user = ? AND upload_key = ?", (user, key)).fetchone()
    return _submission(row) if row else None


def _is_late(db: sqlite3.Connection, challenge: str, at: str) -> bool:
    row = db.execute("SELECT due_at FROM deadlines WHERE challenge = ?", (challenge,)).fetchone()
    return row is not None and _parse_time(at) > _parse_time(row["due_at"])


def claim(store: Store) -> Submission | None:
    """The next job, round-robin between students, marked running; None when nothing queued may start.
    A student's job waits while another of theirs runs: with a slot per GPU, one student's submissions
    would otherwise fill every GPU at once."""
    with store.transaction() as db:
        row = db.execute(
            "SELECT s.* FROM submissions s LEFT JOIN "
            "(SELECT user, MAX(claim_seq) AS last FROM submissions WHERE claim_seq IS NOT NULL GROUP BY user) l "
            "ON l.user = s.user WHERE s.state = 'queued' "
            "AND s.user NOT IN (SELECT user FROM submissions WHERE state = 'running') "
            "ORDER BY l.last IS NOT NULL, l.last, s.id LIMIT 1").fetchone()
        if row is None:
            return None
        seq = db.execute("SELECT COALESCE(MAX(claim_seq), 0) + 1 FROM submissions").fetchone()[0]
        db.execute("UPDATE submissions SET state = 'running', claim_seq = ?, claims = claims + 1 WHERE id = ?",
                   (seq, row["id"]))
    return dataclasses.replace(_submission(row), state=State.RUNNING, claims=row["claims"] + 1)


def finish(submission_id: int, shown_text: str | None) -> Callable[[sqlite3.Connection, int], None]:
    """What keeping a queued submission's run also does, in the run's transaction (the store's `then`):
    mark the submission done, with its run and the report as the student sees it. A submission not
    running (graded by another worker, or before a restart) raises AlreadyGraded, and nothing is kept."""
    def mark_done(db: sqlite3.Connection, run_id: int) -> None:
        done = db.execute("UPDATE submissions SET state = 'done', run_id = ?, finished_at = ?, report_text = ? "
                          "WHERE id = ? AND state = 'running'", (run_id, now(), shown_text, submission_id)).rowcount
        if done != 1:
            raise AlreadyGraded(f"submission {submission_id} is not running (graded already, or never claimed)")
    return mark_done


def requeue(store: Store, submission_id: int) -> None:
    """Put one running job back (its grading failed for a reason not its own: no GPU, say)."""
    store.db.execute("UPDATE submissions SET state = 'queued' WHERE id = ? AND state = 'running'", (submission_id,))


def requeue_running(store: Store, keep: Collection[int] = ()) -> int:
    """Put back every job a stopped server left running (its run was never committed), but those in
    `keep` (the jobs a dispatcher that failed midway still has out or still has to keep); how many."""
    held = ", ".join(str(int(i)) for i in keep)
    return store.db.execute("UPDATE submissions SET state = 'queued' WHERE state = 'running'"
                            + (f" AND id NOT IN ({held})" if held else "")).rowcount


def get(store: Store, submission_id: int) -> Submission | None:
    row = store.db.execute("SELECT * FROM submissions WHERE id = ?", (submission_id,)).fetchone()
    return _submission(row) if row else None


def history(store: Store, user: str, limit: int = 200) -> list[Submission]:
    return [_submission(r) for r in store.db.execute(
        "SELECT * FROM submissions WHERE user = ? ORDER BY id DESC LIMIT ?", (user, limit))]


@dataclass(frozen=True)
class Standing:
    """A student's submissions of one challenge summed up, for their own pages: how many, the best graded
    one (ACCEPTED first, then the higher level, then the later), whether that one was late, and whether any
    is still waiting."""
    challenge: str
    attempts: int
    best_id: int | None = None
    best_verdict: str | None = None
    best_level: int | None = None
    best_late: bool = False
    waiting: bool = False


def standings(store: Store, user: str) -> dict[str, Standing]:
    """Each challenge the student has submitted to, by slug (one query; no report is read)."""
    rows = store.db.execute(
        "SELECT s.id, s.challenge, s.late, s.state, r.verdict, r.level FROM submissions s "
        "LEFT JOIN runs r ON r.id = s.run_id WHERE s.user = ? ORDER BY s.id", (user,)).fetchall()
    found: dict[str, Standing] = {}
    for sub_id, challenge, late, state, verdict, level in rows:
        was = found.get(challenge, Standing(challenge, 0))
        counted = dataclasses.replace(was, attempts=was.attempts + 1,
                                      waiting=was.waiting or state != State.DONE.value)
        if verdict is not None and _better((verdict, level), (was.best_verdict, was.best_level)):
            counted = dataclasses.replace(counted, best_id=sub_id, best_verdict=verdict, best_level=level,
                                          best_late=bool(late))
        found[challenge] = counted
    return found


def _better(new: tuple[str, int | None], old: tuple[str | None, int | None]) -> bool:
    """Later submissions win ties: the standing is the student's latest best."""
    def key(pair):
        verdict, level = pair
        return (verdict is not None, verdict == "ACCEPTED", level or 0)
    return key(new) >= key(old)


def of_challenge(store: Store, challenge: str) -> list[Submission]:
    """Every submission of `challenge`, whatever its state, oldest first (the similarity report reads them)."""
    return [_submission(r) for r in store.db.execute(
        "SELECT * FROM submissions WHERE challenge = ? ORDER BY id", (challenge,))]


def waiting_users(store: Store, challenge: str) -> set[str]:
    """The students with a submission of `challenge` queued or being graded: a board, which counts runs,
    does not know them yet."""
    return {user for (user,) in store.db.execute(
        "SELECT DISTINCT user FROM submissions WHERE challenge = ? AND state != ?", (challenge, State.DONE.value))}


def counts(store: Store) -> dict[State, int]:
    found = dict(store.db.execute("SELECT state, COUNT(*) FROM submissions GROUP BY state").fetchall())
    return {state: found.get(state.value, 0) for state in State}


def position(store: Store, submission_id: int) -> int | None:
    """How many jobs the queue will start before this one, if nothing else arrives (0: it is next);
    None when it is not queued. Exact for round-robin: a student whose turn comes before this one's
    gets one job more ahead of it than a student whose turn comes after. (A student's job held back while
    another of theirs runs may start later than this says.)"""
    rows = store.db.execute(
        "SELECT s.id, s.user, l.last FROM submissions s LEFT JOIN "
        "(SELECT user, MAX(claim_seq) AS last FROM submissions WHERE claim_seq IS NOT NULL GROUP BY user) l "
        "ON l.user = s.user WHERE s.state = 'queued' ORDER BY s.id").fetchall()
    queues: dict[str, list[int]] = {}
    last: dict[str, int] = {}
    for row in rows:
        queues.setdefault(row["user"], []).append(row["id"])
        last[row["user"]] = row["last"] if row["last"] is not None else -1
    owner = next((user for user, ids in queues.items() if submission_id in ids), None)
    if owner is None:
        return None
    k = queues[owner].index(submission_id)
    turn = (last[owner], queues[owner][0])
    ahead = k
    for user, ids in queues.items():
        if user != owner:
            ahead += min(len(ids), k + (1 if (last[user], ids[0]) < turn else 0))
    return ahead


# -- deadlines

def parse_due(text: str) -> datetime.datetime:
    """A deadline as an instructor writes it: ISO 8601, in this machine's zone when it names none."""
    try:
        due = datetime.datetime.fromisoformat(text)
    except ValueError as error:
        raise UsageError(f"{text!r} is not a date and time", hint="write it as 2026-12-01T23:59") from error
    return due if due.tzinfo else due.astimezone()


def set_deadline(store: Store, challenge: str, due_at: datetime.datetime | None) -> None:
    if due_at is None:
        store.db.execute("DELETE FROM deadlines WHERE challenge = ?", (challenge,))
        return
    text = due_at.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")
    store.db.execute("INSERT INTO deadlines (challenge, due_at) VALUES (?, ?) "
                     "ON CONFLICT(challenge) DO UPDATE SET due_at = excluded.due_at", (challenge, text))


def deadlines(store: Store) -> dict[str, str]:
    return {r["challenge"]: r["due_at"] for r in store.db.execute("SELECT * FROM deadlines ORDER BY challenge")}
