"""Measure grader.similarity's scores on honest pairs and on planted near-copies, to choose its threshold.

    python3 bench/similarity_calibration.py [--lexer cpp|cuda] [--k N] [--min-shared N] [--list N] [--json OUT]

Honest pairs: solutions of one problem written apart, i.e. a challenge's reference levels against each other
and the corpus files (tests/submissions/**, challenges/*/wrong/*.cu) against each other and against the
levels, each file assigned to the challenge its solve signature names. The boilerplate of a pair is what a
class would have removed: the challenge's starter and its levels, less the two files of the pair. A pair
whose code lines difflib finds half alike is one file edited into the other (a wrong/ file is often a
level with its bug planted): reported apart, as "derived", not as honest.

Planted near-copies: each of those files disguised as a student who copied it would (identifiers renamed,
comments replaced, indentation and blank lines changed, a few adjacent statements swapped) against the
original, with the boilerplate of the original.

Nothing here is random: the disguise is a fixed rewrite, and the fingerprints keep every k-gram.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import logging
import statistics
import sys
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path

from pygments import lexers, token

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import signature, similarity, spec  # noqa: E402

CHALLENGES = ROOT / "challenges"
CORPUS = ROOT / "tests" / "submissions"
KEPT_NAMES = ("solve", "main")


@dataclass(frozen=True)
class File:
    challenge: str
    name: str
    text: str


def files() -> list[File]:
    challenges = spec.load_all(CHALLENGES)
    found = [File(slug, f"{slug}/levels/{level.path.name}", level.path.read_text())
             for slug, c in challenges.items() for level in c.levels]
    corpus = sorted(CORPUS.rglob("*.cu")) + sorted(CHALLENGES.glob("*/wrong/*.cu"))
    for path in corpus:
        text = path.read_text(errors="replace")
        choice = signature.choose(text, list(challenges.values()))
        if choice.challenge:
            found.append(File(choice.challenge, path.relative_to(ROOT).as_posix(), text))
    return found


# -- the disguise -------------------------------------------------------------------------------------------

def disguise(text: str) -> str:
    """What a student hiding a copy does: new names, new comments, new layout, a few statements swapped."""
    renamed = _renamed_without_comments(text)
    lines = [line for line in renamed.splitlines() if line.strip()]
    lines = _swapped(lines)
    out = []
    for i, line in enumerate(lines):
        stripped = line.lstrip(" \t")
        depth = (len(line) - len(stripped)) // 4
        if i % 5 == 2:
            out.append("  " * depth + "// next step")
        out.append("  " * depth + stripped)
        if i % 7 == 6:
            out.append("")
    return "\n".join(out) + "\n"


def _renamed_without_comments(text: str) -> str:
    names: dict[str, str] = {}
    out = []
    for kind, value in lexers.get_lexer_by_name(similarity.LANGUAGE).get_tokens(text):
        if kind in token.Comment and kind not in token.Comment.Preproc:
            out.append("\n" if value.endswith("\n") else " ")
        elif kind in token.Name and kind not in token.Name.Builtin and _renamable(value):
            out.append(names.setdefault(value, f"my_{value[::-1]}{len(names)}"))
        else:
            out.append(value)
    return "".join(out)


def _renamable(name: str) -> bool:
    return name not in KEPT_NAMES and not name.startswith(("cuda", "__", "std")) and name[:1].islower()


def _swapped(lines: list[str]) -> list[str]:
    """Every third pair of adjacent simple statements at one indentation swapped."""
    lines = list(lines)
    seen = 0
    i = 0
    while i + 1 < len(lines):
        a, b = lines[i], lines[i + 1]
        if _simple(a) and _simple(b) and _indent(a) == _indent(b):
            seen += 1
            if seen % 3 == 0:
                lines[i], lines[i + 1] = b, a
                i += 2
                continue
        i += 1
    return lines


def _simple(line: str) -> bool:
    s = line.strip()
    return s.endswith(";") and not any(w in s for w in ("{", "}", "return", "sync", "for", "if", "#"))


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# -- measuring ---------------------------------------------------------------------------------------------

DERIVED_RATIO = 0.5
"""Two files whose code lines (stripped, comments left out) are this alike by difflib are one file edited into
the other (a wrong/ file is often a level with its bug planted): not independent, so not an honest pair."""


def code_lines(text: str) -> list[str]:
    return [s for s in (line.strip() for line in text.splitlines()) if s and not s.startswith(("//", "/*", "*"))]


def derived(a: File, b: File) -> bool:
    alike = difflib.SequenceMatcher(None, code_lines(a.text), code_lines(b.text), autojunk=False).ratio()
    return alike >= DERIVED_RATIO


@functools.lru_cache(maxsize=None)
def hashes_of(text: str) -> frozenset[int]:
    return similarity.boilerplate_hashes([text])


def removed(challenge: spec.Challenge, leave_out: set[str]) -> frozenset[int]:
    texts = [p.read_text() for p in similarity.boilerplate_files(challenge)
             if f"{challenge.slug}/levels/{p.name}" not in leave_out]
    return frozenset().union(*(hashes_of(t) for t in texts))


def compared(a: File, b: File, b_text: str, boilerplate: frozenset[int]) -> similarity.Pair:
    ea, eb = similarity.Entry("a", 1, a.name, a.text), similarity.Entry("b", 2, b.name, b_text)
    return similarity.pair_of(ea, eb, similarity.fingerprint(ea.source, boilerplate),
                              similarity.fingerprint(eb.source, boilerplate))


def measure() -> dict:
    challenges = spec.load_all(CHALLENGES)
    every = files()
    rows: dict[str, list] = {"honest": [], "derived": [], "planted": [], "too little of its own": []}
    for slug, challenge in challenges.items():
        mine = [f for f in every if f.challenge == slug]
        for a, b in combinations(mine, 2):
            pair = compared(a, b, b.text, removed(challenge, {a.name, b.name}))
            rows["derived" if derived(a, b) else "honest"].append((pair, a.name, b.name))
        for f in mine:
            boilerplate = removed(challenge, {f.name})
            own = similarity.fingerprint(f.text, boilerplate).token_coverage
            pair = compared(f, f, disguise(f.text), boilerplate)
            # a file with less of its own than a flagged pair must share is never flagged, copied or not
            kind = "planted" if own >= similarity.MIN_SHARED_CHARS else "too little of its own"
            rows[kind].append((pair, f.name, f.name + " (disguised)"))
    return rows


def summary(rows, threshold: float) -> dict:
    scores = sorted(p.score for p, *_ in rows)
    flagged = [r for r in rows if r[0].flagged(threshold)]
    p99 = scores[min(len(scores) - 1, int(0.99 * len(scores)))]
    return {"pairs": len(scores), "min": round(scores[0], 3), "median": round(statistics.median(scores), 3),
            "p99": round(p99, 3), "max": round(scores[-1], 3), "flagged": len(flagged)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lexer", default=similarity.LANGUAGE)
    parser.add_argument("--list", type=int, default=15, help="show the N most alike honest pairs, the N least "
                                                                "alike planted copies")
    parser.add_argument("--k", type=int, default=similarity.NOISE_CHARS, help="k-gram length (filtered characters)")
    parser.add_argument("--min-shared", type=int, default=similarity.MIN_SHARED_CHARS)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    similarity.LANGUAGE, similarity.NOISE_CHARS, similarity.MIN_SHARED_CHARS = args.lexer, args.k, args.min_shared
    rows = measure()
    print(f"lexer {args.lexer}, k = {similarity.NOISE_CHARS}, min shared {similarity.MIN_SHARED_CHARS} chars")
    for threshold in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9):
        print(f"threshold {threshold}: " + "; ".join(f"{k} {summary(v, threshold)}" for k, v in rows.items() if v))
    shown = {"honest": lambda r: -r[0].score, "derived": lambda r: r[0].score, "planted": lambda r: r[0].score}
    for kind, key in shown.items():
        print(f"\n{kind}, {'most' if kind == 'honest' else 'least'} alike first:")
        for p, a, b in sorted(rows[kind], key=key)[:args.list]:
            print(f"  {p.score:.3f} ({p.a_share:.2f}/{p.b_share:.2f}, {p.shared_chars} chars) {a} ~ {b}")
    print("\ntoo little of its own (not counted):", ", ".join(a for _, a, _ in rows["too little of its own"]))
    if args.json:
        args.json.write_text(json.dumps({k: [{"a": a, "b": b, "score": p.score, "a_share": p.a_share,
                                              "b_share": p.b_share, "shared_chars": p.shared_chars}
                                             for p, a, b in v] for k, v in rows.items()}, indent=1))


if __name__ == "__main__":
    main()
