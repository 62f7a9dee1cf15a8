"""`grader similarity`: which students' submissions of a challenge are suspiciously alike (grader.similarity),
read from a class server's database. The instructor's pages show the same report with the sources side by
side (grader.classroom.similarity_pages)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table
from rich.text import Text

from grader import inert, similarity
from grader.cli.common import Terminal, challenges_option, cli, handle_errors, leetgpu_option, load_challenge
from grader.errors import UsageError


@cli.command(name="similarity")
@click.argument("slug")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), required=True,
              help="The class server's database (the file `grader serve --db` was given).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0), default=similarity.DEFAULT_THRESHOLD, show_default=True,
              help="Flag a pair whose score (the larger of the two sides' shared parts) reaches this.")
@click.option("--every", is_flag=True,
              help="Compare every submission, not only each student's latest; a pair of students is shown by "
                   "their most alike pair of submissions.")
@click.option("--json", "as_json", is_flag=True, help="Print the flagged pairs as JSON (users, ids, scores, regions).")
@challenges_option
@leetgpu_option
@click.pass_obj
@handle_errors
def similarity_command(terminal: Terminal, slug: str, db: Path, threshold: float, every: bool, as_json: bool,
                       challenges_dir: Path, leetgpu_dir: Path | None) -> None:
    """Pairs of students whose submissions of SLUG are alike enough to look at: fingerprints of the sources
    with names, comments and layout ignored, the challenge's starter and reference levels left out.

    \b
    grader similarity matmul --db class.sqlite3            # each student's latest submission
    grader similarity matmul --db class.sqlite3 --every    # all of them

    A flag is a reason to read the two sources (the class server's /instructor/similarity/SLUG shows them
    side by side), not proof of copying: see docs/similarity.md."""
    from grader.classroom import queue, schema

    if not db.is_file():
        raise UsageError(f"no class database at {db}",
                         hint="pass the file the class server was started with (grader serve --db FILE)")
    challenge = load_challenge(challenges_dir, slug, leetgpu_dir)
    with schema.open_class(db, create=False) as store:
        entries = [similarity.Entry.of(s) for s in queue.of_challenge(store, challenge.slug)]
    report = similarity.report(challenge, entries, threshold, every)
    if as_json:
        click.echo(json.dumps([p.to_json() for p in report.flagged], indent=2))
    else:
        _show(terminal, report)
    _summary(terminal, report, challenge.slug)


def _show(terminal: Terminal, report: similarity.Report) -> None:
    if report.students < 2:
        return
    if not report.flagged:
        top = report.pairs[0] if report.pairs else None
        most = f" (the most alike: {_name(top.a)} and {_name(top.b)}, {top.score:.0%})" if top else ""
        terminal.out.print(Text(f"no pair reaches {report.threshold:.0%}{most}"))
        return
    table = Table("pair", "score", "shares", "submissions", "shared")
    for p in report.flagged:
        a, b = _name(p.a), _name(p.b)
        table.add_row(Text(f"{a} ~ {b}"), f"{p.score:.0%}", Text(f"{a} {p.a_share:.0%} · {b} {p.b_share:.0%}"),
                      Text(f"#{p.a.submission_id} {inert.visible(p.a.filename)} · "
                           f"#{p.b.submission_id} {inert.visible(p.b.filename)}"),
                      f"{p.shared_chars} chars")
    terminal.out.print(table)


def _name(entry: similarity.Entry) -> str:
    """A user name as the terminal may show it (control characters and reordering marks written out)."""
    return inert.visible(entry.user)


def _summary(terminal: Terminal, report: similarity.Report, slug: str) -> None:
    which = "every submission" if report.every else "each student's latest submission"
    if report.students < 2:
        terminal.err.print(Text(f"{slug}: {report.students} student(s) submitted; a comparison needs two or more"))
        return
    excluded = ", ".join(report.excluded) or "nothing"
    terminal.err.print(Text(f"{slug}: {len(report.flagged)} of {len(report.pairs)} pairs of students at "
                            f"{report.threshold:.0%} or more; compared {report.submissions} submissions of "
                            f"{report.students} students ({which}); left out as given to everyone: {excluded}"),
                       style="dim")
