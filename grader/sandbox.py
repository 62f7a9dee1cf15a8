"""The worker's box: resource limits always, and a bubblewrap sandbox where the machine allows it.

Inside the sandbox the worker has no network, a private /tmp, and a read-only view of the system
in which the private places (home folders, the grader's cache, the submission's folder and any
folder the caller names) are hidden behind empty file systems; only what the worker needs (its
own build artifact, the grader package, the Python environment) is shown again, read-only.
Resource limits cap CPU time, file size, open files, data memory and, through a pids cgroup
where one is writable, the number of processes (RLIMIT_NPROC does not bind root).
"""

from __future__ import annotations

import enum
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
        """Runs in the child between fork and exec."""
        for name, value in ((resource.RLIMIT_CPU, self.cpu_s), (resource.RLIMIT_FSIZE, self.file_bytes),
                            (resource.RLIMIT_NOFILE, self.open_files), (resource.RLIMIT_DATA, self.data_bytes),
                            (resource.RLIMIT_CORE, 0), (resource.RLIMIT_NPROC, self.processes)):
            _, hard = resource.getrlimit(name)
            cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
            resource.setrlimit(name, (cap, hard))  # lower the soft limit only: never raise a hard one

    def describe(self) -> str:
        return (f"CPU {self.cpu_s} s, files {self.file_bytes >> 20} MiB, {self.open_files} open files, "
                f"data {self.data_bytes >> 30} GiB, {self.processes} processes")


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

    def wrap(self, argv: list[str], visible: list[Path]) -> list[str]:
        if not self.active:
            return argv
        args = [self.bwrap, "--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-ipc",
                "--unshare-uts", "--unshare-cgroup-try", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev",
                "--proc", "/proc", "--tmpfs", "/tmp"]
        if not self.share_pid:
            args.append("--unshare-pid")
        for path in self.hidden:
            if path.is_dir():
                args += ["--tmpfs", str(path)]
        for path in _outermost(visible):
            if path.exists():
                args += ["--ro-bind", str(path), str(path)]
        return args + ["--chdir", "/tmp", "--", *argv]


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
        out = subprocess.run([bwrap, "--unshare-user", "--unshare-net", "--ro-bind", "/", "/", "--dev-bind", "/dev",
                              "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "true"],
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
        what = "bubblewrap: no network, private /tmp, read-only system, private folders hidden"
        return Sandbox(mode, True, what, bwrap, limits, hidden_paths, share_pid)
    if mode is SandboxMode.REQUIRED:
        raise BackendUnavailable(f"--sandbox required, but the sandbox cannot start: {problem}",
                                 hint="install bubblewrap (apt-get install bubblewrap) and allow user namespaces")
    return Sandbox(mode, False, problem, limits=limits)
