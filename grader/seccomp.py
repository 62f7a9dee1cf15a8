"""A seccomp filter that keeps a worker's hands off every other process.

A GPU worker shares the grader's PID namespace (legacy CUDA IPC finds the exporting process by its
pid, and cannot cross namespaces), so without this it could signal, trace or read the memory of any
process of the same user: the grader first. The worker installs this filter itself, after its own
start-up and before it loads the submission, with its own pid written into the program; the filter
is inherited by everything the submission starts, and cannot be removed.

Refused with EPERM:
- signals to any process but the worker itself (`kill`, `tgkill`, `tkill`, `rt_sigqueueinfo`,
  `rt_tgsigqueueinfo`); `kill(0, …)`, its own process group, is allowed: that group is the box;
- changing another process's resource limits (`prlimit64` with a pid other than 0 or its own);
- `ptrace`, `process_vm_readv`/`writev`, `pidfd_open`, `pidfd_getfd`, `pidfd_send_signal`.
- Every system call through another ABI (x32, or i386's int 0x80 on x86-64): other numbers, which
  would walk around the rules above.

Written for x86-64 and aarch64, where the numbers below hold; elsewhere `install` does nothing and
says so.
"""

from __future__ import annotations

import ctypes
import platform
import struct
from dataclasses import dataclass

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
EPERM = 1
X32_SYSCALL_BIT = 0x40000000

# classic BPF opcodes
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_RET_K = 0x06

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6]
OFFSET_NR = 0
OFFSET_ARCH = 4
OFFSET_ARG0_LOW = 16  # little-endian: the low word of args[0]; a pid_t is its low 32 bits


@dataclass(frozen=True)
class Arch:
    audit: int
    never: dict[str, int]
    """System calls refused whatever their arguments."""
    own_pid_first: dict[str, int]
    """System calls allowed only when their first argument is the worker's pid (or 0, where 0 is self)."""
    x32: bool = False


ARCHES = {
    "x86_64": Arch(0xC000003E,
                   never={"ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_open": 434,
                          "pidfd_send_signal": 424, "pidfd_getfd": 438},
                   own_pid_first={"kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129,
                                  "rt_tgsigqueueinfo": 297, "prlimit64": 302},
                   x32=True),
    "aarch64": Arch(0xC00000B7,
                    never={"ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_open": 434,
                           "pidfd_send_signal": 424, "pidfd_getfd": 438},
                    own_pid_first={"kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
                                   "rt_tgsigqueueinfo": 240, "prlimit64": 261}),
}


def _statement(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def program(arch: Arch, pid: int) -> bytes:
    """The filter as classic BPF: check the architecture (a call through another ABI, such as int 0x80
    on x86-64, is refused whole: its numbers differ), refuse the listed calls, allow the rest."""
    deny, allow = _statement(BPF_RET_K, SECCOMP_RET_ERRNO | EPERM), _statement(BPF_RET_K, SECCOMP_RET_ALLOW)
    head = [_statement(BPF_LD_W_ABS, OFFSET_ARCH), _statement(BPF_JEQ_K, arch.audit, jt=1, jf=0), deny,
            _statement(BPF_LD_W_ABS, OFFSET_NR)]
    if arch.x32:
        head += [_statement(BPF_JGE_K, X32_SYSCALL_BIT, jt=0, jf=1), deny]
    own_pid_check = [_statement(BPF_LD_W_ABS, OFFSET_ARG0_LOW), _statement(BPF_JEQ_K, pid, jt=2, jf=0),
                     _statement(BPF_JEQ_K, 0, jt=1, jf=0), deny, allow]
    # After the number tests: [allow] [deny] [own-pid check]; each test jumps forward to one of them.
    numbers = [(nr, "deny") for nr in arch.never.values()] + [(nr, "check") for nr in arch.own_pid_first.values()]
    tests = []
    for index, (nr, target) in enumerate(numbers):
        to_allow = len(numbers) - index - 1  # statements between this test and the first target
        jump = to_allow + (1 if target == "deny" else 2)
        tests.append(_statement(BPF_JEQ_K, nr, jt=jump, jf=0))
    return b"".join(head + tests + [allow, deny] + own_pid_check)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install(pid: int) -> str | None:
    """Install the filter in this process; None when installed, else why not (the caller says so)."""
    arch = ARCHES.get(platform.machine())
    if arch is None:
        return f"no seccomp filter for {platform.machine()}"
    code = program(arch, pid)
    buffer = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return f"prctl(PR_SET_NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}"
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        return f"prctl(PR_SET_SECCOMP) failed: errno {ctypes.get_errno()}"
    return None
