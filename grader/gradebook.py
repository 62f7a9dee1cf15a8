"""The gradebook as a number per student, for a learning management system (LMS): a score rule an
instructor chooses (`ScoreRule`, parsed from a short text by `parse_rule`), each student's score under it
(`grades`), and the CSV file that Canvas and Moodle both import (`lms_csv`; docs/gradebook.md says which
column maps to what, and how to import it in each).

The leaderboard (grader.leaderboard) ranks and shows times; an LMS wants one number per student and
assignment, out of a known number of points, for every student of the class: a student with no
submission gets 0, said in words beside it, never an empty cell that the LMS keeps as "not graded".

Everything here works on a `Board` as grader.leaderboard makes it, apart from `on_time_board` and
`lms_file`, which read the store once more for the late rule (see `ScoreRule.late`).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math

from grader.errors import UsageError
from grader.inert import spreadsheet_cell
from grader.leaderboard import Board, Standing, Status, board as make_board
from grader.spec import Challenge
from grader.store import Store

RULE_SYNTAX = "accepted=60,levels=40,late=0.5,max=100"
"""What `--score-rule` looks like: KEY=NUMBER pairs, comma-separated, any subset of the keys."""
RULE_KEYS = ("accepted", "levels", "late", "max")


@dataclasses.dataclass(frozen=True)
class ScoreRule:
    """How a student's standing on a board becomes points.

    The default, 60 for ACCEPTED plus up to 40 for the ladder level reached, with late work at half, out
    of 100, says what the course is about: a correct kernel earns a pass on its own (60), and the rest
    rewards speed as the challenge's reference ladder measures it, in equal steps, so that the fastest
    reference (level N) earns it all. A correct kernel below level 1 earns the 60 alone. A deadline the
    instructor set is meant to count, so late work earns half; `late=1` turns that off.

    - `accepted`: points for an ACCEPTED run; anything else (and no submission) earns 0 in all.
    - `levels`: points for the ladder, `levels × L / N` at level L of the challenge's N (Board.levels).
      A challenge with no ladder gives them with ACCEPTED (there is nothing further to reach); an untimed
      run (the CPU emulator cannot time a kernel, so it is placed on no level) earns none of them.
    - `late`: the factor a late run's points are multiplied by (0: late work earns nothing, 1: counts in
      full). The board counts a student's fastest accepted run, which is often their last and so the late
      one; where the board of on-time runs is given (`on_time_board`), the student's on-time run counts
      instead whenever it earns more, so improving after the deadline never costs a student points.
    - `max_score`: the points possible (what the LMS column is out of) and a cap on any score; None:
      `accepted + levels`. Set it lower than that sum to allow extra credit up to the cap.
    """

    accepted: float = 60.0
    levels: float = 40.0
    late: float = 0.5
    max_score: float | None = None

    @property
    def points_possible(self) -> float:
        return self.max_score if self.max_score is not None else self.accepted + self.levels

    def points(self, standing: Standing, top_level: int) -> float:
        """The points of one standing on a board whose ladder has `top_level` levels (0: no ladder), the
        late factor applied and the cap too."""
        if standing.status is not Status.ACCEPTED:
            return 0.0
        earned = self.accepted + self._ladder(standing.level, top_level)
        if standing.late:
            earned *= self.late
        return round(min(earned, self.points_possible), 2)

    def _ladder(self, level: int | None, top_level: int) -> float:
        if top_level <= 0:
            return self.levels
        if level is None:
            return 0.0
        return self.levels * min(max(level, 0), top_level) / top_level

    def describe(self) -> str:
        """The rule in words, as the instructor's pages show it."""
        if self.late == 1:
            late = "late work counts in full"
        elif self.late == 0:
            late = "late work earns nothing (a student's best on-time run counts)"
        else:
            late = (f"late work earns {number(self.late)}× its points (a student's on-time run counts where it "
                    "earns more)")
        cap = (f", capped at {number(self.max_score)}" if self.max_score is not None
               and self.max_score < self.accepted + self.levels else "")
        return (f"ACCEPTED earns {number(self.accepted)} points, and the ladder level reached up to "
                f"{number(self.levels)} more ({number(self.levels)} × level ÷ the challenge's top level; "
                f"below level 1 or untimed: none; a challenge with no ladder: all of them); {late}; "
                f"out of {number(self.points_possible)}{cap}.")

    def __str__(self) -> str:
        """The rule as `--score-rule` takes it (parse_rule(str(rule)) == rule)."""
        text = f"accepted={number(self.accepted)},levels={number(self.levels)},late={number(self.late)}"
        return text + (f",max={number(self.max_score)}" if self.max_score is not None else "")


