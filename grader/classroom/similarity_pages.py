"""The instructor's similarity pages: which students' submissions of a challenge are alike (grader.similarity),
and two submissions side by side with what they share marked.

`GET /instructor/similarity/{slug}` lists the pairs of students at THRESHOLD or more (each student's latest
submission; `?every=1`: all of them; `?threshold=PERCENT`: another threshold, which the page's form sets),
and says what was compared and what was left out as given to everyone.
`GET /instructor/similarity/{slug}/{a}/{b}` shows submissions a and b, their shared regions in <mark>. Both
are the instructor's: a student gets a 403 page, someone logged out the login page.

Everything shown is person-made data: names, file names and sources go to autoescaped templates as plain
strings (Segment lists for the sources, never markup), with control characters and Unicode's reordering
marks written out (grader.inert), so a source cannot hide what it does from the instructor reading it.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from grader import inert, similarity
from grader.classroom import queue
from grader.classroom.render import login_redirect, page
from grader.classroom.roster import Person
from grader.classroom.server import ApiError, submission_id

THRESHOLD = similarity.DEFAULT_THRESHOLD
"""The score from which the pages flag a pair (measured: see grader.similarity)."""


@dataclass(frozen=True)
class Side:
    """One submission of a pair as the pair page shows it."""

    user: str
    submission_id: int
    filename: str
    share: float
    lines: tuple[tuple[similarity.Segment, ...], ...]


class _SimilarityPages:
    def __init__(self, server, threshold: float = THRESHOLD):
        self.server, self.threshold = server, threshold

    def _instructor(self, request: Request) -> Person | None:
        """The instructor asking, None for no one logged in; anyone else is refused (403)."""
        return self.server.instructor(request, "the similarity report is the instructor's",
                                      "students see their own submissions: /me")

    def report(self, request: Request) -> Response:
        who = self._instructor(request)
        if who is None:
            return login_redirect()
        challenge = self.server.challenge(request.path_params["slug"])
        every = request.query_params.get("every") == "1"
        threshold = _threshold(request.query_params.get("threshold"), self.threshold)
        entries = [similarity.Entry.of(s) for s in queue.of_challenge(self.server.store(), challenge.slug)]
        report = similarity.report(challenge, entries, threshold, every)
        return page("similarity.html.j2", who=who, challenge=challenge, report=report, every=every,
                    shown=inert.visible, percent=round(threshold * 100), default_percent=round(self.threshold * 100))

    def pair(self, request: Request) -> Response:
        who = self._instructor(request)
        if who is None:
            return login_redirect()
        challenge = self.server.challenge(request.path_params["slug"])
        a, b = (self._submission(request, name, challenge.slug) for name in ("a", "b"))
        pair = similarity.compare_two(a, b, similarity.Boilerplate.of(challenge).texts)
        sides = (_side(pair.a, pair.a_share, pair.regions_a), _side(pair.b, pair.b_share, pair.regions_b))
        return page("similarity_pair.html.j2", who=who, challenge=challenge, pair=pair, sides=sides,
                    flagged=pair.flagged(self.threshold), threshold=self.threshold, shown=inert.visible)

    def _submission(self, request: Request, name: str, slug: str) -> similarity.Entry:
        found = queue.get(self.server.store(), submission_id(request.path_params[name]))
        if found is None or found.challenge != slug:
            raise ApiError(404, f"no submission {request.path_params[name]} of {slug}",
                           f"the pairs are listed on /instructor/similarity/{slug}")
        return similarity.Entry.of(found)


def _threshold(text: str | None, default: float) -> float:
    """`?threshold=PERCENT` (the page's own form): a whole percentage from 1 to 100, else a 400 page saying so."""
    if text is None or text == "":
        return default
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= 100:
        raise ApiError(400, "the threshold is a whole percentage from 1 to 100",
                       f"the default is {round(default * 100)}: see docs/similarity.md for how it was measured")
    return int(text) / 100


def _side(entry: similarity.Entry, share: float, regions) -> Side:
    lines = tuple(tuple(similarity.Segment(inert.visible(s.text), s.shared) for s in line)
                  for line in similarity.lines(entry.source, regions))
    return Side(inert.visible(entry.user), entry.submission_id, inert.visible(entry.filename), share, lines)


def routes(server, threshold: float = THRESHOLD) -> list[Route]:
    pages = _SimilarityPages(server, threshold)
    return [
        Route("/instructor/similarity/{slug}", pages.report, methods=["GET"]),
        Route("/instructor/similarity/{slug}/{a}/{b}", pages.pair, methods=["GET"]),
    ]
