"""Two checks every request of the class server passes through, as ASGI middleware, so that no route
can forget them.

`SameOrigin`: a browser sends the session cookie with any request to this server, whichever page made
it; SameSite=Strict keeps it off requests from other sites in today's browsers, and this check does
not rely on it. Every request that may change something (any method but GET, HEAD and OPTIONS) and
carries the session cookie, and every such request to a page (the login form included, so no other
site can log a student in as someone else), must name this server's own origin in Origin, or, where
Origin is absent, in Referer (OWASP's verification with standard headers). `Origin: null` (sandboxed
frames, privacy-sensitive redirects, a page with `Referrer-Policy: no-referrer`) and a request with
neither header are refused: browsers send Origin with every POST, so only a non-browser client sends
neither, and it has a token to send instead. A request with a bearer token (the command-line
client's way, which no other site's page can add without a CORS preflight this server never
answers) is not checked, nor an API request with no credential at all (its route answers 401). A
refusal is 403, as JSON under /api/ and as a page elsewhere, before the route reads or stores
anything.

`SecurityHeaders`: every response says `X-Content-Type-Options: nosniff` (a browser must not read a
JSON answer or the gradebook's CSV, which carry what students wrote, as HTML or script), and every
/api/ response `Cache-Control: no-store` (reports, tokens' owners and gradebooks stay out of caches);
a route that set them already keeps its own.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def sender_origin(request: Request) -> str | None:
    """The origin the request says it comes from: its Origin header, else its Referer's scheme and host;
    None where it says neither (or names no real origin: `null`, a Referer that is no URL)."""
    origin = request.headers.get("origin")
    if origin is not None:
        origin = origin.strip().lower()
        return None if origin in ("", "null") else origin
    referer = request.headers.get("referer")
    if not referer:
        return None
    parts = urlsplit(referer.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.rsplit('@', 1)[-1]}".lower()


class Credential(enum.Enum):
    """What a request carries to say who sends it."""
    BEARER = "bearer token"
    COOKIE = "session cookie"
    NONE = "none"


class SameOrigin:
    """Refuse a cookie-authenticated change from another origin (see the module's docstring).
    `own_origin(request)` is the server's own origin, `credential(request)` what the request carries;
    `refuse(request, status, message, hint)` renders the refusal as the route's kind of answer would be."""

    def __init__(self, app: ASGIApp, own_origin: Callable[[Request], str], credential: Callable[[Request], Credential],
                 refuse: Callable[[Request, int, str, str], Awaitable[Response]]):
        self.app, self.own_origin, self.credential, self.refuse = app, own_origin, credential, refuse

    def checked(self, request: Request) -> bool:
        if request.method in SAFE_METHODS:
            return False
        carried = self.credential(request)
        return carried is Credential.COOKIE or (carried is Credential.NONE and not request.url.path.startswith("/api/"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            request = Request(scope)
            if self.checked(request):
                sender = sender_origin(request)
                if sender != self.own_origin(request):
                    said = "sent no Origin" if sender is None else f"came from {sender}"
                    response = await self.refuse(request, 403, f"this request {said}, not from this server's pages",
                                                 "submit from this server's own pages (another site's page, "
                                                 "or a client without a token, cannot)")
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)


class SecurityHeaders:
    """nosniff on every response, no-store on every /api/ response (see the module's docstring)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                if b"x-content-type-options" not in names:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if api and b"cache-control" not in names:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
