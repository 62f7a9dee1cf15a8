"""The roster: who may submit to the class server, and who may see the gradebook.

A person's token is 32 random bytes (urlsafe base64), shown once when the person is added and stored
only as its SHA-256: a token that random cannot be guessed from its hash, so a slow password hash
would only slow every request. Names are what the gradebook shows; they are checked on the way in
(printable, no separators), since the leaderboard, the CSV and the HTML page all carry them.

A token may have an expiry the instructor sets (`grader roster add|import --expires`, `roster expire`):
past it, the token is refused with a hint to ask the instructor, and so are the browser sessions made
with it (grader.classroom.sessions), which last no longer than their token.
"""

from __future__ import annotations

import csv
import datetime
import os
import enum
import hashlib
import hmac
import re
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.store import Store, StoreError, now

TOKEN_BYTES = 32
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
"""A login-like name: letters, digits and . _ @ - (no spaces, slashes or markup), at most 64 characters."""


class Role(enum.Enum):
    STUDENT = "student"
    INSTRUCTOR = "instructor"


@dataclass(frozen=True)
class Person:
    name: str
    role: Role
    added_at: str
    expires_at: str | None = None
    """When their token stops working (UTC, ISO 8601, as the store writes times); None: never."""

    def expired(self, at: str | None = None) -> bool:
        return self.expires_at is not None and _instant(self.expires_at) <= _instant(at or now())


class Standing(enum.Enum):
    VALID = "valid"
    UNKNOWN = "unknown"
    EXPIRED = "expired"


@dataclass(frozen=True)
class Checked:
    """What a token is: a person's valid token, no one's, or a person's that has expired (`person` is
    then whose it was, so the refusal can say when it expired)."""
    standing: Standing
    person: Person | None = None

    @property
    def valid(self) -> Person | None:
        return self.person if self.standing is Standing.VALID else None


