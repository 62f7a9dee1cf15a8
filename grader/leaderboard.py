"""Leaderboards from the store: the best accepted secret-seed run per user on one GPU, ranked.

Timed runs rank by the geometric mean of their median times over the performance cases; runs
without timings (the CPU emulator) come after them, earliest first. The board is plain data
(`board`), rendered by the terminal table, CSV, JSON or the HTML page.

The board is published (to the class, on a web page), so each entry's report is the public view of
a secret run (grader.results.public_json): no seed, no randomized shapes. `reveal=True` gives the
reports as stored, for the instructor, who owns the database anyway.
"""

from __future__ import annotations

import csv
import datetime
import io
import math
from collections import Counter

from grader.inert import spreadsheet_cell
from grader.results import public_json
from grader.spec import Challenge
from grader.store import Run, Store


def choose_gpu(store: Store, challenge: Challenge, gpu: str | None) -> str | None:
    if gpu is not None:
        return gpu
    graded = store.gpus(challenge.slug)
    return graded[0][0] if graded else None


def _geomean_ms(run: Run) -> float | None:
    medians = list(run.medians_ms.values())
    return math.exp(sum(map(math.log, medians)) / len(medians)) if medians and all(m > 0 for m in medians) else None


def _rank_key(run: Run) -> tuple:
    mean = _geomean_ms(run)
    return (mean is None, mean if mean is not None else 0.0, run.graded_at, run.id)


def board(store: Store, challenge: Challenge, gpu: str | None = None, reveal: bool = False) -> dict:
    gpu = choose_gpu(store, challenge, gpu)
    runs = store.runs(challenge.slug, gpu, secret_only=True)
    by_user: dict[str, list[Run]] = {}
    for run in runs:
        by_user.setdefault(run.user, []).append(run)
    best = [min(accepted, key=_rank_key) for attempts in by_user.values()
            if (accepted := [r for r in attempts if r.verdict == "ACCEPTED"])]
    best.sort(key=_rank_key)
    cases = [s.label() for s in challenge.performance]
    names = {level.number: level.name for level in challenge.levels}
    rate = _rate(challenge)
    entries = [_entry(rank, run, by_user[run.user], names, reveal, rate) for rank, run in enumerate(best, 1)]
    return {
        "challenge": challenge.slug, "title": challenge.title, "gpu": gpu or "CPU emulator",
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "baseline_label": challenge.baseline_label, "cases": cases, "revealed": reveal, "rate_label": rate[1],
        "levels": [{"level": level.number, "name": level.name} for level in challenge.levels],
        "entries": entries,
        "distribution": {str(k): v for k, v in sorted(Counter(e["level"] for e in entries if e["level"] is not None).items())},
        "history": {user: [_attempt(r, cases) for r in attempts] for user, attempts in by_user.items()},
    }


def _rate(challenge: Challenge) -> tuple[str, str]:
    """(report field, column label) of the rate a board shows: GFLOP/s where the challenge counts flops,
    GB/s where it counts bytes only (a memory-bound challenge)."""
    return ("gflops", "GFLOP/s") if challenge.reference.flops else ("gbps", "GB/s")


def _entry(rank: int, run: Run, attempts: list[Run], names: dict[int, str], reveal: bool,
           rate: tuple[str, str] = ("gflops", "GFLOP/s")) -> dict:
    performance = run.report.get("performance") or []
    first = performance[0] if performance else {}
    return {
        "rank": rank, "user": run.user, "level": run.level, "level_name": names.get(run.level or 0),
        "median_ms": run.medians_ms, "rate": first.get(rate[0]), "gflops": first.get("gflops"),
        "gbps": first.get("gbps"), "percent_of_baseline": first.get("percent_of_baseline"),
        "submitted_at": run.graded_at, "attempts": len(attempts), "submission_id": run.id, "backend": run.backend,
        "report": shown_report(run, reveal),
    }


def shown_report(run: Run, reveal: bool = False) -> dict:
    """A stored run's report as it may be shown: a secret run's public view, unless `reveal`. (The
    board ranks secret runs only; this holds for any run, so an export of practice runs can use it.)"""
    return public_json(run.report) if run.secret and not reveal else run.report


def _attempt(run: Run, cases: list[str]) -> dict:
    return {"submitted_at": run.graded_at, "median_ms": run.medians_ms.get(cases[0]) if cases else None,
            "verdict": run.verdict}


def as_csv(data: dict) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "user", "level", *[f"{c} median ms" for c in data["cases"]], data["rate_label"],
                     f"% of {data['baseline_label']}", "attempts", "submitted_at", "backend"])
    for e in data["entries"]:
        writer.writerow([e["rank"], spreadsheet_cell(e["user"]), e["level"] if e["level"] is not None else "",
                         *[_num(e["median_ms"].get(c)) for c in data["cases"]], _num(e["rate"]),
                         _num(e["percent_of_baseline"]), e["attempts"], spreadsheet_cell(e["submitted_at"]),
                         spreadsheet_cell(e["backend"])])
    return out.getvalue()


def _num(value) -> str:
    return "" if value is None else f"{value:.6g}"
