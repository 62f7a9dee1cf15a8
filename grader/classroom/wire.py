"""What the class server says about a submission, as one dataclass: the server builds it
(`Server.describe`), the JSON API sends `to_json()`, the pages render it, and the client
(`grader submit --server`) reads the answer back with `from_json`, refusing one that is not of this form
(a ServerError, as any other failure of the server's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from grader.errors import ServerError
from grader.verdict import Verdict

STATES = ("queued", "running", "done")
"""grader.classroom.queue.State's values: the client reads them without importing the queue."""
UPLOAD_KEY_HEADER = "Idempotency-Key"
"""The header an upload's key travels in: the client makes one per `grader submit` and sends it again with
each retry; the server answers a key it stored already with that submission (grader.classroom.queue)."""


@dataclass(frozen=True)
class SubmissionView:
    id: int
    user: str
    challenge: str
    filename: str
    state: str
    """One of STATES."""
    submitted_at: str
    finished_at: str | None
    late: bool
    position: int | None
    """Jobs the queue starts before this one (0: next), while it is queued."""
    verdict: Verdict | None
    level: int | None
    exit_code: int | None
    """What `grader submit --server` exits with: the verdict's exit code."""
    report: dict | None = None
    """The report as the student may see it (a secret run's public form), in the full view only."""
    report_text: str | None = None
    """That report rendered for a terminal (ANSI), in the full view only."""
    full: bool = False
    stalled: str | None = None
    """Why grading is stalled on the server (grader.classroom.health, in words), while this waits."""
    source: str | None = None
    """The source as submitted, in the full view only, for the submission's page (its lines numbered, the
    compiler's diagnostics linked to them). Not in `to_json`: the client has the file, and the page's
    script asks for this view every 1.5 s while it waits."""

    @property
    def done(self) -> bool:
        return self.state == "done"

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "user": self.user, "challenge": self.challenge, "filename": self.filename,
                "state": self.state, "submitted_at": self.submitted_at, "finished_at": self.finished_at,
                "late": self.late, "position": self.position,
                "verdict": self.verdict.name if self.verdict else None, "level": self.level,
                "exit_code": self.exit_code, "stalled": self.stalled}
        if self.full and self.verdict is not None:
            data["report"], data["report_text"] = self.report, self.report_text
        return data

    @classmethod
    def from_json(cls, data: Any, server: str = "the class server") -> "SubmissionView":
        try:
            state = data["state"]
            verdict = data["verdict"]
            view = cls(int(data["id"]), str(data["user"]), str(data["challenge"]), str(data["filename"]), str(state),
                       str(data["submitted_at"]), _optional(data["finished_at"], str), bool(data["late"]),
                       _optional(data["position"], int), Verdict[verdict] if verdict is not None else None,
                       _optional(data["level"], int), _optional(data["exit_code"], int),
                       data.get("report"), _optional(data.get("report_text"), str), "report" in data,
                       _optional(data.get("stalled"), str))
        except (KeyError, TypeError, ValueError) as error:
            raise ServerError(f"{server} answered with something that is not a submission ({error!r})",
                                 hint="is the address a grader class server of this version? (`grader --version`)") \
                from error
        if view.state not in STATES:
            raise ServerError(f"{server} answered with an unknown state {view.state!r}",
                                 hint="is the class server the same grader version as this one?")
        return view


def _optional(value: Any, kind):
    return None if value is None else kind(value)
