"""Process exit codes of the `grader` command. Documented in the README; scripts rely on them."""

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    """The command did what was asked; for `submit` and `run`, the submission was ACCEPTED."""
    REJECTED = 1
    """The submission was graded and not accepted (any verdict other than ACCEPTED)."""
    USAGE = 2
    """The command line was wrong: unknown option, missing file, unknown challenge."""
    BAD_CHALLENGE = 3
    """A challenge definition (challenge.yaml, reference.py) is invalid."""
    NO_BACKEND = 4
    """Nothing can run the submission here: no usable GPU, or nvcc is missing."""
    DATABASE = 5
    """The results database is missing, locked or damaged."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C."""
    INTERNAL = 70
    """A bug in the grader itself; the message asks for a report."""
