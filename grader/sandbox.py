"""The box around every stage that touches submission bytes: compilers and workers alike.

Inside the box (bubblewrap) a process has no network, a private /tmp, /dev (with the GPU's device
nodes for a GPU worker, nothing else of the host's) and /dev/shm, and a read-only view of the system
in which the private places (home folders, the grader's cache, the database's folder, the
submission's folder and any folder the caller names) are hidden behind empty file systems; only
what the stage needs (the toolchain, its own build folder, its one artifact, the grader package,
the Python environment) is shown again — read-only except a compile's own build folder.
Every boxed process gets a clean environment (an allow-list) and resource limits whose hard value
equals the soft one, so the submission cannot raise them; a pids cgroup, where one is writable,
caps the number of processes (RLIMIT_NPROC does not bind root). Without bubblewrap (`--sandbox
off`, or `auto` on a machine that cannot start it) the limits and the clean environment still
apply, but files are not hidden: that mode is for code you trust.
"""

from __future__ import annotations

import ctypes
import enum
import glob
import os
import resource
import shutil
import site
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from grader.errors import BackendUnavailable

PRIVATE_ROOTS = ("/home", "/root", "/work", "/mnt", "/srv", "/media", "/var/tmp", "/run/user")
GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset",
               "/dev/nvidia[0-9]*", "/dev/nvidia-caps")
"""The device nodes the CUDA driver opens; a GPU worker's /dev holds these and the basic ones only."""
ENVIRONMENT_ALLOWED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "CUDA_HOME", "CUDA_PATH",
                       "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "LD_LIBRARY_PATH")
"""What a boxed process inherits of the grader's environment: what the toolchain and the CUDA driver
read. Nothing else of the teacher's shell (tokens, keys, proxies) reaches a submission."""


class SandboxMode(enum.Enum):
    OFF = "off"
    AUTO = "auto"
    """Use the sandbox when the machine allows it; say so either way."""
    REQUIRED = "required"
    """Refuse to grade without it (classroom servers)."""


@dataclass(frozen=True)
class Limits:
    cpu_s: int = 1800
    file_bytes: int = 64 << 20
    """Largest file the worker may write, its captured output included."""
    open_files: int = 1024
    data_bytes: int = 32 << 30
    processes: int = 256

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
        return (f"CPU {self.cpu_s} s, files {self.file_bytes >> 20} MiB, {self.open_files} open files, "
                f"data {self.data_bytes >> 30} GiB, {self.processes} processes")


COMPILE_DATA_BYTES = 4 << 30


def compile_limits(timeout_s: float) -> Limits:
    """A compiler's limits: CPU time as long as the wall-clock limit, 4 GiB of data per process
    (nvcc's largest front-end process on the reference ladder uses well under 1 GiB; a template
    bomb reached 5 GB before), 256 MiB per file written, 64 processes (nvcc runs a handful)."""
    return Limits(cpu_s=max(1, int(timeout_s) + 1), file_bytes=256 << 20, open_files=256, data_bytes=COMPILE_DATA_BYTES,
                  processes=64)


