"""How long a whole grading job takes: the figures each challenge's `limits.job_s` is chosen from.

For every challenge, its slowest reference level (level 1: the slowest kernel at every performance
shape) and its last (the longest compile), each graded by `grader submit --no-placement --json` with
the challenge's own timing budget, in a fresh process, first with an empty build cache (nvcc runs),
then again with the build cached. Recorded per job: the process's wall time, the grader's own clock
(the report's wall_s: the compile and every case, correctness and timing) and the verdict.

    python3 bench/job_time.py --json job_time.json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import spec  # noqa: E402

CHALLENGES = ROOT / "challenges"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", type=Path, default=None, help="write the results here as JSON")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--slugs", nargs="*", default=spec.list_challenges(CHALLENGES))
    args = parser.parse_args(argv)
    rows = []
    for slug in args.slugs:
        challenge = spec.load(CHALLENGES, slug)
        levels = [challenge.levels[0]] + ([challenge.levels[-1]] if len(challenge.levels) > 1 else [])
        for level in levels:
            with tempfile.TemporaryDirectory(prefix="grader-job-time-") as cache:
                for state in ("cold", "warm"):
                    rows.append(grade(slug, level, state, Path(cache), args.seed))
                    print(line(rows[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"rows": rows}, indent=1))
    return 0


def grade(slug: str, level, state: str, cache: Path, seed: int) -> dict:
    argv = [sys.executable, "-m", "grader", "submit", str(level.path), "--challenge", slug, "--seed", str(seed),
            "--cache-dir", str(cache), "--no-placement", "--json"]
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    wall_s = time.perf_counter() - started
    row = {"challenge": slug, "level": level.number, "state": state, "exit_code": done.returncode,
           "process_wall_s": round(wall_s, 2)}
    try:
        report = json.loads(done.stdout)
    except json.JSONDecodeError:
        return {**row, "error": (done.stderr or done.stdout)[-2000:]}
    build = report.get("build") or {}
    return {**row, "verdict": report["verdict"], "grader_wall_s": round(report["wall_s"], 2),
            "build_s": round(build.get("seconds") or 0.0, 2), "build_cached": build.get("cached"),
            "kernel_s": round(report["kernel_s"], 2), "job_limit_s": (report.get("job_limit") or {}).get("seconds"),
            "gpu": (report.get("environment") or {}).get("gpu")}


def line(row: dict) -> str:
    if "error" in row:
        return f"{row['challenge']:17} level {row['level']} {row['state']}: failed ({row['exit_code']}): {row['error'][-300:]}"
    return (f"{row['challenge']:17} level {row['level']} {row['state']}: {row['verdict']}, grader {row['grader_wall_s']:.2f} s "
            f"(build {row['build_s']:.2f} s), process {row['process_wall_s']:.2f} s, bound {row['job_limit_s']} s")


if __name__ == "__main__":
    raise SystemExit(main())
