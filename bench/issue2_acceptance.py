"""Issue 2's GPU acceptance figures, in one run on the GPU machine.

1. The naive kernel graded from a fresh process with a cold build cache: verdict, wall time,
   time inside solve, GFLOP/s per performance case.
2. The same submission graded three times, each in a new process: median spread per case.
3. The rendered terminal report of one submit and one failing run, as a user sees them.

Usage: python3 bench/issue2_acceptance.py OUTDIR
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NAIVE = "challenges/matmul/levels/1_naive.cu"


def grader(*args: str, cache: str) -> tuple[dict | str, float, int]:
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "grader", *args, "--cache-dir", cache],
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    out = json.loads(proc.stdout) if "--json" in args and proc.stdout.strip().startswith("{") else proc.stdout
    if proc.returncode not in (0, 1):
        print(proc.stderr[-3000:], file=sys.stderr)
    return out, wall, proc.returncode


def perf_rows(report: dict) -> list[dict]:
    return [{"case": p["label"], "median_ms": p["stats"]["median_ms"], "gflops": p["gflops"],
             "reps": p["stats"]["reps"], "iqr_pct": p["stats"]["spread_pct"],
             "baseline_ms": p["baseline"]["median_ms"], "pct_baseline": p["percent_of_baseline"],
             "pct_peak": p["percent_of_peak"]} for p in report["performance"]]


def main(outdir: Path) -> None:
    outdir.mkdir(parents=True, exist_ok=True)
    summary: dict = {}
    cold = tempfile.mkdtemp(prefix="cold-cache-")
    report, wall, rc = grader("submit", NAIVE, "--json", "--seed", "1", cache=cold)
    summary["cold"] = {"rc": rc, "verdict": report["verdict"], "process_wall_s": wall,
                       "grader_wall_s": report["wall_s"], "inside_solve_s": report["kernel_s"],
                       "build_s": report["build"]["seconds"], "performance": perf_rows(report),
                       "environment": report["environment"]}
    print(json.dumps(summary["cold"], indent=1), flush=True)
    repeats = []
    for i in range(3):
        report, wall, rc = grader("submit", NAIVE, "--json", "--seed", str(100 + i), cache=cold)
        repeats.append({"rc": rc, "wall_s": wall, "performance": perf_rows(report)})
        print("repeat", i, [round(r["median_ms"], 3) for r in repeats[-1]["performance"]], flush=True)
    summary["repeats"] = repeats
    spread = {}
    for j, row in enumerate(repeats[0]["performance"]):
        medians = [r["performance"][j]["median_ms"] for r in repeats]
        spread[row["case"]] = {"medians_ms": medians, "max_over_min_pct": 100 * (max(medians) / min(medians) - 1)}
    summary["repeat_spread"] = spread
    print(json.dumps(spread, indent=1))
    text, _, _ = grader("submit", NAIVE, "--seed", "1", cache=cold)
    failing, _, _ = grader("run", "tests/submissions/skip_last_row_odd_m.cu", "--seed", "1", cache=cold)
    (outdir / "naive_submit_report.txt").write_text(text + "\n\n" + failing)
    (outdir / "issue2_summary.json").write_text(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
