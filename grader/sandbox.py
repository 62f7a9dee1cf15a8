"""The box around every stage that touches submission bytes: compilers and workers alike.

A boxed process runs as an unprivileged host uid (never root: when the grader is root, every box gets a
uid of its own, drawn from a range no account uses), with no capabilities, no_new_privs, and the
seccomp policy of grader/seccomp.py installed by bubblewrap before the process's first instruction.
It has PID, network, IPC, UTS and cgroup namespaces of its own (so its /proc lists only the box),
a private /tmp and /dev/shm of bounded size, /dev with the basic nodes (and the GPU's, for a GPU
worker), and a read-only view of the system in which the private places (home folders, /run, the
grader's cache, the database's folder, the submission's folder and any folder the caller names) are
hidden behind empty file systems; only what the stage needs (the toolchain, its own build folder, its
artifact, the grader package, the Python environment) is shown again, read-only except a compile's own
build folder. Resource limits are hard (soft equal to hard); a cgroup caps processes and, where the
memory controller can be used, memory.

Two ways to build that box, chosen once by probing:
- PRIVILEGED (the grader is root): bubblewrap sets the box up as root, keeping only the capabilities
  to change uid, and `setpriv` drops to the box's uid, clearing every capability and the bounding set,
  before the boxed program runs. Bind sources are resolved as root, so a cache under /root works.
- USER_NAMESPACE (the grader is not root, or root without the right to make namespaces): bubblewrap
  runs as the box's uid (root drops to it first) in a user namespace of its own, nested user
  namespaces disabled. Everything shown must be reachable by that uid.

Without bubblewrap (`--sandbox off`, or `auto` where no box can be made) the limits and the clean
environment still apply, but nothing is hidden and the uid is the grader's: that mode is for code you
trust, and every report says the grade was unboxed.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import glob
import os
import resource
import secrets
import shutil
import site
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from grader import seccomp
from grader.errors import BackendUnavailable

PRIVATE_ROOTS = ("/home", "/root", "/work", "/mnt", "/srv", "/media", "/var/tmp", "/run", "/var/run")
"""Hidden from every box. /run holds the host's unix sockets (D-Bus, container runtimes)."""
GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
               "/dev/nvidia[0-9]*", "/dev/nvidia-caps")
"""The device nodes the CUDA driver opens; a GPU worker's /dev holds these and the basic ones only."""
ENVIRONMENT_ALLOWED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "CUDA_HOME", "CUDA_PATH",
                       "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH")
"""What a boxed process inherits of the grader's environment: what the toolchain and the CUDA driver
read. Nothing else of the teacher's shell (tokens, keys, proxies) reaches a submission."""
BOX_UID_FIRST = 1_900_000_000
BOX_UID_COUNT = 200_000_000
"""Box uids when the grader is root: above the ranges distributions, systemd and container tools hand
out (container ranges end at 1,879,048,191), below 2^31. Each box draws its own, so two boxes running at
once can never reach each other's files or processes by sharing a uid."""
TMPFS_BYTES = 256 << 20
"""Size of a worker's private /tmp and /dev/shm each: files there are memory."""


class SandboxMode(enum.Enum):
    OFF = "off"
    AUTO = "auto"
    """Use the sandbox when the machine allows it; say so either way."""
    REQUIRED = "required"
    """Refuse to grade without it (classroom servers)."""


class BoxKind(enum.Enum):
    PRIVILEGED = "privileged setup, then setpriv to the box's uid"
    USER_NAMESPACE = "user namespace"


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 1800
    file_bytes: int = 64 << 20
    """Largest file the worker may write, its captured output included."""
    open_files: int = 1024
    data_bytes: int = 32 << 30
    """RLIMIT_DATA: private writable memory per process (heap, private mappings)."""
    processes: int = 256
    memory_bytes: int | None = None
    """The box's whole memory (its processes, their shared memory and tmpfs files), by a cgroup where one
    can be made; None: no such bound here beyond the rlimits."""
    tmp_bytes: int = TMPFS_BYTES
    """Size of the box's /tmp and of its /dev/shm, each."""

    def apply(self) -> None:
        """Runs in the child between fork and exec. Soft and hard limits are set alike: a process may
        raise its soft limit up to the hard one, so a lowered soft limit alone binds nobody."""
        for name, value in ((resource.RLIMIT_CPU, self.cpu_s), (resource.RLIMIT_FSIZE, self.file_bytes),
                            (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_DATA, self.data_bytes),
                            (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, self.processes)):
            _, hard = resource.getrlimit(name)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(name, (cap, cap))

    def describe(self) -> str:
        memory = f", memory {_size(self.memory_bytes)} in all" if self.memory_bytes else ""
        return (f"CPU {self.cpu_s} s, files {self.file_bytes >> 20} MiB, {self.open_files} open files, "
                f"data {_size(self.data_bytes)} per process{memory}, {self.processes} processes")


