"""A challenge's own page on the class server (`/challenges/SLUG`): what a student who has only the browser
needs to start — the statement, the signature, how outputs are checked, the public shapes, the starter to
download, the ladder with what each rung adds, the deadline — and a form that uploads a file or takes pasted
source for this challenge and no other.

The statement of one of the grader's own challenges is Markdown, rendered by markdown-it-py with raw HTML
escaped (a statement is the challenge author's text, but a page shows it to everyone, so nothing in it is
markup unless Markdown made it); link targets markdown-it refuses (`javascript:` and the like) stay text. An
official LeetGPU statement (challenge.html of the user's checkout) is shown as the plain text
grader.leetgpu.checkout.html_text makes of it: none of its HTML reaches the page.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from markdown_it import MarkdownIt
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from grader import spec
from grader.classroom import queue
from grader.classroom.render import HEADERS, page
from grader.classroom.server import ApiError
from grader.errors import UsageError

STARTER_NAME = "starter.cu"


@dataclass(frozen=True)
class Statement:
    """A statement ready for the page: Markdown rendered (`html`), or plain text shown as it is (`text`)."""
    html: Markup | None = None
    text: str | None = None
    missing: str | None = None
    """Why there is none to show."""


@dataclass(frozen=True)
class Rung:
    number: int
    name: str
    technique: str
    needs: str


@dataclass(frozen=True)
class ChallengePage:
    challenge: spec.Challenge
    statement: Statement
    signature: str
    checks: tuple[str, ...]
    functional: tuple[str, ...]
    randomized: str | None
    performance: tuple[str, ...]
    rungs: tuple[Rung, ...]
    deadline: str | None
    has_starter: bool

    @property
    def official(self) -> bool:
        return self.challenge.origin is spec.Origin.LEETGPU


@functools.lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False}).enable("table")


@functools.lru_cache(maxsize=64)
def _statement(path: Path, origin: spec.Origin, mtime_ns: int) -> Statement:
    if origin is spec.Origin.LEETGPU:
        from grader.leetgpu.checkout import html_text
        try:
            return Statement(text=html_text(path).strip())
        except UsageError:
            return Statement(missing="the statement in the LeetGPU checkout cannot be read")
    text = path.read_text(encoding="utf-8", errors="replace")
    return Statement(html=Markup(_markdown().render(text)))


def statement(challenge: spec.Challenge) -> Statement:
    """The challenge's statement for the page (cached while its file is unchanged)."""
    path = challenge.statement_path
    try:
        mtime = path.stat().st_mtime_ns
    except OSError:
        return Statement(missing="this challenge has no statement file; `grader show` says what is known of it")
    return _statement(path, challenge.origin, mtime)


def checks(challenge: spec.Challenge) -> tuple[str, ...]:
    """How each output is checked, in words."""
    lines = []
    for p in challenge.outputs:
        if p.check is spec.Check.ALLCLOSE and challenge.tolerance.allclose is not None:
            atol, rtol = challenge.tolerance.allclose
            lines.append(f"{p.name}: every element within atol + rtol·|expected| (atol {atol:g}, rtol {rtol:g}); "
                         "NaN and infinities never pass unless the expected value is the same infinity")
        elif p.check is spec.Check.TOLERANCE:
            t = challenge.tolerance
            lines.append(f"{p.name}: compared with an FP64 reference — largest error per element at most "
                         f"{t.max_scaled_error:g} of its scale, and relative Frobenius error at most "
                         f"{t.max_relative_frobenius:g}")
        else:
            lines.append(f"{p.name}: {p.check.value}")
    return tuple(lines)


def _randomized(challenge: spec.Challenge) -> str | None:
    r = challenge.randomized
    if not r.count:
        return None
    ranges = ", ".join(f"{d} in [{lo:,}, {hi:,}]" for d, (lo, hi) in r.ranges.items())
    return f"{r.count} more shapes drawn at random for each submission: {ranges}"


def build(challenge: spec.Challenge, deadline: str | None) -> ChallengePage:
    return ChallengePage(
        challenge=challenge, statement=statement(challenge), signature=f'extern "C" {challenge.prototype()}',
        checks=checks(challenge), functional=tuple(s.label() for s in challenge.functional),
        randomized=_randomized(challenge), performance=tuple(s.label() for s in challenge.performance),
        rungs=tuple(Rung(level.number, level.name, level.technique, level.needs) for level in challenge.levels),
        deadline=deadline, has_starter=challenge.starter_path.is_file())


class _ChallengePages:
    def __init__(self, server):
        self.server = server

    def show(self, request: Request) -> Response:
        challenge = self.server.challenge(request.path_params["slug"])
        who = self.server.person(request)
        store = self.server.store()
        view = build(challenge, queue.deadlines(store).get(challenge.slug))
        standing = queue.standings(store, who.name).get(challenge.slug) if who else None
        return page("challenge.html.j2", c=view, who=who, standing=standing, limits=self.server.settings.limits)

    def starter(self, request: Request) -> Response:
        """The starter as a download (never shown as a page: it is served as an attachment)."""
        challenge = self.server.challenge(request.path_params["slug"])
        try:
            data = challenge.starter_path.read_bytes()
        except OSError:
            raise ApiError(404, f"{challenge.slug} has no starter file",
                           f"its signature is on its page, /challenges/{challenge.slug}: begin from that") from None
        disposition = f'attachment; filename="{challenge.slug}-{STARTER_NAME}"'
        return Response(data, media_type="text/plain; charset=utf-8",
                        headers={**HEADERS, "Content-Disposition": disposition,
                                 "Content-Security-Policy": "default-src 'none'; sandbox"})


def routes(server) -> list[Route]:
    pages = _ChallengePages(server)
    return [
        Route("/challenges/{slug}", pages.show, methods=["GET"]),
        Route("/challenges/{slug}/" + STARTER_NAME, pages.starter, methods=["GET"]),
    ]
