"""How alike the class's submissions of one challenge are: the report an instructor reads after a deadline
(issue 23), from the CLI (`grader similarity`) or the class server's instructor pages.

Fingerprinting is copydetect's (the winnowing of Schleimer, Wilkerson and Aiken's MOSS paper, as
`copydetect.CodeFingerprint` and `copydetect.compare_files` do it), fed text from the database rather than
files. Before fingerprinting, pygments' C++ lexer (LANGUAGE) turns every identifier into one letter and drops comments
and whitespace, so renaming variables, rewriting comments and reformatting change nothing; a k-gram is
NOISE_CHARS characters of that filtered text, and every k-gram is kept (a window of 1, copydetect's own
default), so the result does not depend on Python's per-process string hashing.

A pair's shares are copydetect's similarities: of each side's fingerprinted text (boilerplate left out), the
part that also occurs in the other. The pair's score is the larger share, because a student who copies a
solution and adds code of their own dilutes their own share, not the share of the solution they copied.
A pair is flagged when its score reaches the threshold AND the two sides share at least MIN_SHARED_CHARS
characters of filtered text: after the boilerplate is gone, a short submission can be "80 % shared" on
the strength of one line.

Boilerplate (what every student is given or may look at) is removed from every fingerprint: the challenge's
starter and its ladder's reference levels (`boilerplate_files`). Its k-grams are taken out of each
fingerprint here, from copydetect's hash set and index: copydetect 0.5.0's own `boilerplate=` argument
calls numpy's intersect1d with assume_unique=True on a list with repeats, which drops every earlier copy of
a k-gram a file repeats (its marks and its count), boilerplate or not.

The default threshold was measured (`python3 bench/similarity_calibration.py`, 2026-11-26; output in
bench/results/2026-11-26-issue23-similarity/; nothing in it is random):

- honest pairs, i.e. solutions of one problem written apart: each challenge's reference levels against each
  other, and the corpus files (tests/submissions/**, challenges/*/wrong/*.cu) against each other and
  against the levels of the challenge their signature names; boilerplate, the starter and the levels not
  in the pair. Of 1,025 such pairs, 164 are one file edited into the other (a wrong/ file is often a level
  with its bug planted; difflib finds half their code lines alike): left out. The other 861 score at most
  0.73 (99th percentile 0.65, median 0); 3 reach 0.7, each a file grown from the other (a tiled matmul and
  the same with dynamic shared memory; a level and a copy of it with a bug planted);
- planted near-copies: each of those files with its identifiers renamed, its comments replaced, its
  indentation and blank lines changed and every third pair of adjacent statements swapped, against the
  original. Of the 109 with at least MIN_SHARED_CHARS of their own (19 more have less, being a level with
  a line or two changed or much like another level: a copy of those cannot be told from the starter and
  the levels), the least alike scores 0.57, the median 0.97; 106 are flagged, the three missed being small
  ones that share under 100 characters with their copy (66, 75 and 76).

So DEFAULT_THRESHOLD is 0.7: it flags 3 of the 861 honest pairs (0.35 %) and 106 of the 109 copies (97 %).
What it finds is likeness, not proof: see docs/similarity.md.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

from grader.spec import Challenge

LANGUAGE = "cpp"
"""pygments' lexer, chosen by name (a submission's file name may say nothing): C++, which reads CUDA's
qualifiers and built-ins (`__global__`, `threadIdx`) as identifiers like any other. pygments' CUDA lexer
(its C lexer plus CUDA's words, kept as they are) was measured too: the most alike honest pair rose from
0.73 to 0.77 and five honest pairs instead of three reached 0.7, for the same planted copies caught."""
NOISE_CHARS = 25
"""copydetect's default noise threshold: the length of a k-gram, in characters of filtered text."""
WINDOW = 1
"""Every k-gram is a fingerprint (copydetect's default guarantee threshold equals its noise threshold)."""
DEFAULT_THRESHOLD = 0.7
"""Measured (the module docstring): 3 of 861 honest pairs reach it, 106 of 109 planted copies do."""
MIN_SHARED_CHARS = 100
"""A pair sharing less filtered text than this (three or four lines of code) is never flagged, whatever its
shares: two students who both write vector_add's usual two-line kernel into its starter share 60 characters
at 92 % (tests/test_similarity.py), and so do most of a class on a problem that small."""


@dataclass(frozen=True)
class Entry:
    """One submission as the report compares it."""

    user: str
    submission_id: int
    filename: str
    source: str

    @classmethod
    def of(cls, submission) -> "Entry":
        """From a stored submission (grader.classroom.queue.Submission: user, id, filename, source)."""
        return cls(submission.user, submission.id, submission.filename, submission.source)


@dataclass(frozen=True)
class Pair:
    """Two submissions of two students. `regions_a`/`regions_b`: the shared parts of each side's text as
    sorted, disjoint [start, end) character ranges."""

    a: Entry
    b: Entry
    score: float
    a_share: float
    b_share: float
    regions_a: tuple[tuple[int, int], ...]
    regions_b: tuple[tuple[int, int], ...]
    shared_chars: int = 0
    """How much filtered text (identifiers as one letter, no comments or spaces) the two have in common."""

    def flagged(self, threshold: float) -> bool:
        return self.score >= threshold and self.shared_chars >= MIN_SHARED_CHARS

    def to_json(self) -> dict:
        def side(entry: Entry, share: float, regions) -> dict:
            return {"user": entry.user, "submission_id": entry.submission_id, "filename": entry.filename,
                    "share": round(share, 4), "regions": [list(r) for r in regions]}
        return {"score": round(self.score, 4), "shared_chars": self.shared_chars,
                "a": side(self.a, self.a_share, self.regions_a), "b": side(self.b, self.b_share, self.regions_b)}


@dataclass(frozen=True)
class Segment:
    """A stretch of a source, shared with the other side of its pair or not; never spans a line break."""

    text: str
    shared: bool


@dataclass(frozen=True)
class Report:
    threshold: float
    pairs: tuple[Pair, ...]
    """One per pair of students (their most alike pair of submissions), most alike first."""
    students: int
    submissions: int
    """How many submissions were compared (each student's latest, or all of them with every)."""
    every: bool = False
    excluded: tuple[str, ...] = field(default=())
    """What was removed as boilerplate, by name (the caller's words: starter.cu, levels/1_naive.cu)."""

    @property
    def flagged(self) -> tuple[Pair, ...]:
        return tuple(p for p in self.pairs if p.flagged(self.threshold))


# -- what is boilerplate --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Boilerplate:
    """What a challenge gives every student, as texts, and their names for a report to say."""

    names: tuple[str, ...]
    texts: tuple[str, ...]

    @classmethod
    def of(cls, challenge: Challenge) -> "Boilerplate":
        files = boilerplate_files(challenge)
        return cls(boilerplate_names(challenge, files), tuple(p.read_text(errors="replace") for p in files))


def boilerplate_files(challenge: Challenge) -> tuple[Path, ...]:
    """The challenge's starter and its ladder's level files, those that exist. A challenge of a LeetGPU
    checkout keeps its starter in starter/starter.cu and takes the ladder of the grader's challenge for
    the same problem, if any (grader.leetgpu.official)."""
    from grader.leetgpu.checkout import STARTER_FILE

    candidates = [challenge.starter_path, challenge.root / STARTER_FILE, *(level.path for level in challenge.levels)]
    found: list[Path] = []
    for path in candidates:
        if path.is_file() and path not in found:
            found.append(path)
    return tuple(found)


def boilerplate_names(challenge: Challenge, files: Iterable[Path]) -> tuple[str, ...]:
    """Each file by its path under the challenge's folder (starter.cu, levels/1_naive.cu); a level of another
    folder's ladder (an official challenge takes ours) by that folder too (vector_add/levels/1_naive.cu)."""
    names = []
    for path in files:
        base = challenge.root if path.is_relative_to(challenge.root) else path.parent.parent.parent
        names.append(path.relative_to(base).as_posix())
    return tuple(names)


# -- comparing --------------------------------------------------------------------------------------------

def chosen(entries: Iterable[Entry], every: bool = False) -> list[Entry]:
    """Each student's latest submission (the highest id); with `every`, all of them, a student's source
    handed in again unchanged counted once (its first time)."""
    entries = sorted(entries, key=lambda e: e.submission_id)
    if every:
        seen: set[tuple[str, str]] = set()
        kept = []
        for e in entries:
            if (e.user, e.source) not in seen:
                seen.add((e.user, e.source))
                kept.append(e)
        return kept
    latest = {e.user: e for e in entries}
    return sorted(latest.values(), key=lambda e: e.submission_id)


def compare(entries: Iterable[Entry], boilerplate: Sequence[str] = (), threshold: float = DEFAULT_THRESHOLD,
            every: bool = False, excluded: Sequence[str] = ()) -> Report:
    """Every pair of different students' submissions compared; with `every`, all their submissions, each pair
    of students reported by its most alike pair of submissions. `boilerplate`: texts whose k-grams count
    for no one. `excluded`: their names, for the report to say."""
    compared = chosen(entries, every)
    removed = boilerplate_hashes(boilerplate)
    prints = {e.submission_id: fingerprint(e.source, removed) for e in compared}
    best: dict[tuple[str, str], Pair] = {}
    for a, b in combinations(compared, 2):
        if a.user == b.user:
            continue
        pair = pair_of(a, b, prints[a.submission_id], prints[b.submission_id])
        key = (min(a.user, b.user), max(a.user, b.user))
        if key not in best or _rank(pair) > _rank(best[key]):
            best[key] = pair
    pairs = sorted(best.values(), key=lambda p: (-p.score, p.a.submission_id, p.b.submission_id))
    return Report(threshold, tuple(pairs), len({e.user for e in compared}), len(compared), every, tuple(excluded))


def report(challenge: Challenge, entries: Iterable[Entry], threshold: float = DEFAULT_THRESHOLD,
           every: bool = False) -> Report:
    """`compare` with the challenge's boilerplate removed."""
    given = Boilerplate.of(challenge)
    return compare(entries, given.texts, threshold, every, given.names)


def compare_two(a: Entry, b: Entry, boilerplate: Sequence[str] = ()) -> Pair:
    """One pair, whoever submitted them (the pair page)."""
    removed = boilerplate_hashes(boilerplate)
    return pair_of(a, b, fingerprint(a.source, removed), fingerprint(b.source, removed))


def _rank(pair: Pair) -> tuple[float, int]:
    return pair.score, pair.shared_chars


def boilerplate_hashes(texts: Sequence[str]) -> frozenset[int]:
    """Every k-gram hash of the boilerplate texts (copydetect fingerprints them with a window of 1 too)."""
    found: set[int] = set()
    for text in texts:
        found |= fingerprint(text, frozenset()).hashes
    return frozenset(found)


def fingerprint(source: str, boilerplate: frozenset[int]):
    """copydetect's fingerprint of `source`, its boilerplate k-grams taken out (see the module docstring
    for why not through its own `boilerplate=`)."""
    import copydetect
    from copydetect.utils import get_token_coverage

    # the name is only for copydetect's log lines; LANGUAGE picks the lexer
    made = copydetect.CodeFingerprint("submission.cu", NOISE_CHARS, WINDOW, language=LANGUAGE, fp=io.StringIO(source))
    if boilerplate:
        made.hashes = {h for h in made.hashes if h not in boilerplate}
        made.hash_idx = {h: i for h, i in made.hash_idx.items() if h not in boilerplate}
        made.token_coverage = get_token_coverage(made.hash_idx, made.k, len(made.filtered_code))
    return made


def pair_of(a: Entry, b: Entry, print_a, print_b) -> Pair:
    """The pair of two entries from their fingerprints (`fingerprint`), the lower submission id first."""
    import copydetect

    if a.submission_id > b.submission_id:
        a, b, print_a, print_b = b, a, print_b, print_a
    if print_a.hashes.isdisjoint(print_b.hashes):  # most pairs: a set test, 15 times faster than comparing
        return Pair(a, b, 0.0, 0.0, 0.0, (), ())
    shared, (share_a, share_b), (slices_a, slices_b) = copydetect.compare_files(print_a, print_b)
    share_a, share_b = min(float(share_a), 1.0), min(float(share_b), 1.0)
    return Pair(a, b, max(share_a, share_b), share_a, share_b, regions(slices_a, len(a.source)),
                regions(slices_b, len(b.source)), int(shared))


def regions(slices, length: int) -> tuple[tuple[int, int], ...]:
    """copydetect's slices (a 2×N array of starts and ends in the raw text) as sorted, disjoint ranges
    inside the text."""
    if len(slices) == 0 or len(slices[0]) == 0:
        return ()
    spans = sorted((max(0, int(s)), min(length, int(e))) for s, e in zip(slices[0], slices[1]))
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return tuple(merged)


# -- showing ----------------------------------------------------------------------------------------------

def segments(text: str, shared: Sequence[tuple[int, int]]) -> tuple[Segment, ...]:
    """`text` cut at the edges of its shared regions (sorted, disjoint), in order."""
    found: list[Segment] = []
    at = 0
    for start, end in shared:
        start, end = max(start, at), min(end, len(text))
        if start > at:
            found.append(Segment(text[at:start], False))
        if end > start:
            found.append(Segment(text[start:end], True))
            at = end
    if at < len(text):
        found.append(Segment(text[at:], False))
    return tuple(found)


def lines(text: str, shared: Sequence[tuple[int, int]]) -> tuple[tuple[Segment, ...], ...]:
    """The segments line by line, for a page that numbers its lines: no segment holds a line break (a
    Windows line break's carriage return included)."""
    rows: list[list[Segment]] = [[]]
    for segment in segments(text, shared):
        for i, piece in enumerate(segment.text.split("\n")):
            if i:
                _drop_carriage_return(rows[-1])
                rows.append([])
            if piece:
                rows[-1].append(Segment(piece, segment.shared))
    if len(rows) > 1 and not rows[-1]:  # a final line break ends the last line, it does not start one
        rows.pop()
    return tuple(tuple(row) for row in rows)


def _drop_carriage_return(row: list[Segment]) -> None:
    if row and row[-1].text.endswith("\r"):
        last = row.pop()
        if len(last.text) > 1:
            row.append(Segment(last.text[:-1], last.shared))
