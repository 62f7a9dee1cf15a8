"""The class server's web pages, rendered on the server (jinja2, grader/templates/classroom).

Everything a person controls (names, file names, report text) is data, never markup: the templates
are autoescaped, a report's ANSI text becomes HTML through rich (which escapes it; its hyperlinks are
dropped), and the two page scripts write with textContent only. Each page's Content-Security-Policy
header allows its own inline script by hash and fetches from this server only; the leaderboards are
grader.html's live page, served with that page's own policy (plus frame-ancestors).

Logging in exchanges the token for a session (grader.classroom.sessions): the HttpOnly, SameSite=Strict
cookie holds the session's id, never the token, and logging out deletes the session on the server.
Every form post must come from this server's own pages: grader.classroom.guard refuses (403) one whose
Origin (or Referer) names another origin, or none, before any page sees it.
"""

from __future__ import annotations

import functools
import html as htmltext
import io
import json
import re
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup
from rich.console import Console
from rich.style import Style
from rich.text import Span, Text
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from grader import __version__, html as boards_html
from grader.classroom import queue, roster, sessions
from grader.classroom.dispatch import REPORT_WIDTH
from grader.classroom.server import DIGITS, ApiError, Caller, Denied, submission_id
from grader.classroom.roster import Person, Role
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
def _env() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(date=boards_html.fmt_date, day_time=boards_html.fmt_day_time, queue_text=queue_text,
                       verdict_class=verdict_class)
    return env


@functools.lru_cache(maxsize=None)
def _script(name: str) -> Markup:
    """A page script, as the file has it (not a template: no substitution, so its hash is fixed)."""
    text = _env().loader.get_source(_env(), name)[0]
    if "</" in text:
        raise ValueError(f"{name} must not contain '</' (it would end its <script> element)")
    return Markup(text)


def _headers(policy: str) -> dict[str, str]:
    return {**HEADERS, "Content-Security-Policy": policy}


def _page(template: str, status: int = 200, script: str | None = None, **context) -> HTMLResponse:
    """A page of the base layout; `script` names the page's one script, allowed by its hash."""
    js = _script(script) if script else None
    context.setdefault("who", None)
    context.setdefault("instructor", False)
    context.setdefault("signed_in", context["who"] is not None)
    body = _env().get_template(template).render(script=js, **context)
    source = f"'{boards_html.csp_hash(js)}'" if js else "'none'"
    return HTMLResponse(body, status_code=status, headers=_headers(POLICY.format(script=source)))


def _board_page(board: Board | PublicBoard, banner: Markup) -> HTMLResponse:
    """grader.html's live leaderboard, its policy (its <meta>) also sent as the header, with
    frame-ancestors (which a <meta> policy cannot carry); `banner` goes first in its <body>."""
    page = boards_html.render(board, live=True)
    found = META_POLICY.search(page)
    policy = htmltext.unescape(found.group(1)) + "; " if found else ""
    body = BODY_TAG.search(page)
    if body:
        page = page[:body.end()] + "\n" + str(banner) + page[body.end():]
    return HTMLResponse(page, headers=_headers(policy + "frame-ancestors 'none'"))


def _banner(links: list[tuple[str, str]], label: str = "") -> Markup:
    items = Markup(" · ").join(Markup('<a href="{}" style="color:#c9d4ea">{}</a>').format(h, t) for h, t in links)
    return Markup('<nav style="background:#0e1525;color:#c9d4ea;padding:6px 20px;font:13px system-ui,sans-serif">'
                  '{}{}</nav>').format(Markup("<strong>{}</strong> · ").format(label) if label else "", items)


def report_html(text: str) -> Markup:
    """A report kept as ANSI text (grader.classroom.dispatch.shown_text) as HTML: rich escapes the
    text; hyperlinks are dropped first, since rich writes a link's target into href unescaped."""
    report = Text.from_ansi(text)
    report.spans = [Span(s.start, s.end, _unlinked(s.style)) for s in report.spans]
    console = Console(record=True, width=REPORT_WIDTH, file=io.StringIO())
    console.print(report, soft_wrap=True)
    return Markup(console.export_html(inline_styles=True, code_format="<pre class=report>{code}</pre>"))


def _unlinked(style: str | Style) -> Style:
    return (Style.parse(style) if isinstance(style, str) else style).clear_meta_and_links()


def _small(request: Request, most: int = LOGIN_FORM_BYTES) -> None:
    """A form that is a few fields: its size said, and small (it is read whole, before any check)."""
    length = request.headers.get("content-length", "")
    if not DIGITS.fullmatch(length) or int(length) > most:
        raise ApiError(413, "the login form is a token, nothing more", "send the login page's form")


def _login_redirect() -> RedirectResponse:
    return RedirectResponse("/login", status_code=303, headers=HEADERS)


# -- the pages --------------------------------------------------------------------------------------------

