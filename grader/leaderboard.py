"""Leaderboards from the store: the best accepted secret-seed run per user on one GPU, ranked, and
the gradebook beside it: every student, accepted or not, with or without a submission.

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
from collections.abc import Sequence

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
    return _geomean(run.medians_ms)


def _geomean(medians_ms: dict[str, float]) -> float | None:
    medians = list(medians_ms.values())
    return math.exp(sum(map(math.log, medians)) / len(medians)) if medians and all(m > 0 for m in medians) else None


def _rank_key(run: Run) -> tuple:
    mean = _geomean_ms(run)
    return (mean is None, mean if mean is not None else 0.0, run.graded_at, run.id)


# a student's status in the gradebook (`students`)
ACCEPTED = "accepted"
NOT_ACCEPTED = "not accepted"
NO_SUBMISSION = "no submission"


def board(store: Store, challenge: Challenge, gpu: str | None = None, reveal: bool = False,
          include_practice: bool = False, on_roster: Sequence[str] = ()) -> dict:
    """The board of one GPU: `entries` ranks the best accepted run per user, and `students` is the
    gradebook, one row per student (see `_students`), since an instructor grades the whole class, not
    only those who got accepted. A board is one GPU's (times on two GPUs do not compare), so a roster
    student whose runs are all on another GPU shows as "no submission" here: `gpu` picks the other.

    Only secret-seed runs count: a practice run (`grader submit --user`, a public seed) can be tuned
    to its seed's shapes. `include_practice` counts them too, flagged, for a class graded that way.
    `on_roster`: the class's students (the class server's roster, grader.classroom.roster.students), who
    are listed whether or not they submitted."""
    gpu = choose_gpu(store, challenge, gpu)
    by_user: dict[str, list[Run]] = {}
    for run in store.runs(challenge.slug, gpu, secret_only=not include_practice):
        if run.verdict.judges:  # a run the grader failed on is neither an attempt nor a standing
            by_user.setdefault(run.user, []).append(run)
    counted = {user: _counted(attempts) for user, attempts in by_user.items()}
    best = sorted((run for run in counted.values() if run.verdict.passed), key=_rank_key)
    cases = [s.label() for s in challenge.performance]
    names = {level.number: level.name for level in challenge.levels}
    rate = _rate(challenge)

    def shown(run: Run, rank: int | None = None) -> dict:
        return _entry(rank, run, by_user[run.user], names, reveal, rate)

    entries = [shown(run, rank) for rank, run in enumerate(best, 1)]
    failing = [shown(run) for run in counted.values() if not run.verdict.passed]
    return {
        "challenge": challenge.slug, "title": challenge.title, "gpu": gpu or "CPU emulator",
        "generated_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "baseline_label": challenge.baseline_label, "cases": cases, "revealed": reveal, "rate_label": rate[1],
        "levels": [{"level": level.number, "name": level.name} for level in challenge.levels],
        "entries": entries,
        "distribution": {str(k): v for k, v in sorted(Counter(e["level"] for e in entries if e["level"] is not None).items())},
        "history": {user: [_attempt(r, cases) for r in attempts] for user, attempts in by_user.items()},
        "students": _students(entries, failing, on_roster),
        "roster_size": len(on_roster), "practice_included": include_practice,
    }


def _counted(attempts: list[Run]) -> Run:
    """The run a user is graded by: their best accepted run, a secret-seed one where they have one (a
    practice run stands in only for a student with no accepted secret run, as the class is graded with
    the secret seed); with nothing accepted, their latest run, which says where they stand now."""
    accepted = [r for r in attempts if r.verdict.passed]
    if not accepted:
        return attempts[-1]  # the store lists runs in the order they were recorded
    return min([r for r in accepted if r.secret] or accepted, key=_rank_key)


def _students(ranked: list[dict], failing: list[dict], on_roster: Sequence[str]) -> list[dict]:
    """The gradebook's rows: the ranked users in rank order, then users with runs and nothing accepted
    (`failing`, each shown by its latest run), then roster students with no run on this board, each
    group after the first by name. Users with runs who are not on
    the roster are listed too (`on_roster` False): a run is a student's work whoever added them, and
    a class may keep its roster nowhere but in the instructor's spreadsheet."""
    roster_names = set(on_roster)
    rows = [_student(e, ACCEPTED) for e in ranked]
    rows += [_student(e, NOT_ACCEPTED) for e in sorted(failing, key=lambda e: _by_name(e["user"]))]
    rows += [_absent(u) for u in sorted(roster_names - {e["user"] for e in rows}, key=_by_name)]
    return [{**row, "on_roster": row["user"] in roster_names} for row in rows]


