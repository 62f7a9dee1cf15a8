"""The class server against real clients on 127.0.0.1: a slow client is cut off at the configured limit
(uvicorn's own timeout runs only between requests), connections beyond the limit get 503, and a
browser's session cookie changes nothing from another origin. Two servers: uvicorn with
grader.classroom.transport's protocol and small limits, in this process (fast to start, limits of a
second), and `grader serve` itself (its default limits, its real login)."""

from __future__ import annotations

import asyncio
import socket
import sqlite3
import statistics
import threading
import time

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from class_server import Server, add_person
from grader.classroom import transport
from test_server_load import CHALLENGES

LIMIT_S = 1.0
MAX_CONNECTIONS = 8
NAIVE = CHALLENGES.parent.parent / "challenges" / "vector_add" / "levels" / "1_naive.cu"


def margin_s(url: str) -> float:
    """How late past a limit a cut may come: the event loop's timer fires on time, but this machine may
    be slow; 20x a request's median round trip here, at least half a second."""
    times = []
    for _ in range(5):
        started = time.monotonic()
        assert httpx.get(url, timeout=30).status_code == 200
        times.append(time.monotonic() - started)
    return max(0.5, 20 * statistics.median(times))


def trickle(port: int, data: bytes, every_s: float, give_up_s: float, first: bytes = b"") -> tuple[float, bytes]:
    """Send `first` at once, then `data` a byte every `every_s` seconds (as a slow or hostile client
    does) until the server cuts the connection; the seconds that took from the first byte, and what the
    server said. Fails after `give_up_s`."""
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(every_s)
        started, said = time.monotonic(), b""
        client.sendall(first)
        for byte in data + b"\0" * 10_000:
            if time.monotonic() - started > give_up_s:
                pytest.fail(f"the server still read a slow client after {give_up_s:.1f} s")
            try:
                client.sendall(bytes([byte]))
                chunk = client.recv(4096)  # waits up to every_s: this is the client's slowness
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started, said
            if not chunk:
                return time.monotonic() - started, said
            said += chunk
    pytest.fail("the server read the whole slow request")


# -- uvicorn with the bounded protocol, in this process -------------------------------------------------

class Seen(list):
    """What the app's routes saw, with an event set at each sighting: a route runs on the server's thread, so a
    client can find its connection closed before the route has said what it saw."""

    def __init__(self):
        super().__init__()
        self.event = threading.Event()

    def append(self, item: str) -> None:
        super().append(item)
        self.event.set()


@pytest.fixture(scope="module")
def small():
    """uvicorn serving a small app through transport.uvicorn_config, with limits of LIMIT_S."""
    seen = Seen()

    async def upload(request: Request):
        try:
            body = await request.body()
        except ClientDisconnect:
            seen.append("disconnected")
            raise
        return PlainTextResponse(f"{len(body)} bytes")

    async def slow(request: Request):
        await asyncio.sleep(LIMIT_S * 2)  # the server's turn, however long: no client deadline runs
        return PlainTextResponse("done")

    app = Starlette(routes=[Route("/", lambda r: PlainTextResponse("ok")), Route("/upload", upload, methods=["POST"]),
                            Route("/slow", slow)])
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    server = uvicorn.Server(transport.uvicorn_config(app, head_s=LIMIT_S, body_s=LIMIT_S,
                                                     max_connections=MAX_CONNECTIONS))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
        time.sleep(0.05)
    port = listener.getsockname()[1]
    yield port, margin_s(f"http://127.0.0.1:{port}/"), server, seen
    server.should_exit = True
    thread.join(30)


def test_a_slow_request_head_is_cut_off_with_a_408(small):
    port, margin, _, _ = small
    took, said = trickle(port, b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100, LIMIT_S / 10, LIMIT_S * 10)
    assert 0.9 * LIMIT_S <= took <= LIMIT_S + margin, took  # (the server's clock may start before ours)
    assert said.startswith(b"HTTP/1.1 408 ")


def test_a_connection_that_sends_nothing_is_closed(small):
    port, margin, _, _ = small
    with socket.create_connection(("127.0.0.1", port)) as client:
        client.settimeout(LIMIT_S * 10)
        started = time.monotonic()
        said = client.recv(4096)
        took = time.monotonic() - started
    assert said.startswith(b"HTTP/1.1 408 ") and 0.9 * LIMIT_S <= took <= LIMIT_S + margin


