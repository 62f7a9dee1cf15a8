"""A real `grader serve` for the tests that need one (the load, CLI and browser tests): started on a
free port on the CPU emulator, awaited through /api/health, killed or stopped; and the `grader` command
those tests drive it with."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from conftest import ROOT

START_TIMEOUT_S = 90


def grader(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, **kwargs)


def add_person(db: Path, name: str, instructor: bool = False) -> str:
    """Put a person on the roster with the CLI; their token is its last line of output."""
    done = grader("roster", "add", name, "--db", str(db), *(["--instructor"] if instructor else []))
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`grader serve --db DB --backend emulator --sandbox auto` plus `serve_args`, its output in `log`."""

    def __init__(self, db: Path, log: Path, *serve_args: str):
        self.db, self.log, self.port = db, log, free_port()
        self.serve_args = serve_args
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None

    def start(self, timeout_s: float = START_TIMEOUT_S) -> dict:
        """Start it and wait (at most `timeout_s`) for its health answer, which is returned."""
        with open(self.log, "a") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "grader", "serve", "--db", str(self.db), "--port", str(self.port),
                 "--backend", "emulator", "--sandbox", "auto", *self.serve_args],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            assert self.process.poll() is None, f"the server exited: {self.log.read_text()[-3000:]}"
            try:
                answer = httpx.get(self.url + "/api/health", timeout=2)
                if answer.status_code == 200:
                    return answer.json()
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        pytest.fail(f"the server did not answer within {timeout_s:g} s: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
