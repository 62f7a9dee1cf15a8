"""Leaderboards from the store: the best accepted secret-seed run per user on one GPU, ranked, and
the gradebook beside it: every student, accepted or not, with or without a submission.

Timed runs rank by the geometric mean of their median times over the performance cases; runs
without timings (the CPU emulator) come after them, earliest first. The board is a value (`Board`,
made by `board`), rendered by the terminal table, CSV, the HTML page, or as JSON (`Board.to_json`).

Two audiences. The instructor's `Board` is the gradebook: every student, each with their counted run's
report as a student may see it (a secret run's public view, grader.results.public_json: no seed, no
randomized shapes, no build record), every user's attempts and the roster's size; `reveal=True` gives the
reports as stored, for the instructor, who owns the database anyway. What anyone may see is
`Board.public()`, a `PublicBoard`: the ranked students' rank, name, level and times, built from those
fields alone, so nothing added to the gradebook reaches it unless it is added there.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime
import enum
import io
import math
from collections import Counter
from collections.abc import Mapping, Sequence

from grader.inert import spreadsheet_cell
from grader.results import public_json
from grader.spec import Challenge
from grader.store import Run, Store
from grader.verdict import Verdict


class Status(str, enum.Enum):
    """A student's standing in the gradebook (`Board.students`), in the gradebook's order."""

    ACCEPTED = "accepted"
    NOT_ACCEPTED = "not accepted"
    NO_SUBMISSION = "no submission"


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One of a user's runs, for the chart of their best time over attempts: its time on the first
    performance case (None: untimed, or it failed before it was timed)."""

    submitted_at: str
    median_ms: float | None
    verdict: Verdict

    def to_json(self) -> dict:
        return {"submitted_at": self.submitted_at, "median_ms": self.median_ms, "verdict": self.verdict.name}


@dataclasses.dataclass(frozen=True)
class Standing:
    """A student on the board: the run they are graded by (`_counted`), as the board shows it. A ranked
    one (ACCEPTED, with its `rank`) is also one of the board's `entries`. A student with no submission is
    a name and a status: every field of the run keeps its default."""

    user: str
    status: Status
    on_roster: bool
    """On the class's roster; a user with runs who is not is listed all the same (see `_students`)."""
    rank: int | None = None
    verdict: Verdict | None = None
    level: int | None = None
    level_name: str | None = None
    median_ms: Mapping[str, float] = dataclasses.field(default_factory=dict)
    rate: float | None = None
    """The board's rate (`Board.rate_label`) on the first performance case: `gflops`, or `gbps`."""
    gflops: float | None = None
    gbps: float | None = None
    percent_of_baseline: float | None = None
    submitted_at: str | None = None
    attempts: int = 0
    run_id: int | None = None
    submission_id: int | None = None
    """The class server's submission this run graded (its page is /submissions/ID); None for a run graded
    outside a class server (`grader grade`, `grader submit --db`)."""
    backend: str | None = None
    late: bool = False
    practice: bool = False
    """Graded with a public seed (`include_practice`)."""
    report: dict | None = None

    @property
    def time_ms(self) -> float | None:
        """The figure the ranking sorts by: the geometric mean of the median times (None: untimed)."""
        return _geomean(self.median_ms)

    def entry_json(self) -> dict:
        """The run as `entries` carries it."""
        return {
            "rank": self.rank, "user": self.user, "verdict": _name(self.verdict), "level": self.level,
            "level_name": self.level_name, "median_ms": self.median_ms, "rate": self.rate, "gflops": self.gflops,
            "gbps": self.gbps, "percent_of_baseline": self.percent_of_baseline, "submitted_at": self.submitted_at,
            "attempts": self.attempts, "run_id": self.run_id, "submission_id": self.submission_id,
            "backend": self.backend, "late": self.late, "practice": self.practice, "report": self.report,
        }

    def to_json(self) -> dict:
        """The gradebook's row: the run, then how the student stands. A row with no submission keeps the
        order of keys it has always been written in, so the JSON of a board does not change."""
        row = {**self.entry_json(), "status": self.status.value, "best_verdict": _name(self.verdict),
               "time_ms": self.time_ms, "on_roster": self.on_roster}
        if self.status is Status.NO_SUBMISSION:
            return {key: row[key] for key in _NO_SUBMISSION_KEYS}
        return row