DEFAULT_RULE = ScoreRule()


def parse_rule(text: str) -> ScoreRule:
    """A rule from its short text (RULE_SYNTAX): keys left out keep their defaults. Anything else is a
    UsageError that shows the syntax."""
    fields: dict[str, float] = {}
    parts = [part.strip() for part in text.split(",")]
    if not text.strip():
        raise _bad_rule(text, "it is empty")
    for part in parts:
        key, sep, value = (s.strip() for s in part.partition("="))
        key = key.lower()
        if not sep or key not in RULE_KEYS:
            raise _bad_rule(text, f"{part!r} is not one of {', '.join(k + '=NUMBER' for k in RULE_KEYS)}")
        if key in fields:
            raise _bad_rule(text, f"{key} is given twice")
        fields[key] = _number(text, key, value)
    if fields.get("late", 0.0) > 1:
        raise _bad_rule(text, "late is a factor from 0 (late work earns nothing) to 1 (counts in full)")
    rule = ScoreRule(**{("max_score" if k == "max" else k): v for k, v in fields.items()})
    if rule.points_possible <= 0:
        raise _bad_rule(text, "a score out of 0 points means nothing")
    return rule


def _number(text: str, key: str, value: str) -> float:
    try:
        found = float(value)
    except ValueError:
        found = math.nan
    if not math.isfinite(found) or found < 0:
        raise _bad_rule(text, f"{key}={value!r} is not a number of 0 or more")
    return found


def _bad_rule(text: str, why: str) -> UsageError:
    return UsageError(f"{text!r} is not a score rule: {why}",
                      hint=f"write KEY=NUMBER pairs separated by commas, e.g. --score-rule \"{RULE_SYNTAX}\" "
                           f"(any of them; the rest keep their defaults: {DEFAULT_RULE})")


def number(value: float) -> str:
    """A score as people and LMS imports read it: at most two decimals, no trailing zeros, no exponent."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


# -- each student's grade ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Grade:
    """A student's score under a rule, and the standing it is of (the board's, or their on-time one's)."""

    user: str
    score: float
    points_possible: float
    standing: Standing
    on_time_counted: bool = False
    """Their on-time run earned more than the (late) run the board counts, so it counts."""

    @property
    def status(self) -> str:
        """What the score is of, in words (the LMS file's Status column)."""
        s = self.standing
        if s.status is Status.NO_SUBMISSION:
            return "no submission"
        if s.status is Status.NOT_ACCEPTED:
            tries = f"{s.attempts} attempt{'' if s.attempts == 1 else 's'}"
            return f"not accepted (latest verdict {s.verdict.name if s.verdict else 'none'}, {tries})"
        words = ["accepted", level_words(s)]
        if s.late:
            words.append("late")
        if self.on_time_counted:
            words.append("on-time run counted (it earns more than the later one)")
        return ", ".join(w for w in words if w)


def level_words(s: Standing) -> str:
    """An accepted standing's level in words: "level 4 (its name)", "below level 1" or "untimed"."""
    if s.level is None:
        return "untimed"
    if s.level == 0:
        return "below level 1"
    return f"level {s.level}" + (f" ({s.level_name})" if s.level_name else "")


