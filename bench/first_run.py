"""First-run cost of grading on a GPU machine: cold and warm `grader run` and `grader submit`.

On a machine where CuPy has never run, every kernel CuPy compiles at run time (NVRTC, once per
machine, kept in its kernel cache) is paid by the first grading; the grader should make CuPy compile
none. This script points CuPy's kernel cache (CUPY_CACHE_DIR) and the grader's build cache at fresh
empty folders, then times, in separate processes:

    grader run    FILE --seed 1 --cache-dir X --json                  (cold, then warm)
    grader submit FILE --seed 1 --cache-dir X --no-placement --json   (cold, then warm)

and lists the files that appeared in the kernel cache after each (the goal: none). `--json` only
changes how the report is printed; it gives the grader's own clock (the process's wall time less
Python's start and CuPy's import) and the nvcc build time.

    python3 bench/first_run.py --json first_run.json

The cold `run` also compiles the submission with nvcc (the build cache starts empty too).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_FILE = ROOT / "challenges" / "matmul" / "levels" / "1_naive.cu"
STEPS = (("run", "cold"), ("run", "warm"), ("submit", "cold"), ("submit", "warm"))
KERNEL_NAME = re.compile(rb"cupy_[A-Za-z0-9_]+")
OUTPUT_SHOWN = 4000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--file", type=Path, default=DEFAULT_FILE, help="submission to grade (default: level 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="write the results here as JSON")
    parser.add_argument("--sandbox", default=None, help="pass --sandbox to the grader (default: the grader's own)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per grader command")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folders and print where they are")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="grader-first-run-"))
    kernels, builds = work / "cupy-kernel-cache", work / "grader-cache"
    kernels.mkdir()
    env = dict(os.environ, CUPY_CACHE_DIR=str(kernels), PYTHONUNBUFFERED="1")
    results = []
    try:
        for command, state in STEPS:
            before = cache_files(kernels)
            step = run_step(command, state, args, builds, env)
            step["kernel_cache_files_added"] = sorted(set(cache_files(kernels)) - set(before))
            step["kernel_names_added"] = kernel_names(kernels, step["kernel_cache_files_added"])
            results.append(step)
            print_step(step)
        summary = {"file": str(args.file), "seed": args.seed, "steps": results,
                   "kernel_cache_files": len(cache_files(kernels)), "environment": environment()}
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print_table(summary)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
        print(f"wrote {args.json}")
    return 0 if all(s["exit_code"] == 0 for s in results) else 1


def run_step(command: str, state: str, args, builds: Path, env: dict) -> dict:
    argv = [sys.executable, "-m", "grader", command, str(args.file), "--seed", str(args.seed),
            "--cache-dir", str(builds), "--json"]
    if command == "submit":
        argv.append("--no-placement")
    if args.sandbox:
        argv += ["--sandbox", args.sandbox]
    started = time.perf_counter()
    try:
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=args.timeout)
        code, out, err = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as expired:
        code, out, err = None, _text(expired.stdout), _text(expired.stderr) + f"\n(killed after {args.timeout:g} s)"
    wall_s = time.perf_counter() - started
    step = {"command": command, "state": state, "argv": argv, "exit_code": code, "wall_s": round(wall_s, 3),
            "sandbox": _sandbox_line(err), **_report_figures(out)}
    if code != 0:
        step["stdout_tail"], step["stderr_tail"] = out[-OUTPUT_SHOWN:], err[-OUTPUT_SHOWN:]
    return step


def _report_figures(stdout: str) -> dict:
    """The grader's own figures from its JSON report; none when it printed no report."""
    try:
        report = json.loads(stdout)
        build = report.get("build") or {}
        return {"verdict": report.get("verdict"), "grader_wall_s": round(report["wall_s"], 3),
                "kernel_s": round(report.get("kernel_s") or 0.0, 3), "nvcc_s": round(build.get("seconds") or 0.0, 3),
                "build_cached": build.get("cached")}
    except (ValueError, KeyError, TypeError, AttributeError):
        return {"verdict": None, "grader_wall_s": None}


def _text(value) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else value


def _sandbox_line(stderr: str) -> str:
    """The grader's one line about the sandbox. An active sandbox gives the worker a private /tmp, so
    a kernel the worker compiled would land there, not in the cache folder counted here."""
    return next((line.strip() for line in stderr.splitlines() if line.strip().startswith("sandbox:")), "")


def cache_files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def kernel_names(folder: Path, files: list[str]) -> list[str]:
    """CuPy's kernel names (cupy_copy__float32_float32…) found in the cached binaries: which calls compiled."""
    names: set[str] = set()
    for name in files:
        try:
            names.update(m.decode() for m in KERNEL_NAME.findall((folder / name).read_bytes()))
        except OSError:
            pass
    return sorted(names)


def environment() -> dict:
    info = {"python": sys.version.split()[0]}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
        info["gpu"] = smi.stdout.strip()
    except (OSError, subprocess.SubprocessError) as error:
        info["gpu"] = f"nvidia-smi failed: {error}"
    try:
        import cupy
        info["cupy"] = cupy.__version__
    except Exception as error:  # not importable: say so, the timings still stand
        info["cupy"] = f"not importable: {error}"
    return info


def print_step(step: dict) -> None:
    status = "ok" if step["exit_code"] == 0 else f"FAILED (exit {step['exit_code']})"
    print(f"{step['command']:6} {step['state']:4}  {step['wall_s']:7.2f} s  {status}  "
          f"+{len(step['kernel_cache_files_added'])} kernel cache files", flush=True)
    if step["sandbox"]:
        print(f"       {step['sandbox']}")
    if step["exit_code"] != 0:
        print("------- stdout (tail) -------\n" + step["stdout_tail"])
        print("------- stderr (tail) -------\n" + step["stderr_tail"], flush=True)


def print_table(summary: dict) -> None:
    print(f"\n{summary['environment']}")
    print(f"{'command':8} {'state':6} {'wall s':>8} {'grader s':>9} {'nvcc s':>7} {'exit':>5} "
          f"{'new cache files':>16}  kernels compiled")
    for s in summary["steps"]:
        names = ", ".join(s["kernel_names_added"]) or "-"
        own = f"{s['grader_wall_s']:9.2f}" if s.get("grader_wall_s") is not None else f"{'-':>9}"
        nvcc = f"{'cached':>7}" if s.get("build_cached") else (f"{s['nvcc_s']:7.2f}" if s.get("nvcc_s") is not None
                                                              else f"{'-':>7}")
        print(f"{s['command']:8} {s['state']:6} {s['wall_s']:8.2f} {own} {nvcc} {str(s['exit_code']):>5} "
              f"{len(s['kernel_cache_files_added']):16d}  {names}")
    print(f"CuPy kernel cache files in all: {summary['kernel_cache_files']} (goal: 0)")


if __name__ == "__main__":
    sys.exit(main())