_NO_SUBMISSION_KEYS = ("rank", "user", "verdict", "status", "best_verdict", "level", "level_name", "time_ms",
                       "median_ms", "rate", "gflops", "gbps", "percent_of_baseline", "attempts", "late", "practice",
                       "submitted_at", "run_id", "submission_id", "backend", "report", "on_roster")


def _name(verdict: Verdict | None) -> str | None:
    return None if verdict is None else verdict.name


@dataclasses.dataclass(frozen=True)
class Board:
    """The board of one challenge on one GPU (see `board`)."""

    challenge: str
    title: str
    gpu: str
    """The GPU, or "CPU emulator" where no run had one."""
    generated_at: str
    baseline_label: str | None
    cases: tuple[str, ...]
    """The performance cases' labels: `median_ms` of a row, and an attempt's time (the first)."""
    revealed: bool
    """The reports as stored, secret seed and shapes included: the instructor's board."""
    rate_label: str
    levels: Mapping[int, str]
    """The challenge's levels: number to name."""
    entries: tuple[Standing, ...]
    """The ranking: the best accepted run per user, best first."""
    history: Mapping[str, tuple[Attempt, ...]]
    """Every user's runs, in the order they were graded."""
    students: tuple[Standing, ...]
    """The gradebook (`_students`): every student, ranked or not."""
    roster_size: int
    practice_included: bool

    @property
    def distribution(self) -> dict[int, int]:
        """How many ranked users reached each level (untimed ones have none), by level."""
        return _distribution(self.entries)

    def public(self) -> PublicBoard:
        """The board for anyone to see (`PublicBoard`): the ranked students' rank, name, level and times,
        picked one by one. The rest (who failed or never submitted, attempts, reports, the roster) is the
        instructor's."""
        return PublicBoard(self.challenge, self.title, self.gpu, self.generated_at, self.cases, self.levels,
                           tuple(Ranked(e.rank, e.user, e.level, e.level_name, dict(e.median_ms)) for e in self.entries))

    def to_json(self) -> dict:
        """The gradebook as JSON (`grader leaderboard --format json --reveal`, the class server's gradebook
        API): verdicts and statuses by name."""
        return {
            "challenge": self.challenge, "title": self.title, "gpu": self.gpu, "generated_at": self.generated_at,
            "baseline_label": self.baseline_label, "cases": list(self.cases), "revealed": self.revealed,
            "rate_label": self.rate_label,
            "levels": [{"level": number, "name": name} for number, name in self.levels.items()],
            "entries": [e.entry_json() for e in self.entries],
            "distribution": {str(level): count for level, count in self.distribution.items()},
            "history": {user: [a.to_json() for a in attempts] for user, attempts in self.history.items()},
            "students": [s.to_json() for s in self.students], "roster_size": self.roster_size,
            "practice_included": self.practice_included,
        }


def _distribution(entries) -> dict[int, int]:
    return dict(sorted(Counter(e.level for e in entries if e.level is not None).items()))


@dataclasses.dataclass(frozen=True)
class Ranked:
    """A ranked student as anyone may see them: rank, name, level and times, and nothing else of their run."""

    rank: int
    user: str
    level: int | None
    """None: graded on the CPU emulator, which cannot time a kernel or place it."""
    level_name: str | None
    median_ms: Mapping[str, float]
    """The median time of each performance case (public shapes), by case label."""

    @property
    def time_ms(self) -> float | None:
        """The figure the ranking sorts by: the geometric mean of the median times (None: untimed)."""
        return _geomean(self.median_ms)

    def to_json(self) -> dict:
        return {"rank": self.rank, "user": self.user, "level": self.level, "level_name": self.level_name,
                "median_ms": dict(self.median_ms), "time_ms": self.time_ms}


