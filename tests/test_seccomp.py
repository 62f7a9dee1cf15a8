"""The box's seccomp policy: its program, read by a small classic-BPF interpreter for every call and
architecture it names, and the real kernel refusing what it lists while a Python program runs as usual."""

from __future__ import annotations

import ctypes
import errno
import platform
import signal
import struct
import subprocess
import sys

import pytest

from grader import seccomp

ALLOW, DENY, ENOSYS = seccomp.SECCOMP_RET_ALLOW, seccomp.SECCOMP_RET_ERRNO | errno.EPERM, \
    seccomp.SECCOMP_RET_ERRNO | errno.ENOSYS
END = seccomp.SECCOMP_RET_KILL_PROCESS


def run(program: bytes, nr: int, arch: int, args: tuple[int, ...] = ()) -> int:
    """What the program answers for one call: classic BPF over struct seccomp_data, for the opcodes the
    policy uses (load word, and, jump if equal / greater or equal / any bit set, return)."""
    data = struct.pack("<iIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    statements = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    pc, a = 0, 0
    for _ in range(len(statements)):
        code, jt, jf, k = statements[pc]
        if code == seccomp.BPF_LD_W_ABS:
            a = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (seccomp.BPF_JEQ_K, seccomp.BPF_JGE_K, seccomp.BPF_JSET_K):
            taken = {seccomp.BPF_JEQ_K: a == k, seccomp.BPF_JGE_K: a >= k, seccomp.BPF_JSET_K: bool(a & k)}[code]
            pc += 1 + (jt if taken else jf)
        elif code == seccomp.BPF_AND_K:
            a &= k
            pc += 1
        elif code == seccomp.BPF_RET_K:
            return k
        else:
            raise AssertionError(f"unexpected opcode {code:#x}")
    raise AssertionError("the program ran off its end")


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_every_listed_call_is_refused_and_ordinary_ones_allowed(machine):
    arch = seccomp.ARCHES[machine]
    program = seccomp.policy(machine)
    for name in seccomp.REFUSED:
        if name in arch.numbers:
            assert run(program, arch.numbers[name], arch.audit) == DENY, name
    n = arch.numbers
    ordinary = {"read": 0 if machine == "x86_64" else 63, "write": 1 if machine == "x86_64" else 64,
                "mmap": 9 if machine == "x86_64" else 222}
    for name, number in ordinary.items():
        assert run(program, number, arch.audit) == ALLOW, name
    assert run(program, n["clone3"], arch.audit) == ENOSYS, "clone3 falls back to clone, whose flags are read"
    thread_flags = 0x3D0F00  # what glibc's pthread_create passes: no namespace flag
    assert run(program, n["clone"], arch.audit, (thread_flags,)) == ALLOW
    for flag in (0x10000000, 0x20000, 0x20000000, 0x40000000):  # NEWUSER, NEWNS, NEWPID, NEWNET
        assert run(program, n["clone"], arch.audit, (thread_flags | flag,)) == DENY, hex(flag)
    assert run(program, n["seccomp"], arch.audit, (1, 0)) == ALLOW, "a filter of its own, answering fixed values"
    assert run(program, n["seccomp"], arch.audit, (1, seccomp.SECCOMP_FILTER_FLAG_NEW_LISTENER)) == DENY
    assert run(program, n["ioctl"], arch.audit, (0, seccomp.TIOCSTI)) == DENY
    assert run(program, n["ioctl"], arch.audit, (0, 0x5401)) == ALLOW  # TCGETS


@pytest.mark.parametrize("machine", sorted(seccomp.ARCHES))
def test_a_boxed_process_cannot_make_a_sigkill_of_its_own(machine):
    """What lets the grader call a SIGKILL it did not send a kill from outside (grader.run.WorkerKilled)."""
    arch = seccomp.ARCHES[machine]
    program, n = seccomp.policy(machine), arch.numbers
    for name, index in seccomp.SENDS_SIGNAL.items():
        for sig, answer in ((9, END), (15, ALLOW), (6, ALLOW), (0, ALLOW), (9 | 1 << 32, END)):
            args = [1234] * index + [sig]
            assert run(program, n[name], arch.audit, tuple(args)) == answer, (name, sig)
    for name in ("exit", "exit_group"):
        for status, answer in ((0, ALLOW), (1, ALLOW), (137, END), (137 + 256, END), (159, ALLOW), (136, ALLOW)):
            assert run(program, n[name], arch.audit, (status,)) == answer, (name, status)
    for resource, answer in ((seccomp.RLIMIT_CPU, DENY), (seccomp.RLIMIT_RTTIME, DENY), (3, ALLOW), (7, ALLOW)):
        assert run(program, n["setrlimit"], arch.audit, (resource, 0x7000)) == answer, resource
        assert run(program, n["prlimit64"], arch.audit, (0, resource, 0x7000, 0)) == answer, resource
        assert run(program, n["prlimit64"], arch.audit, (0, resource, 1 << 32, 0)) == answer, resource
        assert run(program, n["prlimit64"], arch.audit, (0, resource, 0, 0x7000)) == ALLOW, "reading a limit"
    assert run(program, n["fcntl"], arch.audit, (3, seccomp.F_SETSIG, 9)) == DENY
    assert run(program, n["fcntl"], arch.audit, (3, seccomp.F_SETSIG, 10)) == ALLOW
    assert run(program, n["fcntl"], arch.audit, (3, 1, 9)) == ALLOW  # F_GETFD
    for name in ("timer_create", "mq_notify"):
        assert run(program, n[name], arch.audit, (0, 0x7000, 0x7000)) == DENY, name


def test_other_abis_are_refused_whole():
    arch = seccomp.ARCHES["x86_64"]
    program = seccomp.policy("x86_64")
    assert run(program, 0, 0x40000003) == ENOSYS, "i386 (int 0x80): other numbers, refused before any is read"
    assert run(program, 0 | seccomp.X32_SYSCALL_BIT, arch.audit) == ENOSYS, "x32"


def test_no_policy_for_an_unknown_machine():
    with pytest.raises(seccomp.Unavailable, match="riscv"):
        seccomp.policy("riscv64")


INSTALLED = r"""
import ctypes, errno, os, sys, threading
from grader import seccomp
code = seccomp.policy()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buffer = ctypes.create_string_buffer(code, len(code))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
assert libc.prctl(22, 2, ctypes.byref(Prog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))), 0, 0) == 0
numbers = seccomp.ARCHES[os.uname().machine].numbers
def errno_of(name, *args):
    result = libc.syscall(numbers[name], *args)
    return ctypes.get_errno() if result == -1 else 0
refused = {
    "unshare": errno_of("unshare", 0x10000000),
    "mount": errno_of("mount", None, None, None, 0, None),
    "umount2": errno_of("umount2", b"/nonexistent", 0),
    "ptrace": errno_of("ptrace", 0, 0, 0, 0),
    "bpf": errno_of("bpf", 0, None, 0),
    "keyctl": errno_of("keyctl", 0, 0, 0, 0, 0),
}
bad = {name: e for name, e in refused.items() if e != errno.EPERM}
thread = threading.Thread(target=lambda: None)  # threads still start: clone3 falls back to clone
thread.start(); thread.join()
child = os.fork()  # and processes
if child == 0:
    os._exit(0 if errno_of("unshare", 0x20000) == errno.EPERM else 1)
inherited = os.waitpid(child, 0)[1] == 0
print(bad, inherited)
sys.exit(0 if not bad and inherited else 1)
"""


@pytest.mark.skipif(platform.machine() not in seccomp.ARCHES, reason="no policy for this machine")
def test_the_kernel_refuses_what_the_policy_lists_and_python_still_runs():
    out = subprocess.run([sys.executable, "-c", INSTALLED], capture_output=True, text=True, timeout=60,
                         start_new_session=True)
    assert out.returncode == 0, out.stdout + out.stderr


SELF_KILL = r"""
import ctypes, errno, os, resource, signal, sys
from grader import seccomp
code = seccomp.policy()
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
buffer = ctypes.create_string_buffer(code, len(code))
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0
assert libc.prctl(22, 2, ctypes.byref(Prog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))), 0, 0) == 0
how = sys.argv[1]
if how == "limits":
    try:  # lowering is always allowed by the kernel: only the filter refuses it (EPERM, which Python words so)
        resource.setrlimit(resource.RLIMIT_CPU, (1, 1))
        sys.exit(1)
    except ValueError as error:
        assert "not allowed" in str(error), error
    resource.getrlimit(resource.RLIMIT_CPU)  # reading stays allowed
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # and other limits
    signal.signal(signal.SIGUSR1, lambda *_: None)
    os.kill(os.getpid(), signal.SIGUSR1)  # and other signals
    sys.exit(0)
if how == "raise":
    libc.raise_(9) if hasattr(libc, "raise_") else getattr(libc, "raise")(9)
elif how == "kill":
    os.kill(os.getpid(), 9)
elif how == "exit":
    os._exit(137 + 256)
sys.exit(2)  # still running: the call was not stopped
"""


@pytest.mark.skipif(platform.machine() not in seccomp.ARCHES, reason="no policy for this machine")
@pytest.mark.parametrize("how", ["raise", "kill", "exit"])
def test_the_kernel_ends_a_process_that_sends_sigkill_by_sigsys(how):
    out = subprocess.run([sys.executable, "-c", SELF_KILL, how], capture_output=True, text=True, timeout=60,
                         start_new_session=True)
    assert out.returncode == -signal.SIGSYS, out.stdout + out.stderr


@pytest.mark.skipif(platform.machine() not in seccomp.ARCHES, reason="no policy for this machine")
def test_the_kernel_refuses_a_new_cpu_limit_and_allows_other_signals():
    out = subprocess.run([sys.executable, "-c", SELF_KILL, "limits"], capture_output=True, text=True, timeout=60,
                         start_new_session=True)
    assert out.returncode == 0, out.stdout + out.stderr
