"""Which challenge a file is for, read from its `solve` definition's parameter types.

`grader run mine.cu` without `--challenge` grades against the one challenge whose entry point has
exactly the file's parameter types (LeetGPU's signatures differ between problems); the report says
which. This reads the text only, to choose: the build still checks the real signature. The text is
untrusted (the class server reads an upload here, in its request handler), so every pattern below is
linear in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.spec import Challenge, canonical_type

# Comments, and what may hold a `/*` or `//` that opens none: a string or character literal, and a
# number with digit separators (1'000, whose quotes open no literal). Every alternative consumes all it
# scans: an unclosed comment runs to the end of the text and an unclosed literal to the end of its line,
# as a compiler reads them, so no character is scanned twice and one pass is linear in the text. (An
# unclosed `/*` matched nothing before, so every later `/*` rescanned the rest of the text: quadratic.)
_COMMENT_OR_LITERAL = re.compile(r"""
    (?P<comment> //(?:\\\n|[^\n])* | /\*.*?(?:\*/|\Z) )
  | "(?:\\.|[^"\\\n])*"? | '(?:\\.|[^'\\\n])*'? | (?<!\w)\d\w*(?:'\w+)+
""", re.S | re.X)
_QUALIFIERS = {"__restrict__", "__restrict", "restrict"}
_TYPE_WORDS = {"const", "volatile", "unsigned", "signed", "int", "float", "double", "char", "short", "long",
               "bool", "void", "size_t"}


@dataclass(frozen=True)
class Choice:
    challenge: str | None
    """The slug chosen, or None when no challenge or several match."""
    matches: tuple[str, ...]
    why: str


def parameter_types(text: str, entry: str) -> list[tuple[str, ...]]:
    """The parameter types of every definition of `entry` in `text` (normalised: `const float*`)."""
    return _definitions(_without_comments(text), entry)


def _without_comments(text: str) -> str:
    """The text with each comment replaced by a space, literals untouched."""
    return _COMMENT_OR_LITERAL.sub(lambda m: " " if m.lastgroup == "comment" else m[0], text)


def _definitions(code: str, entry: str) -> list[tuple[str, ...]]:
    # Linear too: `[^()]*` stops at the next parenthesis, so no two attempts scan the same text.
    found = []
    for match in re.finditer(rf"\b{re.escape(entry)}\s*\(([^()]*)\)\s*\{{", code):
        params = [p for p in match.group(1).split(",") if p.strip()]
        if params == ["void"] or [p.strip() for p in params] == ["void"]:
            params = []
        found.append(tuple(canonical_type(_type_of(p)) for p in params))
    return found


def _type_of(param: str) -> str:
    tokens = [t for t in re.findall(r"[A-Za-z_]\w*|\*|&", param) if t not in _QUALIFIERS]
    if len(tokens) > 1 and tokens[-1] not in _TYPE_WORDS and tokens[-1] not in ("*", "&"):
        tokens = tokens[:-1]  # the parameter's name
    return re.sub(r"\s*([*&])", r"\1", " ".join(tokens))


@dataclass(frozen=True)
class Signature:
    """A challenge's entry point as a file must define it: its name and its parameters' canonical types."""

    slug: str
    entry: str
    types: tuple[str, ...]


def of(challenge: Challenge) -> Signature:
    return Signature(challenge.slug, challenge.entry, tuple(p.ctype.canonical for p in challenge.params))


def choose(text: str, challenges: list[Challenge]) -> Choice:
    """The challenge whose entry point's parameter types the file's definition has, if exactly one."""
    return choose_signature(text, [of(c) for c in challenges])


def choose_signature(text: str, signatures: list[Signature]) -> Choice:
    """`choose` over signatures from anywhere (the grader's challenges, an official checkout's starters)."""
    code = _without_comments(text)
    definitions = {entry: _definitions(code, entry) for entry in {s.entry for s in signatures}}  # once each
    matches = tuple(s.slug for s in signatures if s.types in definitions[s.entry])
    if len(matches) == 1:
        return Choice(matches[0], matches, f"its solve signature matches {matches[0]}'s and no other challenge's")
    if matches:
        return Choice(None, matches, f"its solve signature matches several challenges ({', '.join(matches)})")
    found = sorted({f"{entry}({', '.join(types)})" for entry, defined in definitions.items() for types in defined})
    if not found:
        entries = " or ".join(f"`{entry}`" for entry in sorted(definitions)) or "`solve`"
        return Choice(None, (), f"no definition of {entries} found in it")
    return Choice(None, (), f"its {' and '.join(found)} matches no challenge's signature")
