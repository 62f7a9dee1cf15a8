"""The class server's shared state: its settings, who is asking (tokens), uploads, reports and boards,
each handler's database connection. The JSON API (grader.classroom.app) and the web pages
(grader.classroom.pages) both call a `Server`; neither imports the other's handlers.
"""

from __future__ import annotations

import enum
import hashlib
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from starlette.requests import Request

from grader import exitcodes, leaderboard as boards, signature, source as sources
from grader.classroom import queue, roster, sessions
from grader.classroom.guard import Credential
from grader.classroom.health import Health, cause_of
from grader.classroom.roster import Person, Role
from grader.classroom.schema import DatabaseGone, ServedDatabase, open_served
from grader.classroom.wire import UPLOAD_KEY_HEADER, SubmissionView
from grader.gradebook import DEFAULT_RULE, ScoreRule
from grader.spec import Challenge
from grader.store import Store, StoreError

log = logging.getLogger("grader.serve")

COOKIE = sessions.COOKIE
MULTIPART_OVERHEAD_BYTES = 16 * 1024
"""What a multipart upload adds to the file's own bytes (boundaries, headers, the challenge field)."""
FILENAME_CHARS = 100
PASTED_NAME = "pasted.cu"
"""The file name a submission pasted into a web form is kept under."""
DIGITS = re.compile(r"[0-9]{1,18}")
"""A number a client sends (an id, a length): ASCII digits only (str.isdigit also takes '²', which int refuses)."""
UPLOAD_KEY = re.compile(r"[A-Za-z0-9._:-]{8,100}")
CANNOT_STORE_HINT = ("try again in a few minutes (`grader submit` retries by itself for a while); "
                     "if it lasts, tell your instructor")
GONE = "the class database went away while the server was running: it accepts no work until it is restarted"
"""What a request is told once the served database was deleted or replaced (grader.classroom.schema.ServedDatabase)."""


@dataclass(frozen=True)
class Settings:
    db_path: Path
    challenges: dict[str, Challenge]
    limits: queue.Limits = queue.Limits()
    engine: str = "not started"
    """What grades, in words (the engine's `describe`), shown by /api/health and the start page."""
    public_origin: str | None = None
    """The origin students open (`grader serve --public-url`, e.g. https://class.example.edu behind a
    TLS proxy): the only origin a cookie-authenticated change may come from, and with https, the
    session cookie is Secure and `__Host-`. None: the origin each request addresses (its scheme and
    Host)."""
    session_s: int = sessions.LIFETIME_S
    """How long a browser's login lasts (grader.classroom.sessions)."""

    database: ServedDatabase | None = None
    """The database as the serve command opened and checked it at its start (grader.classroom.schema.start);
    None: made ready when the app is made (an in-process app)."""
    score_rule: ScoreRule = DEFAULT_RULE
    """How the gradebook's LMS file scores each student (`grader serve --score-rule`, grader.gradebook)."""


def public_origin(url: str) -> str:
    """`--public-url` as an origin (scheme://host[:port], lower case), or a UsageError saying what one looks like."""
    from grader.errors import UsageError

    try:
        parts = urlsplit(url.strip())
        parts.port  # noqa: B018  (a port that is no number, or out of range, raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username or parts.password:
        raise UsageError(f"{url!r} is not a public URL for the class server",
                         hint="give the address students open, scheme and host only: https://class.example.edu "
                              "(or http://HOST:PORT without a TLS proxy)")
    return f"{parts.scheme}://{parts.netloc.lower()}"


class Denied(enum.Enum):
    """Why a request is no one's."""
    NO_CREDENTIALS = "no credentials"
    UNKNOWN_TOKEN = "unknown token"
    EXPIRED_TOKEN = "expired token"
    SESSION_ENDED = "session ended"


@dataclass(frozen=True)
class Caller:
    """Who is asking, from the bearer token or the session cookie, or why no one is."""
    person: Person | None
    denied: Denied | None = None
    expired_at: str | None = None
    """With Denied.EXPIRED_TOKEN: when the token expired."""

    def refusal(self) -> "ApiError":
        if self.denied is Denied.EXPIRED_TOKEN:
            return ApiError(401, f"this token expired on {self.expired_at[:16].replace('T', ' ')} UTC",
                            "ask your instructor to extend it or to give you a new one")
        if self.denied is Denied.SESSION_ENDED:
            return ApiError(401, "your login has ended (you logged out, or it expired)",
                            "log in again with your token on the login page")
        if self.denied is Denied.UNKNOWN_TOKEN:
            return ApiError(401, "this server does not know this token",
                            "check the token your instructor gave you (grader login saves it)")
        return ApiError(401, "a valid token is needed", "log in with the token your instructor gave you "
                                                        "(grader login, or the web page's login)")