def _size(nbytes: int) -> str:
    return f"{nbytes / (1 << 30):g} GiB" if nbytes >= 1 << 30 else f"{nbytes >> 20} MiB"


COMPILE_DATA_BYTES = 4 << 30
COMPILE_MEMORY_BYTES = 6 << 30
COMPILE_TMP_BYTES = 1 << 30


def compile_limits(timeout_s: float) -> Limits:
    """A compiler's limits: CPU time as long as the wall-clock limit, 4 GiB of data per process
    (nvcc's largest front-end process on the reference ladder uses well under 1 GiB; a template
    bomb reached 5 GB before), 6 GiB for the whole compile (above one process's rlimit, so a bomb is
    told it ran out of memory rather than killed), 256 MiB per file written, a 1 GiB /tmp for nvcc's
    intermediate files, 64 processes (nvcc runs a handful)."""
    return Limits(cpu_s=max(1, int(timeout_s) + 1), file_bytes=256 << 20, open_files=256, data_bytes=COMPILE_DATA_BYTES,
                  processes=64, memory_bytes=COMPILE_MEMORY_BYTES, tmp_bytes=COMPILE_TMP_BYTES)


def clean_environment(extra: dict[str, str] | None = None, home: str = "/tmp") -> dict[str, str]:
    """The environment of a boxed process: the allow-list above, HOME and TMPDIR at its private /tmp."""
    env = {name: os.environ[name] for name in ENVIRONMENT_ALLOWED if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=home, TMPDIR=home)
    env.update(extra or {})
    return env


# --------------------------------------------------------------------------- the cgroup


@dataclass
class Cgroup:
    """A cgroup (v2, or v1's pids and memory hierarchies) holding one boxed process and everything it
    forks: it caps their number and, where the memory controller is ours to use, their memory, and it
    lets the grader kill every one of them."""

    paths: tuple[Path, ...] = ()
    memory: Path | None = None
    """The group whose memory is bounded, if any."""

    @classmethod
    def create(cls, limits: Limits) -> "Cgroup":
        name = f"cuda-grader-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        unified = Path("/sys/fs/cgroup")
        if (unified / "cgroup.subtree_control").exists():
            group = _make_group(unified / name, {"pids.max": str(limits.processes)})
            if group is None:
                return cls()
            memory = group if limits.memory_bytes and _write_all(group, {"memory.max": str(limits.memory_bytes),
                                                                          "memory.swap.max": "0"}) else None
            return cls((group,), memory)
        pids = _make_group(unified / "pids" / name, {"pids.max": str(limits.processes)})
        memory = None
        if limits.memory_bytes:
            memory = _make_group(unified / "memory" / name, {"memory.limit_in_bytes": str(limits.memory_bytes)})
            if memory is not None:  # swap counted too where swap accounting exists
                _write_all(memory, {"memory.memsw.limit_in_bytes": str(limits.memory_bytes)})
        return cls(tuple(p for p in (pids, memory) if p is not None), memory)

    def join(self) -> None:
        """Runs in the child between fork and exec: it and all its descendants are in the group."""
        for path in self.paths:
            (path / "cgroup.procs").write_text(str(os.getpid()))

    def out_of_memory(self) -> bool:
        """Did the kernel kill a process of the group for exceeding its memory bound?"""
        if self.memory is None:
            return False
        for events in ("memory.events", "memory.oom_control"):
            try:
                fields = dict(line.split() for line in (self.memory / events).read_text().splitlines())
            except (OSError, ValueError):
                continue
            return int(fields.get("oom_kill", 0)) > 0
        return False

    def kill_all(self) -> None:
        for _ in range(50):
            pids = self._pids()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass

    def remove(self) -> None:
        """Kill what is left, then remove the groups once the killed processes have exited."""
        for path in self.paths:
            for _ in range(100):
                self.kill_all()
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)

    def _pids(self) -> list[int]:
        for path in self.paths:
            try:
                return [int(p) for p in (path / "cgroup.procs").read_text().split()]
            except OSError:
                continue
        return []


