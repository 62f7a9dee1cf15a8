"""Issue 25: what the rebuilt box costs a grading run of the reference levels.

Grades a fixed set of reference level files through `pipeline.grade` (submit mode on a GPU, run mode
in the emulator), with the grader package found on PYTHONPATH (this tree, or an older checkout given
as PYTHONPATH), a warm build cache and `--sandbox required`, and prints one JSON line per file with
the whole job's wall time, the median of REPEATS gradings. Run it for both trees in one session and
compare the lines (bench/issue25_gpu_session.sh does, on the GPU machine).

    PYTHONPATH=<tree> python3 bench/issue25_overhead.py --backend cuda|emulator [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

LEVELS = {
    "cuda": ["matmul/levels/1_naive.cu", "matmul/levels/4_register_tiles.cu", "matmul/levels/7_autotuned_wgmma.cu",
             "vector_add/levels/4_float4_full_grid.cu", "reduction/levels/7_single_pass.cu",
             "softmax/levels/4_float4_shuffle.cu", "matrix_transpose/levels/5_wide_tile.cu"],
    "emulator": ["matmul/levels/1_naive.cu", "matmul/levels/2_shared_tiling.cu", "vector_add/levels/1_naive.cu",
                 "reduction/levels/6_warp_shuffle.cu"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=sorted(LEVELS), required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--challenges", type=Path, default=Path(__file__).resolve().parent.parent / "challenges")
    opts = parser.parse_args()
    import grader
    from grader import backends, pipeline, sandbox, source as sources, spec
    from grader.results import Mode

    try:  # the tree before issue 25 shared the host's PID namespace with a GPU worker
        box = sandbox.make(sandbox.SandboxMode.REQUIRED, [], share_pid=opts.backend == "cuda")
    except TypeError:
        box = sandbox.make(sandbox.SandboxMode.REQUIRED, [])
    backend = backends.choose(opts.backend, None, box)
    mode = Mode.SUBMIT if opts.backend == "cuda" else Mode.RUN
    cache = Path(tempfile.mkdtemp(prefix="overhead-cache-"))
    for relative in LEVELS[opts.backend]:
        path = opts.challenges / relative
        if not path.exists():
            print(json.dumps({"file": relative, "missing": True}), flush=True)
            continue
        challenge = spec.load(opts.challenges, relative.split("/")[0])
        options = pipeline.Options(mode, 7, cache, timing_budget_s=0.3, time_baseline=False)
        seconds, verdicts = [], set()
        for attempt in range(opts.repeats + 1):  # the first fills the build cache
            started = time.perf_counter()
            report = pipeline.grade(sources.read(path), challenge, backend, options)
            if attempt:
                seconds.append(time.perf_counter() - started)
            verdicts.add(report.verdict.name)
        print(json.dumps({"file": relative, "tree": str(Path(grader.__file__).parent.parent), "median_s":
                          round(statistics.median(seconds), 3), "all_s": [round(s, 3) for s in seconds],
                          "verdicts": sorted(verdicts)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
