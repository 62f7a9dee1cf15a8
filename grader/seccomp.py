"""The seccomp policy every box runs under: written here, installed by bubblewrap before the boxed
program's first instruction.

bubblewrap loads the program from a descriptor (`--seccomp FD`) and installs it, with no_new_privs,
as the last step before it executes the boxed command: before the dynamic loader, before any
constructor or GNU ifunc resolver of a submission can run, so nothing in a submission can pre-empt
it, and no filter a submission adds later can loosen it (the kernel applies every filter and keeps
the strictest answer).

Refused, whatever the arguments (EPERM):
- mounting and unmounting, in every form (`mount`, `umount2`, `pivot_root`, `chroot`, the new mount
  API): the box's hidden folders are mounts, and a process that could take one away would see what
  is under it;
- new namespaces (`unshare`, `setns`; `clone` with a CLONE_NEW* flag): in a user namespace of its own
  a process holds every capability again;
- reaching other processes (`ptrace`, `process_vm_readv`/`writev`, `pidfd_getfd`, `process_madvise`,
  `kcmp`);
- the kernel's own interfaces that have served escapes or have no use in a box: keyrings, `bpf`,
  `perf_event_open`, `userfaultfd`, io_uring (whose operations bypass seccomp), module loading, kexec,
  reboot, swap, accounting, quotas, the kernel log, file handles (`open_by_handle_at`), port I/O,
  setting the clock, `lookup_dcookie`, `vhangup`, `uselib`, `fanotify_init`, `nfsservctl`, `_sysctl`.
Conditional:
- `clone3` answers ENOSYS (its flags sit in a struct a filter cannot read; the C library then falls
  back to `clone`, whose flags it can);
- `seccomp` with SECCOMP_FILTER_FLAG_NEW_LISTENER is refused: a filter of the submission's own may
  only answer fixed values, never hand its calls to a supervisor process that could forge results;
- `ioctl` TIOCSTI and TIOCLINUX (typing into a terminal) are refused.
- A call through another ABI (x32, or i386's `int 0x80` on x86-64), whose numbers differ, fails whole.
So that a SIGKILL the grader did not send is known to come from outside the box (grader.run.WorkerKilled:
the grader's failure, graded again, never the student's crash), a boxed process cannot make one itself:
- sending SIGKILL (`kill`, `tkill`, `tgkill`, `rt_sigqueueinfo`, `rt_tgsigqueueinfo`, `pidfd_send_signal`:
  `raise(SIGKILL)`, `kill(getpid(), 9)`, to itself or any process) ends the sender by SIGSYS, as does
  exiting with a status whose low byte is 137 (`exit`, `exit_group`: bubblewrap reports a death by
  signal N as status 128 + N, so `exit(137)` would read as a SIGKILL). Both stay the submission's crash;
- the ways to have the kernel send it later are refused (EPERM): a new CPU-time or real-time limit
  (`setrlimit`, `prlimit64` with RLIMIT_CPU or RLIMIT_RTTIME: the kernel sends SIGKILL at the hard one),
  `fcntl(F_SETSIG, SIGKILL)`, and `timer_create` and `mq_notify`, whose signal number sits in a struct
  a filter cannot read. `abort()` (SIGABRT) and every other signal are untouched.

Written for x86-64 and aarch64; `policy` raises for another machine and the box says so.
"""

from __future__ import annotations

import errno
import os
import platform
import struct
from dataclasses import dataclass

SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
"""Ends the whole process at once, as if by SIGSYS (no handler runs)."""
X32_SYSCALL_BIT = 0x40000000
CLONE_NAMESPACES = 0x7E020000
"""CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (CLONE_NEWTIME exists only
for clone3 and unshare: in clone's flags its bit is part of the exit signal)."""
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
TIOCSTI, TIOCLINUX = 0x5412, 0x541C
SIGKILL = 9
KILLED_STATUS = 128 + SIGKILL
"""The exit status bubblewrap gives a box whose program died by SIGKILL."""
RLIMIT_CPU, RLIMIT_RTTIME = 0, 15
F_SETSIG = 10
SENDS_SIGNAL = {"kill": 1, "tkill": 1, "tgkill": 2, "rt_sigqueueinfo": 1, "rt_tgsigqueueinfo": 2, "pidfd_send_signal": 1}
"""The calls that send a signal, and which argument is its number."""

# classic BPF opcodes
BPF_LD_W_ABS = 0x20
BPF_JEQ_K = 0x15
BPF_JGE_K = 0x35
BPF_JSET_K = 0x45
BPF_AND_K = 0x54
BPF_RET_K = 0x06

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian)
OFFSET_NR = 0
OFFSET_ARCH = 4


def _arg_low(index: int) -> int:
    return 16 + 8 * index