def _make_group(path: Path, settings: dict[str, str]) -> Path | None:
    if not (path.parent / "cgroup.procs").exists():
        return None
    try:
        path.mkdir()
    except OSError:
        return None
    if _write_all(path, settings):
        return path
    with contextlib.suppress(OSError):
        path.rmdir()
    return None


def _write_all(path: Path, settings: dict[str, str]) -> bool:
    try:
        for name, value in settings.items():
            (path / name).write_text(value)
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Capabilities:
    """What a cgroup can do on this machine, probed once."""

    processes: bool
    memory: bool


@functools.cache
def cgroup_capabilities() -> Capabilities:
    group = Cgroup.create(Limits(memory_bytes=1 << 30))
    found = Capabilities(bool(group.paths), group.memory is not None)
    group.remove()
    return found


# --------------------------------------------------------------------------- the box


@dataclass(frozen=True)
class Launch:
    """One boxed start: the command line, the descriptors the child must inherit, and what it does
    between fork and exec (limits, cgroup, and in a user-namespace box run by root, the drop to the
    box's uid)."""

    argv: list[str]
    pass_fds: tuple[int, ...]
    preexec: Callable[[], None]
    uid: int
    """The host uid the boxed program runs as."""


@dataclass(frozen=True)
class Sandbox:
    mode: SandboxMode
    active: bool
    reason: str
    """Why it is inactive, or what it does."""
    bwrap: str | None = None
    limits: Limits = field(default_factory=Limits)
    hidden: tuple[Path, ...] = ()
    kind: BoxKind | None = None
    setpriv: str | None = None
    """setpriv's path, for a PRIVILEGED box."""

    def describe(self) -> str:
        state = "active" if self.active else "INACTIVE"
        return f"sandbox: {state} ({self.reason}); limits: {self.limits.describe()}"

    @contextlib.contextmanager
    def launch(self, argv: list[str], visible: list[Path] = (), writable: list[Path] = (),
               chdir: Path | None = None, info_fd: int | None = None, masked: list[Path] = (),
               gpu: bool = False, group: Cgroup | None = None) -> Iterator[Launch]:
        """Everything needed to start `argv` boxed (see `wrap` for the folders): use as
        `with box.launch(...) as start: subprocess.Popen(start.argv, pass_fds=start.pass_fds, preexec_fn=start.preexec)`.
        The policy's descriptor is the grader's until the block ends."""
        limits, uid = self.limits, box_uid()
        drop = self.active and self.kind is BoxKind.USER_NAMESPACE and os.geteuid() == 0

        def preexec() -> None:  # in the child, between fork and exec
            limits.apply()
            if group is not None:
                group.join()
            if drop:
                _become(uid)

        if not self.active:
            yield Launch(list(argv), (), preexec, os.getuid())
            return
        for path in writable:
            _hand_over(Path(path), uid)
        policy = seccomp.policy_fd()
        try:
            wrapped = self.wrap(argv, visible, writable, chdir, info_fd, masked, gpu, uid, policy)
            yield Launch(wrapped, (policy,), preexec, uid)
        finally:
            os.close(policy)

    def wrap(self, argv: list[str], visible: list[Path], writable: list[Path] = (), chdir: Path | None = None,
             info_fd: int | None = None, masked: list[Path] = (), gpu: bool = False, uid: int | None = None,
             policy_fd: int | None = None) -> list[str]:
        """The command line that runs `argv` boxed: `visible` shown read-only, `writable` read-write
        (a compile's own build folder), everything under the private roots and `hidden` replaced by
        empty folders, and `masked` folders (inside what is visible: library headers) empty too.
        Paths are made absolute (bubblewrap resolves a relative one against the new root and fails).
        With `info_fd`, bubblewrap writes to that descriptor once the box is set up: a caller that
        reads nothing from it knows the box never started."""
        if not self.active:
            return list(argv)
        args = [self.bwrap, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
                "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]
        if self.kind is BoxKind.USER_NAMESPACE:
            args += ["--unshare-user", "--disable-userns"]
        else:  # bubblewrap keeps only what setpriv needs to leave root behind
            args += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID",
                     "--cap-add", "CAP_SETPCAP"]
        args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        covers = [Path("/tmp"), Path("/dev/shm")]
        args += _tmpfs(Path("/tmp"), self.limits.tmp_bytes, "1777") + _tmpfs(Path("/dev/shm"), self.limits.tmp_bytes, "1777")
        if gpu:
            args += _gpu_device_binds()
        for path in self.hidden:
            resolved = Path(path).resolve()
            if resolved.is_dir() and not _inside(resolved, covers):
                args += _tmpfs(resolved, 1 << 20, "0755")
                covers.append(resolved)
        shown = [p for p in _outermost(visible) if p.exists()]
        written = [Path(p).resolve() for p in writable]
        for private in _closed_ancestors([*shown, *written], covers):
            args += _tmpfs(private, 1 << 20, "0755")
            covers.append(private)
        for path in shown:
            args += _parents(path, covers) + ["--ro-bind", str(path), str(path)]
        for path in written:
            args += _parents(path, covers) + ["--bind", str(path), str(path)]
        for path in masked:  # after the binds that would show them again
            if Path(path).is_dir():
                args += _tmpfs(Path(path).resolve(), 1 << 20, "0755")
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        if policy_fd is not None:
            args += ["--seccomp", str(policy_fd)]
        args += ["--chdir", str(Path(chdir).resolve() if chdir else "/tmp"), "--"]
        if self.kind is BoxKind.PRIVILEGED:
            uid = box_uid() if uid is None else uid
            args += [self.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all",
                     "--bounding-set=-all", "--no-new-privs", "--"]
        return args + list(argv)


