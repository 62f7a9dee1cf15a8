"""How the class server meets the network: uvicorn, with a bound on how long a client may take to send
a request and on how many connections it serves at once.

uvicorn's own timeout (`timeout_keep_alive`) runs only between two requests, and is cancelled by the
first byte of the next one: a client that sends a request's head one byte at a time, or a body that
never ends, holds its connection (and, with enough of them, the server's file descriptors) forever,
and one that connects and sends nothing is never timed out at all. So the server speaks HTTP through
`BoundedH11Protocol`, uvicorn's h11 protocol plus one timer per thing it waits for from the client:
the request's head must arrive within `head_s` of the connection (or of the previous response), its
body within `body_s` of its head. A head that is late gets a 408 and the connection is closed; a late
body closes the connection (the route reading it sees the client gone). What the server sends is not
bounded here: its answers are small, and a reader too slow for them is bounded by the kernel's socket
buffers and the keep-alive timeout.

`limit_concurrency` caps connections and requests in flight (uvicorn answers 503 past it, which the
client reads as "try again later"), and proxy headers are not trusted: the server's public origin is
configured (`grader serve --public-url`), never taken from a header any local user could send.
"""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

HEAD_TIMEOUT_S = 10.0
"""A request's head (request line and headers, 16 KiB at most): a browser sends it in one packet."""
BODY_TIMEOUT_S = 60.0
"""An upload of at most a few hundred KiB: a minute is a slow phone line's worth."""
KEEP_ALIVE_S = 5
MAX_CONNECTIONS = 512
"""A class polling the live pages keeps a few keep-alive connections per browser; more than this at
once is an attack or a class far larger than one GPU box can grade."""
_LATE = b"the request came too slowly\n"
REQUEST_TIMEOUT = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                   b"x-content-type-options: nosniff\r\nconnection: close\r\n"
                   b"content-length: %d\r\n\r\n%s" % (len(_LATE), _LATE))


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's head and body (see the module's docstring).
    `bounded` makes a subclass with other limits (uvicorn builds the protocol from its class)."""

    head_s: float = HEAD_TIMEOUT_S
    body_s: float = BODY_TIMEOUT_S

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self.deadline: asyncio.TimerHandle | None = None
        self.waiting_for: tuple | None = None
        super().connection_made(transport)
        self._watch()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _watch(self) -> None:
        """Keep one timer for what the server now waits for from the client: the head of the next request
        (their state IDLE) or the body of this one (SEND_BODY); none while it is the server's turn. The
        timer starts when the wait does, and more bytes do not restart it."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        if state is h11.IDLE:
            waiting_for = ("head", self.cycle)
        elif state is h11.SEND_BODY:
            waiting_for = ("body", self.cycle)
        else:
            self._cancel()
            return
        if self.waiting_for is not None and waiting_for[0] == self.waiting_for[0] \
                and waiting_for[1] is self.waiting_for[1]:
            return
        self._cancel()
        self.waiting_for = waiting_for
        limit = self.head_s if waiting_for[0] == "head" else self.body_s
        self.deadline = self.loop.call_later(limit, self._late)

    def _cancel(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
        self.deadline, self.waiting_for = None, None

    def _late(self) -> None:
        self.deadline = None
        if self.transport.is_closing():
            return
        if self.conn.our_state is h11.IDLE:  # nothing sent on this request yet: say why it ends
            self.transport.write(REQUEST_TIMEOUT)
        self.transport.close()


def bounded(head_s: float = HEAD_TIMEOUT_S, body_s: float = BODY_TIMEOUT_S) -> type[BoundedH11Protocol]:
    return type("BoundedH11Protocol", (BoundedH11Protocol,), {"head_s": head_s, "body_s": body_s})


def uvicorn_config(app, head_s: float = HEAD_TIMEOUT_S, body_s: float = BODY_TIMEOUT_S,
                   max_connections: int = MAX_CONNECTIONS):
    """The uvicorn configuration `grader serve` runs `app` with."""
    import uvicorn

    return uvicorn.Config(app, http=bounded(head_s, body_s), limit_concurrency=max_connections,
                          timeout_keep_alive=KEEP_ALIVE_S, proxy_headers=False, log_level="warning", access_log=False)