class ApiError(Exception):
    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint


def cannot_store(error: BaseException) -> ApiError:
    """An upload the database failed to store (full, locked past the busy timeout, failing): 503, in words
    built from its cause (the error's own text names the server's files; the server's log has it)."""
    return ApiError(503, f"the server cannot store work right now ({cause_of(error).said}); nothing was taken",
                    CANNOT_STORE_HINT)


class Server:
    """What every handler shares: the settings, the grading's health (grader.classroom.health, which the
    dispatcher reports to) and a database connection per thread."""

    def __init__(self, settings: Settings, health: Health | None = None):
        self.settings = settings
        self.health = health or Health()
        self.database = settings.database or open_served(settings.db_path)
        self.local = threading.local()
        self.boards: dict[str, tuple] = {}
        self.boards_lock = threading.Lock()

    def store(self) -> Store:
        """This thread's connection, once the database is seen to be the file the server opened at its
        start: every handler's work begins here, so a database deleted or replaced while serving is
        refused (503, the JSON API and the pages alike) before anything is read or written, and no new
        file is ever made at its path."""
        try:
            self.database.check()
            store = getattr(self.local, "store", None)
            if store is None:
                store = self.local.store = self.database.connect()
        except DatabaseGone as gone:  # the path and what to do are the instructor's: in the server's log
            raise ApiError(503, GONE, "the instructor has been told in the server's log; try again later") from gone
        return store

    # -- who is asking
    def origin(self, request: Request) -> str:
        """This server's own origin, as a browser names it in Origin."""
        return self.settings.public_origin or f"{request.url.scheme}://{request.url.netloc}".lower()

    def secure(self, request: Request) -> bool:
        """Served over HTTPS: the session cookie is then Secure and `__Host-`."""
        return self.origin(request).startswith("https://")

    def cookie_name(self, request: Request) -> str:
        return sessions.cookie_name(self.secure(request))

    def credential(self, request: Request) -> Credential:
        if bearer(request) is not None:
            return Credential.BEARER
        return Credential.COOKIE if self.cookie_name(request) in request.cookies else Credential.NONE

    def caller(self, request: Request) -> Caller:
        """Who is asking: the `Authorization: Bearer` token (the client), else the session cookie (the
        browser)."""
        token = bearer(request)
        if token is not None:
            checked = roster.check(self.store(), token)
            if checked.standing is roster.Standing.EXPIRED:
                return Caller(None, Denied.EXPIRED_TOKEN, checked.person.expires_at)
            return Caller(checked.valid, None if checked.valid else Denied.UNKNOWN_TOKEN)
        session_id = request.cookies.get(self.cookie_name(request))
        if session_id is None:
            return Caller(None, Denied.NO_CREDENTIALS)
        found = sessions.find(self.store(), session_id)
        if found.ended is sessions.Ended.TOKEN_EXPIRED:
            return Caller(None, Denied.EXPIRED_TOKEN, found.token_expired_at)
        return Caller(found.person, None if found.person else Denied.SESSION_ENDED)

    def person(self, request: Request) -> Person | None:
        return self.caller(request).person

    def require(self, request: Request, role: Role | None = None) -> Person:
        caller = self.caller(request)
        who = caller.person
        if who is None:
            raise caller.refusal()
        if role is Role.INSTRUCTOR and who.role is not Role.INSTRUCTOR:
            raise ApiError(403, "this needs the instructor's token")
        return who

    def instructor(self, request: Request, refusal: str, hint: str) -> Person | None:
        """Who asks for one of the instructor's pages: the instructor, or None for no one logged in (the page
        sends them to log in); anyone else is refused (403) with `refusal` and `hint`."""
        who = self.person(request)
        if who is not None and who.role is not Role.INSTRUCTOR:
            raise ApiError(403, refusal, hint)
        return who

    def challenge_list(self) -> list[dict]:
        """The challenges served, as the API and the pages list them (with their deadlines)."""
        deadlines = queue.deadlines(self.store())
        return [{"slug": c.slug, "title": c.title, "signature": f'extern "C" {c.prototype()}',
                 "deadline": deadlines.get(c.slug)} for c in self.settings.challenges.values()]

    def challenge(self, slug: str) -> Challenge:
        found = self.settings.challenges.get(slug)
        if found is None:
            raise ApiError(404, f"no challenge {slug!r} on this server",
                           "one of: " + ", ".join(sorted(self.settings.challenges)))
        return found

    # -- submitting
    async def upload(self, request: Request, who: Person) -> tuple[SubmissionView, bool]:
        """The multipart upload (`file`, optional `challenge`, and the client's key in UPLOAD_KEY_HEADER)
        checked and queued (as `describe` tells it, and True), or an ApiError; an upload whose key was
        stored already is that submission (and False)."""
        limits = self.settings.limits
        key = _upload_key(request.headers.get(UPLOAD_KEY_HEADER))
        length = request.headers.get("content-length")
        if length is None or not DIGITS.fullmatch(length):
            raise ApiError(411, "the upload needs a Content-Length")
        if int(length) > limits.max_bytes + MULTIPART_OVERHEAD_BYTES:
            raise ApiError(413, f"the upload is {int(length):,} bytes; this class accepts files of at most "
                                f"{limits.max_bytes:,} bytes", "submit the kernel source only")
        most = limits.max_bytes + MULTIPART_OVERHEAD_BYTES  # the pasted source is a field
        async with request.form(max_files=1, max_fields=4, max_part_size=most) as form:
            upload, pasted = form.get("file"), form.get("source")
            sent = upload if upload is not None and not isinstance(upload, str) and upload.filename else None
            data = await sent.read(limits.max_bytes + 1) if sent is not None else b""
            text = pasted if isinstance(pasted, str) and pasted.strip() else None
            if data and text is not None:
                raise ApiError(400, "the upload holds a file and pasted source: which one is to be graded?",
                               "send one of them: clear the text box, or choose no file")
            if text is not None:
                data, filename = text.replace("\r\n", "\n").encode("utf-8"), PASTED_NAME
            elif sent is not None:
                filename = _filename(sent.filename)
            else:
                raise _nothing_sent(upload, pasted)
            if not data:
                raise ApiError(400, f"{filename} is empty: there is nothing to grade",
                               "choose the .cu file that holds your kernel")
            slug = form.get("challenge") or None
        return await run_sync(self._queue, who, data, filename, slug, key)

    def _queue(self, who: Person, data: bytes, filename: str, slug, key: str | None) -> tuple[SubmissionView, bool]:
        """On a worker thread (`run_sync`): reading the text and its signature is CPU work, kept off the
        event loop. An upload stored already under its key comes first (a retry is told of it, stalled
        or not); then a stall refuses the upload; then the student's limits, so a student over them costs
        no more than a query."""
        limits = self.settings.limits
        store = self.store()
        earlier = self._earlier(store, who, key, data)
        if earlier is not None:
            return self._repeated(store, earlier)
        self._refuse_if_stalled()
        try:
            queue.admit(store, who.name, len(data), limits)
        except queue.Refused as refused:
            raise _refusal(refused) from refused
        except StoreError as error:
            raise cannot_store(error) from error
        if not filename.endswith(".cu"):
            raise ApiError(400, f"{filename} is not a CUDA source file: the grader expects a name ending in .cu")
        try:
            text = sources.checked(data, filename)
        except sources.SourceError as error:
            raise ApiError(400, error.message, error.hint) from error
        challenge = self.challenge(slug) if slug else self._challenge_for(text)
        try:
            sub = queue.enqueue(store, who.name, challenge.slug, filename, text, len(data), limits, key=key)
        except queue.Refused as refused:  # another upload of theirs was queued meanwhile
            raise _refusal(refused) from refused
        except queue.Repeated as repeated:  # an earlier try of this upload, stored while this one waited
            return self._repeated(store, repeated.submission)
        except StoreError as error:
            raise cannot_store(error) from error
        return self.describe(store, sub), True

    def _repeated(self, store: Store, earlier: queue.Submission) -> tuple[SubmissionView, bool]:
        log.info("%s sent submission %d's upload again (its answer was lost to them): told of that one",
                 earlier.user, earlier.id)
        return self.describe(store, earlier), False

    def _earlier(self, store: Store, who: Person, key: str | None, data: bytes) -> queue.Submission | None:
        """The submission stored already under this upload's key, if any; a key used for another file is
        the client's mistake (409), never a second submission."""
        try:
            earlier = queue.by_key(store, who.name, key)
        except StoreError as error:
            raise cannot_store(error) from error
        if earlier is not None and earlier.source_hash != hashlib.sha256(data).hexdigest():
            raise ApiError(409, f"this upload's key was used for another file (submission {earlier.id})",
                           "each `grader submit` sends a key of its own: run it again")
        return earlier

    def _refuse_if_stalled(self) -> None:
        """While grading is stalled no upload is taken: it would wait in a queue that no one drains."""
        stalled = self.health.state().said()
        if stalled is not None:
            raise ApiError(503, f"the server cannot take work right now: grading is stalled ({stalled}); "
                                "nothing was taken", CANNOT_STORE_HINT)

    def _challenge_for(self, text: sources.Source) -> Challenge:
        choice = signature.choose(text.text, list(self.settings.challenges.values()))
        if choice.challenge:
            return self.settings.challenges[choice.challenge]
        options = choice.matches or tuple(self.settings.challenges)
        raise ApiError(400, f"{text.display_path}: {choice.why}",
                       "choose the challenge: " + ", ".join(options))

    # -- reading
    def submission(self, who: Person, submission_id: int) -> SubmissionView:
        store = self.store()
        sub = queue.get(store, submission_id)
        if sub is None or (sub.user != who.name and who.role is not Role.INSTRUCTOR):
            raise ApiError(404, f"no submission {submission_id} of yours")
        return self.describe(store, sub, full=True)

    def describe(self, store: Store, sub: queue.Submission, full: bool = False) -> SubmissionView:
        run = store.run(sub.run_id) if sub.run_id else None
        verdict = run.verdict if run else None
        report = report_text = None
        if full and run:
            report = boards.shown_report(run)
            report_text = store.db.execute("SELECT report_text FROM submissions WHERE id = ?", (sub.id,)).fetchone()[0]
        return SubmissionView(
            sub.id, sub.user, sub.challenge, sub.filename, sub.state.value, sub.submitted_at, sub.finished_at,
            sub.late, queue.position(store, sub.id) if sub.state is queue.State.QUEUED else None, verdict,
            run.level if run else None, int(exitcodes.for_verdict(verdict)) if verdict else None, report,
            report_text, full, None if sub.state is queue.State.DONE else self.health.state().said(),
            sub.source if full else None)

    def board(self, slug: str, public: bool = False) -> boards.Board | boards.PublicBoard:
        """The board (grader.leaderboard.board), made again only when a run or the roster changed: a class
        polling the live page would otherwise have every report parsed many times a second. `public`: what
        anyone may see of it (Board.public: the ranked students' rank, name, level and times); the rest, the
        gradebook, is the instructor's."""
        challenge = self.challenge(slug)
        store = self.store()
        key = (slug, *store.db.execute("SELECT MAX(id), COUNT(*) FROM runs").fetchone(),
               *store.db.execute("SELECT COUNT(*), MAX(added_at) FROM people").fetchone())
        with self.boards_lock:
            cached = self.boards.get(slug)
        if cached is None or cached[0] != key:
            cached = (key, boards.board(store, challenge, on_roster=roster.students(store)))
            with self.boards_lock:
                self.boards[slug] = cached
        board = cached[1]
        return board.public() if public else board