class _Pages:
    def __init__(self, server):
        self.server = server

    def _context(self, who: Person | None) -> dict:
        return {"who": who, "instructor": who is not None and who.role is Role.INSTRUCTOR,
                "challenges": self.server.challenge_list()}

    def start(self, request: Request) -> Response:
        context = self._context(self.server.person(request))
        counts = {state.value: n for state, n in queue.counts(self.server.store()).items()}
        return _page("start.html.j2", grader_name=GRADER_NAME, version=__version__,
                     engine=self.server.settings.engine, counts=counts, stalled=self.server.health.state().said(),
                     **context)

    def login_form(self, request: Request) -> Response:
        return _page("login.html.j2", problem=None, who=self.server.person(request))

    async def login(self, request: Request) -> Response:
        """The token for a session: the cookie carries the session's id (see grader.classroom.sessions)."""
        _small(request)
        async with request.form(max_files=0, max_fields=4, max_part_size=1024) as form:
            token = form.get("token")
        token = token.strip() if isinstance(token, str) else None
        checked = await run_in_threadpool(lambda: roster.check(self.server.store(), token))
        if checked.standing is roster.Standing.EXPIRED:
            refusal = Caller(None, Denied.EXPIRED_TOKEN, checked.person.expires_at).refusal()
            return _page("login.html.j2", 401, problem=f"{refusal.message}: {refusal.hint}")
        if checked.valid is None:
            return _page("login.html.j2", 401, problem="unknown token: check it, or ask your instructor for a new one")
        secure = self.server.secure(request)
        earlier = request.cookies.get(sessions.cookie_name(secure))  # a new login ends the one before it

        def start() -> sessions.Started:
            sessions.end(self.server.store(), earlier)
            return sessions.start(self.server.store(), checked.valid, token, self.server.settings.session_s)

        started = await run_in_threadpool(start)
        response = RedirectResponse("/me", status_code=303, headers=HEADERS)
        response.set_cookie(sessions.cookie_name(secure), started.session_id, max_age=started.max_age_s,
                            httponly=True, samesite="strict", path="/", secure=secure)
        return response

    async def logout(self, request: Request) -> Response:
        """The session ends on the server (its cookie, wherever a copy went, logs no one in), and the
        browser is told to forget the cookie."""
        name = self.server.cookie_name(request)
        await run_in_threadpool(lambda: sessions.end(self.server.store(), request.cookies.get(name)))
        response = RedirectResponse("/", status_code=303, headers=HEADERS)
        secure = self.server.secure(request)
        response.delete_cookie(name, path="/", httponly=True, samesite="strict", secure=secure)
        return response

    def me(self, request: Request) -> Response:
        who = self.server.person(request)
        if who is None:
            return _login_redirect()
        store = self.server.store()
        views = [self.server.describe(store, sub) for sub in queue.history(store, who.name)]
        rows = [view.to_json() for view in views]
        pending = not all(view.done for view in views)
        return _page("me.html.j2", script="me.js.j2" if pending else None, rows=rows, pending=pending, limits=self.server.settings.limits,
                     **self._context(who))

    async def submit(self, request: Request) -> Response:
        who = await run_in_threadpool(self.server.require, request)
        sub, _ = await self.server.upload(request, who)
        return RedirectResponse(f"/submissions/{sub.id}", status_code=303, headers=HEADERS)

    def submission(self, request: Request) -> Response:
        who = self.server.person(request)
        if who is None:
            return _login_redirect()
        view = self.server.submission(who, submission_id(request.path_params["id"]))
        text, report = view.report_text, view.report
        return _page("submission.html.j2", script=None if view.done else "submission.js.j2", s=view.to_json(), report_html=report_html(text) if text else None,
                     raw_json=json.dumps(report, indent=2, default=str) if report is not None else None,
                     who=who, instructor=who.role is Role.INSTRUCTOR)

    def leaderboard(self, request: Request) -> Response:
        board = self.server.board(request.path_params["slug"], public=True)
        return _board_page(board, _banner([("/", "class server")]))

    def gradebook(self, request: Request) -> Response:
        who = self.server.person(request)
        if who is None:
            return _login_redirect()
        if who.role is not Role.INSTRUCTOR:
            raise ApiError(403, "the gradebook is the instructor's", "students see the leaderboard: "
                             f"/leaderboard/{request.path_params['slug']}")
        board = self.server.board(request.path_params["slug"])
        csv = f"/api/gradebook/{board.challenge}?format=csv"
        return _board_page(board, _banner([("/", "class server"), (csv, "download the gradebook (CSV)")],
                                          "Gradebook"))


def routes(server) -> list[Route]:
    pages = _Pages(server)
    return [
        Route("/", pages.start, methods=["GET"]),
        Route("/login", pages.login_form, methods=["GET"]),
        Route("/login", pages.login, methods=["POST"]),
        Route("/logout", pages.logout, methods=["POST"]),
        Route("/me", pages.me, methods=["GET"]),
        Route("/submit", pages.submit, methods=["POST"]),
        Route("/submissions/{id}", pages.submission, methods=["GET"]),
        Route("/leaderboard/{slug}", pages.leaderboard, methods=["GET"]),
        Route("/gradebook/{slug}", pages.gradebook, methods=["GET"]),
        Route("/favicon.ico", lambda request: Response(status_code=204, headers=HEADERS), methods=["GET"]),
    ]


def error_page(request: Request, error) -> Response:
    """An ApiError on a page: its status, message and hint (autoescaped), with the way on."""
    links = [("/login", "log in")] if error.status == 401 else []
    if request.url.path == "/submit":
        links.append(("/me", "back to the upload form"))
    links.append(("/", "the class server's start page"))
    return _page("error.html.j2", error.status, code=error.status, reason=REASONS.get(error.status, "Error"),
                 message=error.message, hint=error.hint, links=links,
                 signed_in=any(name in request.cookies for name in (sessions.COOKIE, sessions.SECURE_COOKIE)))
