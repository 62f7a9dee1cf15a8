"""The seeds a class is graded with: one per graded submission, derived from the class's secret seed.

A submission sees its randomized shapes when it runs (they are its arguments), so whatever it does
afterwards (what it prints, a value it writes, how long it takes, which case it fails) can carry them
out, and no redaction of the report can stop that. Were the shapes the same for every submission, as
they were when each was graded with the class's seed itself, one submission that learned them would
let the next special-case them. So each graded submission draws its own: its seed is an HMAC-SHA256 of
the class's secret seed with what names the submission, reduced to the range `grader submit --seed`
takes. Nothing learned from one run describes another, the instructor reproduces any run from the seed
its row keeps (`grader submit FILE --seed S --challenge SLUG`), and the class's seed itself never
leaves the process that holds the database: grading processes get the derived seed only.

- The class server (`for_submission`): one seed per queued submission, so the same file sent twice
  is graded on two draws.
- `grader grade` (`for_source`): one seed per student and source, so a batch run again draws the same
  shapes for a file it already graded (and skips it, by its hash) and fresh ones for a changed file.
"""

from __future__ import annotations

import hashlib
import hmac

SEED_RANGE = 2**63
"""Seeds are drawn in [0, SEED_RANGE): what `grader submit --seed` accepts and SQLite's INTEGER holds."""


def _derived(class_seed: int, *parts: str) -> int:
    key = str(class_seed).encode()
    message = "\0".join(parts).encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    return int.from_bytes(digest[:8], "big") % SEED_RANGE


def for_submission(class_seed: int, submission_id: int) -> int:
    """The seed the class server grades queued submission `submission_id` with (the same on a retry)."""
    return _derived(class_seed, "class server submission", str(submission_id))


def for_source(class_seed: int, user: str, source_sha256: str) -> int:
    """The seed `grader grade` grades `user`'s source (by the SHA-256 of its bytes) with."""
    return _derived(class_seed, "batch submission", user, source_sha256)
