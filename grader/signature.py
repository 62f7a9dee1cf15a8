"""Which challenge a file is for, read from its `solve` definition's parameter types.

`grader run mine.cu` without `--challenge` grades against the one challenge whose entry point has
exactly the file's parameter types (LeetGPU's signatures differ between problems); the report says
which. This reads the text only, to choose: the build still checks the real signature.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader.spec import Challenge

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
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
    found = []
    for match in re.finditer(rf"\b{re.escape(entry)}\s*\(([^()]*)\)\s*\{{", _COMMENTS.sub(" ", text)):
        params = [p for p in match.group(1).split(",") if p.strip()]
        if params == ["void"] or [p.strip() for p in params] == ["void"]:
            params = []
        found.append(tuple(_type_of(p) for p in params))
    return found


def _type_of(param: str) -> str:
    tokens = [t for t in re.findall(r"[A-Za-z_]\w*|\*|&", param) if t not in _QUALIFIERS]
    if len(tokens) > 1 and tokens[-1] not in _TYPE_WORDS and tokens[-1] not in ("*", "&"):
        tokens = tokens[:-1]  # the parameter's name
    return re.sub(r"\s*([*&])", r"\1", " ".join(tokens))


def choose(text: str, challenges: list[Challenge]) -> Choice:
    """The challenge whose entry point's parameter types the file's definition has, if exactly one."""
    matches = tuple(c.slug for c in challenges
                    if tuple(p.ctype.text for p in c.params) in parameter_types(text, c.entry))
    if len(matches) == 1:
        return Choice(matches[0], matches, f"its solve signature matches {matches[0]}'s and no other challenge's")
    if matches:
        return Choice(None, matches, f"its solve signature matches several challenges ({', '.join(matches)})")
    return Choice(None, (), "its solve signature matches no challenge's")
