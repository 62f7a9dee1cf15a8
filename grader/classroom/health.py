"""Whether the class server can grade, as one shared, typed state: `/api/health`, the upload handler and
the submission answers read it; the parts that can stall report to it.

The dispatcher reports a failure of its loop (the database full or locked, the store failing, the served
file gone) and of its engine (no grading process can start). (A database file deleted or replaced is not a
stall that clears: every request is refused with 503 by `Server.store` until a restart.) Each part stalls and clears on its own, so one part's recovery never hides
another's fault. While any part is stalled the server says so (health 503) and takes no uploads: a queue
that no one drains would only make students wait for reports that never come.

What is shown to anyone is built from the cause (an enum), never from the error's own text, which may
name the server's files; that text goes to the server's log.
"""

from __future__ import annotations

import datetime
import enum
import errno
import sqlite3
import threading
from dataclasses import dataclass
from typing import Any

from grader.errors import GraderError
from grader.store import StoreError


class Part(enum.Enum):
    """What stalls."""

    DISPATCHER = "dispatcher"
    """Its loop: claiming, keeping and requeueing jobs in the database."""
    ENGINE = "engine"
    """The grading processes: a failure that would fail every job (no GPU, another grader version)."""
    DATABASE = "database"
    """The database file itself, for a check of the file that is not the dispatcher's (none reports it yet:
    a file gone is refused request by request, see the module's docstring)."""


class Cause(enum.Enum):
    DISK_FULL = "disk full"
    LOCKED = "database locked"
    DATABASE = "database failed"
    ENGINE = "grading processes failed"
    INTERNAL = "internal error"

    @property
    def said(self) -> str:
        """The cause in words anyone may read (the health answer, an upload's refusal, the client's line)."""
        return _SAID[self]


_SAID = {
    Cause.DISK_FULL: "the disk holding the class's database is full",
    Cause.LOCKED: "another process holds the class database's write lock",
    Cause.DATABASE: "the class database cannot be written",
    Cause.ENGINE: "the grading processes cannot grade",
    Cause.INTERNAL: "the grading loop failed (a bug: the server's log has it)",
}


def cause_of(error: BaseException) -> Cause:
    """Which cause an exception of the dispatcher's loop (or of a store call) is, read from SQLite's own
    error text ("database or disk is full", "database is locked"), which StoreError keeps in its message."""
    if isinstance(error, OSError) and error.errno == errno.ENOSPC:
        return Cause.DISK_FULL
    if isinstance(error, (sqlite3.Error, StoreError)):
        text = str(getattr(error, "message", error)).lower()
        if "full" in text:
            return Cause.DISK_FULL
        if "locked" in text or "busy" in text:
            return Cause.LOCKED
        return Cause.DATABASE
    if isinstance(error, GraderError):
        return Cause.ENGINE
    return Cause.INTERNAL


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


@dataclass(frozen=True)
class Stall:
    part: Part
    cause: Cause
    since: datetime.datetime
    """When this part stalled (UTC): a part whose cause changes is stalled since its first fault."""
    detail: str
    """The error's own text, for the server's log and the instructor; never sent to anyone."""

    def said(self) -> str:
        return f"{self.cause.said} (since {self.since.isoformat()})"

    def to_json(self) -> dict[str, Any]:
        return {"part": self.part.value, "cause": self.cause.value, "since": self.since.isoformat(),
                "said": self.cause.said}


@dataclass(frozen=True)
class State:
    """The server's grading at one moment: ok, or stalled by the parts in `stalls` (oldest first)."""

    stalls: tuple[Stall, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.stalls

    def said(self) -> str | None:
        """Why grading is stalled, in words anyone may read; None when it is not."""
        return "; ".join(stall.said() for stall in self.stalls) or None

    def to_json(self) -> dict[str, Any]:
        if self.ok:
            return {"grading": "ok"}
        return {"grading": "stalled", "stalled": [stall.to_json() for stall in self.stalls]}


class Health:
    """The shared state, safe to use from any thread: the dispatcher's thread writes it, the server's
    handler threads read it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._stalls: dict[Part, Stall] = {}

    def stall(self, part: Part, cause: Cause, detail: str) -> Stall | None:
        """`part` is stalled by `cause`; returns the stall it had already (None: it was fine until now), so
        the caller logs a new fault at length and a lasting one briefly."""
        with self._lock:
            before = self._stalls.get(part)
            since = before.since if before else _now()
            self._stalls[part] = Stall(part, cause, since, detail)
        return before

    def clear(self, part: Part) -> Stall | None:
        """`part` works again; returns the stall that ended (None: it had none)."""
        with self._lock:
            return self._stalls.pop(part, None)

    def state(self) -> State:
        with self._lock:
            return State(tuple(sorted(self._stalls.values(), key=lambda s: s.since)))
