#!/usr/bin/env python3
"""Tunes level 7 of the matmul ladder: picks, per shape class, the fastest correct member of the
kernel family in challenges/matmul/levels/7_autotuned_wgmma.cu, on the GPU it runs on.

For every family member (`template <> struct Family<i> : Member<...>` in the source):
1. build it alone with nvcc (-DLEVEL7_CONFIG=i), for exactly this GPU;
2. check it against the FP64 reference with the challenge's own tolerance rule on edge shapes,
   fresh random inputs each time; a member that fails any check is never chosen;
3. time it on the shapes of each class (CUDA events, L2 flushed before every sample, warm-up,
   repetitions until the mean is known to 0.5% or the budget is spent; medians), with cuBLAS FP32
   timed on the same shapes for comparison.
Then the member with the lowest geometric-mean median per class wins. `--write` replaces the block
between `// BEGIN TUNED TABLE` and `// END TUNED TABLE` in the source with the winners for this
GPU's compute capability, keeping the other architectures' rows.

Usage (on the GPU machine, from the repository root):
    python3 bench/tune_level7.py --json bench/results/tune_level7.json --write

Needs CuPy, numpy, nvcc and a GPU the family supports (sm_90: H100, H200).
"""

from __future__ import annotations

import argparse
import ctypes
import datetime
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import build, check, spec, timing  # noqa: E402
from grader.l2flush import L2Flush  # noqa: E402

SOURCE = ROOT / "challenges" / "matmul" / "levels" / "7_autotuned_wgmma.cu"
BEGIN, END = "// BEGIN TUNED TABLE", "// END TUNED TABLE"
MEMBER = re.compile(r"template <> struct Family<(\d+)> : Member<([^>]*)>")

# (M, N, K): A is M×N, B is N×K, N the inner dimension. Edge shapes for the correctness gate:
# tiny, odd, tile remainders in every dimension, unaligned rows, a deep inner dimension.
CHECK_SHAPES = [(1, 1, 1), (3, 5, 7), (65, 63, 66), (127, 129, 257), (257, 1, 129), (129, 257, 127),
                (17, 4096, 19), (1000, 1000, 1000), (640, 2048, 512)]

# The shape classes of the kernel's `choose` (SMALL: fewer 128×128 tiles of C than 2 per SM).
CLASS_SHAPES = {
    "SMALL": [(1024, 4096, 1024), (2048, 2048, 1024), (512, 8192, 768)],
    "LARGE": [(8192, 6144, 4096), (4096, 4096, 4096), (4095, 4097, 4093)],
}


@dataclass(frozen=True)
class Member:
    index: int
    params: str  # warpgroups, block width, wgmma width, stages, L2 group rows


@dataclass
class Result:
    member: int
    params: str
    correct: bool
    worst_scaled_error: float
    failure: str | None
    median_ms: dict[str, float]


def family(source: Path) -> list[Member]:
    members = [Member(int(i), params.replace(" ", "")) for i, params in MEMBER.findall(source.read_text())]
    if not members:
        sys.exit(f"{source}: no 'template <> struct Family<i> : Member<...>' lines found")
    return members


def build_member(source: Path, member: Member, out: Path, major: int, minor: int) -> Path:
    """The member built as the grader builds a submission (its flags and its sync shim), alone."""
    library, unit = out / f"member{member.index}.so", out / f"member{member.index}.cu"
    prototype = spec.load(ROOT / "challenges", "matmul").prototype()
    unit.write_text(build.translation_unit(source.read_text(), str(source), prototype))
    command = ["nvcc", *build.BASE_FLAGS, *build.arch_flags(major, minor), f"-DLEVEL7_CONFIG={member.index}",
               "-o", str(library), str(unit)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"member {member.index} did not build:\n{done.stderr[-3000:]}")
    return library


@dataclass(frozen=True)
class Library:
    solve: object
    sync: object


def load(library: Path) -> Library:
    loaded = ctypes.CDLL(str(library))
    loaded.solve.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 3
    loaded.solve.restype = None
    sync = getattr(loaded, build.SYNC_SYMBOL)  # the launch's error, else the synchronization's
    sync.restype = ctypes.c_int
    return Library(loaded.solve, sync)


