"""The class server's HTTP service (Starlette, served by uvicorn): the JSON API the `grader submit
--server` client uses, beside the web pages (grader.classroom.pages); both call the shared
`Server` (grader.classroom.server).

Who is asking comes from the token, as `Authorization: Bearer TOKEN` (the client), or from the
session the login page starts (the browser's HttpOnly cookie holds a session id, never the token:
grader.classroom.sessions). A request without a valid token or session gets 401 and nothing is
stored; one that could change something, sent without a bearer token from another origin, gets 403
before any route sees it (grader.classroom.guard). Handlers are plain functions that Starlette runs on
its thread pool; each thread has its own database connection (SQLite connections are not shared
between threads), and the queue's limits are checked inside the transaction that queues, so
concurrent uploads cannot slip past them.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import socket
import sqlite3

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from grader import __version__, gradebook, leaderboard as boards
from grader.classroom import guard, pages, queue
from grader.classroom.health import Health, cause_of
from grader.classroom.roster import Role
from grader.classroom.server import COOKIE, ApiError, Server, Settings, run_sync, submission_id
from grader.errors import UsageError
from grader.store import StoreError

__all__ = ["COOKIE", "ApiError", "Settings", "create_app", "listening_socket"]

FAILURE_HEADERS = {"Cache-Control": "no-store", "X-Content-Type-Options": "nosniff"}
"""What grader.classroom.guard.SecurityHeaders adds to every other answer: a failure's answer is sent
outside it (Starlette's ServerErrorMiddleware is the outermost)."""
log = logging.getLogger("grader.serve")


# -- the JSON API ---------------------------------------------------------------------------------------

def _json(data, status: int = 200) -> JSONResponse:
    return JSONResponse(data, status_code=status, headers={"Cache-Control": "no-store"})


def api_routes(server: Server) -> list[Route]:
    async def post_submission(request: Request) -> Response:
        who = await run_sync(server.require, request)
        view, created = await server.upload(request, who)
        return _json(view.to_json(), 201 if created else 200)

    def list_submissions(request: Request) -> Response:
        who = server.require(request)
        user = request.query_params.get("user") if who.role is Role.INSTRUCTOR else None
        store = server.store()
        return _json([server.describe(store, s).to_json() for s in queue.history(store, user or who.name)])

    def get_submission(request: Request) -> Response:
        who = server.require(request)
        return _json(server.submission(who, submission_id(request.path_params["id"])).to_json())

    def get_board(request: Request) -> Response:
        return _json(server.board(request.path_params["slug"], public=True).to_json())

    def get_gradebook(request: Request) -> Response:
        """The gradebook as JSON; `format=csv`: the gradebook's spreadsheet; `format=lms`: the scores under
        the server's --score-rule, as Canvas and Moodle import them (grader.gradebook, docs/gradebook.md)."""
        server.require(request, Role.INSTRUCTOR)
        board = server.board(request.path_params["slug"])
        fmt = request.query_params.get("format")
        if fmt == "csv":
            return PlainTextResponse(boards.as_csv(board), media_type="text/csv",
                                     headers={"Content-Disposition": f'attachment; filename="{board.challenge}.csv"'})
        if fmt == "lms":
            challenge = server.challenge(board.challenge)
            text = gradebook.lms_file(server.store(), challenge, board, server.settings.score_rule)
            return PlainTextResponse(text, media_type="text/csv", headers={
                "Content-Disposition": f'attachment; filename="{board.challenge}-lms.csv"'})
        return _json(board.to_json())

    def me(request: Request) -> Response:
        who = server.require(request)
        return _json({"name": who.name, "role": who.role.value})

    def health(request: Request) -> Response:
        """200 while the server grades; 503 while grading is stalled (grader.classroom.health) or the
        database cannot be read, with why (an `error` and a `hint`, as every refusal of the API)."""
        state = server.health.state()
        answer = {"grader": __version__, "engine": server.settings.engine,
                  "challenges": sorted(server.settings.challenges), **state.to_json()}
        try:
            answer["queue"] = {s.value: n for s, n in queue.counts(server.store()).items()}
        except (StoreError, sqlite3.Error) as error:
            log.error("the health check cannot read the queue: %s", error)
            answer["queue"] = None
            return _json({**answer, "error": f"the class database cannot be read ({cause_of(error).said})",
                          "hint": "the server's log says why"}, 503)
        if not state.ok:
            return _json({**answer, "error": f"grading is stalled: {state.said()}",
                          "hint": "grading resumes by itself when the fault clears; the server's log says more"}, 503)
        return _json(answer)

    def challenges(request: Request) -> Response:
        return _json(server.challenge_list())

    return [
        Route("/api/submissions", post_submission, methods=["POST"]),
        Route("/api/submissions", list_submissions, methods=["GET"]),
        Route("/api/submissions/{id}", get_submission, methods=["GET"]),
        Route("/api/leaderboard/{slug}", get_board, methods=["GET"]),
        Route("/api/gradebook/{slug}", get_gradebook, methods=["GET"]),
        Route("/api/me", me, methods=["GET"]),
        Route("/api/health", health, methods=["GET"]),
        Route("/api/challenges", challenges, methods=["GET"]),
    ]


async def _http_error(request: Request, error: HTTPException) -> Response:
    """Starlette's own refusals (an unknown address, a malformed form) in the API's and the pages' form."""
    return await _api_error(request, ApiError(error.status_code, str(error.detail)))


async def _api_error(request: Request, error: ApiError) -> Response:
    if request.url.path.startswith("/api/"):
        return _json({"error": error.message, "hint": error.hint}, error.status)
    return pages.error_page(request, error)


async def _refuse(request: Request, status: int, message: str, hint: str) -> Response:
    return await _api_error(request, ApiError(status, message, hint))


async def _gone(request: Request, error: ClientDisconnect) -> Response:
    """The client left, or was cut off for sending too slowly (grader.classroom.transport), while its
    request was read: nothing was stored, and no one is there to read an answer."""
    return await _api_error(request, ApiError(408, "the request was not sent in time"))


async def _store_error(request: Request, error: Exception) -> Response:
    """The database failing under a request (full, locked past the busy timeout, gone): 503 in the API's
    or the pages' form, said from its cause; its own text (which names the server's files) goes to the log."""
    log.error("%s %s: the database failed: %s", request.method, request.url.path, error)
    taken = "; nothing was taken" if request.method == "POST" else ""
    return await _api_error(request, ApiError(503, f"the class database cannot be used right now "
                                                   f"({cause_of(error).said}){taken}",
                                              "try again in a few minutes; if it lasts, tell your instructor"))


async def _internal_error(request: Request, error: Exception) -> Response:
    """Anything else that escaped a handler: a bug of the server's, answered in the API's form (JSON) or
    as a page rather than as a bare text 500; the traceback goes to the log (Starlette logs it after)."""
    answer = await _api_error(request, ApiError(500, "the class server failed on this request (a bug: its log "
                                                     "has the details)", "try again; if it lasts, tell your instructor"))
    answer.headers.update(FAILURE_HEADERS)  # sent outside the middleware that adds them to every other answer
    return answer


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything says the server is serving: a port already taken
    (errno 98), one this user may not bind or an address this machine does not have is a UsageError
    naming the --port or --host to change, where uvicorn would log errno 98 and exit 3 (an invalid
    challenge, by the grader's codes)."""
    # IPPROTO_TCP by name: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on sockets that say they are
    # TCP, and connections accepted from a socket made with protocol 0 kept it on: every answer on a kept-alive
    # connection (headers and body are two writes) then waited 40 ms for the client's delayed ACK
    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a restart need not wait
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        raise _bind_error(error, host, port) from error
    return listener


def _bind_error(error: OSError, host: str, port: int) -> UsageError:
    if error.errno == errno.EADDRINUSE:
        return UsageError(f"port {port} is in use on {host}: pick another with --port",
                          hint="or stop whatever listens there (another `grader serve`?)")
    if error.errno == errno.EACCES:
        return UsageError(f"this user may not listen on port {port} of {host}: pick another with --port",
                          hint="ports below 1024 need root; serve on a high port behind a reverse proxy (SECURITY.md)")
    if isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL:
        return UsageError(f"cannot listen on {host}: it is not an address of this machine",
                          hint="--host 127.0.0.1 serves this machine only, --host 0.0.0.0 every interface")
    return UsageError(f"cannot listen on {host} port {port}: {error.strerror or error}",
                      hint="pick another --host or --port")


def create_app(settings: Settings, dispatcher=None) -> Starlette:
    """The application; `dispatcher` (grader.classroom.dispatch) is started and stopped with it, and
    reports its faults to the health the server answers with."""
    server = Server(settings, dispatcher.health if dispatcher is not None else Health())

    @contextlib.asynccontextmanager
    async def lifespan(app):
        if dispatcher is not None:
            dispatcher.start()
        try:
            yield
        finally:
            if dispatcher is not None:
                dispatcher.stop()

    middleware = [Middleware(guard.SecurityHeaders),
                  Middleware(guard.SameOrigin, own_origin=server.origin, credential=server.credential, refuse=_refuse)]
    app = Starlette(routes=api_routes(server) + pages.routes(server), lifespan=lifespan, middleware=middleware,
                    exception_handlers={ApiError: _api_error, HTTPException: _http_error, ClientDisconnect: _gone,
                                        StoreError: _store_error, sqlite3.Error: _store_error,
                                        Exception: _internal_error})
    app.state.server = server
    return app

