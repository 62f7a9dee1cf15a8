"""The class server's shared state: its settings, who is asking (tokens), uploads, reports and boards,
each handler's database connection. The JSON API (grader.classroom.app) and the web pages
(grader.classroom.pages) both call a `Server`; neither imports the other's handlers.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request

from grader import exitcodes, leaderboard as boards, signature, source as sources
from grader.classroom import queue, roster
from grader.classroom.roster import Person, Role
from grader.classroom.schema import open_class
from grader.classroom.wire import SubmissionView
from grader.spec import Challenge
from grader.store import Store

COOKIE = "grader_token"
MULTIPART_OVERHEAD_BYTES = 16 * 1024
"""What a multipart upload adds to the file's own bytes (boundaries, headers, the challenge field)."""
FILENAME_CHARS = 100


@dataclass(frozen=True)
class Settings:
    db_path: Path
    challenges: dict[str, Challenge]
    limits: queue.Limits = queue.Limits()
    engine: str = "not started"
    """What grades, in words (the engine's `describe`), shown by /api/health and the start page."""


class ApiError(Exception):
    def __init__(self, status: int, message: str, hint: str | None = None):
        super().__init__(message)
        self.status, self.message, self.hint = status, message, hint


class Server:
    """What every handler shares: the settings and a database connection per thread."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.local = threading.local()
        self.boards: dict[str, tuple] = {}
        self.boards_lock = threading.Lock()

    def store(self) -> Store:
        store = getattr(self.local, "store", None)
        if store is None:
            store = self.local.store = open_class(self.settings.db_path)
        return store

    # -- who is asking
    def person(self, request: Request) -> Person | None:
        header = request.headers.get("authorization", "")
        token = header[7:].strip() if header.lower().startswith("bearer ") else request.cookies.get(COOKIE)
        return roster.authenticate(self.store(), token)

    def require(self, request: Request, role: Role | None = None) -> Person:
        who = self.person(request)
        if who is None:
            raise ApiError(401, "a valid token is needed", "log in with the token your instructor gave you "
                                                           "(grader login, or the web page's login)")
        if role is Role.INSTRUCTOR and who.role is not Role.INSTRUCTOR:
            raise ApiError(403, "this needs the instructor's token")
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
    async def upload(self, request: Request, who: Person) -> SubmissionView:
        """The multipart upload (`file`, optional `challenge`) checked and queued (as `describe` tells
        it), or an ApiError."""
        limits = self.settings.limits
        length = request.headers.get("content-length")
        if length is None or not length.isdigit():
            raise ApiError(411, "the upload needs a Content-Length")
        if int(length) > limits.max_bytes + MULTIPART_OVERHEAD_BYTES:
            raise ApiError(413, f"the upload is {int(length):,} bytes; this class accepts files of at most "
                                f"{limits.max_bytes:,} bytes", "submit the kernel source only")
        async with request.form(max_files=1, max_fields=4, max_part_size=4096) as form:
            upload = form.get("file")
            if upload is None or isinstance(upload, str):
                raise ApiError(400, "no file in the upload", "send the .cu file as the form field `file`")
            data = await upload.read(limits.max_bytes + 1)
            filename = _filename(upload.filename)
            slug = form.get("challenge") or None
        return await run_sync(self._queue, who, data, filename, slug)

    def _queue(self, who: Person, data: bytes, filename: str, slug) -> SubmissionView:
        """On a worker thread (`run_sync`): reading the text and its signature is CPU work, kept off the
        event loop; the student's limits come first, so a student over them costs no more than a query."""
        limits = self.settings.limits
        try:
            queue.admit(self.store(), who.name, len(data), limits)
        except queue.Refused as refused:
            raise _refusal(refused) from refused
        if not filename.endswith(".cu"):
            raise ApiError(400, f"{filename} is not a CUDA source file: the grader expects a name ending in .cu")
        try:
            text = sources.checked(data, filename)
        except sources.SourceError as error:
            raise ApiError(400, error.message, error.hint) from error
        challenge = self.challenge(slug) if slug else self._challenge_for(text)
        try:
            sub = queue.enqueue(self.store(), who.name, challenge.slug, filename, text, len(data), limits)
        except queue.Refused as refused:  # another upload of theirs was queued meanwhile
            raise _refusal(refused) from refused
        return self.describe(self.store(), sub)

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
            report_text, full)

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


def _refusal(refused: queue.Refused) -> ApiError:
    return ApiError(413 if refused.why is queue.Refusal.TOO_LARGE else 429, refused.message)


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
    if not text.isdigit() or len(text) > 18:
        raise ApiError(404, f"no submission {text!r}")
    return int(text)
