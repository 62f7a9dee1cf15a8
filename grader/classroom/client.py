"""`grader submit FILE --server URL`: upload to the class server, wait for the report, show it.

The server renders the report as the student may see it (a secret run's public view) and this prints
it as a local run would; the exit code is the one a local run of that verdict gives. Where the server
and the token come from: the command line, else GRADER_SERVER / GRADER_TOKEN, else the file
`grader login` wrote (readable by its owner only).

Once an upload is stored, nothing makes this say it failed. Each upload carries a random key
(UPLOAD_KEY_HEADER); an upload whose answer did not come (a timeout, a dropped connection) or that the
server could not take right now (502, 503, 504) is sent again with the same key until UPLOAD_DEADLINE_S
(a server that cannot be reached at the first try is reported at once: nothing was sent to it),
and the server answers a key it stored already with that submission, never a second one. Waiting for the
report has a deadline too (`--wait-timeout`); past it, the message says the submission is stored, its id
and where to see it (exit 7), and an unanswered question meanwhile is asked again, not reported as a
failure.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit
from typing import Callable

import httpx

from grader.classroom.wire import UPLOAD_KEY_HEADER, SubmissionView
from grader.errors import GraderError, ServerError, UsageError
from grader.exitcodes import ExitCode

LOGIN_FILE = Path.home() / ".config" / "cuda-grader" / "login.json"
TIMEOUT_S = 30.0
"""How long one request may take before the client gives up on its answer."""
POLL_S = (0.5, 2.0)
"""First and longest wait between two questions to the server while a submission is graded."""
UPLOAD_DEADLINE_S = 180.0
"""How long an upload is tried for: longer than a server's database waits for a lock (60 s) twice over
and a request's timeout, so the last try finds out whether an earlier one was stored."""
RETRY_S = (1.0, 10.0)
"""First and longest wait between two tries of an upload."""
RETRIED_STATUSES = (502, 503, 504)
"""Answers that mean "not now" (the server, or a proxy in front of it): the upload is tried again."""


@dataclass(frozen=True)
class Retry:
    """An upload about to be tried again, for the line the command prints."""

    attempt: int
    """The try that failed (1: the first)."""
    why: str
    wait_s: float
    """How long until the next try."""
    maybe_stored: bool
    """No answer came to a try that reached the server: it may have been stored (the next try tells)."""


class NotGradedYet(GraderError):
    """The submission is stored, and no report came within the wait's deadline: not a failure of the
    upload (exit 7, never 6, so that a script does not submit it again)."""

    exit_code = ExitCode.PENDING

    def __init__(self, message: str, hint: str, submission: int, url: str):
        super().__init__(message, hint)
        self.details = {"submission": submission, "state": "stored", "url": url}


@dataclass(frozen=True)
class Login:
    server: str
    token: str


def server_url(text: str) -> str:
    """A class server's address as given (flag, environment, login file), checked: http or https, a host,
    nothing after it but a path. Anything else is bad usage (exit 2), not a server that failed."""
    try:
        parts = urlsplit(text.strip())
        parts.port  # noqa: B018  (a port that is no number raises here)
    except ValueError:
        parts = None
    if parts is None or parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise UsageError(f"{text!r} is not a class server's URL",
                         hint="write it as http://HOST:PORT or https://HOST, the address your instructor gave you "
                              "(e.g. --server http://gpu-box:8000)")
    return text.strip().rstrip("/")


def resolve(server: str | None, token: str | None, login_file: Path = LOGIN_FILE) -> Login:
    """The server and token to use: flags (click fills them from the environment too), else the login file."""
    saved = _saved(login_file)
    server = server or (saved.server if saved else None)
    token = token or (saved.token if saved else None)
    if not server:
        raise UsageError("no class server given", hint="pass --server URL, set GRADER_SERVER, or run `grader login`")
    if not token:
        raise UsageError(f"no token for {server}", hint="pass --token TOKEN, set GRADER_TOKEN, or run `grader login`")
    return Login(server_url(server), token)


