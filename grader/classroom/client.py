"""`grader submit FILE --server URL`: upload to the class server, wait for the report, show it.

The server renders the report as the student may see it (a secret run's public view) and this prints
it as a local run would; the exit code is the one a local run of that verdict gives. Where the server
and the token come from: the command line, else GRADER_SERVER / GRADER_TOKEN, else the file
`grader login` wrote (readable by its owner only).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from grader.classroom.wire import SubmissionView
from grader.errors import GraderError, ServerError, UsageError

LOGIN_FILE = Path.home() / ".config" / "cuda-grader" / "login.json"
TIMEOUT_S = 30.0
POLL_S = (0.5, 2.0)
"""First and longest wait between two questions to the server while a submission is graded."""


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


class Client:
    def __init__(self, login: Login, transport: httpx.BaseTransport | None = None):
        self.login = login
        self.http = httpx.Client(base_url=login.server, timeout=TIMEOUT_S, transport=transport,
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
            return response.json()
        raise _refusal(response, self.login.server)

    def me(self) -> dict:
        return self._call("GET", "/api/me")

    def submit(self, filename: str, data: bytes, challenge: str | None) -> SubmissionView:
        fields = {"challenge": challenge} if challenge else {}
        answer = self._call("POST", "/api/submissions", files={"file": (filename, data, "text/plain")}, data=fields)
        return SubmissionView.from_json(answer, self.login.server)

    def status(self, submission_id: int) -> SubmissionView:
        return SubmissionView.from_json(self._call("GET", f"/api/submissions/{submission_id}"), self.login.server)

    def wait(self, submission_id: int, on_status=None, sleep=time.sleep) -> SubmissionView:
        """Ask until the submission is graded; `on_status` hears each answer (for the progress line)."""
        pause = POLL_S[0]
        while True:
            answer = self.status(submission_id)
            if on_status:
                on_status(answer)
            if answer.done:
                return answer
            sleep(pause)
            pause = min(pause * 1.5, POLL_S[1])


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
        return "queued: next" if ahead == 0 else f"queued: {ahead} job(s) ahead"
    return "grading" if answer.state == "running" else "graded"
