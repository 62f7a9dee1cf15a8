"""Grade a folder of third-party solutions, one `grader submit` per file, and compare two such runs.

The corpus lives outside this repository (its files are other people's code under various licences,
never committed here): FOLDER/<challenge slug>/*.cu, or FOLDER is itself named after a challenge.
Each file is graded with `python3 -m grader submit FILE --challenge SLUG --backend B --json`, the
challenge taken from the nearest folder above the file that is named after one, so a folder of
files for one challenge never falls back on the grader's guess from the signature (reduction and
softmax share theirs). This script holds no third-party code.

Grade (on this machine, the CPU emulator; on a GPU machine, --backend cuda):

    python3 bench/thirdparty_verdicts.py /work/thirdparty --backend emulator --out emulator.json
    python3 bench/thirdparty_verdicts.py /work/thirdparty --backend cuda --out cuda.json

Compare two runs, file by file (the emulator's verdict against the GPU's):

    python3 bench/thirdparty_verdicts.py --compare emulator.json cuda.json

Every run uses one fixed seed (--seed, default 20251125) so both backends draw the same random
shapes and values, and `--no-placement` (the reference ladder is not measured) unless --placement
is given. --jobs files are graded at once (default 2 on the emulator, 1 on a GPU, whose timed
cases must not share it). --grader-arg passes one more argument to every `grader submit` (repeat
it), e.g. --grader-arg=--timing-budget=0.2. --grader-root grades with the grader package of another
folder, e.g. a clean snapshot of a commit while others edit this checkout:

    git archive HEAD | tar -x -C /tmp/grader-head && git rev-parse HEAD > /tmp/grader-head/.grader-commit
    python3 bench/thirdparty_verdicts.py /work/thirdparty --grader-root /tmp/grader-head

The output JSON is an object: "meta" (the grader's git commit, backend, seed, host, times) and
"results", a list with one entry per file: file (relative to FOLDER), challenge, verdict, message
(its first line), seconds, plus rc, first_failed_case, device and, when the message has more
lines, detail (the whole message, cut at 2,000 characters). A file the grader could not report on
gets the verdict NO_REPORT and the tail of its stderr as message. --compare reads any two files of
this form (a bare list of {file, verdict, message} entries too, e.g. hand-written predictions); it
exits 1 when some file's verdicts differ.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import datetime
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SEED = 20251125
# Verdicts that say nothing about the submission: the emulator could not run it, or the grader broke.
NO_VERDICT = {"UNSUPPORTED", "NO_REPORT", "TIMEOUT_SCRIPT"}


def grader_env(root: Path) -> dict[str, str]:
    """The environment for `python3 -m grader` run from root: its package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def known_challenges(root: Path) -> list[str]:
    """The challenge slugs the grader at root knows (`grader list --json`)."""
    proc = subprocess.run([sys.executable, "-m", "grader", "list", "--json"], capture_output=True,
                          text=True, cwd=root, env=grader_env(root))
    try:
        listed = json.loads(proc.stdout)
    except json.JSONDecodeError:
        listed = None
    slugs: list[str] = []
    if isinstance(listed, list):
        slugs = [c["slug"] if isinstance(c, dict) else str(c) for c in listed]
    elif isinstance(listed, dict):
        items = listed.get("challenges", listed)
        slugs = [c["slug"] if isinstance(c, dict) else str(c) for c in items]
    if not slugs:  # fall back on the challenge folders of this checkout
        slugs = sorted(p.parent.name for p in (root / "challenges").glob("*/challenge.yaml"))
    return slugs


def collect(folder: Path, slugs: list[str]) -> list[tuple[Path, str]]:
    """Every .cu file under folder with its challenge: the nearest folder above it named after one."""
    found = []
    for path in sorted(folder.rglob("*.cu")):
        for parent in [path.parent, *path.parent.parents]:
            if parent.name in slugs:
                found.append((path, parent.name))
                break
            if parent == folder.parent:
                print(f"skipped (no challenge folder above it): {path}", file=sys.stderr)
                break
    return found


