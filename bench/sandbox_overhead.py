"""The sandbox's cost: the same submission graded with --sandbox off and on, in fresh processes,
builds cached, several times each; medians of the grader's own wall time.

Usage: python3 bench/sandbox_overhead.py [--backend auto|cuda|emulator] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = ROOT / "challenges/matmul/levels/2_shared_tiling.cu"


def wall_s(mode: str, backend: str, cache: str) -> float:
    out = subprocess.run([sys.executable, "-m", "grader", "run", str(FILE), "--json", "--seed", "1", "--backend", backend,
                          "--sandbox", mode, "--cache-dir", cache], capture_output=True, text=True, check=False)
    report = json.loads(out.stdout)
    assert report["verdict"] == "ACCEPTED", report["message"]
    return report["wall_s"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--repeats", type=int, default=5)
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        wall_s("off", opts.backend, cache)  # fill the build cache
        times = {mode: [wall_s(mode, opts.backend, cache) for _ in range(opts.repeats)] for mode in ("off", "auto")}
    off, on = statistics.median(times["off"]), statistics.median(times["auto"])
    print(f"grading {FILE.name} ({opts.backend}): sandbox off {off:.2f} s, on {on:.2f} s, "
          f"extra {on - off:+.2f} s per submission (medians of {opts.repeats}; {times})")


if __name__ == "__main__":
    main()
