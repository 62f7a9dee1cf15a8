"""Recomputes the accuracy margins quoted in statement.md ("Accuracy") with numpy alone.

    python challenges/reduction/tolerance_check.py

Inputs come from this challenge's own reference.py (the grader's generator) and the limits from its
challenge.yaml, so the numbers follow any change to either. A kernel's FP32 sum is reproduced bit for
bit by doing its additions in the same order in numpy float32 (IEEE round to nearest, as on a GPU):
the trees of the reference levels (interleaved and sequential addressing, two loads added, a
grid-stride loop per thread, warp shuffles over float4 loads), block sums added one by one in a
random order (what atomicAdd does), numpy's own pairwise float32 sum, and one thread adding every
element in turn. Each shortcut is simulated by the roundings it makes (numpy's float16 add rounds
through float32 first, which can differ from a GPU's __hadd only in the last bit of a rare tie), and
each wrong kernel by the terms it leaves out or misreads. The grader's two measures are recomputed the
way grader/check.py defines them, on the one-element output.

Methods marked "pass" must pass every run, those marked "fail" must fail at least one case of every
functional run (every seed): a reduction's error has the size of the sum's own noise, so a shortcut
can pass one large case by chance, and the small cases are where it shows. "info" rows are measured
without a requirement. The last table estimates how often a correct result would fail the relative
Frobenius limit, which for one number is the relative error |got - S| / |S| and is unbounded when the
true sum S lies near zero.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
BLOCK = 256
"""Threads per block in every level, as in levels/*.cu."""
FULL_GRID = 132 * 8
"""Blocks of levels 6 and 7 on an H100 or H200 (132 multiprocessors, 8 blocks of 256 threads each);
the emulator reports the same count."""
SMALL_SEEDS = 20
"""Seeds per size below a million elements: small cases are where a shortcut could pass by luck."""
LARGE = 1_000_000


def load_reference():
    spec = importlib.util.spec_from_file_location("reduction_reference", HERE / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def config() -> dict:
    return yaml.safe_load((HERE / "challenge.yaml").read_text())


def sizes_of(conf: dict) -> list[int]:
    """Every functional and performance size, the randomized range's ends, and 2^25: the cases a run
    can meet, from 1 to the largest timed one."""
    sizes = {case["N"] for case in conf["functional"]["cases"] + conf["performance"]["cases"]}
    sizes.update(conf["randomized"]["ranges"]["N"])
    sizes.add(1 << 25)
    return sorted(sizes)


# --------------------------------------------------------------------------- roundings


def to_bf16(x: np.ndarray) -> np.ndarray:
    """float32 rounded to bfloat16 (8 significand bits), round to nearest even, kept as float32."""
    bits = np.ascontiguousarray(x, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> 16) & np.uint32(1))) & np.uint32(0xFFFF0000)
    return rounded.view(np.float32)


def to_f16(x: np.ndarray) -> np.ndarray:
    return np.asarray(x, np.float32).astype(np.float16)


# --------------------------------------------------------------------------- the orders of the levels


def tree_sequential(a: np.ndarray, round_to=None) -> np.ndarray:
    """Each row of `a` (power-of-two width) summed as `s = width/2 .. 1: a[t] += a[t + s]` for t < s:
    sequential addressing (levels 2 to 5), and also what __shfl_down_sync with offsets 16 .. 1 does
    within a warp (level 7). `round_to` rounds every partial sum (a reduced-precision tree)."""
    s = a.shape[1] // 2
    while s:
        a[:, :s] += a[:, s:2 * s]
        if round_to is not None:
            a[:, :s] = round_to(a[:, :s])
        s //= 2
    return a[:, 0].copy()


def tree_interleaved(a: np.ndarray) -> np.ndarray:
    """Interleaved addressing (level 1): `s = 1, 2, 4 ..: a[t] += a[t + s]` for t a multiple of 2s."""
    s = 1
    while s < a.shape[1]:
        a[:, ::2 * s] += a[:, s::2 * s]
        s *= 2
    return a[:, 0].copy()


def padded_rows(x: np.ndarray, width: int, dtype=np.float32) -> np.ndarray:
    """x as rows of `width`, zeros after its end: a bounds-checked load of 0.0f adds nothing, exactly."""
    rows = max(1, -(-x.size // width))  # at least one row: a launch has at least one block
    out = np.zeros(rows * width, dtype)
    out[:x.size] = x
    return out.reshape(rows, width)


def block_passes(x: np.ndarray, loads: int = 1, tree=tree_sequential, dtype=np.float32, round_to=None) -> float:
    """Levels 1 to 5: one partial sum per block of BLOCK threads, each thread first adding `loads`
    elements a block's width apart (two in level 3), then the block's tree; the partials are reduced
    the same way, pass after pass, until one value is left."""
    values = np.asarray(x, dtype)
    while True:
        rows = padded_rows(values, BLOCK * loads, dtype).reshape(-1, loads, BLOCK)
        acc = rows[:, 0, :].copy()
        for k in range(1, loads):
            acc += rows[:, k, :]
        if round_to is not None:
            acc = round_to(acc)
        values = tree(acc, round_to) if round_to is not None else tree(acc)
        if values.size == 1:
            return float(values[0])


def grid_stride_pass(x: np.ndarray, blocks: int, vector: int, dtype=np.float32) -> np.ndarray:
    """One pass of levels 6 (vector = 1) and 7 (vector = 4): blocks · BLOCK threads walk the array in
    steps of the grid's width, each adding its elements (a float4 as (x + y) + (z + w)) to its own
    sum one after another; in level 7 the first N % 4 threads then add the tail. Level 6 finishes
    each block with the sequential-addressing tree; level 7 with shuffles in each warp (the same
    tree over 32 lanes) and then over the block's 8 warp sums. `dtype` float16 is
    wrong/half_accumulation.cu: the same loop and tree with every value and sum in half."""
    threads = blocks * BLOCK
    whole = x.size // vector * vector
    if vector == 4:
        quads = x[:whole].reshape(-1, 4)
        items = (quads[:, 0] + quads[:, 1]) + (quads[:, 2] + quads[:, 3])
    else:
        items = x
    steps = padded_rows(items, threads, dtype)
    acc = steps[0].copy()
    for row in steps[1:]:
        acc += row
    if vector == 4:
        acc[:x.size - whole] += x[whole:]
        warps = tree_sequential(acc.reshape(-1, 32))  # one sum per warp, in its lane 0
        return tree_sequential(warps.reshape(blocks, BLOCK // 32))  # lanes 8 .. 31 add zeros: exact
    return tree_sequential(acc.reshape(blocks, BLOCK))


def grid_stride(x: np.ndarray, vector: int, max_blocks: int = FULL_GRID, dtype=np.float32) -> float:
    """Levels 6 and 7: a grid of at most `max_blocks` blocks, then one block over their partial sums."""
    values = np.asarray(x, np.float32)
    blocks = min(-(-values.size // (BLOCK * vector)), max_blocks)
    values = grid_stride_pass(values, blocks, vector, dtype)
    if values.size > 1:
        values = grid_stride_pass(values, 1, vector, dtype)
    return float(values[0])


def atomic_partials(x: np.ndarray, rng: np.random.Generator) -> float:
    """Block sums (the level-2 tree) added one by one, in a random order, into an output zeroed
    first: a kernel that ends with atomicAdd(output, block_sum)."""
    rows = padded_rows(x, BLOCK)
    partials = tree_sequential(rows)
    rng.shuffle(partials)
    return float(np.cumsum(partials, dtype=np.float32)[-1])


def sequential(x: np.ndarray) -> float:
    """One thread adding every element in turn in FP32 (np.cumsum is that loop)."""
    return float(np.cumsum(x, dtype=np.float32)[-1])


def float_index(x: np.ndarray) -> float:
    """The level-2 tree with each thread's index passed through a float: above 2^24 an odd index rounds
    to an even neighbour (ties to even), so some elements are read twice and others never."""
    n = x.size
    if n <= 1 << 24:
        return block_passes(x)
    index = np.arange(n, dtype=np.int64).astype(np.float32).astype(np.int64)
    return block_passes(x[np.minimum(index, n - 1)])


def methods(rng: np.random.Generator) -> dict:
    """name: (sum of the float32 input, "pass", "fail" or "info")."""
    return {
        "level 1: interleaved tree, multi-pass": (lambda x: block_passes(x, tree=tree_interleaved), "pass"),
        "levels 2, 4, 5: sequential-addressing tree": (lambda x: block_passes(x), "pass"),
        "level 3: two loads added, then the tree": (lambda x: block_passes(x, loads=2), "pass"),
        "level 6: grid-stride loop, 1056 blocks": (lambda x: grid_stride(x, 1), "pass"),
        "level 7: float4 grid-stride, warp shuffles": (lambda x: grid_stride(x, 4), "pass"),
        "block trees, atomicAdd in random order": (lambda x: atomic_partials(x, rng), "pass"),
        "numpy np.sum (pairwise, FP32)": (lambda x: float(np.sum(x, dtype=np.float32)), "pass"),
        "one thread, sequential FP32 loop": (sequential, "pass"),
        "FP16 accumulation (wrong/half_accumulation.cu)": (lambda x: grid_stride(x, 1, 1024, np.float16), "fail"),
        "FP16 inputs, FP32 tree": (lambda x: block_passes(to_f16(x).astype(np.float32)), "fail"),
        "FP16 tree, FP16 inputs": (lambda x: block_passes(x, dtype=np.float16), "fail"),
        "BF16 inputs, FP32 tree": (lambda x: block_passes(to_bf16(x)), "fail"),
        "BF16 tree, BF16 inputs": (lambda x: block_passes(to_bf16(x), round_to=to_bf16), "fail"),
        "drops the last N % 4 (wrong/float4_no_tail.cu)": (lambda x: block_passes(x[:x.size // 4 * 4]) if x.size >= 4 else 0.0, "fail"),
        "drops the last partial block (grid rounded down)": (lambda x: block_passes(x[:max(x.size // BLOCK, 1) * BLOCK]), "fail"),
        "first 16,384 only (wrong/single_block.cu)": (lambda x: block_passes(x[:16384]), "fail"),
        "index through a float (above 2^24)": (float_index, "info"),
    }


# --------------------------------------------------------------------------- the grader's measures


def measures(got: float, expected: float, scale: float) -> tuple[float, float]:
    """(scaled error, relative Frobenius error) of a one-element output, as grader/check.py computes
    them: |got - S| / sum|x|, and |got - S| / |S| (infinite when S is 0 and the error is not)."""
    error = abs(got - expected)
    scaled = error / scale if scale else (0.0 if error == 0 else math.inf)
    relative = error / abs(expected) if expected else (0.0 if error == 0 else math.inf)
    return scaled, relative


def _which(chosen: list[int], sizes: list[int]) -> str:
    """`chosen`, a subset of `sizes`, named the short way: listed, or as the sizes it leaves out."""
    others = [n for n in sizes if n not in chosen]
    if len(others) < len(chosen):
        return "every size but " + (", ".join(map(str, others)) or "none")
    return ", ".join(map(str, chosen)) or "none"


def seeds_for(n: int) -> int:
    return SMALL_SEEDS if n < LARGE else 1


def main() -> None:
    reference = load_reference()
    conf = config()
    max_scaled = float(conf["tolerance"]["max_scaled_error"])
    max_relative = float(conf["tolerance"]["max_relative_frobenius"])
    sizes = sizes_of(conf)
    order_rng = np.random.default_rng(2024)
    table = methods(order_rng)
    runs: dict[str, list[tuple[int, int, float, float, float]]] = {name: [] for name in table}
    # (N, seed, scaled error, relative error, |got - S| in absolute terms) per run
    fsum_check = None
    for n in sizes:
        for seed in range(seeds_for(n)):
            x = reference.generate({"N": n}, np.random.default_rng([seed, 1, n]))["input"]
            expected = float(reference.reference({"input": x}, np)["output"][0])
            scale = float(reference.error_scale({"input": x}, np)["output"][0])
            if n == max(sizes) and seed == 0:
                fsum_check = (n, abs(expected - math.fsum(x.astype(np.float64).tolist())) / scale)
            for name, (method, _) in table.items():
                got = method(x)
                runs[name].append((n, seed, *measures(got, expected, scale), abs(got - expected)))
        print(f"  N = {n} done", flush=True)
    print(f"\nlimits: scaled error {max_scaled:.3g}, relative Frobenius {max_relative:.3g}; sizes "
          f"{', '.join(map(str, sizes))}; {SMALL_SEEDS} seeds below {LARGE:,}, one from there on\n")
    print(f"{'method':50} {'must':4} {'scaled error (min - max)':>26} {'failed':>9}  failing sizes")
    problems = []
    for name, (_, must) in table.items():
        rows = runs[name]
        failed = [(n, seed) for n, seed, s, r, _ in rows if not (s <= max_scaled and r <= max_relative)]
        scaled = [s for _, _, s, _, _ in rows]
        failing_sizes = sorted({n for n, _ in failed})
        shown = ", ".join(map(str, failing_sizes[:6])) + (" ..." if len(failing_sizes) > 6 else "")
        print(f"{name:50} {must:4} {min(scaled):12.3g} - {max(scaled):10.3g} {len(failed):4}/{len(rows):<4}  {shown}")
        if must == "pass" and failed:
            problems.append(name)
        if must == "fail":
            caught = {seed for _, seed in failed}
            missed = [seed for seed in range(SMALL_SEEDS) if seed not in caught]
            if missed:
                problems.append(f"{name} (no failing case with seed {missed[0]})")
    print("\nsizes at which each wrong method failed with every seed; and how clearly a run fails: for each "
          "seed, the largest scaled error over the sizes below a million, as a multiple of the limit, and the "
          "smallest of those over the seeds:")
    for name, (_, must) in table.items():
        if must != "fail":
            continue
        always = [n for n in sizes if all(not (s <= max_scaled and r <= max_relative)
                                          for m, _, s, r, _ in runs[name] if m == n)]
        per_seed = [max(s for n, sd, s, _, _ in runs[name] if sd == seed and n < LARGE) for seed in range(SMALL_SEEDS)]
        print(f"  {name:50} a run fails by {min(per_seed) / max_scaled:.3g}x or more; every seed fails at N = "
              f"{_which(always, sizes)}")
    print("\nworst scaled error of the correct methods, by size (all seeds):")
    correct = [name for name, (_, must) in table.items() if must == "pass"]
    print(f"{'N':>10}  " + "  ".join(f"{name.split(':')[0][:10]:>10}" for name in correct))
    for n in sizes:
        worst = [max(s for m, _, s, _, _ in runs[name] if m == n) for name in correct]
        print(f"{n:>10}  " + "  ".join(f"{w:10.2e}" for w in worst))
    print("\nrelative error |got - S| / |S| of the correct methods, and the chance a correct result fails "
          "the relative Frobenius limit:")
    print("  P(fail) is about 2 f(0) |got - S| / limit, f(0) = 1 / sqrt(2 pi N / 3) being the density of S "
          "at zero; the figure is the largest over the runs at each method's worst size")
    for name in correct:
        rows = runs[name]
        worst_rel = max(r for _, _, _, r, _ in rows)
        chance = max(2 * e / (math.sqrt(2 * math.pi * n / 3) * max_relative) for n, _, _, _, e in rows)
        print(f"  {name:50} largest relative error {worst_rel:9.3g}   P(fail) per case up to about {chance:.2g}")
    if fsum_check:
        print(f"\nreference.py against math.fsum at N = {fsum_check[0]}: |difference| / sum|x| = {fsum_check[1]:.2g}")
    if problems:
        raise SystemExit(f"\nnot as statement.md says: {'; '.join(problems)}")
    print("\nevery correct order passed every run; every shortcut and wrong kernel failed in every seed's run")


if __name__ == "__main__":
    main()