def clean_environment(extra: dict[str, str] | None = None, home: str = "/tmp") -> dict[str, str]:
    """The environment of a boxed process: the allow-list above, HOME and TMPDIR at its private /tmp."""
    env = {name: os.environ[name] for name in ENVIRONMENT_ALLOWED if name in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(HOME=home, TMPDIR=home)
    env.update(extra or {})
    return env


PR_SET_DUMPABLE = 4


def keep_grader_private() -> None:
    """Make the grader's own process non-dumpable. A GPU worker shares the PID namespace (CUDA IPC
    finds the exporting process by pid), so it sees /proc/<grader>; for a dumpable process of the same
    user, /proc/<grader>/root, /cwd, /environ and /fd lead around every hidden folder. Non-dumpable,
    they need CAP_SYS_PTRACE in the grader's user namespace, which the box never has."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


@dataclass
class ProcessCap:
    """A pids cgroup (v1 or v2) holding one worker and everything it forks."""

    path: Path | None

    @classmethod
    def create(cls, limit: int) -> "ProcessCap":
        for parent in (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup")):
            if not (parent / "cgroup.procs").exists():
                continue
            group = parent / f"cuda-grader-{os.getpid()}-{uuid.uuid4().hex[:8]}"
            try:
                group.mkdir()
                (group / "pids.max").write_text(str(limit))
                return cls(group)
            except OSError:
                try:
                    group.rmdir()
                except OSError:
                    pass
        return cls(None)

    def join(self) -> None:
        """Runs in the child between fork and exec: it and all its descendants count against the cap."""
        if self.path is not None:
            (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def kill_all(self) -> None:
        if self.path is None:
            return
        for _ in range(50):
            try:
                pids = [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
            except OSError:
                return
            if not pids:
                break
            for pid in pids:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass

    def remove(self) -> None:
        """Kill what is left, then remove the group once the killed processes have exited."""
        if self.path is None:
            return
        for _ in range(100):
            self.kill_all()
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.02)


@dataclass(frozen=True)
class Sandbox:
    mode: SandboxMode
    active: bool
    reason: str
    """Why it is inactive, or what it does."""
    bwrap: str | None = None
    limits: Limits = field(default_factory=Limits)
    hidden: tuple[Path, ...] = ()
    share_pid: bool = False
    """The CUDA backend keeps the PID namespace: CUDA IPC opens the exporting process's memory by its pid."""

    def describe(self) -> str:
        state = "active" if self.active else "INACTIVE"
        return f"sandbox: {state} ({self.reason}); limits: {self.limits.describe()}"

    def wrap(self, argv: list[str], visible: list[Path], writable: list[Path] = (),
             chdir: Path | None = None, info_fd: int | None = None, masked: list[Path] = ()) -> list[str]:
        """The command line that runs `argv` boxed: `visible` shown read-only, `writable` read-write
        (a compile's own build folder), everything under the private roots and `hidden` replaced by
        empty folders, and `masked` folders (inside what is visible: library headers) empty too.
        Paths are made absolute (bubblewrap resolves a relative one against the new root and fails).
        With `info_fd`, bubblewrap writes to that descriptor once the box is set up: a caller that
        reads nothing from it knows the box never started."""
        if not self.active:
            return argv
        args = [self.bwrap, "--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--ro-bind", "/", "/", "--dev", "/dev",
                "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
        if self.share_pid:
            args += _gpu_device_binds()
        else:
            args.append("--unshare-pid")
        for path in self.hidden:
            if path.is_dir():
                args += ["--tmpfs", str(path.resolve())]
        for path in _outermost(visible):
            if path.exists():
                args += ["--ro-bind", str(path), str(path)]
        for path in writable:
            args += ["--bind", str(Path(path).resolve()), str(Path(path).resolve())]
        for path in masked:  # after the binds that would show them again
            if Path(path).is_dir():
                args += ["--tmpfs", str(Path(path).resolve())]
        if info_fd is not None:
            args += ["--info-fd", str(info_fd)]
        return args + ["--chdir", str(Path(chdir).resolve() if chdir else "/tmp"), "--", *argv]


def _gpu_device_binds() -> list[str]:
    """The GPU worker's device nodes, bound into its otherwise private /dev."""
    args: list[str] = []
    for pattern in GPU_DEVICES:
        for node in sorted(glob.glob(pattern)):
            args += ["--dev-bind", node, node]
    return args


def _outermost(paths: list[Path]) -> list[Path]:
    """Drop paths inside others, so one bind covers them."""
    resolved = sorted({p.resolve() for p in paths}, key=lambda p: len(p.parts))
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


def probe(bwrap: str) -> str | None:
    """None when bubblewrap can build our sandbox here, else why not."""
    try:
        out = subprocess.run([bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", "--dev", "/dev",
                              "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "true"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    return None if out.returncode == 0 else (out.stderr.strip() or f"exit status {out.returncode}")


def make(mode: SandboxMode, hidden: list[Path], limits: Limits | None = None, share_pid: bool = False) -> Sandbox:
    limits = limits or Limits()
    hidden_paths = tuple(Path(p) for p in PRIVATE_ROOTS) + tuple(hidden)
    if mode is SandboxMode.OFF:
        return Sandbox(mode, False, "turned off with --sandbox off", limits=limits)
    bwrap = find_bwrap()
    problem = "bubblewrap (bwrap) is not installed" if bwrap is None else probe(bwrap)
    if problem is None:
        what = "bubblewrap: no network, private /tmp, /dev and /dev/shm, read-only system, private folders hidden"
        return Sandbox(mode, True, what, bwrap, limits, hidden_paths, share_pid)
    if mode is SandboxMode.REQUIRED:
        raise BackendUnavailable(f"--sandbox required, but the sandbox cannot start: {problem}",
                                 hint="install bubblewrap (apt-get install bubblewrap) and allow user namespaces")
    return Sandbox(mode, False, problem, limits=limits)
