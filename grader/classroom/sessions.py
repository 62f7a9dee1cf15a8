"""Browser sessions: what the login page's cookie holds instead of the token.

A roster token is permanent until the instructor replaces it or lets it expire, and a cookie travels
further than its page: cookies are not port-specific, so any other web server on the same host (a
classmate's, on a shared GPU box) receives them. Logging in therefore exchanges the token for a session:
32 random bytes, of which the database keeps only the SHA-256 (as with tokens: that random, a slow hash
would only slow every request). A session belongs to the token it was made from (a replaced token ends
its sessions), ends at its own expiry (`LIFETIME_S` unless `grader serve --session-hours` says
otherwise) or at its token's, whichever is first, and logging out deletes it on the server, so a copied
cookie is worth nothing once its owner logs out.

The cookie is HttpOnly, SameSite=Strict, Path=/, with a Max-Age equal to the session's lifetime; over
HTTPS it is also Secure and named with the `__Host-` prefix (browsers then refuse it from an insecure
origin or with a Domain). The server knows it is served over HTTPS from its `--public-url` (behind a
TLS proxy, the only way the grader is served over HTTPS), or from the request's own scheme.
"""

from __future__ import annotations

import datetime
import enum
import hashlib
import hmac
import secrets
import sqlite3
from dataclasses import dataclass

from grader.classroom import roster
from grader.classroom.roster import Person, Role
from grader.store import Store, StoreError, now

SESSION_BYTES = 32
LIFETIME_S = 12 * 3600
"""A working day: a student who logs in in the morning is not asked again before the evening."""
COOKIE = "grader_session"
SECURE_COOKIE = "__Host-grader_session"
"""The name over HTTPS: the `__Host-` prefix makes the browser insist on Secure, Path=/ and no Domain."""


class Ended(enum.Enum):
    """Why a session cookie no longer logs anyone in."""
    UNKNOWN = "unknown"
    """No such session: logged out, never made, or its token was replaced."""
    EXPIRED = "expired"
    TOKEN_EXPIRED = "token expired"


@dataclass(frozen=True)
class Found:
    """A session cookie's owner, or why it has none."""
    person: Person | None
    ended: Ended | None = None
    token_expired_at: str | None = None
    """With Ended.TOKEN_EXPIRED: when the token it was made with expired."""


@dataclass(frozen=True)
class Started:
    session_id: str
    """Goes into the cookie; the database keeps only its hash."""
    max_age_s: int
    """Until the session ends: its lifetime, or less where the token expires sooner."""


def cookie_name(secure: bool) -> str:
    return SECURE_COOKIE if secure else COOKIE


def _hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "surrogateescape")).hexdigest()


def _later(seconds: int) -> str:
    at = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds)
    return at.isoformat(timespec="seconds")


def start(store: Store, person: Person, token: str, lifetime_s: int = LIFETIME_S) -> Started:
    """A new session for `person`, who logged in with `token` (checked by the caller): it ends after
    `lifetime_s` or when the token expires, whichever is first. Sessions already ended are swept out
    here, so the table holds only live ones and those not yet swept."""
    session_id, created = secrets.token_urlsafe(SESSION_BYTES), now()
    ends = _later(lifetime_s)
    if person.expires_at is not None and person.expires_at < ends:
        ends = person.expires_at
    left = int((datetime.datetime.fromisoformat(ends) - datetime.datetime.fromisoformat(created)).total_seconds())
    try:
        with store.transaction() as db:
            db.execute("DELETE FROM sessions WHERE expires_at <= ?", (created,))
            db.execute("INSERT INTO sessions (id_hash, name, token_hash, created_at, expires_at) "
                       "VALUES (?, ?, ?, ?, ?)", (_hash(session_id), person.name, roster.token_hash(token), created, ends))
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"could not start a session in {store.path}: {exc}") from exc
    return Started(session_id, max(left, 0))


def find(store: Store, session_id: str | None, at: str | None = None) -> Found:
    """Whose session this is (at `at`, default now), or why it is no one's."""
    if not session_id or len(session_id) > 256:
        return Found(None, Ended.UNKNOWN)
    digest = _hash(session_id)
    row = store.db.execute(
        "SELECT s.id_hash, s.expires_at AS ends, p.name, p.role, p.added_at, p.expires_at FROM sessions s "
        "JOIN people p ON p.name = s.name AND p.token_hash = s.token_hash WHERE s.id_hash = ?", (digest,)).fetchone()
    if row is None or not hmac.compare_digest(row["id_hash"], digest):
        return Found(None, Ended.UNKNOWN)
    at = at or now()
    person = Person(row["name"], Role(row["role"]), row["added_at"], row["expires_at"])
    if datetime.datetime.fromisoformat(row["ends"]) <= datetime.datetime.fromisoformat(at):
        return Found(None, Ended.EXPIRED)
    if person.expired(at):
        return Found(None, Ended.TOKEN_EXPIRED, person.expires_at)
    return Found(person)


def end(store: Store, session_id: str | None) -> None:
    """Log out: the session is deleted, so its cookie, wherever a copy went, logs no one in."""
    if session_id and len(session_id) <= 256:
        try:
            with store.transaction() as db:
                db.execute("DELETE FROM sessions WHERE id_hash = ?", (_hash(session_id),))
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"could not end a session in {store.path}: {exc}") from exc
