"""Faults injected for real, for the tests of what the grader does when they happen: a submission that
waits at a gate the test opens (so a worker is killed, or let go, at a moment the test chooses, with no
timing luck), the processes of a grading found by their parentage, and a database made read-only in a
way that holds for root too."""

from __future__ import annotations

import contextlib
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

GATE = r"""
#include <cuda_runtime.h>
#include <signal.h>
#include <time.h>
// Waits in its first call of solve until the test sends SIGUSR1: the test kills this worker or lets it
// go. The handler is in place (the process's SigCgt says so) before the test may send it.
static volatile sig_atomic_t opened = 0;
static void on_open(int) { opened = 1; }
__attribute__((constructor)) static void install_gate() { signal(SIGUSR1, on_open); }
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}
extern "C" void solve(const float* A, const float* B, float* C, int N) {
    struct timespec tick = {0, 1000000};
    while (!opened) nanosleep(&tick, 0);
    vector_add<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
"""
"""A correct tiny_add submission, held at a gate (see `gated_worker`)."""

SELF_KILL = r"""
#include <cuda_runtime.h>
#include <signal.h>
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}
extern "C" void solve(const float* A, const float* B, float* C, int N) {
    raise(SIGKILL);
    vector_add<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
"""
"""A submission that kills itself: its own crash, whatever signal it picked."""

WAIT_S = 120.0


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def descendants(root: int) -> list[int]:
    """Every live process below `root` (a grader of this test's: never another test's processes)."""
    parents = {int(p): _parent(int(p)) for p in os.listdir("/proc") if p.isdigit()}
    found, frontier = [], {root}
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found += children
        frontier = set(children)
    return found


def _argv(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")
    except OSError:
        return []


def _catches(pid: int, sig: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            line = next(line for line in f if line.startswith("SigCgt:"))
    except (OSError, StopIteration):
        return False
    return bool(int(line.split()[1], 16) >> (sig - 1) & 1)


def gated_worker(root: int, exclude: tuple[int, ...] = (), timeout_s: float = WAIT_S) -> int:
    """The emulator worker below `root` that waits at GATE's gate (its SIGUSR1 handler installed); polls."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for pid in descendants(root):
            argv = _argv(pid)
            if argv and argv[0].endswith(b"/worker") and b"--commands-fd" in argv and pid not in exclude \
                    and _catches(pid, signal.SIGUSR1):
                return pid
        time.sleep(0.05)
    pytest.fail(f"no gated worker below process {root} within {timeout_s:g} s")


def grading_process(root: int) -> int:
    """The local engine's grading process (a multiprocessing child) of the server `root`."""
    found = [pid for pid in descendants(root) if _parent(pid) == root and b"spawn_main" in b" ".join(_argv(pid))]
    assert len(found) == 1, found
    return found[0]


def wait_for(db: Path, sql: str, want, timeout_s: float = WAIT_S):
    """Poll the database (read-write, never creating it) until `sql`'s first row is `want`."""
    deadline = time.monotonic() + timeout_s
    row = None
    while time.monotonic() < deadline:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=30)) as c:
            row = c.execute(sql).fetchone()
        if row == want:
            return row
        time.sleep(0.05)
    pytest.fail(f"{sql} gave {row}, not {want}, within {timeout_s:g} s")


@contextlib.contextmanager
def read_only(path: Path):
    """`path` read-only for this process and the ones it starts: immutable (chattr +i) where the test runs
    as root, whom file modes do not stop; its mode 0444 otherwise. Skips where neither can be done."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    made = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make {path} immutable here: {made.stderr.strip()}")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