@dataclasses.dataclass(frozen=True)
class PublicBoard:
    """The leaderboard as anyone may see it (`Board.public`: the class server's /leaderboard page and API,
    `grader leaderboard --format html|json` without --reveal): the challenge, and its ranked students
    (`Ranked`). No student who failed or never submitted, no attempts or history, no roster size, no
    report, no path: nothing of the gradebook that is not named here."""

    challenge: str
    title: str
    gpu: str
    """The GPU the times are from, or "CPU emulator"."""
    generated_at: str
    cases: tuple[str, ...]
    """The performance cases' labels: the keys of each entry's `median_ms`."""
    levels: Mapping[int, str]
    """The challenge's levels: number to name."""
    entries: tuple[Ranked, ...]

    @property
    def distribution(self) -> dict[int, int]:
        """How many ranked users reached each level (untimed ones have none), by level."""
        return _distribution(self.entries)

    def to_json(self) -> dict:
        return {
            "challenge": self.challenge, "title": self.title, "gpu": self.gpu, "generated_at": self.generated_at,
            "cases": list(self.cases),
            "levels": [{"level": number, "name": name} for number, name in self.levels.items()],
            "entries": [e.to_json() for e in self.entries],
            "distribution": {str(level): count for level, count in self.distribution.items()},
        }


def choose_gpu(store: Store, challenge: Challenge, gpu: str | None) -> str | None:
    if gpu is not None:
        return gpu
    graded = store.gpus(challenge.slug)
    return graded[0][0] if graded else None


def _geomean(medians_ms: Mapping[str, float]) -> float | None:
    medians = list(medians_ms.values())
    return math.exp(sum(map(math.log, medians)) / len(medians)) if medians and all(m > 0 for m in medians) else None


def _rank_key(run: Run) -> tuple:
    mean = _geomean(run.medians_ms)
    return (mean is None, mean if mean is not None else 0.0, run.graded_at, run.id)


def board(store: Store, challenge: Challenge, gpu: str | None = None, reveal: bool = False,
          include_practice: bool = False, on_roster: Sequence[str] = ()) -> Board:
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
    cases = tuple(s.label() for s in challenge.performance)
    levels = {level.number: level.name for level in challenge.levels}
    rate_field, rate_label = _rate(challenge)
    roster_names = set(on_roster)

    def shown(run: Run, status: Status, rank: int | None = None) -> Standing:
        return _standing(run, status, rank, attempts=len(by_user[run.user]), on_roster=run.user in roster_names,
                         level_name=levels.get(run.level or 0), report=shown_report(run, reveal), rate_field=rate_field)

    entries = tuple(shown(run, Status.ACCEPTED, rank) for rank, run in enumerate(best, 1))
    failing = [shown(run, Status.NOT_ACCEPTED) for run in counted.values() if not run.verdict.passed]
    return Board(
        challenge=challenge.slug, title=challenge.title, gpu=gpu or "CPU emulator",
        generated_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        baseline_label=challenge.baseline_label, cases=cases, revealed=reveal, rate_label=rate_label, levels=levels,
        entries=entries, history={user: tuple(_attempt(r, cases) for r in runs) for user, runs in by_user.items()},
        students=_students(entries, failing, roster_names), roster_size=len(on_roster),
        practice_included=include_practice)


def _counted(attempts: list[Run]) -> Run:
    """The run a user is graded by: their best accepted run, a secret-seed one where they have one (a
    practice run stands in only for a student with no accepted secret run, as the class is graded with
    the secret seed); with nothing accepted, their latest run, which says where they stand now."""
    accepted = [r for r in attempts if r.verdict.passed]
    if not accepted:
        return attempts[-1]  # the store lists runs in the order they were recorded
    return min([r for r in accepted if r.secret] or accepted, key=_rank_key)


