"""The class server's tables, its own migrations in the results database, and how it opens the store.

The core store (grader.store) knows runs, cases and timings; the roster (`people`), the submission queue
(`submissions`), the deadlines and the web pages' login sessions are the classroom's, created here under
migration names of its own.
Databases made before the split had these tables from the core's "0003_classroom", so the statements
create only what is missing. Every classroom module opens the database through `open_class`.
"""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path

from grader.errors import UsageError
from grader.store import Step, Store

MIGRATIONS: tuple[tuple[str, Step], ...] = (
    ("classroom_0001_roster_queue_deadlines", """
        CREATE TABLE IF NOT EXISTS people (
            name TEXT PRIMARY KEY,
            role TEXT NOT NULL,
            token_hash TEXT NOT NULL UNIQUE,
            added_at TEXT NOT NULL
        );
        CREATE TABLE IF NOT EXISTS submissions (
            id INTEGER PRIMARY KEY,
            user TEXT NOT NULL,
            challenge TEXT NOT NULL,
            filename TEXT NOT NULL,
            source TEXT NOT NULL,
            source_hash TEXT NOT NULL,
            submitted_at TEXT NOT NULL,
            late INTEGER NOT NULL,
            state TEXT NOT NULL,
            claim_seq INTEGER,
            claims INTEGER NOT NULL DEFAULT 0,
            run_id INTEGER REFERENCES runs(id),
            finished_at TEXT,
            report_text TEXT
        );
        CREATE INDEX IF NOT EXISTS submissions_by_state ON submissions (state, id);
        CREATE INDEX IF NOT EXISTS submissions_by_user ON submissions (user, challenge, state);
        CREATE TABLE IF NOT EXISTS deadlines (
            challenge TEXT PRIMARY KEY,
            due_at TEXT NOT NULL
        )
    """),
    # A token may expire (NULL: never). A browser's login is a session: a random id whose hash is kept
    # here, bound to the token it was made from (a replaced token ends its sessions) and ending at
    # `expires_at` or at logout, so the cookie never holds the token itself.
    ("classroom_0002_sessions", """
        ALTER TABLE people ADD COLUMN expires_at TEXT;
        CREATE TABLE sessions (
            id_hash TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            token_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL
        );
        CREATE INDEX sessions_by_expiry ON sessions (expires_at)
    """),
    # The key a client sends with an upload (grader.classroom.queue): a retried upload is the one stored
    # already, never a second submission. Unique per student; uploads without a key (web pages) have none.
    ("classroom_0003_upload_keys", """
        ALTER TABLE submissions ADD COLUMN upload_key TEXT;
        CREATE UNIQUE INDEX submissions_by_upload_key ON submissions (user, upload_key) WHERE upload_key IS NOT NULL
    """),
)


def open_class(path: Path, create: bool = True) -> Store:
    """The results database with the class server's tables (created when missing). With `create` false,
    a database that does not exist is an error (grader.store.Store.existing's), not a new empty class."""
    store = Store.open(path) if create else Store.existing(path)
    try:
        store.apply(MIGRATIONS)
    except BaseException:
        store.close()
        raise
    return store


@contextlib.contextmanager
def serving(path: Path):
    """Held while a class server serves the database at `path`: one server per database, since a second
    would claim the same queue and requeue the first's running jobs. Refused at once when held."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".serve-lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            raise UsageError(f"another `grader serve` is using {path}",
                             hint="stop it first, or serve another class with another --db") from error
        yield
