"""The class server's web pages, rendered on the server (grader.classroom.render).

Everything a person controls (names, file names, report text, sources) is data, never markup: the
templates are autoescaped, a report is shown from its data (grader.classroom.report_view) beside the
source as sent, and the two page scripts write with textContent only. Each page's Content-Security-Policy
header allows its own inline script by hash and fetches from this server only; the leaderboards are
grader.html's live page, served with that page's own policy (plus frame-ancestors).

Logging in exchanges the token for a session (grader.classroom.sessions): the HttpOnly, SameSite=Strict
cookie holds the session's id, never the token, and logging out deletes the session on the server.
Every form post must come from this server's own pages: grader.classroom.guard refuses (403) one whose
Origin (or Referer) names another origin, or none, before any page sees it.
"""

from __future__ import annotations

import json
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from grader import __version__
from grader.classroom import challenge_pages, instructor_pages, queue, roster, sessions, similarity_pages
from grader.classroom.render import (GRADER_NAME, HEADERS, REASONS, banner, board_page, login_redirect, page,
                                     small_form)
from grader.classroom.report_view import page_views
from grader.classroom.server import Caller, Denied, submission_id
from grader.classroom.roster import Person, Role

# -- the pages --------------------------------------------------------------------------------------------

class _Pages:
    def __init__(self, server):
        self.server = server

    def _context(self, who: Person | None) -> dict:
        return {"who": who, "challenges": self.server.challenge_list()}

    def start(self, request: Request) -> Response:
        context = self._context(self.server.person(request))
        counts = {state.value: n for state, n in queue.counts(self.server.store()).items()}
        return page("start.html.j2", grader_name=GRADER_NAME, version=__version__,
                    engine=self.server.settings.engine, counts=counts, stalled=self.server.health.state().said(),
                    **context)

    def login_form(self, request: Request) -> Response:
        return page("login.html.j2", problem=None, who=self.server.person(request))

    async def login(self, request: Request) -> Response:
        """The token for a session: the cookie carries the session's id (see grader.classroom.sessions)."""
        small_form(request)
        async with request.form(max_files=0, max_fields=4, max_part_size=1024) as form:
            token = form.get("token")
        token = token.strip() if isinstance(token, str) else None
        checked = await run_in_threadpool(lambda: roster.check(self.server.store(), token))
        if checked.standing is roster.Standing.EXPIRED:
            refusal = Caller(None, Denied.EXPIRED_TOKEN, checked.person.expires_at).refusal()
            return page("login.html.j2", 401, problem=f"{refusal.message}: {refusal.hint}")
        if checked.valid is None:
            return page("login.html.j2", 401, problem="unknown token: check it, or ask your instructor for a new one")
        secure = self.server.secure(request)
        earlier = request.cookies.get(sessions.cookie_name(secure))  # a new login ends the one before it

        def start() -> sessions.Started:
            sessions.end(self.server.store(), earlier)
            return sessions.start(self.server.store(), checked.valid, token, self.server.settings.session_s)

        started = await run_in_threadpool(start)
        home = "/instructor" if checked.valid.role is Role.INSTRUCTOR else "/me"  # each one's own home
        response = RedirectResponse(home, status_code=303, headers=HEADERS)
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
            return login_redirect()
        store = self.server.store()
        views = [self.server.describe(store, sub) for sub in queue.history(store, who.name)]
        rows = [view.to_json() for view in views]
        pending = not all(view.done for view in views)
        return page("me.html.j2", script="me.js.j2" if pending else None, rows=rows, pending=pending,
                    standings=queue.standings(store, who.name), deadlines=queue.deadlines(store),
                    limits=self.server.settings.limits,
                    **self._context(who))

    async def submit(self, request: Request) -> Response:
        who = await run_in_threadpool(self.server.require, request)
        sub, _ = await self.server.upload(request, who)
        return RedirectResponse(f"/submissions/{sub.id}", status_code=303, headers=HEADERS)

    def submission(self, request: Request) -> Response:
        who = self.server.person(request)
        if who is None:
            return login_redirect()
        view = self.server.submission(who, submission_id(request.path_params["id"]))
        report = view.report
        shown, source = page_views(report, view.source, view.filename)
        return page("submission.html.j2", script=None if view.done else "submission.js.j2", s=view.to_json(),
                    view=shown, source=source,
                    raw_json=json.dumps(report, indent=2, default=str) if report is not None else None,
                    who=who)

    def leaderboard(self, request: Request) -> Response:
        board = self.server.board(request.path_params["slug"], public=True)
        return board_page(board, banner([("/", "class server")]))

    def gradebook(self, request: Request) -> Response:
        if self.server.instructor(request, "the gradebook is the instructor's",
                                  f"students see the leaderboard: /leaderboard/{request.path_params['slug']}") is None:
            return login_redirect()
        board = self.server.board(request.path_params["slug"])
        csv = f"/api/gradebook/{board.challenge}"
        return board_page(board, banner([("/instructor", "instructor home"), ("/", "class server"),
                                         (csv + "?format=csv", "download the gradebook (CSV)"),
                                         (csv + "?format=lms", "scores for an LMS (CSV)")], "Gradebook"))


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
        *challenge_pages.routes(server),
        *instructor_pages.routes(server),
        *similarity_pages.routes(server),
    ]


def error_page(request: Request, error) -> Response:
    """An ApiError on a page: its status, message and hint (autoescaped), with the way on, under the same
    header as every other page (who is logged in), unless who it is cannot be known now."""
    links = [("/login", "log in")] if error.status == 401 else []
    back = _came_from(request)
    if back:
        links.append(back)
    elif request.url.path == "/submit":
        links.append(("/me", "back to the upload form"))
    links.append(("/", "the class server's start page"))
    who = _who_if_known(request, error)
    return page("error.html.j2", error.status, code=error.status, reason=REASONS.get(error.status, "Error"),
                message=error.message, hint=error.hint, links=links, who=who,
                signed_in=who is not None or any(name in request.cookies
                                                 for name in (sessions.COOKIE, sessions.SECURE_COOKIE)))


def _who_if_known(request: Request, error) -> Person | None:
    """Who is logged in, for the header; None where asking would fail again (the database is what failed: 503)
    or no one could be (401)."""
    server = getattr(request.app.state, "server", None)
    if server is None or error.status in (401, 503, 500):
        return None
    try:
        return server.person(request)
    except Exception:  # noqa: BLE001  (an error page must render whatever else is failing)
        return None


def _came_from(request: Request) -> tuple[str, str] | None:
    """A failed upload from a challenge's page goes back to that page (its path from the same-origin Referer)."""
    if request.url.path != "/submit":
        return None
    referer = urlsplit(request.headers.get("referer", ""))
    if referer.netloc and referer.netloc != request.url.netloc:
        return None
    parts = referer.path.split("/")
    if len(parts) == 3 and parts[1] == "challenges" and parts[2] in request.app.state.server.settings.challenges:
        return (referer.path, "back to the challenge")
    return None
