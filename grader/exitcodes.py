"""Process exit codes of the `grader` command. Documented in the README; scripts rely on them."""

import enum

from grader.verdict import Verdict


class ExitCode(enum.IntEnum):
    OK = 0
    """The command did what was asked; for `submit` and `run`, the submission was ACCEPTED."""
    REJECTED = 1
    """The submission was graded and not accepted (any verdict but ACCEPTED and UNSUPPORTED)."""
    USAGE = 2
    """The command line was wrong: unknown option, missing file, unknown challenge, a port already in use
    (`serve`), a file in a batch whose challenge its signature does not tell (`grade`: pass --challenge).
    Also what a class server refuses for good, so that trying again cannot help: a bad token, or a file
    it will not take (too large, HTTP 413; not CUDA source)."""
    BAD_CHALLENGE = 3
    """A challenge definition (challenge.yaml, reference.py) is invalid."""
    NO_BACKEND = 4
    """Nothing can run the submission here: no usable GPU, nvcc is missing, or the CPU emulator cannot
    run this file (UNSUPPORTED). Each means: grade it where there is a GPU and the CUDA toolkit."""
    DATABASE = 5
    """The results database is missing, locked or damaged."""
    SERVER = 6
    """`grader submit --server`: the class server cannot be reached, failed, or turned the submission
    away for now (HTTP 429: a submission of yours still waiting, the hourly cap): try again later."""
    PENDING = 7
    """`grader submit --server`: the submission is stored and will be graded, but its report did not come
    within --wait-timeout; the message gives its id and where to see it. Not a failure of the upload:
    submitting it again would only grade it twice."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C."""
    INTERNAL = 70
    """A bug in the grader itself; the message asks for a report."""


def for_verdict(verdict: Verdict) -> ExitCode:
    """The status of a graded run. UNSUPPORTED is not a judgement of the submission (the emulator
    could not run it), so it shares 4 with "no GPU" rather than 1: a script retries it on a GPU."""
    if verdict is Verdict.ACCEPTED:
        return ExitCode.OK
    if verdict is Verdict.UNSUPPORTED:
        return ExitCode.NO_BACKEND
    if verdict is Verdict.GRADER_ERROR:
        return ExitCode.INTERNAL
    return ExitCode.REJECTED
