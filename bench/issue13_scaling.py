"""Issue 13's scaling benchmark: one class of 40 submissions graded by `grader grade` through the local
engine on 1 GPU, on 2 GPUs, and through Ray on 2 GPUs; wall time of each, the throughput ratio, and
whether every student's verdict and level match the 1-GPU run.

    python3 bench/issue13_scaling.py WORK local:1 local:2 ray:2

WORK gets the class folder, a cache with the ladder measured once (copied into each run's fresh cache,
so every run compiles every submission itself), one database per run and results.json. The secret
seed is pinned, so each run grades the same randomized shapes."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SLUG = "matrix_transpose"
CLASS_SIZE = 40
BUDGET_S = "0.3"
SEED = "20261123"


def make_class(folder: Path) -> None:
    files = sorted((ROOT / "challenges" / SLUG / "levels").glob("*.cu")) + \
        sorted((ROOT / "challenges" / SLUG / "wrong").glob("*.cu"))
    folder.mkdir(parents=True)
    for i in range(CLASS_SIZE):
        shutil.copy(files[i % len(files)], folder / f"student{i:02d}.cu")


def grade(work: Path, config: str) -> dict:
    engine, gpus = config.split(":")
    run = work / config.replace(":", "-")
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    shutil.copytree(work / "ladder-cache", run / "cache")
    db = run / "class.sqlite3"
    (run / "class.sqlite3.secret-seed").write_text(SEED)
    argv = [sys.executable, "-m", "grader", "grade", str(work / "class"), "--challenge", SLUG, "--db", str(db),
            "--cache-dir", str(run / "cache"), "--timing-budget", BUDGET_S, "--engine", engine, "--gpus", gpus]
    started, started_at = time.perf_counter(), time.time()
    done = subprocess.run(argv, capture_output=True, text=True)
    wall_s = time.perf_counter() - started
    (run / "grade.log").write_text(done.stdout + done.stderr)
    with sqlite3.connect(db) as c:
        rows = {u: (v, lvl) for u, v, lvl in c.execute("SELECT user, verdict, level FROM runs")}
        job_s, first = c.execute("SELECT AVG(wall_s), MIN(graded_at) FROM runs").fetchone()
    import datetime
    first_s = datetime.datetime.fromisoformat(first).timestamp() - started_at if first else None
    return {"config": config, "exit": done.returncode, "wall_s": wall_s, "graded": len(rows), "results": rows,
            "mean_job_s": job_s, "first_result_s": first_s}


def main(work: Path, configs: list[str]) -> None:
    if not (work / "class").is_dir():
        make_class(work / "class")
    if not (work / "ladder-cache").is_dir():
        subprocess.run([sys.executable, "-m", "grader", "levels", SLUG, "--cache-dir", str(work / "ladder-cache")],
                       check=True)
    found = []
    for config in configs:  # each run's figures are kept, so a later call can compare with an earlier one
        result = grade(work, config)
        (work / f"{config.replace(':', '-')}.json").write_text(json.dumps(result, default=list))
        found.append(result)
    kept = work / "local-1.json"
    base = json.loads(kept.read_text()) if kept.is_file() else found[0]
    base["results"] = {u: tuple(v) for u, v in base["results"].items()}
    for r in found:
        differ = sorted(u for u in base["results"] if tuple(r["results"].get(u) or ()) != base["results"][u])
        r["speedup"] = base["wall_s"] / r["wall_s"]
        print(f"{r['config']:8s} exit {r['exit']}  graded {r['graded']:3d}  {r['wall_s']:7.1f} s  "
              f"{60 * r['graded'] / r['wall_s']:6.1f} submissions/min  x{r['speedup']:.2f} of {base['config']}  "
              f"mean job {r.get('mean_job_s') or 0:.2f} s, first result after {r.get('first_result_s') or 0:.0f} s  "
              f"{len(differ)} verdict/level differences "
              + " ".join(f"{u}: {base['results'][u]} vs {r['results'].get(u)}" for u in differ))
    verdicts = {}
    for verdict, level in base["results"].values():
        verdicts[f"{verdict} L{level}"] = verdicts.get(f"{verdict} L{level}", 0) + 1
    print("verdicts of", base["config"], json.dumps(verdicts, sort_keys=True))


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