def box_uid() -> int:
    """The host uid of a new box: a fresh one from the range when the grader is root, else the grader's."""
    if os.geteuid() != 0:
        return os.getuid()
    return BOX_UID_FIRST + secrets.randbelow(BOX_UID_COUNT)


def _hand_over(folder: Path, uid: int) -> None:
    """A compile's build folder, and the files the grader put in it, become the box uid's: its tools
    read the source and write their output there. Others may pass through the folder (bubblewrap, which
    keeps no right to override permissions, must enter it) but not list it. An ordinary user's grader
    boxes as itself: the folder is its own already."""
    if os.geteuid() != 0:
        return
    for entry in folder.iterdir():
        os.chown(entry, uid, uid, follow_symlinks=False)
    os.chown(folder, uid, uid)
    os.chmod(folder, 0o711)


def _become(uid: int) -> None:
    """Leave root for `uid` (its own group too, no supplementary groups)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _tmpfs(path: Path, size_bytes: int, mode: str) -> list[str]:
    return ["--perms", mode, "--size", str(size_bytes), "--tmpfs", str(path)]


def _inside(path: Path, folders: list[Path]) -> bool:
    return any(path == f or f in path.parents for f in folders)


def _closed_ancestors(paths: list[Path], covers: list[Path]) -> list[Path]:
    """Host folders above what a box is shown that other users may not enter (a 0700 home above a
    virtual environment, say): the box's uid could not reach the shown folder through them, so each is
    replaced by an empty folder of its own, which also keeps everything else in it private."""
    found: list[Path] = []
    for path in paths:
        for ancestor in reversed(path.parents):
            if _inside(ancestor, covers + found):
                break
            if ancestor != Path("/") and not os.stat(ancestor).st_mode & 0o001:
                found.append(ancestor)
                break
    return found


def _parents(path: Path, covers: list[Path]) -> list[str]:
    """bubblewrap makes the folders above a bind inside a tmpfs of ours with the host folders' modes
    (a 0700 folder above a cache would lock the box out of its own artifact): make them 0755 first."""
    cover = next((c for c in sorted(covers, key=lambda c: -len(c.parts)) if c in path.parents), None)
    if cover is None:
        return []
    args: list[str] = []
    for parent in reversed(path.parents):
        if cover in parent.parents:
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def _gpu_device_binds() -> list[str]:
    """The GPU worker's device nodes, bound into its otherwise private /dev."""
    args: list[str] = []
    for pattern in GPU_DEVICES:
        for node in sorted(glob.glob(pattern)):
            args += ["--dev-bind", node, node]
    return args