def _nothing_sent(upload, pasted) -> ApiError:
    """An upload with neither a file nor source: the web forms send an empty file field or an empty text box;
    a client that sends neither field is told the fields' names."""
    if upload is None and pasted is None:
        return ApiError(400, "no file in the upload",
                        "send the .cu file as the form field `file` (or its text as `source`)")
    return ApiError(400, "the upload is empty: no file was chosen and no source was pasted",
                    "choose your .cu file, or paste its source into the text box, then submit again")


def _refusal(refused: queue.Refused) -> ApiError:
    return ApiError(413 if refused.why is queue.Refusal.TOO_LARGE else 429, refused.message)


def _upload_key(text: str | None) -> str | None:
    if text is None:
        return None
    if not UPLOAD_KEY.fullmatch(text):
        raise ApiError(400, f"the {UPLOAD_KEY_HEADER} header must be 8 to 100 letters, digits or ._:-",
                       "send a random UUID, one per upload")
    return text


def _filename(name: str | None) -> str:
    """The uploaded file's own name, without any folder, printable, capped: it is shown back to people."""
    base = (name or "submission.cu").replace("\\", "/").rsplit("/", 1)[-1]
    kept = "".join(ch for ch in base if ch.isprintable() and ch not in "<>\"'`")[:FILENAME_CHARS]
    return kept or "submission.cu"


async def run_sync(function, *args):
    from starlette.concurrency import run_in_threadpool
    return await run_in_threadpool(function, *args)


def submission_id(text: str) -> int:
    """A submission's id from its address; anything else is an id no one has (404)."""
    if not DIGITS.fullmatch(text):
        raise ApiError(404, f"no submission {text!r}")
    return int(text)


def bearer(request: Request) -> str | None:
    """The token of an `Authorization: Bearer` header, or None where there is none (the browser's way is
    the session cookie)."""
    header = request.headers.get("authorization", "")
    return header[7:].strip() if header.lower().startswith("bearer ") else None