def first_line(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


def grade(path: Path, challenge: str, folder: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, "-m", "grader", "submit", str(path), "--challenge", challenge,
           "--backend", args.backend, "--json", "--seed", str(args.seed)]
    if not args.placement:
        cmd.append("--no-placement")
    cmd += args.grader_arg
    started = time.perf_counter()
    entry: dict = {"file": str(path.relative_to(folder)), "challenge": challenge}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=args.grader_root,
                              env=grader_env(args.grader_root), timeout=args.timeout)
    except subprocess.TimeoutExpired as stopped:
        entry.update(verdict="TIMEOUT_SCRIPT", message=f"no report within this script's {args.timeout} s",
                     seconds=round(time.perf_counter() - started, 2), rc=None,
                     stderr_tail=(stopped.stderr or b"")[-2000:].decode("utf-8", "replace")
                     if isinstance(stopped.stderr, bytes) else (stopped.stderr or "")[-2000:])
        return entry
    seconds = round(time.perf_counter() - started, 2)
    report = None
    out = proc.stdout.strip()
    if out.startswith("{"):
        try:
            report = json.loads(out)
        except json.JSONDecodeError:
            report = None
    if report is None:
        entry.update(verdict="NO_REPORT", message=first_line(proc.stderr[-4000:]) or first_line(out),
                     seconds=seconds, rc=proc.returncode, stderr_tail=proc.stderr[-2000:])
        return entry
    message = report.get("message") or ""
    failed = None
    for case in report.get("cases") or []:
        if case.get("verdict") not in ("ACCEPTED", "SKIPPED", None):
            failed = {"label": case.get("label"), "dims": case.get("dims"), "verdict": case.get("verdict")}
            if not message:
                message = case.get("message") or ""
            break
    if not message:
        message = (report.get("build") or {}).get("message", "") if report.get("verdict") != "ACCEPTED" else ""
    env = report.get("environment") or {}
    if message.strip() and message.strip() != first_line(message):
        entry["detail"] = message.strip()[:2000]  # the lines after the first (a compiler's words, say)
    entry.update(verdict=report.get("verdict", "NO_REPORT"), message=first_line(message), seconds=seconds,
                 rc=proc.returncode, first_failed_case=failed,
                 device=env.get("gpu") or env.get("backend"), grader_wall_s=report.get("wall_s"))
    return entry


def git_commit(root: Path) -> str:
    """The grader's commit: root's git HEAD (flagged when grader/ has uncommitted changes), or, for a
    snapshot made with `git archive COMMIT | tar -x -C DIR`, the commit written in DIR/.grader-commit."""
    if (root / ".grader-commit").is_file():
        return (root / ".grader-commit").read_text().strip() + f" (snapshot at {root})"
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True)
    if proc.returncode != 0:
        return f"unknown (no git checkout at {root})"
    dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "grader"],
                           capture_output=True, text=True).stdout.strip()
    return proc.stdout.strip() + (" (grader/ has uncommitted changes)" if dirty else "")