def _outermost(paths: list[Path]) -> list[Path]:
    """Drop paths inside others, so one bind covers them."""
    resolved = sorted({Path(p).resolve() for p in paths}, key=lambda p: len(p.parts))
    kept: list[Path] = []
    for path in resolved:
        if not any(path == k or k in path.parents for k in kept):
            kept.append(path)
    return kept


def python_paths(exclude: Path) -> list[Path]:
    """What a Python worker needs to see: its interpreter, standard library and package folders,
    but nothing at or inside `exclude` (the repository, where submissions may live)."""
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(), site.getusersitepackages(),
                  str(Path(sys.executable).resolve().parent), *sys.path]
    kept = []
    for entry in candidates:
        if not entry or not os.path.isdir(entry):
            continue
        path = Path(entry).resolve()
        if path == exclude or exclude in path.parents or path in exclude.parents and path != Path("/"):
            continue  # the repository itself, or a folder that contains it
        kept.append(path)
    return kept


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


# --------------------------------------------------------------------------- choosing how to box


def probe(bwrap: str, kind: BoxKind, setpriv: str | None) -> str | None:
    """None when bubblewrap can build a box of this kind here, with the seccomp policy installed and no
    capability left, else why not."""
    box = Sandbox(SandboxMode.AUTO, True, "probe", bwrap, kind=kind, setpriv=setpriv)
    check = ("import sys\n"
             "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
             "ok = status['CapEff'].strip() == '0' * 16 and status['NoNewPrivs'].strip() == '1' "
             "and status['Seccomp'].strip() == '2' and status['Uid'].split()[0] != '0'\n"
             "sys.exit(0 if ok else 7)\n")
    try:
        with box.launch([sys.executable, "-c", check], visible=python_paths(Path("/nonexistent"))) as start:
            out = subprocess.run(start.argv, pass_fds=start.pass_fds, preexec_fn=start.preexec,
                                 capture_output=True, text=True, timeout=60, env=clean_environment())
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if out.returncode == 7:
        return "the box started with capabilities, as root, or without its seccomp policy"
    return None if out.returncode == 0 else (out.stderr.strip().splitlines() or [f"exit status {out.returncode}"])[-1]


@functools.cache
def choose_kind(bwrap: str) -> tuple[BoxKind | None, str | None, str]:
    """How to box here, probed once per bubblewrap: (kind, setpriv, "") when one works, else (None,
    None, every reason)."""
    reasons = []
    setpriv = shutil.which("setpriv")
    if os.geteuid() == 0:
        if setpriv is None:
            reasons.append("setpriv (util-linux) is not installed, so a box set up by root cannot leave root")
        else:
            problem = probe(bwrap, BoxKind.PRIVILEGED, setpriv)
            if problem is None:
                return BoxKind.PRIVILEGED, setpriv, ""
            reasons.append(f"as root: {problem}")
    problem = probe(bwrap, BoxKind.USER_NAMESPACE, None)
    if problem is None:
        return BoxKind.USER_NAMESPACE, None, ""
    reasons.append(f"in a user namespace: {problem}")
    return None, None, "; ".join(reasons)


def make(mode: SandboxMode, hidden: list[Path], limits: Limits | None = None) -> Sandbox:
    limits = limits or Limits()
    hidden_paths = tuple(Path(p) for p in PRIVATE_ROOTS) + tuple(hidden)
    if mode is SandboxMode.OFF:
        return Sandbox(mode, False, "turned off with --sandbox off", limits=limits)
    bwrap = find_bwrap()
    if bwrap is None:
        kind, setpriv, problem = None, None, "bubblewrap (bwrap) is not installed"
    else:
        kind, setpriv, problem = choose_kind(bwrap)
    if kind is not None:
        return Sandbox(mode, True, _what(kind), bwrap, limits, hidden_paths, kind, setpriv)
    if mode is SandboxMode.REQUIRED:
        raise BackendUnavailable(f"--sandbox required, but the sandbox cannot start: {problem}",
                                 hint="install bubblewrap and util-linux's setpriv (apt-get install bubblewrap "
                                      "util-linux), and allow user namespaces or run the grader as root")
    return Sandbox(mode, False, problem, limits=limits)


