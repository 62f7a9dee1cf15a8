"""Text that came from a submission, made inert before a person or a spreadsheet sees it.

A submission chooses what it prints, what its compiler messages quote (its own source lines), its
kernel names and, in a class, its file and folder names. Shown raw, control characters in any of
them reach the teacher's terminal (clear the screen, move the cursor, draw a fake green ACCEPTED,
set the window title), and a gradebook cell starting with `=` runs as a formula. So: every
control character but tab and newline is written out as an escape, long text is cut, and a
spreadsheet cell that could start a formula gets a leading apostrophe.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def visible(text: str, limit_chars: int | None = None) -> str:
    """`text` with control characters (and the invisible reordering marks of Unicode) as `\\xNN` or
    `\\uNNNN`; cut to its last `limit_chars` characters, saying so, when longer."""
    shown = _CONTROL.sub(_escape, text)
    if limit_chars is not None and len(shown) > limit_chars:
        cut = len(shown) - limit_chars
        shown = f"[… {cut} characters not shown]\n" + shown[-limit_chars:]
    return shown


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def spreadsheet_cell(value: str) -> str:
    """A text cell no spreadsheet reads as a formula (a leading apostrophe, as OWASP advises)."""
    text = visible(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
