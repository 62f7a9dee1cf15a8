"""Wall time of `grader run --backend emulator` over the corpus files, for several seeds: the
emulator's speed as a user meets it (builds cached, both thread orders, every functional and
randomized case). Point --tree at another checkout to compare two versions in one sitting.

Usage: python3 bench/emulator_corpus_speed.py [--tree PATH] [--seeds 1,7] [--files a.cu,b.cu] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILES = ["tests/submissions/warp_shuffle.cu", "tests/submissions/shared_tiled.cu",
                 "tests/submissions/register_tiled_float4.cu", "tests/submissions/dynamic_smem.cu",
                 "challenges/matmul/levels/1_naive.cu", "challenges/matmul/levels/2_shared_tiling.cu",
                 "challenges/matmul/levels/3_thread_tiles.cu", "challenges/matmul/levels/4_register_tiles.cu",
                 "challenges/matmul/levels/5_warp_tiles.cu"]


def grade_seconds(tree: Path, file: str, seed: int, cache: Path) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    command = [sys.executable, "-m", "grader", "run", str(tree / file), "--backend", "emulator", "--seed", str(seed),
               "--cache-dir", str(cache), "--sandbox", "off", "--json"]
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree)
    wall = time.perf_counter() - started
    try:
        verdict = json.loads(proc.stdout)["verdict"]
    except (ValueError, KeyError):
        verdict = f"exit {proc.returncode}: {proc.stderr[-300:]}"
    return wall, verdict


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tree", type=Path, default=ROOT)
    parser.add_argument("--seeds", default="1,7")
    parser.add_argument("--files", default=",".join(DEFAULT_FILES))
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    rows = []
    print(f"tree {args.tree} · {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as cache:
        for file in args.files.split(","):
            grade_seconds(args.tree, file, seeds[0], Path(cache))  # build once, outside the timing
            for seed in seeds:
                wall, verdict = grade_seconds(args.tree, file, seed, Path(cache))
                rows.append({"file": file, "seed": seed, "wall_s": round(wall, 2), "verdict": verdict})
                print(f"{file:48s} seed {seed:3d}  {wall:6.1f} s  {verdict}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"tree": str(args.tree), "cores": os.cpu_count(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