def _saved(path: Path) -> Login | None:
    try:
        data = json.loads(path.read_text())
        return Login(str(data["server"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save(login: Login, path: Path = LOGIN_FILE) -> None:
    """Write the login file, owner-only, replacing any earlier one atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump({"server": login.server, "token": login.token}, f)
    os.replace(temporary, path)


def new_key() -> str:
    """An upload's key: random, one per `grader submit`."""
    return str(uuid.uuid4())


class Client:
    def __init__(self, login: Login, transport: httpx.BaseTransport | None = None, timeout_s: float = TIMEOUT_S,
                 upload_deadline_s: float = UPLOAD_DEADLINE_S, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        self.login = login
        self.upload_deadline_s, self.sleep, self.clock = upload_deadline_s, sleep, clock
        self.http = httpx.Client(base_url=login.server, timeout=timeout_s, transport=transport,
                                 headers={"Authorization": f"Bearer {login.token}"})

    def close(self) -> None:
        self.http.close()

    def _call(self, method: str, path: str, **kwargs) -> dict | list:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as error:
            raise ServerError(f"cannot reach the class server at {self.login.server}: {error}",
                              hint="check the URL (grader login), your network, and that the server runs") from error
        if response.status_code < 400:
            return _body(response, self.login.server)
        raise _refusal(response, self.login.server)

    def me(self) -> dict:
        return self._call("GET", "/api/me")

    def submit(self, filename: str, data: bytes, challenge: str | None, key: str | None = None,
               on_retry: Callable[[Retry], None] | None = None) -> SubmissionView:
        """Upload the file and return the submission stored (the server's answer). Tried again with the same
        `key` (a new one when None) while the server answers "not now" (502, 503, 504) or a try may have
        been stored without an answer (a timeout, a dropped connection; then a connection refused too, the
        server restarting), until `upload_deadline_s`; `on_retry` hears each retry. A refusal that trying
        again cannot change (a limit, a bad token, a file it will not take) is raised at once, and so is a
        server that cannot be reached when no try ever reached it: nothing was stored, nothing to find out."""
        key = key or new_key()
        fields = {"challenge": challenge} if challenge else {}
        deadline = self.clock() + self.upload_deadline_s
        pause, attempt, maybe_stored = RETRY_S[0], 0, False
        while True:
            attempt += 1
            try:
                response = self.http.post("/api/submissions", files={"file": (filename, data, "text/plain")},
                                          data=fields, headers={UPLOAD_KEY_HEADER: key})
            except httpx.TransportError as error:  # timeouts included
                sent = not isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
                if not (sent or maybe_stored):  # nothing ever reached the server: nothing to find out by waiting
                    raise ServerError(f"cannot reach the class server at {self.login.server}: {error}; nothing "
                                      "was stored", hint="check the URL (grader login), your network, and that "
                                                         "the server runs") from error
                why, maybe_stored = _no_answer(error), True
            else:
                if response.status_code < 400:
                    return SubmissionView.from_json(_body(response, self.login.server), self.login.server)
                if response.status_code not in RETRIED_STATUSES:
                    raise _refusal(response, self.login.server)
                why = _refusal(response, self.login.server).message
                maybe_stored = maybe_stored or response.status_code != 503  # a proxy's 502/504: it may have gone on
            if self.clock() + pause > deadline:
                raise self._not_taken(why, maybe_stored)
            if on_retry:
                on_retry(Retry(attempt, why, pause, maybe_stored))
            self.sleep(pause)
            pause = min(pause * 2, RETRY_S[1])

    def _not_taken(self, why: str, maybe_stored: bool) -> ServerError:
        tried = f"for {self.upload_deadline_s:.0f} s"
        if maybe_stored:
            return ServerError(f"the class server at {self.login.server} did not confirm the upload {tried} "
                               f"({why}); it may have been stored",
                               hint=f"look at your submissions ({self.login.server}/me) before you submit again")
        return ServerError(f"the class server at {self.login.server} did not take the upload {tried} ({why}); "
                           "nothing was stored", hint="try again later; if it lasts, tell your instructor")

    def status(self, submission_id: int) -> SubmissionView:
        return SubmissionView.from_json(self._call("GET", f"/api/submissions/{submission_id}"), self.login.server)

    def wait(self, submission_id: int, deadline_s: float, on_status: Callable[[str], None] | None = None
             ) -> SubmissionView:
        """Ask until the submission is graded, at most `deadline_s`; `on_status` hears a line for each answer
        (where it is in the queue, whether grading is stalled, or that the server did not answer: a question
        that fails for now is asked again). Past the deadline, NotGradedYet: the submission is stored."""
        deadline = self.clock() + deadline_s
        pause, answer = POLL_S[0], None
        while True:
            try:
                answer = self.status(submission_id)
                line = describe_status(answer)
            except ServerError as error:  # unreachable, a failure, a "not now": the submission is stored still
                line = f"no answer from the class server ({error.message}); asking again"
            if on_status:
                on_status(line)
            if answer is not None and answer.done:
                return answer
            if self.clock() + pause > deadline:
                raise self._still_waiting(submission_id, deadline_s, answer)
            self.sleep(pause)
            pause = min(pause * 1.5, POLL_S[1])

    def _still_waiting(self, submission_id: int, deadline_s: float, last: SubmissionView | None) -> NotGradedYet:
        page = f"{self.login.server}/submissions/{submission_id}"
        stalled = f"; grading is stalled on the server: {last.stalled}" if last is not None and last.stalled else ""
        return NotGradedYet(
            f"submission {submission_id} is stored on the class server and will be graded, but no report came "
            f"within {_duration(deadline_s)}{stalled}",
            f"see its report later at {page} (log in with your token there), or ask "
            f"{self.login.server}/api/submissions/{submission_id} with your token; do not submit it again",
            submission_id, page)


def _body(response: httpx.Response, server: str):
    try:
        return response.json()
    except ValueError as error:
        raise ServerError(f"{server} answered with something that is not JSON ({response.text[:100]!r})",
                          hint="is the address a grader class server? (`grader --version`)") from error


def _no_answer(error: httpx.TransportError) -> str:
    if isinstance(error, httpx.TimeoutException):
        return "no answer in time"
    if isinstance(error, httpx.ConnectError):
        return f"cannot connect ({error})"
    return f"the connection failed ({error})"


def _duration(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 120 else f"{seconds:g} s"


def _refusal(response: httpx.Response, server: str) -> GraderError:
    try:
        body = response.json()
        message, hint = str(body.get("error")), body.get("hint")
    except ValueError:
        message, hint = response.text[:300], None
    if response.status_code == 401:
        return UsageError(f"the class server at {server} refused the token: {message}",
                          hint=hint or "check the token your instructor gave you; `grader login` saves it")
    if response.status_code in (429, 503) or response.status_code >= 500:
        return ServerError(f"the class server said: {message}", hint=hint or "try again in a moment")
    return UsageError(f"the class server refused the submission: {message}", hint=hint)


def describe_status(answer: SubmissionView) -> str:
    """One line for the progress display."""
    if answer.state == "queued":
        ahead = answer.position
        line = "queued: next" if ahead == 0 else f"queued: {ahead} job(s) ahead"
    else:
        line = "grading" if answer.state == "running" else "graded"
    return f"{line} (grading is stalled on the server: {answer.stalled})" if answer.stalled else line