def top_level(board: Board) -> int:
    """The ladder's top level (Board.levels number 1..N); 0 where the challenge has no ladder."""
    return max(board.levels, default=0)


def graded_students(board: Board) -> tuple[Standing, ...]:
    """The students an LMS file lists: the roster's, where the class has one (users with runs who are not
    on it, such as an instructor trying the server, are no student of the LMS course, and Moodle refuses
    a whole file for one unknown user); every graded user where there is no roster."""
    if board.roster_size:
        return tuple(s for s in board.students if s.on_roster)
    return board.students


def grades(board: Board, rule: ScoreRule = DEFAULT_RULE, on_time: Board | None = None) -> tuple[Grade, ...]:
    """Every student's grade (`graded_students`), in the gradebook's order. `on_time`: the board of the
    runs made before the deadline (`on_time_board`), so a late run counts only where it earns more than
    the student's on-time work; None counts the board's run, late or not."""
    top = top_level(board)
    earlier = {s.user: s for s in on_time.students} if on_time is not None else {}
    found = []
    for standing in graded_students(board):
        grade = Grade(standing.user, rule.points(standing, top), rule.points_possible, standing)
        alternative = earlier.get(standing.user)
        if standing.late and alternative is not None and rule.points(alternative, top) > grade.score:
            grade = Grade(standing.user, rule.points(alternative, top), rule.points_possible, alternative, True)
        found.append(grade)
    return tuple(found)


# -- the LMS file ------------------------------------------------------------------------------------------

LMS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
"""Canvas's student columns, in the order its importer requires (a header whose fifth column is not
Section is refused); Moodle reads any column, and maps the login one to a username or an e-mail."""


def lms_csv(board: Board, rule: ScoreRule = DEFAULT_RULE, on_time: Board | None = None) -> str:
    """The grades as a CSV file both Canvas's gradebook import and Moodle's CSV grade import take: one row
    per student (`graded_students`), the roster name as both Student and SIS Login ID (the LMS login the
    roster is meant to use), the score in a column named after the challenge (its slug), then the points
    possible and the status in words. Canvas's own ID, SIS User ID and Section are left empty: Canvas
    then finds the student by the login (and failing that by name). See docs/gradebook.md.

    Every text cell goes through `spreadsheet_cell`, so a name that starts like a formula (`=cmd|…`) is
    data in any spreadsheet the file is opened with on its way."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([*LMS_IDENTITY, _cell(board.challenge), "Points Possible", "Status"])
    for grade in grades(board, rule, on_time):
        user = _cell(grade.user)
        writer.writerow([user, "", "", user, "", number(grade.score), number(grade.points_possible),
                         _cell(grade.status)])
    return out.getvalue()


def _cell(text: str) -> str:
    return spreadsheet_cell(str(text))


class _OnTimeRuns:
    """A store that lists only the runs graded for on-time work (`Run.late` False): the same board made of
    these is what each student had done by the deadline."""

    def __init__(self, store: Store):
        self._store = store

    def runs(self, *args, **kwargs):
        return [run for run in self._store.runs(*args, **kwargs) if not run.late]

    def __getattr__(self, name):
        return getattr(self._store, name)


def on_time_board(store: Store, challenge: Challenge, gpu: str | None = None,
                  include_practice: bool = False) -> Board:
    """The board of `challenge` from on-time runs only, on the same GPU as the board made with the same
    `gpu` (the GPU choice looks at every run, late ones too)."""
    return make_board(_OnTimeRuns(store), challenge, gpu, include_practice=include_practice)


def lms_file(store: Store, challenge: Challenge, board: Board, rule: ScoreRule = DEFAULT_RULE,
             gpu: str | None = None) -> str:
    """`lms_csv` of `board` (made from `store` with this `gpu`), with the on-time board beside it where
    the rule makes late work count less."""
    on_time = on_time_board(store, challenge, gpu, board.practice_included) if rule.late < 1 else None
    return lms_csv(board, rule, on_time)