REFUSED = ("mount", "umount2", "pivot_root", "chroot", "open_tree", "move_mount", "fsopen", "fsconfig",
           "fsmount", "fspick", "mount_setattr", "unshare", "setns", "ptrace", "process_vm_readv",
           "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp", "keyctl", "add_key", "request_key",
           "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
           "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot", "swapon",
           "swapoff", "acct", "quotactl", "quotactl_fd", "syslog", "open_by_handle_at", "name_to_handle_at",
           "iopl", "ioperm", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "lookup_dcookie",
           "vhangup", "uselib", "fanotify_init", "nfsservctl", "_sysctl", "create_module", "timer_create", "mq_notify")
"""Every call refused outright, by name; an architecture lacking one (aarch64 has no iopl) skips it."""


@dataclass(frozen=True)
class Arch:
    audit: int
    numbers: dict[str, int]
    x32: bool = False


_X86_64 = dict(mount=165, umount2=166, pivot_root=155, chroot=161, open_tree=428, move_mount=429, fsopen=430,
               fsconfig=431, fsmount=432, fspick=433, mount_setattr=442, unshare=272, setns=308, ptrace=101,
               process_vm_readv=310, process_vm_writev=311, pidfd_getfd=438, process_madvise=440, kcmp=312,
               keyctl=250, add_key=248, request_key=249, bpf=321, perf_event_open=298, userfaultfd=323,
               io_uring_setup=425, io_uring_enter=426, io_uring_register=427, kexec_load=246, kexec_file_load=320,
               init_module=175, finit_module=313, delete_module=176, reboot=169, swapon=167, swapoff=168,
               acct=163, quotactl=179, quotactl_fd=443, syslog=103, open_by_handle_at=304, name_to_handle_at=303,
               iopl=172, ioperm=173, settimeofday=164, clock_settime=227, clock_adjtime=305, adjtimex=159,
               lookup_dcookie=212, vhangup=153, uselib=134, fanotify_init=300, nfsservctl=180, _sysctl=156,
               create_module=174, clone=56, clone3=435, seccomp=317, ioctl=16, kill=62, tkill=200, tgkill=234,
               rt_sigqueueinfo=129, rt_tgsigqueueinfo=297, pidfd_send_signal=424, exit=60, exit_group=231,
               setrlimit=160, prlimit64=302, fcntl=72, timer_create=222, mq_notify=244)
_AARCH64 = dict(mount=40, umount2=39, pivot_root=41, chroot=51, open_tree=428, move_mount=429, fsopen=430,
                fsconfig=431, fsmount=432, fspick=433, mount_setattr=442, unshare=97, setns=268, ptrace=117,
                process_vm_readv=270, process_vm_writev=271, pidfd_getfd=438, process_madvise=440, kcmp=272,
                keyctl=219, add_key=217, request_key=218, bpf=280, perf_event_open=241, userfaultfd=282,
                io_uring_setup=425, io_uring_enter=426, io_uring_register=427, kexec_load=104,
                kexec_file_load=294, init_module=105, finit_module=273, delete_module=106, reboot=142, swapon=224,
                swapoff=225, acct=89, quotactl=60, quotactl_fd=443, syslog=116, open_by_handle_at=265,
                name_to_handle_at=264, settimeofday=170, clock_settime=112, clock_adjtime=266, adjtimex=171,
                lookup_dcookie=18, vhangup=58, fanotify_init=262, nfsservctl=42, clone=220, clone3=435,
                seccomp=277, ioctl=29, kill=129, tkill=130, tgkill=131, rt_sigqueueinfo=138, rt_tgsigqueueinfo=240,
                pidfd_send_signal=424, exit=93, exit_group=94, setrlimit=164, prlimit64=261, fcntl=25,
                timer_create=107, mq_notify=184)

ARCHES = {"x86_64": Arch(0xC000003E, _X86_64, x32=True), "aarch64": Arch(0xC00000B7, _AARCH64)}


class Unavailable(Exception):
    """No policy for this machine's architecture."""


# --------------------------------------------------------------------------- a tiny assembler
# A program is a list of statements; a jump names its targets by label, resolved to the forward
# offsets classic BPF wants (8 bits: every target here lies within reach).

@dataclass(frozen=True)
class _Op:
    code: int
    k: int
    true: str | None = None
    false: str | None = None


def _assemble(ops: list[_Op | str]) -> bytes:
    labels, statements = {}, []
    for op in ops:
        if isinstance(op, str):
            labels[op] = len(statements)
        else:
            statements.append(op)
    out = []
    for index, op in enumerate(statements):
        jt = labels[op.true] - index - 1 if op.true else 0
        jf = labels[op.false] - index - 1 if op.false else 0
        if not (0 <= jt < 256 and 0 <= jf < 256):
            raise ValueError(f"a jump out of reach at statement {index}")
        out.append(struct.pack("<HBBI", op.code, jt, jf, op.k))
    return b"".join(out)


