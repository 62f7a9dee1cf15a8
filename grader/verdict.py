"""Verdicts: what the grader concludes about a submission, and how verdicts combine."""

from __future__ import annotations

import enum


class Verdict(enum.Enum):
    """The outcome of grading one case, or a whole submission.

    Ordered by how early in the pipeline they are decided; a submission's verdict is the first
    non-ACCEPTED verdict among its stages and cases.
    """

    ACCEPTED = "accepted"
    COMPILE_ERROR = "compile error"
    INTERFACE_ERROR = "interface error"
    RUNTIME_ERROR = "runtime error"
    TIMEOUT = "timeout"
    MEMORY_LIMIT = "memory limit"
    OUT_OF_BOUNDS = "out of bounds"
    INPUT_MODIFIED = "input modified"
    WRONG_ANSWER = "wrong answer"
    RACE = "race"
    IMPOSSIBLE_TIMING = "impossible timing"
    UNSUPPORTED = "unsupported"
    SKIPPED = "skipped"
    GRADER_ERROR = "grader error"
    """The grader failed on this submission (a bug of its own): not a judgement of the code. Never counted
    as a student's attempt or shown as their standing; the batch and the class server grade it again."""

    @property
    def passed(self) -> bool:
        return self is Verdict.ACCEPTED

    @property
    def failed(self) -> bool:
        """Neither passed nor skipped: a verdict a run's outcome and message come from."""
        return self not in (Verdict.ACCEPTED, Verdict.SKIPPED)

    @property
    def judges(self) -> bool:
        """A verdict about the submission itself; GRADER_ERROR is about the grader."""
        return self is not Verdict.GRADER_ERROR

    @property
    def label(self) -> str:
        return self.name


HELP = {
    Verdict.ACCEPTED: "every case matched the FP64 reference: within the tolerance, or exactly where the check is exact",
    Verdict.COMPILE_ERROR: "nvcc rejected the file; fix the first error shown",
    Verdict.INTERFACE_ERROR: "the library does not export the `solve` the challenge calls",
    Verdict.RUNTIME_ERROR: "the submission crashed or a CUDA call failed",
    Verdict.TIMEOUT: "a case, or the whole job, ran past its time limit and was stopped",
    Verdict.MEMORY_LIMIT: "the submission's process used more host memory than its bound and was stopped",
    Verdict.OUT_OF_BOUNDS: "the submission wrote outside the buffers it was given",
    Verdict.INPUT_MODIFIED: "the submission changed an input buffer, which is read-only",
    Verdict.WRONG_ANSWER: "the output differs from the FP64 reference: beyond the tolerance, or at all where the check is exact",
    Verdict.RACE: ("the output depends on the order threads run in: a data race (a missing __syncthreads(), or "
                   "threads writing the same element)"),
    Verdict.UNSUPPORTED: "the CPU emulator cannot run this file; grade it on a GPU",
    Verdict.IMPOSSIBLE_TIMING: "the reported time cannot be true: faster than the hardware allows, or not what the grader's own clock saw",
    Verdict.SKIPPED: "not run because an earlier stage failed",
    Verdict.GRADER_ERROR: "the grader failed on this file, not the file: it will be graded again",
}


def overall(verdicts: list[Verdict]) -> Verdict:
    """The first verdict that is neither ACCEPTED nor SKIPPED, else ACCEPTED."""
    return next((verdict for verdict in verdicts if verdict.failed), Verdict.ACCEPTED)
