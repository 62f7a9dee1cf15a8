"""The run stage, grader side: a worker subprocess per submission, driven over private pipes.

Each request has a deadline; past it the worker's whole process group is killed and the request
ends as TIMEOUT. A worker that dies (segfault, `exit()`, abort) ends the request as CRASHED with
the signal or exit status, and whatever it printed. The grader itself is never at risk.

A boxed worker killed by SIGKILL that the grader did not send is killed from outside, never by the
submission: the box's seccomp policy (grader.seccomp) ends a process that sends SIGKILL, or exits with
the status that reads as one, by SIGSYS instead, and the grader's own limits show otherwise (its
timeouts are its own kills, the memory bound shows in the cgroup's memory.events, the CPU-time limit in
the worker's CPU time). Such a death raises WorkerKilled: the grader's failure, graded again.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import select
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from grader import build, channel
from grader.channel import Command, Op
from grader.errors import SandboxFailed
from grader.sandbox import Cgroup, Confinement, Sandbox, check_box, clean_environment, filters_in_box, given
from grader.timing import Calibration

OUTPUT_TAIL_BYTES = 4096
STARTUP_TIMEOUT_S = 120.0
CONFINEMENT_FAILED = "the worker could not confine itself"
"""How a worker's internal failure at start begins when its own confinement failed (the emulator
runtime's seccomp filter): the grader's failure, not a verdict."""


class Outcome(enum.Enum):
    OK = "ok"
    CUDA_ERROR = "cuda error"
    CRASHED = "crashed"
    TIMEOUT = "timeout"
    MALFORMED = "malformed answer"
    """The worker said something it could not have said: the submission wrote into the channel."""
    MEMORY = "memory bound"
    """The kernel killed the worker for using more memory than its cgroup allows."""
    INTERNAL = "internal"


class WorkerKilled(Exception):
    """The worker was killed from outside the box (not by the submission, nor by a limit of the grader's):
    no verdict; the engines report the job lost (grader.errors.Failure.LOST), and it is graded again."""


KILLED_FROM_OUTSIDE = "the grader's worker was killed from outside (a SIGKILL neither your code nor the grader sent)"
DYING_S = 5.0
"""How long a worker whose box no longer reads as built is given to be seen dead (killed meanwhile) before
the box counts as broken."""
CPU_LIMIT_SLACK_S = 1.0
"""A worker killed by SIGKILL within this much of its CPU-time limit was stopped by that limit (the kernel
counts CPU time in ticks; what the grader reads back is the whole box's, never less than the process's)."""


@dataclass(frozen=True)
class Reply:
    outcome: Outcome
    detail: str = ""
    data: channel.Answer | None = None
    """The worker's checked, typed answer (None when there was none: a timeout, a death, a forgery)."""
    seconds: float = 0.0
    """Wall time the grader waited for this reply."""
    cpu_s: float | None = None
    """CPU time the worker's process used meanwhile, all its threads together, as the grader read it
    from /proc (None where it could not be read)."""


@dataclass(frozen=True)
class CallLimit:
    """How long one call of the entry point may take, and why that long (shown on TIMEOUT)."""

    seconds: float
    why: str


def encode_json(command: dict) -> str:
    return json.dumps(command)


class Worker:
    """One worker process for one submission. Use as a context manager.

    `argv(commands_fd, results_fd)` is the worker's command line; `encode` turns a command into
    the one line the worker reads. Answers are JSON lines either way. The worker's environment is the
    sandbox's allow-list plus `env` (what the worker itself needs), never the grader's whole one.
    `pass_fds`: descriptors of the grader's that the worker inherits besides its two pipes (the
    emulator's buffer arena). `gpu`: the worker's /dev holds the GPU's device nodes, and a third
    channel (a unix socket, its end's number passed to `argv` as `handles_fd`) carries the descriptors
    of the GPU buffers each request names.
    """

    def __init__(self, argv: Callable[..., list[str]], encode: Callable[[dict], str] = encode_json,
                 env: dict[str, str] | None = None, sandbox: Sandbox | None = None, visible: list[Path] = (),
                 pass_fds: tuple[int, ...] = (), gpu: bool = False, filters: int = 0, calibrate_samples: int = 0):
        self.argv, self.encode, self.env = argv, encode, env
        self.calibrate_samples = calibrate_samples
        """No-op samples to time before the library loads (a worker started with a timer answers them)."""
        self.calibration: Calibration | None = None
        """What a timed sample costs with nothing in it, measured before the submission's code was loaded."""
        self.pass_fds = tuple(pass_fds)
        self.sandbox = given(sandbox)
        self.visible = list(visible)
        self.gpu = gpu
        self.filters = filters
        """Seccomp filters the worker installs itself (the emulator runtime's own), beyond the box's."""
        self.confinement: Confinement | None = None
        """What the grader read of the worker's confinement from outside the box, once it was ready."""
        self.group = Cgroup()
        self.proc: subprocess.Popen | None = None
        self.uid: int | None = None
        """The host uid the worker runs as."""
        self.output = tempfile.TemporaryFile()
        self._results = None
        self._commands = None
        self._handles: socket.socket | None = None
        self._worker_pid: int | None = None
        """The worker's host pid (inside bubblewrap's processes, where boxed), for its CPU time."""
        self._stopped = False
        """The grader killed it (a timeout, a forged answer, a box not as built): its death is no news."""
        self._cpu_at_exit: float | None = None
        """The CPU time of the worker and everything it started that was waited for (bubblewrap waits for
        its own children), read when the grader reaped it: how a kill by the CPU-time limit shows."""
        self._buffer = b""

    # -- lifecycle
    def start(self, timeout_s: float = STARTUP_TIMEOUT_S) -> Reply:
        """Start the worker and wait for it to say it is ready (its library loaded, its constructors run),
        at most `timeout_s`."""
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        inherited, theirs = [cmd_r, res_w], None
        if self.gpu:
            self._handles, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            inherited.append(theirs.fileno())
        argv = self.argv(*inherited)
        self.group = Cgroup.create(self.sandbox.limits)
        home = "/tmp" if self.sandbox.active else tempfile.gettempdir()
        with self.sandbox.launch(argv, self.visible, gpu=self.gpu, group=self.group) as boxed:
            self.proc = subprocess.Popen(boxed.argv, stdin=subprocess.DEVNULL, stdout=self.output,
                                         stderr=subprocess.STDOUT, pass_fds=(*inherited, *self.pass_fds, *boxed.pass_fds),
                                         start_new_session=True, env=clean_environment(self.env, home),
                                         cwd=tempfile.gettempdir(), preexec_fn=boxed.preexec)
            self.uid = boxed.uid
        os.close(cmd_r)
        os.close(res_w)
        if theirs is not None:
            theirs.close()
        self._commands = os.fdopen(cmd_w, "w")
        self._results = res_r
        ready = self._calibrated_start(timeout_s) if self.calibrate_samples else self._receive(timeout_s, "start", 0)
        if ready.outcome is Outcome.INTERNAL and ready.detail.startswith(CONFINEMENT_FAILED):
            self._kill()
            raise SandboxFailed(ready.detail)
        if ready.outcome is Outcome.OK:
            died = self._check_confinement()
            if died is not None:
                return died
            self._worker_pid = self.confinement.pid if self.confinement else self.proc.pid  # unboxed: itself
        return ready

    def _calibrated_start(self, timeout_s: float) -> Reply:
        """The worker's runtime is up before its library loads: time no-op samples then, with nothing of
        the submission in the process (its constructors run at the load), so that what a sample costs
        with nothing to time is a figure the submission cannot have touched; then ask for the load."""
        deadline = time.perf_counter() + timeout_s
        up = self._receive(timeout_s, "runtime", 0)
        if up.outcome is not Outcome.OK:
            return up
        worker_s: list[float] = []
        seconds: dict[int, list[float]] = {1: [], CALIBRATION_BATCH: []}
        warm = self.sample(max(deadline - time.perf_counter(), 0.0), CALIBRATION_BATCH)  # clocks up
        if warm.outcome is not Outcome.OK:
            return warm
        for _ in range(self.calibrate_samples):
            for count in seconds:
                reply = self.sample(max(deadline - time.perf_counter(), 0.0), count)
                if reply.outcome is not Outcome.OK:
                    return reply
                worker_s += reply.data.wall_s
                seconds[count].append(reply.seconds)
        self.calibration = Calibration.of(worker_s, seconds[1], seconds[CALIBRATION_BATCH], CALIBRATION_BATCH)
        return self.request(Command(Op.LOAD), max(deadline - time.perf_counter(), 0.0), "start")

    def _cpu_seconds(self) -> float | None:
        """The worker process's CPU time so far (user and system, all threads), from /proc/PID/stat,
        which nothing in the box can forge; None once it is gone."""
        if self._worker_pid is None:
            return None
        try:
            with open(f"/proc/{self._worker_pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _check_confinement(self) -> Reply | None:
        """Read the worker's confinement from outside the box (nothing inside can forge /proc): a box
        that is not as built refuses to grade, as the grader's failure, never as a verdict. A worker that
        died meanwhile (its box then reads as another) is a death, told as any other: its Reply, or
        WorkerKilled."""
        started = time.perf_counter()
        expected = filters_in_box(self.sandbox, self.filters)
        self.confinement, problem = check_box(self.proc.pid, self.sandbox, self.uid, expected)
        if problem:
            if self._ends_within(DYING_S):
                return self._died(started)
            self._kill()
            raise SandboxFailed(f"the worker's box is not as it was built: {problem}")
        return None

    def _ends_within(self, seconds: float) -> bool:
        """Whether the worker has ended, or does within `seconds` (reaped here, with its CPU time)."""
        deadline = time.monotonic() + seconds
        while self._reap(block=False) is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """End the worker and everything it started: nothing outlives its verdict."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            try:
                self._send(Command(Op.EXIT).wire())
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._kill()
        self.group.remove()
        self._close_pipes()
        self.proc = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self._reap(block=False) is None

    def _reap(self, block: bool) -> int | None:
        """The worker's exit status once it has ended (waiting for it with `block`), as Popen's
        returncode; reaped here with wait4, which also gives its CPU time."""
        if self.proc.returncode is not None:
            return self.proc.returncode
        try:
            pid, status, usage = os.wait4(self.proc.pid, 0 if block else os.WNOHANG)
        except ChildProcessError:  # reaped elsewhere
            return self.proc.wait() if block else self.proc.poll()
        if pid == 0:
            return None
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        self._cpu_at_exit = usage.ru_utime + usage.ru_stime
        return self.proc.returncode

    # -- requests
    def call(self, args: list[dict], timeout_s: float, order: str = "forward") -> Reply:
        """One call of the entry point. `order` is the order threads run in, where the backend has one."""
        return self.request(Command(Op.CALL, tuple(args), order), timeout_s)

    def ping(self, timeout_s: float = 30.0) -> Reply:
        """A last request that answers nothing: the worker handles requests in order, so an answer
        still unread from an earlier request (a forged one went first) arrives before this one."""
        return self.request(Command(Op.PING), timeout_s)

    def open_timing(self, args: list[dict], timeout_s: float) -> Reply:
        """Map a timed case's buffers in the worker, for the samples that follow."""
        return self.request(Command(Op.TIME, tuple(args)), timeout_s)

    def sample(self, timeout_s: float, count: int = 1) -> Reply:
        """`count` timed calls of the open timing (before the library loads, of nothing): `seconds` is the
        grader's clock around the request, `data` a channel.Sampled (the worker's events and clock for each)."""
        reply = self.request(Command(Op.SAMPLE, count=count), timeout_s, account_cpu=False)
        if reply.outcome is Outcome.OK and len(reply.data.ms) != count:
            return self._malformed(f"{len(reply.data.ms)} samples where {count} were asked for", time.perf_counter())
        return reply

    def end_timing(self, timeout_s: float = 30.0) -> Reply:
        return self.request(Command(Op.END), timeout_s)

    def request(self, command: Command, timeout_s: float, answer_op: str | None = None, account_cpu: bool = True) -> Reply:
        """Send `command` and read its answer (of kind `answer_op`, by default the command's own op);
        `cpu_s` is the worker's CPU time meanwhile unless `account_cpu` is off (the timed samples,
        which must cost the same as the calibration's)."""
        if self.proc is None or self._stopped:
            return Reply(Outcome.CRASHED, "the worker is not running")
        if not self.alive:  # it died since its last answer: how it died says whose doing that was
            return self._died(time.perf_counter())
        if self._unasked_data():  # an answer came that nothing asked for
            return self._malformed("an answer to no request", time.perf_counter())
        command = dataclasses.replace(command, id=secrets.randbits(53))
        cpu_before = self._cpu_seconds() if account_cpu else None
        try:
            self._send(self._send_handles(command.wire()))
        except OSError:
            pass  # it died; _receive reports how
        reply = self._receive(timeout_s, answer_op or command.op.value, command.id)
        cpu_after = self._cpu_seconds() if account_cpu else None
        if cpu_before is None or cpu_after is None:
            return reply
        return dataclasses.replace(reply, cpu_s=cpu_after - cpu_before)

    def output_tail(self) -> str:
        self.output.flush()
        size = self.output.seek(0, os.SEEK_END)
        self.output.seek(max(0, size - OUTPUT_TAIL_BYTES))
        return self.output.read().decode(errors="replace")

    def output_text(self, limit_bytes: int) -> str:
        """The start of what the worker printed, at most `limit_bytes` of it (the grader reads no more)."""
        self.output.flush()
        self.output.seek(0)
        return self.output.read(limit_bytes).decode(errors="replace")

    # -- plumbing
    def _send_handles(self, command: dict) -> dict:
        """GPU buffers travel as descriptors: those the arguments name (`fd`) go over the handles
        socket in one message, and the command names each by its place in it (`handle`)."""
        args = command.get("args")
        fds = [arg["fd"] for arg in args or () if "fd" in arg]
        if not fds:
            return command
        if self._handles is None:
            raise ValueError("GPU buffers for a worker without a handles channel")
        socket.send_fds(self._handles, [b"h"], fds)
        numbered, index = [], 0
        for arg in args:
            if "fd" in arg:
                arg = {**{k: v for k, v in arg.items() if k != "fd"}, "handle": index}
                index += 1
            numbered.append(arg)
        return {**command, "args": numbered}

    def _send(self, command: dict) -> None:
        self._commands.write(self.encode(command) + "\n")
        self._commands.flush()

    def _receive(self, timeout_s: float, op: str, request_id: int) -> Reply:
        started = time.perf_counter()
        deadline = started + timeout_s
        while b"\n" not in self._buffer:
            left = deadline - time.perf_counter()
            if left <= 0:
                self._kill()
                return Reply(Outcome.TIMEOUT, f"no answer within {timeout_s:g} s; the worker was stopped",
                             seconds=time.perf_counter() - started)
            if len(self._buffer) > channel.MAX_LINE_BYTES:
                return self._malformed(f"an answer longer than {channel.MAX_LINE_BYTES} bytes", started)
            ready, _, _ = select.select([self._results], [], [], left)
            if ready:
                chunk = os.read(self._results, 1 << 16)
                if not chunk:
                    return self._died(started)
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            message = channel.parse(line, op, request_id)
        except channel.Malformed as bad:
            return self._malformed(str(bad), started)
        if self._unasked_data():
            return self._malformed("more than one answer to one request", started)
        return _reply(message, time.perf_counter() - started)

    def _unasked_data(self) -> bool:
        """Bytes already waiting beyond the answer just read (end of file aside: that is a death,
        reported by the next request)."""
        if not self._buffer and select.select([self._results], [], [], 0)[0]:
            self._buffer += os.read(self._results, 1 << 16)
        return bool(self._buffer)

    def _malformed(self, what: str, started: float) -> Reply:
        """The channel cannot be trusted any more: the worker is stopped, the rest of its output dropped."""
        self._kill()
        self._buffer = b""
        return Reply(Outcome.MALFORMED, f"the worker's channel carried {what}: something in the submission wrote "
                                        "into the grader's results pipe, or corrupted the worker; it was stopped",
                     seconds=time.perf_counter() - started)

    def _died(self, started: float) -> Reply:
        """How the worker died, as a Reply, where the submission is the cause; WorkerKilled where something
        outside killed it."""
        code = self._reap(block=True)
        if self.group.out_of_memory():
            bound = self.sandbox.limits.memory_bytes or 0
            return Reply(Outcome.MEMORY, f"the process used more than its memory bound of {bound / (1 << 30):.3g} GiB "
                                         "(host memory: its heap, shared memory and files in /tmp and /dev/shm count "
                                         "alike) and was stopped", seconds=time.perf_counter() - started)
        sandboxed_signal = self.sandbox.active and 128 < code < 128 + signal.NSIG
        if code < 0 or sandboxed_signal:
            number = -code if code < 0 else code - 128  # bubblewrap reports its child's death by signal N as 128 + N
            sig = signal.Signals(number)
            if sig is signal.SIGKILL and self._cpu_limit_reached():
                detail = (f"the process used its CPU time limit of {self.sandbox.limits.cpu_s} s (all its threads "
                          "together) and was stopped (SIGKILL)")
            elif sig is signal.SIGKILL and self.sandbox.active:
                raise WorkerKilled(KILLED_FROM_OUTSIDE)
            else:
                detail = _signal_detail(sig, self.sandbox.limits.file_bytes, self.sandbox.active)
        else:
            detail = f"the process exited with status {code} during the call (exit() or abort in the submission?)"
        return Reply(Outcome.CRASHED, detail, seconds=time.perf_counter() - started)

    def _cpu_limit_reached(self) -> bool:
        used = self._cpu_at_exit
        return used is not None and used >= self.sandbox.limits.cpu_s - CPU_LIMIT_SLACK_S

    def _kill(self) -> None:
        self._stopped = True
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.group.kill_all()
        self._reap(block=True)

    def _close_pipes(self) -> None:
        for closer in (lambda: self._commands.close(), lambda: os.close(self._results),
                       lambda: self._handles and self._handles.close()):
            try:
                closer()
            except OSError:
                pass


def _signal_detail(sig: signal.Signals, file_bytes: int, boxed: bool = True) -> str:
    if sig is signal.SIGSYS and boxed:
        return ("the process was killed by SIGSYS: it made a system call the box ends a process for (sending "
                "SIGKILL, as raise(SIGKILL) or kill(getpid(), 9) do, or exiting with status 137, which reads as "
                "one: only the grader kills a worker that way), or raised SIGSYS itself")
    if sig is signal.SIGKILL and not boxed:
        return ("the process was killed by SIGKILL (without the sandbox the grader cannot tell whether the "
                "submission sent it or something outside did: if not your code, grade again)")
    if sig is signal.SIGXFSZ:
        return (f"the process was stopped for exceeding the file size limit of {file_bytes >> 20} MiB "
                "(its printed output counts as a file too) (SIGXFSZ)")
    if sig is signal.SIGSEGV:
        return "the process was killed by SIGSEGV (segmentation fault)"
    return f"the process was killed by {sig.name}"


_FAILURE_OUTCOMES = {
    channel.FailureKind.CUDA_ERROR: Outcome.CUDA_ERROR,
    channel.FailureKind.CRASH: Outcome.CRASHED,
    channel.FailureKind.FAULT: Outcome.CUDA_ERROR,
    channel.FailureKind.INTERNAL: Outcome.INTERNAL,
}


def _reply(answer: channel.Answer, seconds: float) -> Reply:
    if isinstance(answer, channel.Failed):
        return Reply(_FAILURE_OUTCOMES[answer.kind], answer.detail, answer, seconds)
    return Reply(Outcome.OK, data=answer, seconds=seconds)


CALIBRATION_SAMPLES = 25
"""No-op requests of each size timed before a timing worker's library loads: of one sample, and of
CALIBRATION_BATCH (a sample costs about a quarter of a millisecond: 0.3 s in all)."""
CALIBRATION_BATCH = 40


def python_worker(library: Path, entry: str, sandbox: Sandbox | None = None, python: str = sys.executable,
                  prefix: list[str] = (), flush_bytes: int = 0) -> Worker:
    """The CUDA backend's worker: `python -m grader.worker`, loading the library with ctypes, its GPU
    buffers arriving as descriptors over the handles channel; `prefix` runs it under another program
    (compute-sanitizer). With `flush_bytes` it can time samples (flushing that much L2 before each), and
    is calibrated before its library loads."""
    def argv(commands_fd: int, results_fd: int, handles_fd: int = -1) -> list[str]:
        return [*prefix, python, "-m", "grader.worker", "--library", str(library), "--entry", entry,
                "--sync-symbol", build.SYNC_SYMBOL, "--error-symbol", build.ERROR_NAME_SYMBOL,
                "--commands-fd", str(commands_fd), "--results-fd", str(results_fd), "--handles-fd", str(handles_fd),
                "--flush-bytes", str(flush_bytes)]

    package_root = Path(__file__).resolve().parent.parent
    python_path = os.pathsep.join(filter(None, [str(package_root), os.environ.get("PYTHONPATH")]))
    env = {"PYTHONPATH": python_path, "PYTHONDONTWRITEBYTECODE": "1"}
    from grader.sandbox import python_paths
    visible = [library.parent, package_root / "grader", *python_paths(package_root)]
    return Worker(argv, env=env, sandbox=sandbox, visible=visible, gpu=True,
                  calibrate_samples=CALIBRATION_SAMPLES if flush_bytes else 0)