def call(member: Library, A, B, C) -> None:
    (M, N), K = A.shape, B.shape[1]
    member.solve(A.data.ptr, B.data.ptr, C.data.ptr, M, N, K)
    status = member.sync()
    if status != 0:
        raise RuntimeError(f"CUDA error {status} from the member's launch")


def uniform(cp, rng, shape):
    return cp.asarray(rng.uniform(-1.0, 1.0, shape).astype("float32"))


def check_member(member: Library, cp, rng, tolerance: spec.Tolerance) -> tuple[bool, float, str | None]:
    worst = 0.0
    for M, N, K in CHECK_SHAPES:
        A, B = uniform(cp, rng, (M, N)), uniform(cp, rng, (N, K))
        C = cp.full((M, K), cp.nan, dtype=cp.float32)
        call(member, A, B, C)
        A64, B64 = A.astype(cp.float64), B.astype(cp.float64)
        compared = check.compare("C", C, A64 @ B64, cp.abs(A64) @ cp.abs(B64), tolerance)
        worst = max(worst, compared.scaled_error)
        if not compared.passed:
            return False, worst, f"{M}×{N}×{K}: {check.describe(compared, tolerance)}"
    return True, worst, None


def time_shape(work, cp, flush_bytes: int, budget_s: float) -> float:
    sampler = timing.event_sampler(cp, L2Flush(cp, flush_bytes), work)
    return statistics.median(timing.measure(sampler, timing.TimingPolicy(budget_s=budget_s)))


def evaluate(library: Path, member: Member, budget_s: float, seed: int) -> Result:
    """Checks and times one member, in this process (the parent runs it in a child, with a timeout)."""
    import cupy as cp
    import numpy as np

    flush_bytes = 2 * cp.cuda.Device().attributes["L2CacheSize"]
    tolerance = spec.load(ROOT / "challenges", "matmul").tolerance
    rng = np.random.default_rng(seed)
    loaded = load(library)
    correct, worst, failure = check_member(loaded, cp, rng, tolerance)
    medians = {}
    if correct:
        for shape in (s for group in CLASS_SHAPES.values() for s in group):
            A, B = uniform(cp, rng, shape[:2]), uniform(cp, rng, shape[1:])
            C = cp.empty((A.shape[0], B.shape[1]), dtype=cp.float32)
            medians[shape_key(shape)] = time_shape(lambda: call(loaded, A, B, C), cp, flush_bytes, budget_s)
    return Result(member.index, member.params, correct, worst, failure, medians)


def evaluate_in_child(library: Path, member: Member, budget_s: float, seed: int, timeout_s: float) -> Result:
    command = [sys.executable, __file__, "--evaluate", str(library), "--members", str(member.index),
               "--params", member.params, "--budget", str(budget_s), "--seed", str(seed)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return Result(member.index, member.params, False, math.inf, f"no result within {timeout_s:.0f} s (a hang?)", {})
    if done.returncode != 0:
        return Result(member.index, member.params, False, math.inf, f"failed: {done.stderr.strip()[-800:]}", {})
    return Result(**json.loads(done.stdout.strip().splitlines()[-1]))


def geomean(values) -> float:
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values))


def shape_key(shape) -> str:
    return "×".join(map(str, shape))


def tuned_block(arch: int, winners: dict[str, Result], gpu: str, old_block: str) -> str:
    kept = [line for line in old_block.splitlines() if line.strip().startswith("{") and not line.strip().startswith(f"{{{arch},")]
    today = datetime.date.today().isoformat()
    lines = [f"{BEGIN} (written by bench/tune_level7.py; rerun it rather than editing these lines)",
             f"// sm_{arch}: tuned on {gpu}, {today}; geometric-mean median per class: "
             + ", ".join(f"{cls} {geomean(r.median_ms[shape_key(s)] for s in CLASS_SHAPES[cls]):.3f} ms"
                         for cls, r in winners.items()),
             "constexpr Choice TUNED[] = {"]
    lines += kept
    lines += [f"    {{{arch}, ShapeClass::{cls}, {r.member}}},  // Member<{r.params}>" for cls, r in winners.items()]
    lines += ["};", END]
    return "\n".join(lines)


