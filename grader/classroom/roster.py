"""The roster: who may submit to the class server, and who may see the gradebook.

A person's token is 32 random bytes (urlsafe base64), shown once when the person is added and stored
only as its SHA-256: a token that random cannot be guessed from its hash, so a slow password hash
would only slow every request. Names are what the gradebook shows; they are checked on the way in
(printable, no separators), since the leaderboard, the CSV and the HTML page all carry them.
"""

from __future__ import annotations

import csv
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


def add(store: Store, name: str, role: Role = Role.STUDENT) -> Added:
    """Add a person with a fresh token; a name on the roster already is refused (`new_token` replaces
    a lost token)."""
    check_name(name)
    token, added_at = secrets.token_urlsafe(TOKEN_BYTES), now()
    try:
        with store.transaction() as db:
            if db.execute("SELECT 1 FROM people WHERE name = ?", (name,)).fetchone():
                raise UsageError(f"{name} is on the roster already",
                                 hint=f"`grader roster add {name} --new-token` gives them a new token (the old one "
                                      "stops working)")
            db.execute("INSERT INTO people (name, role, token_hash, added_at) VALUES (?, ?, ?, ?)",
                       (name, role.value, token_hash(token), added_at))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not add {name} to the roster in {store.path}: {exc}") from exc
    return Added(Person(name, role, added_at), token)


def new_token(store: Store, name: str, role: Role | None = None) -> Added:
    """A new token for a person on the roster, for one who lost theirs: the old one stops working, and
    their role and the date they were added stay. A name not on the roster is refused rather than
    added (a mistyped name would otherwise let a stranger in), and so is `role` where it is not theirs
    (a new token changes no one's role)."""
    check_name(name)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    try:
        with store.transaction() as db:
            row = db.execute("SELECT role, added_at FROM people WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise UsageError(f"{name} is not on the roster: nothing changed",
                                 hint=f"`grader roster add {name}` (without --new-token) adds them")
            person = Person(name, Role(row["role"]), row["added_at"])
            if role is not None and role is not person.role:
                raise UsageError(f"{name} is on the roster as {person.role.value}, not {role.value}: nothing changed",
                                 hint="--new-token replaces a token and keeps the role; drop --instructor")
            db.execute("UPDATE people SET token_hash = ? WHERE name = ?", (token_hash(token), name))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not give {name} a new token in {store.path}: {exc}") from exc
    return Added(person, token)


def authenticate(store: Store, token: str | None) -> Person | None:
    """The person whose token this is, or None. The lookup is by hash, so the time it takes says nothing
    of how much of a token was right; the final compare is constant-time anyway."""
    if not token or len(token) > 256:
        return None
    digest = token_hash(token)
    row = store.db.execute("SELECT name, role, token_hash, added_at FROM people WHERE token_hash = ?",
                           (digest,)).fetchone()
    if row is None or not hmac.compare_digest(row["token_hash"], digest):
        return None
    return Person(row["name"], Role(row["role"]), row["added_at"])


def people(store: Store, role: Role | None = None) -> list[Person]:
    sql, args = "SELECT name, role, added_at FROM people", ()
    if role is not None:
        sql, args = sql + " WHERE role = ?", (role.value,)
    return [Person(r["name"], Role(r["role"]), r["added_at"]) for r in store.db.execute(sql + " ORDER BY name", args)]


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


def add_all(store: Store, names: list[str]) -> Imported:
    """Add every name not on the roster yet (as a student, each with a fresh token); keep the others."""
    known = {p.name for p in people(store)}
    added = tuple(add(store, name) for name in names if name not in known)
    return Imported(added, tuple(name for name in names if name in known))


def write_tokens(path: Path, imported: Imported) -> None:
    """Write name,token lines to `path`, readable by its owner only (replacing what was there)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode through O_CREAT: make it private too
    with os.fdopen(fd, "w") as f:
        f.write("name,token\n" + imported.tokens_csv())