def test_a_slow_body_is_cut_off_and_the_route_sees_the_client_gone(small):
    port, margin, _, seen = small
    head = b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n"
    took, said = trickle(port, b"x" * 1000, LIMIT_S / 10, LIMIT_S * 10, first=head)
    assert LIMIT_S <= took <= LIMIT_S + margin and said == b""
    assert seen.event.wait(30), "the route never saw its client gone"
    assert seen == ["disconnected"]


def test_the_limits_do_not_cut_ordinary_requests_or_a_slow_answer(small):
    port, _, _, _ = small
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
        assert client.get("/").text == "ok"
        assert client.post("/upload", content=b"x" * 200_000).text == "200000 bytes"
        assert client.get("/slow").text == "done", "the server's own time is not the client's"
        assert client.get("/").text == "ok", "the kept-alive connection is still served"


def test_connections_beyond_the_limit_are_answered_503(small):
    port, _, server, _ = small
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_CONNECTIONS)]
    try:
        deadline = time.monotonic() + 30
        while len(server.server_state.connections) < MAX_CONNECTIONS:  # accepted by the server's loop
            assert time.monotonic() < deadline, "the server did not accept the connections"
            time.sleep(0.01)
        refused = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
    finally:
        for connection in idle:
            connection.close()
    assert refused.status_code == 503
    assert refused.headers.get("connection") == "close"


# -- `grader serve` ---------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """`grader serve` on tiny_add (the emulator grades), with alice on its roster."""
    folder = tmp_path_factory.mktemp("class")
    db = folder / "class.sqlite3"
    token = add_person(db, "alice")
    running = Server(db, folder / "server.log", "--challenges-dir", str(CHALLENGES), "--challenge", "tiny_add",
                     "--max-pending", "5", "--cache-dir", str(folder / "cache"))
    running.start()
    yield running, token
    running.stop()
    assert "Traceback" not in running.log.read_text(), running.log.read_text()[-3000:]


def stored(db) -> int:
    with sqlite3.connect(db) as c:
        return c.execute("SELECT COUNT(*) FROM submissions").fetchone()[0]


def test_grader_serve_cuts_off_a_client_sending_a_header_byte_a_second(served):
    running, _ = served
    margin = margin_s(running.url + "/api/health")
    head = f"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{running.port}\r\nUser-Agent: ".encode() + b"s" * 100
    took, said = trickle(running.port, head, 1.0, transport.HEAD_TIMEOUT_S * 3)
    assert transport.HEAD_TIMEOUT_S - 1 <= took <= transport.HEAD_TIMEOUT_S + margin, took
    assert said.startswith(b"HTTP/1.1 408 ")
    assert httpx.get(running.url + "/api/health", timeout=30).status_code == 200


def test_grader_serve_takes_a_cookie_change_only_from_its_own_pages(served):
    running, token = served
    with httpx.Client(base_url=running.url, timeout=30) as browser:
        logged = browser.post("/login", data={"token": token}, headers={"Origin": running.url})
        assert logged.status_code == 303, logged.text
        cookies = logged.headers.get_list("set-cookie")
        assert cookies and all(token not in c for c in cookies), "the cookie is a session, never the token"
        assert browser.get("/api/me").json()["name"] == "alice"
        before = stored(running.db)
        files = {"file": ("mine.cu", NAIVE.read_bytes())}
        for origin in ("http://evil.example", "null"):
            refused = browser.post("/api/submissions", files=files, data={"challenge": "tiny_add"},
                                   headers={"Origin": origin})
            assert refused.status_code == 403 and "server's pages" in refused.json()["error"], origin
            assert refused.headers["x-content-type-options"] == "nosniff"
        assert stored(running.db) == before
        mine = browser.post("/api/submissions", files=files, data={"challenge": "tiny_add"},
                            headers={"Origin": running.url})
        assert mine.status_code == 201, mine.text
        session = browser.cookies.get("grader_session")
        assert browser.post("/logout", headers={"Origin": running.url}).status_code == 303
    with httpx.Client(base_url=running.url, timeout=30, cookies={"grader_session": session}) as copied:
        assert copied.get("/api/me").status_code == 401, "logging out ended the session on the server"
    bearer = httpx.post(running.url + "/api/submissions", files=files, data={"challenge": "tiny_add"},
                        headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert bearer.status_code == 201, "a bearer token needs no Origin"
    assert stored(running.db) == before + 2
    assert httpx.get(f"{running.url}/api/submissions/²", headers={"Authorization": f"Bearer {token}"},
                     timeout=30).status_code == 404