def _what(kind: BoxKind) -> str:
    who = ("a uid of its own per box, set up by root then dropped with setpriv" if kind is BoxKind.PRIVILEGED
           else f"uid {os.getuid()} in a user namespace" if os.geteuid() != 0
           else "a uid of its own per box, in a user namespace")
    memory = ("each worker's memory bounded by a cgroup, sized from the challenge" if cgroup_capabilities().memory
              else "no memory cgroup here: memory bounded per process by rlimits only")
    return (f"bubblewrap: {who}, no capabilities, no_new_privs, seccomp policy ({len(seccomp.REFUSED)} calls "
            f"refused, SIGKILL left to the grader), own PID/network/IPC namespaces, private /tmp and /dev/shm, read-only system, private "
            f"folders and /run hidden, {memory}")


def given(box: Sandbox | None) -> Sandbox:
    """`box`, or where a caller gave none, no box: the limits and the clean environment alone."""
    return box or make(SandboxMode.OFF, [])


def with_memory(box: Sandbox, memory_bytes: int) -> Sandbox:
    """`box` with its memory bound set, where a cgroup can hold one."""
    bound = memory_bytes if cgroup_capabilities().memory else None
    return replace(box, limits=replace(box.limits, memory_bytes=bound))


# --------------------------------------------------------------------------- checking a box from outside


@dataclass(frozen=True)
class Confinement:
    """What the grader read, from outside the box, of a boxed process's /proc status: nothing in the
    box can forge it."""

    pid: int
    """The process's host pid."""
    uid: int
    capabilities: int
    """Effective, permitted and ambient capability sets together (0: none)."""
    no_new_privs: bool
    seccomp_filters: int

    def problem(self, uid: int | None, filters: int) -> str | None:
        """What is not as the box was built, or None."""
        if self.uid == 0 or (uid is not None and self.uid != uid):
            return f"it runs as uid {self.uid}, not the box's uid {uid}"
        if self.capabilities:
            return f"it holds capabilities ({self.capabilities:#x})"
        if not self.no_new_privs:
            return "no_new_privs is not set"
        if self.seccomp_filters < filters:
            return f"{self.seccomp_filters} seccomp filter(s) in force, {filters} expected"
        return None


def read_confinement(pid: int) -> Confinement | None:
    """The confinement of process `pid`, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            fields = dict(line.rstrip("\n").split(":\t", 1) for line in status if ":\t" in line)
    except OSError:
        return None
    capabilities = 0
    for name in ("CapEff", "CapPrm", "CapAmb"):
        capabilities |= int(fields.get(name, "0"), 16)
    filters = int(fields.get("Seccomp_filters", "0")) if fields.get("Seccomp") == "2" else 0
    return Confinement(pid, int(fields["Uid"].split()[0]), capabilities, fields.get("NoNewPrivs") == "1", filters)


def boxed_processes(root_pid: int, bwrap: str | None) -> list[int]:
    """The processes under `root_pid` (bubblewrap, as the grader started it) that are not bubblewrap
    itself: the boxed program and whatever it started."""
    bwrap_exe = os.path.realpath(bwrap) if bwrap else None
    found, frontier = [], [root_pid]
    while frontier:
        pid = frontier.pop()
        for task in _tasks(pid):
            try:
                frontier += [int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
            except OSError:
                pass
        try:
            exe = os.readlink(f"/proc/{pid}/exe")
        except OSError:
            exe = None
        if exe != bwrap_exe:
            found.append(pid)
    return found


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


@functools.cache
def inherited_filters() -> int:
    """Seccomp filters the grader itself runs under (a container's profile, say): every process it
    starts inherits them, before the box adds its own."""
    seen = read_confinement(os.getpid())
    return seen.seccomp_filters if seen else 0


def filters_in_box(box: Sandbox, own: int = 0) -> int:
    """Filters a boxed program has once ready: the inherited ones, the box's policy, and `own` (the
    emulator runtime's)."""
    return inherited_filters() + (1 if box.active else 0) + own


def check_box(root_pid: int, box: Sandbox, uid: int, filters: int) -> tuple[Confinement | None, str | None]:
    """Read every boxed process under `root_pid`: the first one's confinement, and the first problem
    found in any (None when all are as built). An inactive box is not checked."""
    if not box.active:
        return None, None
    first = None
    for pid in boxed_processes(root_pid, box.bwrap):
        seen = read_confinement(pid)
        if seen is None:
            continue
        first = first or seen
        problem = seen.problem(uid, filters)
        if problem:
            return seen, f"process {pid} of the box: {problem}"
    if first is None:
        return None, "no boxed process was found to check"
    return first, None
