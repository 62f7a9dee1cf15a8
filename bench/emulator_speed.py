"""Issue 3's emulator speed figures, on whatever machine runs this (CI's is 2 cores).

1. Kernel execution of a 256×256×256 matmul for the naive and the shared-memory tiled kernel:
   the worker's own wall time around `solve`, median of 7 calls per thread order.
2. `grader run challenges/matmul/levels/1_naive.cu --backend emulator` from a fresh process with an empty build
   cache: the whole functional and randomized set, builds included.

Usage: python3 bench/emulator_speed.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from grader import case as cases
from grader import source as sources, spec
from grader.backends.emulator import EmulatorBackend
from grader.spec import Shape

ROOT = Path(__file__).resolve().parent.parent
KERNELS = {"naive": ROOT / "challenges/matmul/levels/1_naive.cu", "shared_tiled": ROOT / "tests/submissions/shared_tiled.cu"}
SHAPE = Shape({"M": 256, "N": 256, "K": 256}, "256^3")


def kernel_seconds(path: Path, challenge, backend, cache: Path, order: str, calls: int = 7) -> float:
    built = backend.build(sources.read(path), challenge, cache)
    assert built.artifact, built.message
    case = cases.prepare(challenge, SHAPE, np.random.default_rng(1), backend)
    times = []
    with backend.worker(built, challenge) as worker:
        worker.start()
        for _ in range(calls):
            reply = worker.call(cases.worker_args(challenge, case), 60, order)
            assert reply.data.get("ok"), reply.detail
            times.append(reply.data["seconds"])
    found = cases.inspect(challenge, case)
    assert found.verdict.passed, found.message
    case.release()
    return statistics.median(times)


def main() -> None:
    challenge = spec.load(ROOT / "challenges", "matmul")
    backend = EmulatorBackend()
    print(f"machine: {os.cpu_count()} cores; {backend.cxx_version}")
    with tempfile.TemporaryDirectory() as cache:
        for name, path in KERNELS.items():
            for order in ("forward", "reverse"):
                seconds = kernel_seconds(path, challenge, backend, Path(cache), order)
                print(f"{name:13s} 256^3 {order:8s} kernel {seconds * 1e3:7.1f} ms", flush=True)
    with tempfile.TemporaryDirectory() as cold:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "grader", "run", str(KERNELS["naive"]), "--backend", "emulator",
                               "--cache-dir", cold, "--seed", "1"], capture_output=True, text=True)
        wall = time.perf_counter() - started
        last = [l for l in proc.stdout.splitlines() if "graded in" in l]
        print(f"grader run naive (cold cache, fresh process): exit {proc.returncode}, wall {wall:.1f} s; "
              f"{last[0].strip(' │') if last else proc.stdout[-500:]}")


if __name__ == "__main__":
    main()
