"""The class server's tables, its own migrations in the results database, and how it opens the store.

The core store (grader.store) knows runs, cases and timings; the roster (`people`), the submission queue
(`submissions`), the deadlines and the web pages' login sessions are the classroom's, created here under
migration names of its own.
Databases made before the split had these tables from the core's "0003_classroom", so the statements
create only what is missing. Every classroom module opens the database through `open_class`, or, in a
running server, through its `ServedDatabase`.

A class server opens its database once, at its start (`start`: created only if there never was one,
checked, migrated, tried for writing), then watches it (`ServedDatabase`): its request threads and its
dispatcher connect without creating or migrating, and a file deleted or replaced under the running
server stops it accepting work instead of a new empty class being made or served.
"""

from __future__ import annotations

import contextlib
import datetime
import enum
import fcntl
import logging
import os
import sqlite3
import threading
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from grader.errors import UsageError
from grader.store import Step, Store, StoreError, busy_timeout_s, explain, restore

log = logging.getLogger("grader.serve")

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


@dataclass(frozen=True)
class FileId:
    """Which file a path names: its device and inode. A file deleted, or replaced by another (a restore,
    an empty one made by someone else), has another one, or none."""

    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> "FileId | None":
        try:
            found = os.stat(path)
        except FileNotFoundError:
            return None
        return cls(found.st_dev, found.st_ino)

    def text(self) -> str:
        return f"{self.device}:{self.inode}"

    @classmethod
    def parse(cls, text: str) -> "FileId | None":
        device, _, inode = text.strip().partition(":")
        return cls(int(device), int(inode)) if device.isdigit() and inode.isdigit() else None


class Gone(enum.Enum):
    """What happened to a served database's file (ServedDatabase.gone)."""

    DELETED = "was deleted"
    REPLACED = "was replaced by another file"


class DatabaseGone(StoreError):
    """The database a class server opened at its start is no longer the file at its path."""


class ServedDatabase:
    """The database a class server serves: the file it opened at its start, and whether the file at the
    path is still that one (a stat, microseconds: checked before every request's work and by the
    dispatcher before it claims or keeps). Once gone, always gone until a restart: a file put back or
    made later is not trusted while running, since what the server wrote meanwhile went to the old one."""

    def __init__(self, path: Path, opened: FileId):
        self.path, self.opened = path, opened
        self._gone: Gone | None = None
        self._lock = threading.Lock()

    @classmethod
    def at(cls, path: Path) -> "ServedDatabase":
        """The database at `path` as it is now (it must exist)."""
        found = FileId.of(path)
        if found is None:
            raise StoreError(f"no class database at {path}", hint="start the server with --db naming it")
        return cls(path, found)

    def gone(self) -> Gone | None:
        """What happened to the file (said once in the server's log, with what to do), or None while it is
        the one opened at the start."""
        if self._gone is None:
            now = FileId.of(self.path)
            if now != self.opened:
                with self._lock:
                    if self._gone is None:
                        self._gone = Gone.DELETED if now is None else Gone.REPLACED
                        error = self._error()
                        log.error("%s; %s", error.message, error.hint)
        return self._gone

    def check(self) -> None:
        """DatabaseGone if the file went away or was replaced since the server opened it."""
        if self.gone() is not None:
            raise self._error()

    def _error(self) -> DatabaseGone:
        return DatabaseGone(
            f"the class database {self.path} {self._gone.value} while this server was serving it: the server accepts no "
            "more work", hint=f"a deleted file this server still holds open can be copied from /proc/{os.getpid()}/fd "
            f"(ls -l there shows it); stop the server, put the database back ({restore(self.path)}) and start it again")

    def connect(self) -> Store:
        """A connection to the served database: never creating a file, never migrating (done at the
        start); refused once the file is gone, and checked again once open, so a file swapped in between
        the look and the open is not served."""
        self.check()
        try:
            store = Store.existing(self.path, migrate=False)
        except StoreError:
            self.check()  # gone meanwhile: said as such
            raise
        try:
            self.check()
        except BaseException:
            store.close()
            raise
        return store


def open_served(path: Path) -> ServedDatabase:
    """The database at `path` made ready and watched, for a server made in this process without the
    serve command's start (the tests' in-process apps): created and migrated as `open_class` does."""
    open_class(path).close()
    return ServedDatabase.at(path)


@dataclass(frozen=True)
class Started:
    """A class server's database at its start (`start`)."""

    database: ServedDatabase
    created: bool
    """A new, empty class database was made (no file at the path, or one without tables, where no server had
    served one)."""


def start(path: Path, lock: "ServeLock") -> Started:
    """Open a class server's database at its start, or StoreError (exit 5) saying why not:
    - no file at `path`: a new class database is made, unless this server's lock file says it served one
      there (then it was deleted or moved: refused, never silently replaced by an empty class);
    - a file with no tables (made by someone else, or emptied) where a served one was: refused too;
    - damaged pages (`PRAGMA quick_check`), a read-only file, folder or file system, or a lock another
      process holds past the busy timeout (grader.store.busy_timeout_s): refused, with what to do.
    The file's identity is recorded in the lock file for the next start."""
    served = lock.last_served()
    found = FileId.of(path)
    fresh = found is None or _empty(path)
    if not fresh:
        with Store.existing(path, migrate=False) as checked:
            checked.check()
    if fresh and served is not None:
        what = "is missing" if found is None else "has none of the class's tables (an empty or new file)"
        raise StoreError(f"the class database {path} {what}, but a class server served one there (file "
                         f"{served.text()}, recorded in {lock.path})",
                         hint=f"restore it ({restore(path)}) and start again; to start "
                              f"a new, empty class there on purpose, delete {lock.path} first")
    with open_class(path) as store:
        store.check_writable()
    database = ServedDatabase.at(path)
    lock.record(database.opened)
    return Started(database, fresh)


def _empty(path: Path) -> bool:
    """No tables at all (a zero-length file, or a database someone else made), read without writing a byte:
    a file refused is left as it was found."""
    if path.stat().st_size == 0:
        return True
    try:
        with contextlib.closing(sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True,
                                                timeout=busy_timeout_s())) as db:
            return db.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'").fetchone()[0] == 0
    except sqlite3.DatabaseError as error:
        raise explain(error, path) from error


@dataclass
class ServeLock:
    """The lock file beside a served database (PATH.serve-lock): held while a server serves, it also
    records which file was served, so the next start knows a missing database from one that never was."""

    path: Path
    file: IO[str]

    def last_served(self) -> FileId | None:
        self.file.seek(0)
        for line in self.file.read().splitlines():
            if line.startswith("served "):
                return FileId.parse(line.split()[1])
        return None

    def record(self, served: FileId) -> None:
        self.file.seek(0)
        self.file.truncate()
        stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        self.file.write(f"served {served.text()} {stamp}\n")
        self.file.flush()


@contextlib.contextmanager
def serving(path: Path):
    """Held while a class server serves the database at `path`: one server per database, since a second
    would claim the same queue and requeue the first's running jobs. Refused at once when held. Yields
    the ServeLock (what the last server served there)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = path.with_name(path.name + ".serve-lock")
    with open(lock_path, "a+") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            raise UsageError(f"another `grader serve` is using {path}",
                             hint="stop it first, or serve another class with another --db") from error
        yield ServeLock(lock_path, lock)
