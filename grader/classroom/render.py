"""How the class server's pages are rendered (jinja2, grader/templates/classroom): the template
environment (autoescaped, so everything a person controls is data, never markup), each page's
Content-Security-Policy (its one inline script allowed by its hash), the headers every page carries, and
the small filters the templates share. The page handlers live in grader.classroom.pages and the modules
beside it; each renders through `page`.
"""

from __future__ import annotations

import functools
import html as htmltext
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse

from grader import html as boards_html
from grader.classroom import queue
from grader.classroom.roster import Role
from grader.classroom.server import DIGITS, ApiError
from grader.leaderboard import Board, PublicBoard

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "classroom"
GRADER_NAME = "cuda-grader"
LOGIN_FORM_BYTES = 4096
POLICY = ("default-src 'none'; script-src {script}; style-src 'unsafe-inline'; connect-src 'self'; "
          "form-action 'self'; img-src data:; base-uri 'none'; frame-ancestors 'none'")
HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "same-origin"}
META_POLICY = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">')
BODY_TAG = re.compile(r"<body[^>]*>")
REASONS = {400: "Bad request", 401: "Log in first", 403: "Not allowed", 404: "Not found", 408: "Too slow",
           409: "Conflict", 411: "Length required", 413: "Too large", 429: "Too many submissions", 500: "Server error",
           503: "Not now"}


# -- rendering helpers ------------------------------------------------------------------------------------

def queue_text(sub: dict) -> str:
    """Where a submission stands in the queue, in words (the page scripts say it alike)."""
    if sub.get("state") == queue.State.RUNNING.value:
        return "being graded"
    position = sub.get("position")
    if sub.get("state") != queue.State.QUEUED.value or position is None:
        return ""
    return "next" if position == 0 else f"{position} ahead"


def verdict_class(verdict: Any) -> str:
    return "" if not verdict else "verdict-ACCEPTED" if verdict == "ACCEPTED" else "verdict-bad"


@functools.lru_cache(maxsize=1)
def env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(date=boards_html.fmt_date, day_time=boards_html.fmt_day_time, queue_text=queue_text,
                       verdict_class=verdict_class)
    return env


@functools.lru_cache(maxsize=None)
def _script(name: str) -> Markup:
    """A page script, as the file has it (not a template: no substitution, so its hash is fixed)."""
    text = env().loader.get_source(env(), name)[0]
    if "</" in text:
        raise ValueError(f"{name} must not contain '</' (it would end its <script> element)")
    return Markup(text)


def headers(policy: str) -> dict[str, str]:
    return {**HEADERS, "Content-Security-Policy": policy}


def page(template: str, status: int = 200, script: str | None = None, **context) -> HTMLResponse:
    """A page of the base layout; `script` names the page's one script, allowed by its hash. `who` (the
    person logged in, or None) decides the header: whether to link the instructor's home comes from their role."""
    js = _script(script) if script else None
    who = context.setdefault("who", None)
    context["instructor"] = who is not None and who.role is Role.INSTRUCTOR
    context.setdefault("signed_in", who is not None)
    body = env().get_template(template).render(script=js, **context)
    source = f"'{boards_html.csp_hash(js)}'" if js else "'none'"
    return HTMLResponse(body, status_code=status, headers=headers(POLICY.format(script=source)))


def board_page(board: Board | PublicBoard, banner: Markup) -> HTMLResponse:
    """grader.html's live leaderboard, its policy (its <meta>) also sent as the header, with
    frame-ancestors (which a <meta> policy cannot carry); `banner` goes first in its <body>."""
    page = boards_html.render(board, live=True)
    found = META_POLICY.search(page)
    policy = htmltext.unescape(found.group(1)) + "; " if found else ""
    body = BODY_TAG.search(page)
    if body:
        page = page[:body.end()] + "\n" + str(banner) + page[body.end():]
    return HTMLResponse(page, headers=headers(policy + "frame-ancestors 'none'"))


def banner(links: list[tuple[str, str]], label: str = "") -> Markup:
    items = Markup(" · ").join(Markup('<a href="{}" style="color:#c9d4ea">{}</a>').format(h, t) for h, t in links)
    return Markup('<nav style="background:#0e1525;color:#c9d4ea;padding:6px 20px;font:13px system-ui,sans-serif">'
                  '{}{}</nav>').format(Markup("<strong>{}</strong> · ").format(label) if label else "", items)


def small_form(request: Request, most: int = LOGIN_FORM_BYTES) -> None:
    """A form that is a few fields: its size said, and small (it is read whole, before any check)."""
    length = request.headers.get("content-length", "")
    if not DIGITS.fullmatch(length) or int(length) > most:
        raise ApiError(413, "the login form is a token, nothing more", "send the login page's form")


def login_redirect() -> RedirectResponse:
    return RedirectResponse("/login", status_code=303, headers=HEADERS)
