"""Grade files against every official LeetGPU challenge of a checkout and summarize the verdicts (issue 27).

    python3 bench/leetgpu_sweep.py CHECKOUT OUT.json [--starters] [--solutions DIR] [--mode run|submit]
        [--jobs N] [--timeout S] [--only SLUG,...]

--starters: each challenge's own CUDA starter (an empty solve): does the challenge load, compile, run and get a
verdict here, or UNSUPPORTED and why. --solutions DIR: DIR/<slug>.cu for each one present (our own solutions),
or DIR/<slug>/*.cu (third-party ones). One JSON summary: per file the verdict, its first line, and the counts.
Runs `grader` as a user would, one process per file, a few at a time (the compiles overlap; the GPU is shared).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from grader import leetgpu  # noqa: E402


def grade(checkout: Path, slug: str, file: Path, mode: str, timeout_s: float, extra: list[str]) -> dict:
    if not file.is_file():
        return {"slug": slug, "file": str(file), "verdict": "NO_FILE", "seconds": 0.0}
    command = [sys.executable, "-m", "grader", mode, str(file), "--challenge", slug, "--leetgpu", str(checkout),
               "--json", "--seed", "1", *extra]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"slug": slug, "file": str(file), "verdict": "SWEEP_TIMEOUT", "seconds": timeout_s}
    seconds = round(time.perf_counter() - started, 1)
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {"slug": slug, "file": str(file), "verdict": "NO_REPORT", "exit": done.returncode, "seconds": seconds,
                "stderr": done.stderr[-600:]}
    perf = [{"label": p.get("label"), "median_ms": (p.get("stats") or {}).get("median_ms"),
             "baseline_ms": (p.get("baseline") or {}).get("median_ms"), "verdict": p.get("verdict")}
            for p in report.get("performance") or []]
    cases = collections.Counter(f"{c['kind']}:{c['verdict']}" for c in report.get("cases") or [])
    return {"slug": slug, "file": str(file), "verdict": report["verdict"], "message": (report.get("message") or "")[:300],
            "seconds": seconds, "cases": dict(cases), "performance": perf, "parity": report.get("parity"),
            "backend": (report.get("environment") or {}).get("backend")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--starters", action="store_true")
    parser.add_argument("--solutions", type=Path)
    parser.add_argument("--mode", default="run", choices=["run", "submit"])
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=240.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--extra", default="", help="more grader options, space-separated")
    args = parser.parse_args()
    officials = leetgpu.catalogue(args.checkout)
    wanted = set(filter(None, args.only.split(",")))
    work = []
    for o in officials:
        if wanted and o.slug not in wanted:
            continue
        if args.starters:
            work.append((o.slug, o.starter_path))
        if args.solutions:
            single, folder = args.solutions / f"{o.slug}.cu", args.solutions / o.slug
            work += [(o.slug, single)] if single.is_file() else []
            work += [(o.slug, f) for f in sorted(folder.glob("*.cu"))] if folder.is_dir() else []
    extra = args.extra.split()
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(grade, args.checkout, slug, file, args.mode, args.timeout, extra) for slug, file in work]
        for future in concurrent.futures.as_completed(futures):
            result = future.result()
            results.append(result)
            print(f"{result['slug']:40s} {result['verdict']:18s} {result['seconds']:6.1f} s  {Path(result['file']).name}",
                  flush=True)
    results.sort(key=lambda r: (r["slug"], r["file"]))
    summary = {"files": len(results), "verdicts": dict(collections.Counter(r["verdict"] for r in results)),
               "unsupported": {r["slug"]: r["message"] for r in results if r["verdict"] == "UNSUPPORTED"},
               "host": os.uname().nodename, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
               "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "results"}, indent=1))


if __name__ == "__main__":
    main()