def _students(ranked: Sequence[Standing], failing: list[Standing], on_roster: set[str]) -> tuple[Standing, ...]:
    """The gradebook's rows: the ranked users in rank order, then users with runs and nothing accepted
    (`failing`, each shown by its latest run), then roster students with no run on this board, each
    group after the first by name. Users with runs who are not on the roster are listed too
    (`on_roster` False): a run is a student's work whoever added them, and a class may keep its roster
    nowhere but in the instructor's spreadsheet."""
    rows = [*ranked, *sorted(failing, key=lambda s: _by_name(s.user))]
    absent = sorted(on_roster - {s.user for s in rows}, key=_by_name)
    return (*rows, *(Standing(user, Status.NO_SUBMISSION, on_roster=True) for user in absent))


def _by_name(user: str) -> tuple[str, str]:
    return user.casefold(), user


def _rate(challenge: Challenge) -> tuple[str, str]:
    """(report field, column label) of the rate a board shows: GFLOP/s where the challenge counts flops,
    GB/s where it counts bytes only (a memory-bound challenge)."""
    return ("gflops", "GFLOP/s") if challenge.reference.flops else ("gbps", "GB/s")


def _standing(run: Run, status: Status, rank: int | None, *, attempts: int, on_roster: bool,
              level_name: str | None, report: dict, rate_field: str) -> Standing:
    """A user's counted run as the board shows it: its figures are those of the first performance case."""
    performance = run.report.get("performance") or []
    first = performance[0] if performance else {}
    return Standing(
        user=run.user, status=status, on_roster=on_roster, rank=rank, verdict=run.verdict, level=run.level,
        level_name=level_name, median_ms=run.medians_ms, rate=first.get(rate_field), gflops=first.get("gflops"),
        gbps=first.get("gbps"), percent_of_baseline=first.get("percent_of_baseline"), submitted_at=run.graded_at,
        attempts=attempts, run_id=run.id, submission_id=run.submission_id, backend=run.backend, late=run.late,
        practice=not run.secret, report=report)


def shown_report(run: Run, reveal: bool = False) -> dict:
    """A stored run's report as it may be shown: a secret run's public view, unless `reveal`. It holds
    for any run: a practice run (which `include_practice` counts) was graded with a public seed and is
    shown as it is."""
    return public_json(run.report) if run.secret and not reveal else run.report


def _attempt(run: Run, cases: tuple[str, ...]) -> Attempt:
    return Attempt(run.graded_at, run.medians_ms.get(cases[0]) if cases else None, run.verdict)


def as_csv(board: Board) -> str:
    """The gradebook: a line for every student (`students`), ranked or not, so a student missing from
    the spreadsheet is one the grader never heard of, not one who failed. Text cells are written so
    no spreadsheet runs them as formulas."""
    practice = board.practice_included
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["rank", "user", "status", "best verdict", "level", *[f"{c} median ms" for c in board.cases],
                     board.rate_label, f"% of {board.baseline_label}", "attempts", "late",
                     *(["practice"] if practice else []), "submitted_at", "backend"])
    for s in board.students:
        writer.writerow([_int(s.rank), _cell(s.user), _cell(s.status.value), _cell(_name(s.verdict)), _int(s.level),
                         *[_num(s.median_ms.get(c)) for c in board.cases], _num(s.rate),
                         _num(s.percent_of_baseline), s.attempts, _yes(s.late),
                         *([_yes(s.practice)] if practice else []), _cell(s.submitted_at), _cell(s.backend)])
    return out.getvalue()


def _cell(value) -> str:
    return "" if value is None else spreadsheet_cell(str(value))


def _int(value) -> str:
    return "" if value is None else str(value)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _num(value) -> str:
    return "" if value is None else f"{value:.6g}"
