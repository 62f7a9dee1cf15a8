"""The worker's seccomp filter: it may signal only itself, and reach no other process's memory."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from grader import seccomp

pytestmark = pytest.mark.skipif(platform.machine() not in seccomp.ARCHES, reason="no filter for this machine")

PROBE = r"""
import errno, os, signal, sys
from grader import seccomp
assert seccomp.install(os.getpid()) is None
def refused(call):
    try:
        call()
    except PermissionError:
        return True
    return False
results = {
    "parent": refused(lambda: os.kill(os.getppid(), 0)),
    "everyone": refused(lambda: os.kill(-1, 0)),
    "self": not refused(lambda: os.kill(os.getpid(), 0)),
    "own group": not refused(lambda: os.kill(0, 0)),
    "parent's limits": refused(lambda: __import__("resource").prlimit(os.getppid(), __import__("resource").RLIMIT_CORE)),
    "own limits": not refused(lambda: __import__("resource").prlimit(0, __import__("resource").RLIMIT_CORE)),
    "pidfd": refused(lambda: os.pidfd_open(os.getppid())),
}
child = os.fork()
if child == 0:  # the filter is inherited
    os._exit(0 if refused(lambda: os.kill(-1, 0)) and refused(lambda: os.pidfd_open(1)) else 1)
results["inherited"] = os.waitpid(child, 0)[1] == 0
print(results)
sys.exit(0 if all(results.values()) else 1)
"""


def test_the_filter_allows_only_signals_to_itself():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_program_refuses_other_abis_first():
    code = seccomp.program(seccomp.ARCHES["x86_64"], 1234)
    assert len(code) % 8 == 0
    # the architecture check's "no" branch lands on a refusal, never on "allow"
    third = code[16:24]
    assert int.from_bytes(third[4:], "little") == seccomp.SECCOMP_RET_ERRNO | seccomp.EPERM
