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


def do_time(cmd: dict, submission: Submission, cp, channel: socket.socket | None) -> dict:
    from grader.l2flush import L2Flush
    from grader.timing import TimingPolicy, event_sampler, harness_seconds, measure

    handles = Handles(channel, cmd["args"])

    def launch() -> None:
        submission.entry(*args)

    def finish() -> None:  # after the end event is queued: wait, through the submission's own runtime
        code = submission.sync()
        if code:
            raise CallFailed(code)

    try:
        args = [convert(a, handles) for a in cmd["args"]]
        flush = L2Flush(cp, cmd["flush_bytes"])  # one buffer and kernel for the calibration and the samples
        harness_s = harness_seconds(event_sampler(cp, flush, lambda: None, cp.cuda.runtime.deviceSynchronize))
        started = time.perf_counter()
        samples = measure(event_sampler(cp, flush, launch, finish), TimingPolicy(**cmd["policy"]))
        return {"ok": True, "samples_ms": samples, "wall_s": time.perf_counter() - started, "harness_s": harness_s}
    except CallFailed as failed:
        return error_reply(submission, failed.code)
    finally:
        handles.close()


def serve(commands, results, submission: Submission, cp, channel: socket.socket | None) -> None:
    ops = {"call": do_call, "time": do_time, "ping": lambda *_: {"ok": True, "pong": True}}
    for line in commands:
        cmd = json.loads(line)
        if cmd["op"] == "exit":
            return
        try:
            reply = ops[cmd["op"]](cmd, submission, cp, channel)
        except Exception:
            reply = {"ok": False, "internal": traceback.format_exc(limit=4)}
        reply["id"] = cmd.get("id", 0)  # the answer names its request: the grader rejects any other line
        results.write(json.dumps(reply) + "\n")
        results.flush()


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
    opts = parser.parse_args(argv)
    commands = os.fdopen(opts.commands_fd, "r")
    results = os.fdopen(opts.results_fd, "w")
    channel = socket.socket(fileno=opts.handles_fd) if opts.handles_fd >= 0 else None
    try:
        import cupy as cp
        cp.cuda.runtime.setDevice(0)
        cp.cuda.runtime.free(0)  # create the context before the submission's runtime looks for it
        submission = Submission(opts.library, opts.entry, opts.sync_symbol, opts.error_symbol)
        submission.canary = cp.cuda.Memory(256)  # freed by a device reset, which is how one is noticed
    except Exception:
        results.write(json.dumps({"id": 0, "ok": False, "internal": traceback.format_exc(limit=4)}) + "\n")
        results.flush()
        sys.exit(3)
    results.write(json.dumps({"id": 0, "ok": True, "ready": True, "pid": os.getpid()}) + "\n")
    results.flush()
    serve(commands, results, submission, cp, channel)


if __name__ == "__main__":
    main()