def _by_name(user: str) -> tuple[str, str]:
    return user.casefold(), user


def _student(entry: dict, status: str) -> dict:
    return {**entry, "status": status, "best_verdict": entry["verdict"], "time_ms": _geomean(entry["median_ms"])}


def _absent(user: str) -> dict:
    return {"rank": None, "user": user, "verdict": None, "status": NO_SUBMISSION, "best_verdict": None, "level": None,
            "level_name": None, "time_ms": None, "median_ms": {}, "rate": None, "gflops": None, "gbps": None,
            "percent_of_baseline": None, "attempts": 0, "late": False, "practice": False, "submitted_at": None,
            "submission_id": None, "backend": None, "report": None}


def _rate(challenge: Challenge) -> tuple[str, str]:
    """(report field, column label) of the rate a board shows: GFLOP/s where the challenge counts flops,
    GB/s where it counts bytes only (a memory-bound challenge)."""
    return ("gflops", "GFLOP/s") if challenge.reference.flops else ("gbps", "GB/s")


def _entry(rank: int | None, run: Run, attempts: list[Run], names: dict[int, str], reveal: bool,
           rate: tuple[str, str] = ("gflops", "GFLOP/s")) -> dict:
    performance = run.report.get("performance") or []
    first = performance[0] if performance else {}
    return {
        "rank": rank, "user": run.user, "verdict": run.verdict.name, "level": run.level,
        "level_name": names.get(run.level or 0),
        "median_ms": run.medians_ms, "rate": first.get(rate[0]), "gflops": first.get("gflops"),
        "gbps": first.get("gbps"), "percent_of_baseline": first.get("percent_of_baseline"),
        "submitted_at": run.graded_at, "attempts": len(attempts), "submission_id": run.id, "backend": run.backend,
        "late": run.late, "practice": not run.secret, "report": shown_report(run, reveal),
    }


def shown_report(run: Run, reveal: bool = False) -> dict:
    """A stored run's report as it may be shown: a secret run's public view, unless `reveal`. It holds
    for any run: a practice run (which `include_practice` counts) was graded with a public seed and is
    shown as it is."""
    return public_json(run.report) if run.secret and not reveal else run.report


def _attempt(run: Run, cases: list[str]) -> dict:
    return {"submitted_at": run.graded_at, "median_ms": run.medians_ms.get(cases[0]) if cases else None,
            "verdict": run.verdict.name}


def as_csv(data: dict) -> str:
    """The gradebook: a line for every student (`students`), ranked or not, so a student missing from
    the spreadsheet is one the grader never heard of, not one who failed. Text cells are written so
    no spreadsheet runs them as formulas."""
    practice = bool(data.get("practice_included"))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "user", "status", "best verdict", "level", *[f"{c} median ms" for c in data["cases"]],
                     data["rate_label"], f"% of {data['baseline_label']}", "attempts", "late",
                     *(["practice"] if practice else []), "submitted_at", "backend"])
    for s in data["students"]:
        writer.writerow([_int(s["rank"]), _cell(s["user"]), _cell(s["status"]), _cell(s["best_verdict"]),
                         _int(s["level"]), *[_num(s["median_ms"].get(c)) for c in data["cases"]], _num(s["rate"]),
                         _num(s["percent_of_baseline"]), s["attempts"], _yes(s["late"]),
                         *([_yes(s["practice"])] if practice else []), _cell(s["submitted_at"]), _cell(s["backend"])])
    return out.getvalue()


def _cell(value) -> str:
    return "" if value is None else spreadsheet_cell(str(value))


def _int(value) -> str:
    return "" if value is None else str(value)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _num(value) -> str:
    return "" if value is None else f"{value:.6g}"