def summary_table(results: list[dict]) -> str:
    verdicts = sorted({r["verdict"] for r in results}, key=lambda v: (v != "ACCEPTED", v))
    challenges = sorted({r["challenge"] for r in results})
    counts = collections.Counter((r["challenge"], r["verdict"]) for r in results)
    width = max([len("challenge"), *map(len, challenges)])
    cols = [max(len(v), 3) for v in verdicts]
    lines = ["challenge".ljust(width) + "  " + "  ".join(v.rjust(w) for v, w in zip(verdicts, cols)) + "  total"]
    for ch in challenges:
        row = [str(counts[(ch, v)] or ".").rjust(w) for v, w in zip(verdicts, cols)]
        lines.append(ch.ljust(width) + "  " + "  ".join(row) + f"  {sum(counts[(ch, v)] for v in verdicts):5d}")
    totals = [str(sum(counts[(ch, v)] for ch in challenges)).rjust(w) for v, w in zip(verdicts, cols)]
    lines.append("total".ljust(width) + "  " + "  ".join(totals) + f"  {len(results):5d}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    folder = Path(args.folder).resolve()
    args.grader_root = Path(args.grader_root).resolve()
    slugs = known_challenges(args.grader_root)
    if folder.name in slugs:  # a single challenge's folder: keep its name in every file's path
        files = [(p, folder.name) for p in sorted(folder.rglob("*.cu"))]
        base = folder.parent
    else:
        files = collect(folder, slugs)
        base = folder
    if args.only:
        files = [(p, c) for p, c in files if any(s in str(p) for s in args.only)]
    if not files:
        print(f"no .cu files under a challenge folder ({', '.join(slugs)}) in {folder}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else Path(f"thirdparty-{args.backend}.json")
    meta = {"folder": str(folder), "backend": args.backend, "seed": args.seed, "commit": git_commit(args.grader_root),
            "host": platform.node(), "python": platform.python_version(), "jobs": args.jobs,
            "placement": args.placement, "grader_args": args.grader_arg,
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    print(f"{len(files)} files, backend {args.backend}, seed {args.seed}, {args.jobs} at a time, "
          f"grader at {meta['commit']}", flush=True)
    results: list[dict] = []
    lock = threading.Lock()

    def save() -> None:
        payload = {"meta": meta, "results": sorted(results, key=lambda r: r["file"])}
        tmp = out.with_name(out.name + ".part")
        tmp.write_text(json.dumps(payload, indent=1) + "\n")
        os.replace(tmp, out)

    started = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(grade, p, c, base, args): p for p, c in files}
        for n, future in enumerate(concurrent.futures.as_completed(futures), 1):
            entry = future.result()
            with lock:
                results.append(entry)
                save()  # a partial file survives an interrupted run
            print(f"[{n}/{len(files)}] {entry['verdict']:<16} {entry['seconds']:7.1f}s  {entry['file']}"
                  + (f"  -- {entry['message'][:140]}" if entry["verdict"] != "ACCEPTED" else ""), flush=True)
    meta["finished"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    meta["wall_s"] = round(time.perf_counter() - started, 1)
    save()
    print("\n" + summary_table(results))
    print(f"\nwrote {out}")
    return 0


def load(path: str) -> tuple[dict, dict[str, dict]]:
    data = json.loads(Path(path).read_text())
    meta, results = (data.get("meta", {}), data["results"]) if isinstance(data, dict) else ({}, data)
    return meta, {r["file"]: r for r in results}


def verdict_class(verdict: str | None) -> str:
    """Coarse class: pass, fail (the submission is wrong in some way), or none (no verdict)."""
    if verdict is None:
        return "missing"
    if verdict == "ACCEPTED":
        return "pass"
    if verdict in NO_VERDICT:
        return "none"
    return "fail"


def compare(path_a: str, path_b: str) -> int:
    meta_a, a = load(path_a)
    meta_b, b = load(path_b)
    name_a = meta_a.get("backend") or Path(path_a).stem
    name_b = meta_b.get("backend") or Path(path_b).stem
    if name_a == name_b:
        name_a, name_b = Path(path_a).stem, Path(path_b).stem
    for name, meta, path in ((name_a, meta_a, path_a), (name_b, meta_b, path_b)):
        print(f"{name}: {path}  commit {meta.get('commit', '?')}  seed {meta.get('seed', '?')}  "
              f"host {meta.get('host', '?')}")
    if meta_a.get("seed") != meta_b.get("seed"):
        print("note: the two runs used different seeds, so their random cases differ")
    files = sorted(set(a) | set(b))
    width = min(max(map(len, files)), 90)
    wa = max(len(name_a), 16)
    wb = max(len(name_b), 16)
    print()
    print("file".ljust(width) + "  " + name_a.ljust(wa) + "  " + name_b.ljust(wb) + "  agree")
    disagreements, no_verdict, same = [], [], 0
    for f in files:
        ra, rb = a.get(f), b.get(f)
        va, vb = (ra or {}).get("verdict"), (rb or {}).get("verdict")
        ca, cb = verdict_class(va), verdict_class(vb)
        if va == vb:
            mark, same = "yes", same + 1
        elif "none" in (ca, cb) or "missing" in (ca, cb):
            mark = "n/a"
            no_verdict.append((f, ra, rb))
        elif ca == cb:
            mark = "class"  # both failed, for different reasons
            disagreements.append((f, ra, rb, "same class, other verdict"))
        else:
            mark = "NO"
            disagreements.append((f, ra, rb, "pass/fail differ"))
        label = f if len(f) <= width else "..." + f[-(width - 3):]
        print(label.ljust(width) + "  " + str(va).ljust(wa) + "  " + str(vb).ljust(wb) + "  " + mark)
    print(f"\n{len(files)} files: {same} same verdict, "
          f"{sum(1 for d in disagreements if d[3] == 'pass/fail differ')} pass/fail disagreements, "
          f"{sum(1 for d in disagreements if d[3] != 'pass/fail differ')} other-failure disagreements, "
          f"{len(no_verdict)} without a verdict on one side")
    if disagreements:
        print("\nDisagreements:")
        for f, ra, rb, why in disagreements:
            print(f"- {f} ({why})")
            for name, r in ((name_a, ra), (name_b, rb)):
                case = (r or {}).get("first_failed_case") or {}
                where = f" [case {case.get('label')} {case.get('dims')}]" if case else ""
                print(f"    {name}: {(r or {}).get('verdict')}{where}: {(r or {}).get('message', '')[:300]}")
    if no_verdict:
        print("\nNo verdict on one side (UNSUPPORTED, NO_REPORT, script timeout, or missing):")
        for f, ra, rb in no_verdict:
            print(f"- {f}: {name_a} {(ra or {}).get('verdict')} / {name_b} {(rb or {}).get('verdict')}")
            for name, r in ((name_a, ra), (name_b, rb)):
                if r and verdict_class(r.get("verdict")) in ("none",):
                    why = " ".join((r.get("detail") or r.get("message") or "").split())
                    print(f"    {name}: {why[:400]}")
    classes = collections.Counter((verdict_class((a.get(f) or {}).get("verdict")),
                                   verdict_class((b.get(f) or {}).get("verdict"))) for f in files)
    kinds = ["pass", "fail", "none", "missing"]
    print(f"\nVerdict classes ({name_a} rows, {name_b} columns; none = UNSUPPORTED or no report):")
    print(" " * 10 + "".join(k.rjust(9) for k in kinds))
    for ka in kinds:
        print(ka.ljust(10) + "".join(str(classes[(ka, kb)] or ".").rjust(9) for kb in kinds))
    return 0 if not disagreements else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", nargs="?", help="corpus folder: <challenge>/*.cu below it")
    parser.add_argument("--backend", choices=["emulator", "cuda", "auto"], default="emulator")
    parser.add_argument("--out", help="result JSON (default: thirdparty-<backend>.json here)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="files graded at once (default: 2 on the emulator, 1 on a GPU, whose timed cases "
                             "must not share it)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--timeout", type=float, default=1800.0,
                        help="seconds one `grader submit` may take before this script gives up on it")
    parser.add_argument("--placement", action="store_true", help="also place each file on the ladder")
    parser.add_argument("--grader-root", default=str(REPO),
                        help="folder whose grader package grades (default: this checkout); e.g. a clean "
                             "snapshot made with `git archive HEAD | tar -x -C DIR` while grader/ is being "
                             "edited, with the commit written in DIR/.grader-commit")
    parser.add_argument("--grader-arg", action="append", default=[],
                        help="one more argument for every `grader submit` (repeatable)")
    parser.add_argument("--only", action="append", default=[],
                        help="grade only files whose path contains this text (repeatable)")
    parser.add_argument("--compare", nargs=2, metavar=("A.json", "B.json"),
                        help="print two runs' verdicts side by side and their disagreements")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not args.folder:
        parser.error("give a corpus folder, or --compare A.json B.json")
    if args.jobs is None:
        args.jobs = 2 if args.backend == "emulator" else 1
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
