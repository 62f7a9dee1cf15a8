"""The command line: parse, call the library, render, map errors to exit codes. Nothing else lives here.

The commands are split by audience, each module registering its commands on the one `cli` group:

- `common`: what every command shares (output, progress, errors and exit codes, JSON errors, the group
  and command classes, shared options, the helpers that start a sandbox, a backend or an engine);
- `grading`: `run`, `submit`, `levels`, `grade`;
- `boards`: `leaderboard`, `list`, `show`, `init`;
- `classroom`: `serve`, `roster …`, `deadline`, `login`, and `submit --server`'s client side;
- `similarity`: `similarity`, the class's alike submissions of a challenge.

`grader = "grader.cli:main"` is the installed entry point.
"""

from __future__ import annotations

from grader import spec  # noqa: F401  (tests patch `cli.spec.load`)
# importing them registers their commands
from grader.cli import boards, classroom, grading, kit, similarity  # noqa: F401
from grader.cli.common import DEFAULT_CHALLENGES, Terminal, cli

__all__ = ["DEFAULT_CHALLENGES", "Terminal", "cli", "main"]


def main() -> None:
    cli(prog_name="grader")
