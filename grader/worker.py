"""The worker: the only process that loads and calls submitted code.

Started by `grader.run.Worker` as `python -m grader.worker`, it reads one JSON command a line
from a private pipe and answers one JSON line on another, so nothing the submission prints can
forge an answer. A crash, `exit()` or a sticky CUDA error ends this process, never the grader.
Buffers live in the grader's process and arrive as descriptors (grader/devmem.py) over a unix
socket; the grader checks them after each call, so nothing this process says about correctness is
trusted. The box (grader/sandbox.py) confines this process from before its first instruction: its
seccomp policy, uid and namespaces are in force before the submission's library is loaded.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import socket
import sys
import time
import traceback


class Submission:
    def __init__(self, library: str, entry: str, sync_symbol: str, error_symbol: str):
        self.lib = ctypes.CDLL(library, mode=os.RTLD_LOCAL | os.RTLD_NOW)
        self.entry = getattr(self.lib, entry)
        self.entry.restype = None
        self.sync = getattr(self.lib, sync_symbol)
        self.sync.restype = ctypes.c_int
        self.error_name = getattr(self.lib, error_symbol)
        self.error_name.restype = ctypes.c_char_p
        self.error_name.argtypes = [ctypes.c_int]

    def call(self, args: list) -> int:
        """Call the entry point, then synchronize; the submission's own CUDA error code (0 = fine)."""
        self.entry(*args)
        return self.sync()


class Handles:
    """The GPU buffers one command names: their descriptors, received in one message over the handles
    socket before the command, mapped into this process; unmapped and closed when the command ends."""

    def __init__(self, channel: socket.socket | None, args: list[dict]):
        self.mappings: list = []
        count = sum("handle" in a for a in args)
        self.fds: list[int] = []
        if count:
            _, self.fds, _, _ = socket.recv_fds(channel, 16, count)
            if len(self.fds) != count:
                raise ValueError(f"the command names {count} GPU buffers but {len(self.fds)} arrived")

    def pointer(self, spec: dict) -> ctypes.c_void_p:
        from grader import devmem
        mapping = devmem.import_fd(self.fds[spec["handle"]], spec["size"])
        self.mappings.append(mapping)
        return ctypes.c_void_p(mapping.pointer + spec["offset"])

    def close(self) -> None:
        for mapping in self.mappings:
            try:
                mapping.close()
            except Exception:
                pass
        for fd in self.fds:
            os.close(fd)
        self.mappings.clear()
        self.fds.clear()


def convert(arg: dict, handles: Handles):
    if "handle" in arg:
        return handles.pointer(arg)
    if "int" in arg:
        return ctypes.c_int(arg["int"])
    if "float" in arg:
        return ctypes.c_float(arg["float"])
    raise ValueError(f"unknown argument {arg!r}")


DRIVER_LIBRARIES = ("libcuda.so", "libnvidia-", "libnvcuda", "libcudadebugger")


def threads() -> set[str]:
    return set(os.listdir("/proc/self/task"))