@dataclass(frozen=True)
class Added:
    person: Person
    token: str
    """Shown once; the database keeps only its hash."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise UsageError(f"{name!r} cannot be a roster name",
                         hint="use 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit "
                              "(a login name or an e-mail address)")
    return name


def parse_expiry(text: str) -> datetime.datetime | None:
    """An expiry as an instructor writes it: `never` (None), `now`, or a date and time in ISO 8601 (this
    machine's zone when it names none, as a deadline)."""
    from grader.classroom.queue import parse_due

    word = text.strip().lower()
    if word == "never":
        return None
    if word == "now":
        return datetime.datetime.now(datetime.timezone.utc)
    try:
        return parse_due(text)
    except UsageError as error:
        raise UsageError(f"{text!r} is not an expiry", hint="write a date and time (2026-12-01T23:59), `now` or "
                                                            "`never`") from error


def _stamp(when: datetime.datetime | None) -> str | None:
    return None if when is None else when.astimezone(datetime.timezone.utc).isoformat(timespec="seconds")


def _instant(stamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(stamp)


def add(store: Store, name: str, role: Role = Role.STUDENT, expires: datetime.datetime | None = None) -> Added:
    """Add a person with a fresh token (expiring at `expires`, None: never); a name on the roster
    already is refused (`new_token` replaces a lost token)."""
    check_name(name)
    token, added_at = secrets.token_urlsafe(TOKEN_BYTES), now()
    try:
        with store.transaction() as db:
            if db.execute("SELECT 1 FROM people WHERE name = ?", (name,)).fetchone():
                raise UsageError(f"{name} is on the roster already",
                                 hint=f"`grader roster add {name} --new-token` gives them a new token (the old one "
                                      "stops working)")
            db.execute("INSERT INTO people (name, role, token_hash, added_at, expires_at) VALUES (?, ?, ?, ?, ?)",
                       (name, role.value, token_hash(token), added_at, _stamp(expires)))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not add {name} to the roster in {store.path}: {exc}") from exc
    return Added(Person(name, role, added_at, _stamp(expires)), token)


KEEP = object()
"""`new_token`'s expiry when none is given: the person's stays as it was."""


def new_token(store: Store, name: str, role: Role | None = None, expires=KEEP) -> Added:
    """A new token for a person on the roster, for one who lost theirs: the old one stops working (and
    every browser session made with it), and their role, the date they were added and their expiry
    (unless `expires` is given: a datetime, or None for never) stay. A name not on the roster is refused
    rather than added (a mistyped name would otherwise let a stranger in), and so is `role` where it is
    not theirs (a new token changes no one's role)."""
    check_name(name)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        with store.transaction() as db:
            row = db.execute("SELECT role, added_at, expires_at FROM people WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise UsageError(f"{name} is not on the roster: nothing changed",
                                 hint=f"`grader roster add {name}` (without --new-token) adds them")
            expires_at = row["expires_at"] if expires is KEEP else _stamp(expires)
            person = Person(name, Role(row["role"]), row["added_at"], expires_at)
            if role is not None and role is not person.role:
                raise UsageError(f"{name} is on the roster as {person.role.value}, not {role.value}: nothing changed",
                                 hint="--new-token replaces a token and keeps the role; drop --instructor")
            db.execute("UPDATE people SET token_hash = ?, expires_at = ? WHERE name = ?",
                       (token_hash(token), expires_at, name))
            db.execute("DELETE FROM sessions WHERE name = ?", (name,))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not give {name} a new token in {store.path}: {exc}") from exc
    return Added(person, token)


def set_expiry(store: Store, name: str, expires: datetime.datetime | None) -> Person:
    """Give `name`'s token an expiry (None: never); their token and role stay. An expiry in the past
    stops the token, and the sessions made with it, at once."""
    check_name(name)
    try:
        with store.transaction() as db:
            changed = db.execute("UPDATE people SET expires_at = ? WHERE name = ?", (_stamp(expires), name)).rowcount
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not change {name}'s expiry in {store.path}: {exc}") from exc
    if not changed:
        raise UsageError(f"{name} is not on the roster: nothing changed", hint="`grader roster list` shows who is")
    return next(p for p in people(store) if p.name == name)


def check(store: Store, token: str | None, at: str | None = None) -> Checked:
    """What `token` is (at time `at`, default now). The lookup is by hash, so the time it takes says
    nothing of how much of a token was right; the final compare is constant-time anyway."""
    if not token or len(token) > 256:
        return Checked(Standing.UNKNOWN)
    digest = token_hash(token)
    row = store.db.execute("SELECT name, role, token_hash, added_at, expires_at FROM people WHERE token_hash = ?",
                           (digest,)).fetchone()
    if row is None or not hmac.compare_digest(row["token_hash"], digest):
        return Checked(Standing.UNKNOWN)
    person = _person(row)
    return Checked(Standing.EXPIRED if person.expired(at) else Standing.VALID, person)


def authenticate(store: Store, token: str | None) -> Person | None:
    """The person whose valid token this is, or None (no one's, or expired: `check` says which)."""
    return check(store, token).valid


def _person(row) -> Person:
    return Person(row["name"], Role(row["role"]), row["added_at"], row["expires_at"])


def people(store: Store, role: Role | None = None) -> list[Person]:
    sql, args = "SELECT name, role, added_at, expires_at FROM people", ()
    if role is not None:
        sql, args = sql + " WHERE role = ?", (role.value,)
    return [_person(r) for r in store.db.execute(sql + " ORDER BY name", args)]


def students(store: Store) -> list[str]:
    return [p.name for p in people(store, Role.STUDENT)]


def read_csv(path: Path) -> list[str]:
    """The names in a roster CSV: a column named `name` (or `user`, `login`, `email`), else the first
    column; blank rows skipped. Every name is checked before any is added."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", hint="pass a UTF-8 CSV file with one student per row") from exc
    rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]
    if not rows:
        raise UsageError(f"{path} has no names", hint="one student per row; a header row `name` is optional")
    header = [cell.strip().lower() for cell in rows[0]]
    column = next((header.index(key) for key in ("name", "user", "login", "email") if key in header), None)
    body = rows[1:] if column is not None else rows
    names = [row[column or 0].strip() for row in body if len(row) > (column or 0) and row[column or 0].strip()]
    for number, name in enumerate(names, 2 if column is not None else 1):
        if not NAME.fullmatch(name):
            raise UsageError(f"{path}: row {number}: {name!r} cannot be a roster name",
                             hint="use 1-64 letters, digits, '.', '_', '@' or '-'; nothing was added")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UsageError(f"{path}: {', '.join(duplicates[:5])} listed twice", hint="nothing was added; remove the repeats")
    return names


@dataclass(frozen=True)
class Imported:
    added: tuple[Added, ...]
    kept: tuple[str, ...]
    """Names on the roster already: their tokens are unchanged."""

    def tokens_csv(self) -> str:
        return "".join(f"{a.person.name},{a.token}\n" for a in self.added)


def add_all(store: Store, names: list[str], expires: datetime.datetime | None = None) -> Imported:
    """Add every name not on the roster yet (as a student, each with a fresh token expiring at
    `expires`); keep the others as they are (their tokens and expiries)."""
    known = {p.name for p in people(store)}
    added = tuple(add(store, name, expires=expires) for name in names if name not in known)
    return Imported(added, tuple(name for name in names if name in known))


def write_tokens(path: Path, imported: Imported) -> None:
    """Write name,token lines to `path`, readable by its owner only (replacing what was there)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT: make it private too
    with os.fdopen(fd, "w") as f:
        f.write("name,token\n" + imported.tokens_csv())
