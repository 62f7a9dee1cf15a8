"""Which functional shape makes a GPU show the race of a tiled kernel missing its second barrier?

Grades tests/submissions/missing_sync.cu's kernel through the real pipeline pieces (build, worker,
guarded buffers, FP64 check) at candidate shapes, many calls each, and counts the calls whose
output is wrong. Used to choose the functional case that lets `grader run` catch such races on a
GPU. Usage (GPU machine): python3 bench/probe/many_blocks_race.py [--calls 30]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader import case as cases, source as sources, spec  # noqa: E402
from grader.backends.cuda import CudaBackend  # noqa: E402
from grader.spec import Shape  # noqa: E402

CANDIDATES = [(1000, 17, 999), (700, 17, 701), (520, 17, 519), (1000, 33, 999), (4095, 17, 4093), (255, 17, 257)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    challenge = spec.load(ROOT / "challenges", "matmul")
    backend = CudaBackend()
    source = ROOT / "tests/submissions/missing_sync.cu"
    built = backend.build(sources.read(source), challenge, None)
    assert built.artifact, built.message
    results = {}
    with backend.worker(built, challenge) as worker:
        assert worker.start().outcome.name == "OK"
        for m, n, k in CANDIDATES:
            shape = Shape({"M": m, "N": n, "K": k}, f"{m}x{n}x{k}")
            wrong = 0
            for i in range(args.calls):
                case = cases.prepare(challenge, shape, cases.rng_for(1, cases.Purpose.FUNCTIONAL, i), backend)
                reply = worker.call(cases.worker_args(challenge, case), 20)
                assert reply.outcome.name == "OK", reply.detail
                wrong += not cases.inspect(challenge, case).verdict.passed
                case.release()
                backend.free_memory()
            results[f"{m}x{n}x{k}"] = wrong
            print(f"{m}x{n}x{k}: {wrong} of {args.calls} calls wrong", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