def _load(offset: int) -> _Op:
    return _Op(BPF_LD_W_ABS, offset)


def _if_equal(value: int, then: str) -> _Op:
    return _Op(BPF_JEQ_K, value, true=then)


def _give(action: int) -> _Op:
    return _Op(BPF_RET_K, action)


def program(arch: Arch) -> bytes:
    """The policy as classic BPF (struct sock_filter[]), as bubblewrap's --seccomp reads it."""
    deny, no_such_call = SECCOMP_RET_ERRNO | errno.EPERM, SECCOMP_RET_ERRNO | errno.ENOSYS
    n = arch.numbers
    ops: list[_Op | str] = [_load(OFFSET_ARCH), _Op(BPF_JEQ_K, arch.audit, false="wrong abi"), _load(OFFSET_NR)]
    if arch.x32:
        ops.append(_Op(BPF_JGE_K, X32_SYSCALL_BIT, true="wrong abi"))
    ops += [_if_equal(n[name], "deny") for name in REFUSED if name in n]
    ops += [_if_equal(n["clone3"], "no such call"), _if_equal(n["clone"], "clone"),
            _if_equal(n["seccomp"], "seccomp"), _if_equal(n["ioctl"], "ioctl")]
    ops += [_if_equal(n[name], f"signal in {index}") for name, index in SENDS_SIGNAL.items()]
    ops += [_if_equal(n["exit"], "exit"), _if_equal(n["exit_group"], "exit"), _if_equal(n["setrlimit"], "setrlimit"),
            _if_equal(n["prlimit64"], "prlimit64"), _if_equal(n["fcntl"], "fcntl"), _give(SECCOMP_RET_ALLOW)]
    ops += ["clone", _load(_arg_low(0)), _Op(BPF_JSET_K, CLONE_NAMESPACES, true="deny"), _give(SECCOMP_RET_ALLOW)]
    ops += ["seccomp", _load(_arg_low(1)), _Op(BPF_JSET_K, SECCOMP_FILTER_FLAG_NEW_LISTENER, true="deny"),
            _give(SECCOMP_RET_ALLOW)]
    ops += ["ioctl", _load(_arg_low(1)), _if_equal(TIOCSTI, "deny"), _if_equal(TIOCLINUX, "deny"),
            _give(SECCOMP_RET_ALLOW)]
    for index in sorted(set(SENDS_SIGNAL.values())):  # the signal is an int: its low word is what the kernel reads
        ops += [f"signal in {index}", _load(_arg_low(index)), _if_equal(SIGKILL, "end it"), _give(SECCOMP_RET_ALLOW)]
    ops += ["exit", _load(_arg_low(0)), _Op(BPF_AND_K, 0xFF), _if_equal(KILLED_STATUS, "end it"),
            _give(SECCOMP_RET_ALLOW)]
    ops += ["setrlimit", _load(_arg_low(0)), _if_equal(RLIMIT_CPU, "deny"), _if_equal(RLIMIT_RTTIME, "deny"),
            _give(SECCOMP_RET_ALLOW)]
    # prlimit64(pid, resource, new, old): reading a limit (new is null) stays allowed
    ops += ["prlimit64", _load(_arg_low(1)), _if_equal(RLIMIT_CPU, "prlimit64 sets?"),
            _if_equal(RLIMIT_RTTIME, "prlimit64 sets?"), _give(SECCOMP_RET_ALLOW),
            "prlimit64 sets?", _load(_arg_low(2)), _Op(BPF_JEQ_K, 0, false="deny"), _load(_arg_low(2) + 4),
            _Op(BPF_JEQ_K, 0, false="deny"), _give(SECCOMP_RET_ALLOW)]
    ops += ["fcntl", _load(_arg_low(1)), _Op(BPF_JEQ_K, F_SETSIG, false="allow"), _load(_arg_low(2)),
            _if_equal(SIGKILL, "deny"), "allow", _give(SECCOMP_RET_ALLOW)]
    ops += ["deny", _give(deny), "no such call", _give(no_such_call), "wrong abi", _give(no_such_call),
            "end it", _give(SECCOMP_RET_KILL_PROCESS)]
    return _assemble(ops)


def policy(machine: str | None = None) -> bytes:
    """This machine's policy; Unavailable where there is none."""
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        raise Unavailable(f"no seccomp policy for {machine or platform.machine()}")
    return program(arch)


def policy_fd() -> int:
    """A descriptor reading the policy from its start (an anonymous file: the caller passes it to
    bubblewrap's --seccomp and closes it afterwards)."""
    fd = os.memfd_create("grader-seccomp", os.MFD_CLOEXEC)
    os.write(fd, policy())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