def thread_name(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm") as f:
            return f.read().strip()
    except OSError:
        return ""  # it ended


def libraries() -> set[str]:
    with open("/proc/self/maps") as f:
        return {line.split()[-1] for line in f if ".so" in line.rsplit("/", 1)[-1]}


def leftovers(threads_before: set[str], libraries_before: set[str]) -> dict:
    """Host threads the call left running (the CUDA driver's own helpers aside) and shared libraries
    it loaded at run time (the driver's own aside)."""
    found = {}
    alive = [t for t in threads() - threads_before if (name := thread_name(t)) and not name.startswith("cuda")]
    if alive:
        found["threads_left"] = len(alive)
    loaded = sorted(os.path.basename(l) for l in libraries() - libraries_before
                    if not os.path.basename(l).startswith(DRIVER_LIBRARIES))
    if loaded:
        found["libraries_loaded"] = loaded
    return found


def error_reply(submission: Submission, code: int) -> dict:
    name = submission.error_name(code)
    return {"ok": False, "cuda_error": code, "name": name.decode() if name else f"error {code}"}


CONTEXT_RESET = ("cudaDeviceReset() inside solve destroyed the CUDA context (and with it the grader's "
                 "mappings of your buffers); it is not allowed")


def context_lost(canary, cp) -> bool:
    """True when the call reset the device: the worker's own allocation is gone with the old context."""
    try:
        attributes = cp.cuda.runtime.pointerGetAttributes(canary.ptr)
    except Exception:
        return True
    return attributes.type != cp.cuda.runtime.memoryTypeDevice


def do_call(cmd: dict, submission: Submission, cp, channel: socket.socket | None) -> dict:
    handles = Handles(channel, cmd["args"])
    try:
        args = [convert(a, handles) for a in cmd["args"]]
        threads_before, libraries_before = threads(), libraries()
        started = time.perf_counter()
        code = submission.call(args)
        seconds = time.perf_counter() - started
        if code:
            return error_reply(submission, code)
        if context_lost(submission.canary, cp):
            return {"ok": False, "fault": CONTEXT_RESET}
        return {"ok": True, "seconds": seconds, **leftovers(threads_before, libraries_before)}
    finally:
        handles.close()


class CallFailed(Exception):
    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


class Timer:
    """One timed sample a request, taken the same way with or without solve: the flush, the start
    event, solve (or nothing), the end event, then the device awaited (timing.event_sampler), with this
    process's clock around it all. The grader times each request with its own clock too."""

    def __init__(self, cp, flush_bytes: int):
        from grader.l2flush import L2Flush
        from grader.timing import event_sampler
        self.cp, self.event_sampler = cp, event_sampler
        self.flush = L2Flush(cp, flush_bytes)
        self.noop = self.sampler(lambda: None)

    def sampler(self, launch):
        """Samples of `launch`, awaited the same way as the no-op samples of the calibration: the device
        synchronized by this process's runtime (an error of the submission's is read after the clocks stop)."""
        def finish() -> None:
            try:
                self.cp.cuda.runtime.deviceSynchronize()
            except Exception:
                pass  # a fault of the submission's: its own runtime names it, after the sample
        return self.event_sampler(self.cp, self.flush, launch, finish)

    @staticmethod
    def sample(sampler, count: int = 1, check=None) -> dict:
        """`count` samples: each one's events' milliseconds and this process's seconds around it; `check`
        once after them all (a CUDA error stays until read), outside the worker's clock and once a batch
        in the grader's: through the submission's own runtime it can cost half a millisecond (a
        cooperative launch's, on an H100)."""
        ms, wall_s = [], []
        for _ in range(count):
            began = time.perf_counter()
            ms.append(sampler())
            wall_s.append(time.perf_counter() - began)
        if check is not None:
            check()
        return {"ok": True, "ms": ms, "wall_s": wall_s}


class Session:
    """The buffers and the sampler of one timed case: opened by `time`, sampled by `sample`, closed by `end`."""

    def __init__(self, cmd: dict, submission: Submission, channel: socket.socket | None, timer: Timer):
        self.handles = Handles(channel, cmd["args"])
        try:
            args = [convert(a, self.handles) for a in cmd["args"]]
        except Exception:
            self.handles.close()
            raise

        def check() -> None:  # the submission's own runtime's error, if its work failed
            code = submission.sync()
            if code:
                raise CallFailed(code)

        self.sampler = timer.sampler(lambda: submission.entry(*args))
        self.check = check

    def close(self) -> None:
        self.handles.close()


class Served:
    """What the requests after the library's load share: the submission, the timer, the open session."""

    def __init__(self, submission: Submission, cp, channel: socket.socket | None, timer: Timer | None):
        self.submission, self.cp, self.channel, self.timer = submission, cp, channel, timer
        self.session: Session | None = None

    def call(self, cmd: dict) -> dict:
        return do_call(cmd, self.submission, self.cp, self.channel)

    def time(self, cmd: dict) -> dict:
        self.end(cmd)
        if self.timer is None:
            return {"ok": False, "internal": "this worker was started without a timer (--flush-bytes)"}
        self.session = Session(cmd, self.submission, self.channel, self.timer)
        return {"ok": True, "timing": True}

    def sample(self, cmd: dict) -> dict:
        if self.session is None:
            return {"ok": False, "internal": "a sample asked for with no timing opened"}
        try:
            return Timer.sample(self.session.sampler, _count(cmd), self.session.check)
        except CallFailed as failed:
            self.end(cmd)
            return error_reply(self.submission, failed.code)

    def end(self, cmd: dict) -> dict:
        if self.session is not None:
            self.session.close()
            self.session = None
        return {"ok": True, "pong": True}


MAX_SAMPLES = 1000


def _count(cmd: dict) -> int:
    count = cmd.get("count", 1)
    if type(count) is not int or not 1 <= count <= MAX_SAMPLES:
        raise ValueError(f"a sample count of {count!r}")
    return count


def serve(commands, results, served: Served) -> None:
    ops = {"call": served.call, "time": served.time, "sample": served.sample, "end": served.end,
           "ping": lambda _: {"ok": True, "pong": True}}
    for line in commands:
        cmd = json.loads(line)
        if cmd["op"] == "exit":
            return
        try:
            reply = ops[cmd["op"]](cmd)
        except Exception:
            reply = {"ok": False, "internal": traceback.format_exc(limit=4)}
        answer(results, reply, cmd.get("id", 0))


def answer(results, reply: dict, request_id: int) -> None:
    reply["id"] = request_id  # the answer names its request: the grader rejects any other line
    results.write(json.dumps(reply) + "\n")
    results.flush()


def calibrate(commands, results, timer: Timer) -> int | None:
    """Before the library is loaded: answer every sample with no-op samples, which the grader times to
    learn what a sample costs with nothing in it, until it asks for the load (its request's id, to answer
    when loaded), or None where it asked the worker to exit."""
    for line in commands:
        cmd = json.loads(line)
        if cmd["op"] == "load":
            return cmd.get("id", 0)
        if cmd["op"] == "exit":
            return None
        reply = Timer.sample(timer.noop, _count(cmd)) if cmd["op"] == "sample" else {
            "ok": False, "internal": f"{cmd['op']!r} before the library is loaded"}
        answer(results, reply, cmd.get("id", 0))
    return None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="grader worker (started by the grader; not for direct use)")
    parser.add_argument("--library", required=True)
    parser.add_argument("--entry", required=True)
    parser.add_argument("--sync-symbol", required=True)
    parser.add_argument("--error-symbol", required=True)
    parser.add_argument("--commands-fd", type=int, required=True)
    parser.add_argument("--results-fd", type=int, required=True)
    parser.add_argument("--handles-fd", type=int, default=-1,
                        help="a unix socket the GPU buffers' descriptors arrive on (-1: none)")
    parser.add_argument("--flush-bytes", type=int, default=0,
                        help="time samples, flushing this many bytes of L2 before each; first answer no-op "
                             "samples until the grader asks for the load (0: no timing)")
    opts = parser.parse_args(argv)
    commands = os.fdopen(opts.commands_fd, "r")
    results = os.fdopen(opts.results_fd, "w")
    channel = socket.socket(fileno=opts.handles_fd) if opts.handles_fd >= 0 else None
    load_id, timer = 0, None
    try:
        import cupy as cp
        cp.cuda.runtime.setDevice(0)
        cp.cuda.runtime.free(0)  # create the context before the submission's runtime looks for it
        if opts.flush_bytes:
            timer = Timer(cp, opts.flush_bytes)
            answer(results, {"ok": True, "runtime": True, "pid": os.getpid()}, 0)
            load_id = calibrate(commands, results, timer)
            if load_id is None:
                return
        submission = Submission(opts.library, opts.entry, opts.sync_symbol, opts.error_symbol)
        submission.canary = cp.cuda.Memory(256)  # freed by a device reset, which is how one is noticed
    except Exception:
        answer(results, {"ok": False, "internal": traceback.format_exc(limit=4)}, load_id)
        sys.exit(3)
    answer(results, {"ok": True, "ready": True, "pid": os.getpid()}, load_id)
    serve(commands, results, Served(submission, cp, channel, timer))


if __name__ == "__main__":
    main()
