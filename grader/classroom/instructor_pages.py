"""The instructor's pages: a home that lists every challenge with where the class stands and the ways
into its gradebook (`/instructor`), one challenge's summary (`/instructor/challenges/{slug}`) and the
roster (`/instructor/roster`). Rendered on the server with no script at all (grader.classroom.render).

Each page is the instructor's only: a student gets 403 (an error page), someone not logged in is sent
to the login page. What they show is read from the gradebook the server keeps (`Server.board`, every
student whether or not they submitted), the score rule the server was started with (grader.gradebook)
and the roster, of which no token or hash is ever read: `roster.people` lists names, roles and dates.

A name a person chose is data: the templates are autoescaped, and every name is also passed through
grader.inert.visible, so a control character or a Unicode direction mark shows as its escape instead of
turning the rest of a row around.
"""

from __future__ import annotations

import dataclasses

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from grader.classroom import queue, roster
from grader.classroom.render import login_redirect, page
from grader.classroom.roster import Person, Role
from grader.gradebook import ScoreRule, graded_students, level_words, number, top_level
from grader.inert import visible
from grader.leaderboard import Board, Standing, Status

FORBIDDEN_HINT = "your own submissions are on /me; the leaderboards are open to everyone"


@dataclasses.dataclass(frozen=True)
class Summary:
    """Where the class stands on one challenge, counted over its students (`gradebook.graded_students`:
    the roster's, or every graded user where there is no roster)."""

    students: int
    accepted: int
    not_accepted: int
    not_submitted: int
    late: int
    """Students whose counted run was late."""
    others: int
    """Users with runs who are not on the roster (listed on the challenge's page, counted nowhere else)."""

    @classmethod
    def of(cls, board: Board) -> "Summary":
        students = graded_students(board)

        def count(status: Status) -> int:
            return sum(s.status is status for s in students)

        return cls(len(students), count(Status.ACCEPTED), count(Status.NOT_ACCEPTED), count(Status.NO_SUBMISSION),
                   sum(s.late for s in students if s.status is not Status.NO_SUBMISSION),
                   len(board.students) - len(students))

    @property
    def line(self) -> str:
        """The one-line summary of the home page."""
        return (f"accepted {self.accepted} of {self.students}, not accepted {self.not_accepted}, "
                f"not submitted {self.not_submitted}" + (f", {self.late} late" if self.late else ""))


@dataclasses.dataclass(frozen=True)
class LevelCount:
    label: str
    name: str
    students: int


@dataclasses.dataclass(frozen=True)
class Row:
    """A student's line on the challenge's page, as shown (`name` made visible, `href` their counted
    submission's page, when the run was a submission to this server)."""

    name: str
    href: str | None
    verdict: str
    level: str
    attempts: int
    late: bool
    on_roster: bool
    score: str


def levels_table(board: Board) -> list[LevelCount]:
    """How many accepted students reached each level of the ladder, every level listed (0 too), then the
    accepted runs below level 1 and the untimed ones, where there are any."""
    accepted = [s for s in graded_students(board) if s.status is Status.ACCEPTED]
    rows = [LevelCount(str(level), name, sum(s.level == level for s in accepted))
            for level, name in sorted(board.levels.items())]
    below = sum(s.level == 0 for s in accepted)
    untimed = sum(s.level is None for s in accepted)
    if below:
        rows.append(LevelCount("below 1", "slower than the level-1 reference", below))
    if untimed:
        rows.append(LevelCount("—", "untimed (graded without a GPU)", untimed))
    return rows


def _row(s: Standing, rule: ScoreRule, top: int) -> Row:
    level = level_words(s) if s.status is Status.ACCEPTED else ""
    return Row(visible(s.user), f"/submissions/{s.submission_id}" if s.submission_id is not None else None,
               s.verdict.name if s.verdict else "—", level, s.attempts, s.late, s.on_roster,
               number(rule.points(s, top)))


class _InstructorPages:
    def __init__(self, server):
        self.server = server

    def _instructor(self, request: Request) -> Person | None:
        """The instructor asking, None for no one logged in; a student is refused (403)."""
        return self.server.instructor(request, "the instructor's pages are for the instructor's token",
                                      FORBIDDEN_HINT)

    def home(self, request: Request) -> Response:
        who = self._instructor(request)
        if who is None:
            return login_redirect()
        challenges = [{**c, "title": visible(c["title"]), "summary": Summary.of(self.server.board(c["slug"]))}
                      for c in self.server.challenge_list()]
        return page("instructor.html.j2", who=who, challenges=challenges,
                    rule=self.server.settings.score_rule)

    def challenge(self, request: Request) -> Response:
        who = self._instructor(request)
        if who is None:
            return login_redirect()
        slug = request.path_params["slug"]
        challenge = self.server.challenge(slug)  # 404 for a challenge this server does not serve
        board = self.server.board(slug)
        rule, top = self.server.settings.score_rule, top_level(board)
        rows = {status: [_row(s, rule, top) for s in board.students if s.status is status]
                for status in Status}
        return page("instructor_challenge.html.j2", who=who, slug=challenge.slug,
                    title=visible(challenge.title), summary=Summary.of(board), levels=levels_table(board),
                    accepted=rows[Status.ACCEPTED], failing=rows[Status.NOT_ACCEPTED],
                    absent=rows[Status.NO_SUBMISSION], gpu=visible(board.gpu), rule=rule,
                    waiting={visible(user) for user in queue.waiting_users(self.server.store(), challenge.slug)},
                    points_possible=number(rule.points_possible))

    def roster(self, request: Request) -> Response:
        who = self._instructor(request)
        if who is None:
            return login_redirect()
        people = [{"name": visible(p.name), "role": p.role.value, "added_at": p.added_at, "expires_at": p.expires_at,
                   "expired": p.expired()} for p in roster.people(self.server.store())]
        students = sum(p["role"] == Role.STUDENT.value for p in people)
        return page("instructor_roster.html.j2", who=who, people=people, students=students)


def routes(server) -> list[Route]:
    pages = _InstructorPages(server)
    return [
        Route("/instructor", pages.home, methods=["GET"]),
        Route("/instructor/challenges/{slug}", pages.challenge, methods=["GET"]),
        Route("/instructor/roster", pages.roster, methods=["GET"]),
    ]