def rewrite(source: Path, block: str) -> None:
    text = source.read_text()
    start, stop = text.index(BEGIN), text.index(END) + len(END)
    source.write_text(text[:start] + block + text[stop:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, default=SOURCE, help="the level 7 file (default: %(default)s)")
    parser.add_argument("--json", type=Path, help="write every member's checks and timings here")
    parser.add_argument("--write", action="store_true", help="write the winners into the source's tuned table")
    parser.add_argument("--budget", type=float, default=0.6, help="timing budget per member and shape, seconds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--members", help="only these members, e.g. 0,2 (default: all)")
    parser.add_argument("--timeout", type=float, default=90, help="seconds one member may take to check and time")
    parser.add_argument("--evaluate", type=Path, help=argparse.SUPPRESS)  # child mode: one built member
    parser.add_argument("--params", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.evaluate:
        result = evaluate(args.evaluate, Member(int(args.members), args.params), args.budget, args.seed)
        print(json.dumps(asdict(result)))
        return 0

    members = family(args.source)
    if args.members:
        wanted = {int(i) for i in args.members.split(",")}
        members = [m for m in members if m.index in wanted]
        if not members:
            sys.exit(f"no family member numbered {args.members} in {args.source}")

    import cupy as cp
    import numpy as np

    device = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(device.id)
    major, minor, gpu = props["major"], props["minor"], props["name"].decode()
    arch = major * 10 + minor
    flush_bytes = 2 * device.attributes["L2CacheSize"]
    rng = np.random.default_rng(args.seed)
    print(f"{gpu} (sm_{arch}, {device.attributes['MultiProcessorCount']} SMs): {len(members)} family members", flush=True)

    with tempfile.TemporaryDirectory() as scratch, ThreadPoolExecutor(max_workers=len(members)) as pool:
        libraries = list(pool.map(lambda m: build_member(args.source, m, Path(scratch), major, minor), members))
        shapes = [s for group in CLASS_SHAPES.values() for s in group]
        inputs = {shape_key(s): (uniform(cp, rng, s[:2]), uniform(cp, rng, s[1:])) for s in shapes}
        cublas = {}
        for key, (A, B) in inputs.items():
            cublas[key] = time_shape(lambda: (cp.matmul(A, B), cp.cuda.runtime.deviceSynchronize()), cp,
                                     flush_bytes, args.budget)
        print("cuBLAS FP32: " + ", ".join(f"{k} {v:.3f} ms" for k, v in cublas.items()), flush=True)

        results = []
        for member, library in zip(members, libraries):
            r = evaluate_in_child(library, member, args.budget, args.seed + 1 + member.index, args.timeout)
            results.append(r)
            shown = ", ".join(f"{k} {v:.3f} ms ({100 * cublas[k] / v:.0f}% cuBLAS)" for k, v in r.median_ms.items())
            print(f"member {r.member} <{r.params}>: "
                  + (f"correct (worst scaled error {r.worst_scaled_error:.2e}); {shown}" if r.correct
                     else f"WRONG: {r.failure}"), flush=True)

    winners = {}
    for cls, group in CLASS_SHAPES.items():
        timed = [r for r in results if r.correct]
        if timed:
            winners[cls] = min(timed, key=lambda r: geomean(r.median_ms[shape_key(s)] for s in group))
    for cls, r in winners.items():
        print(f"{cls}: member {r.member} <{r.params}>")

    text = args.source.read_text()
    block = tuned_block(arch, winners, gpu, text[text.index(BEGIN):text.index(END)])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "gpu": gpu, "arch": arch, "date": datetime.date.today().isoformat(), "cublas_ms": cublas,
            "class_shapes": {c: [shape_key(s) for s in g] for c, g in CLASS_SHAPES.items()},
            "members": [asdict(r) for r in results], "winners": {c: r.member for c, r in winners.items()},
            "table": block}, indent=1))
    if not winners:
        print("no member passed the checks: the table is left as it is", file=sys.stderr)
        return 1
    if args.write:
        rewrite(args.source, block)
        print(f"wrote the sm_{arch} rows of the tuned table into {args.source}")
    else:
        print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
