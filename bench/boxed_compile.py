"""What the compile box costs: the same nvcc (and emulator g++) build of the naive level, boxed and
unboxed, alternated in one sitting, caches off. Prints the medians and the difference.

    python3 bench/boxed_compile.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import build, sandbox, source as sources, spec  # noqa: E402

LEVEL = ROOT / "challenges" / "matmul" / "levels" / "1_naive.cu"


def one_build(text, challenge, toolchain, box) -> float:
    with tempfile.TemporaryDirectory() as cache:
        started = time.perf_counter()
        result = build.build(build.BuildRequest(text, challenge.prototype(), challenge.entry, toolchain, Path(cache),
                                                challenge.limits.compile_s, box))
        elapsed = time.perf_counter() - started
    if result.status is not build.BuildStatus.OK:
        raise SystemExit(f"the build failed: {result.message}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    challenge = spec.load(ROOT / "challenges", "matmul")
    toolchain = build.toolchain(9, 0)
    box = sandbox.make(sandbox.SandboxMode.REQUIRED, [])
    text = sources.read(LEVEL)
    one_build(text, challenge, toolchain, box)  # warm the file cache
    plain, boxed = [], []
    for _ in range(args.repeats):
        plain.append(one_build(text, challenge, toolchain, None))
        boxed.append(one_build(text, challenge, toolchain, box))
    p, b = statistics.median(plain), statistics.median(boxed)
    print(f"nvcc build of {LEVEL.name}, {args.repeats} each, alternated")
    print(f"  unboxed median {p:.3f} s  (min {min(plain):.3f}, max {max(plain):.3f})")
    print(f"  boxed   median {b:.3f} s  (min {min(boxed):.3f}, max {max(boxed):.3f})")
    print(f"  the box adds {b - p:+.3f} s per compile")


if __name__ == "__main__":
    main()
