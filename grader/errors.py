"""Errors the grader reports to its user. Each says what went wrong and what to do next."""

from __future__ import annotations

import enum

from grader.exitcodes import ExitCode


class GraderError(Exception):
    """A failure the user can act on. `hint` says what to do; `exit_code` is the process status."""

    exit_code = ExitCode.INTERNAL

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __reduce__(self):
        """Pickled whole, whatever the subclass's constructor takes: a grading process (grader.engines)
        hands its errors back to the process that reports them."""
        return _restore, (type(self), self.args, self.__dict__)


def _restore(cls, args, state):
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class UsageError(GraderError):
    exit_code = ExitCode.USAGE


class SpecError(GraderError):
    """A challenge definition is wrong. The message names the file and the key."""

    exit_code = ExitCode.BAD_CHALLENGE

    def __init__(self, path, key: str | None, problem: str, hint: str | None = None):
        where = f"{path}: {key}" if key else f"{path}"
        super().__init__(f"{where}: {problem}", hint)
        self.path = path
        self.key = key


class BackendUnavailable(GraderError):
    exit_code = ExitCode.NO_BACKEND


class SandboxFailed(GraderError):
    """The sandbox did not start, so the tool inside never ran: the grader's failure, never the
    submission's (a batch records it as a grader failure and grades the file again next time)."""

    def __init__(self, detail: str):
        super().__init__(f"the sandbox could not start: {detail}",
                         hint="check that the folders given to the grader (--cache-dir, --db, the submission's) "
                              "exist and are writable, or run with --sandbox off for code you trust")


class ServerError(GraderError):
    """The class server could not be reached, failed, or answered with something of another form."""

    exit_code = ExitCode.SERVER


class Failure(enum.Enum):
    """Why a job came back without a report (never the student's doing, so never their verdict)."""

    BUG = "the grader failed"
    """The grader raised on this job: tried again (grader.classroom.dispatch.GRADER_ERROR_TRIES in all)."""
    LOST = "the grading was lost"
    """The process grading it died (a dead pool process, a Ray actor gone), or the sandboxed worker was killed
    from outside (grader.run.WorkerKilled): nothing about the submission; graded once more, then GRADER_ERROR."""
