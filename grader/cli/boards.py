"""The commands that show rather than grade: `leaderboard` (the class's ranking and gradebook, in the
terminal or as CSV, JSON or a page), `list` and `show` (the challenges), `init` (a starter file)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import click
from rich.markdown import Markdown
from rich.table import Table
from rich.text import Text

from grader import report, spec
from grader.cli.common import (DEFAULT_CHALLENGES, Terminal, challenges_option, cli, db_option, handle_errors,
                               leetgpu_option, load_challenge)
from grader.errors import UsageError


def leaderboard_command(slug: str, db: Path, challenges_dir: Path, gpu: str | None,
                        leetgpu_dir: Path | None = None) -> str:
    """The `grader leaderboard` command that shows what a batch graded, as it runs from any folder."""
    words = ["grader", "leaderboard", slug, "--db", str(db)]
    if leetgpu_dir is not None:
        words += ["--leetgpu", str(leetgpu_dir)]
    if challenges_dir.resolve() != DEFAULT_CHALLENGES.resolve():
        words += ["--challenges-dir", str(challenges_dir)]
    if gpu:  # the board's default is the GPU with the most runs, which need not be this one
        words += ["--gpu", gpu]
    return shlex.join(words)



@cli.command()
@click.argument("slug", default="matmul")
@challenges_option
@db_option
@click.option("--gpu", default=None, help="The GPU to rank on (default: the one with the most results).")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "html", "lms"]), default="table",
              show_default=True, help="Output format. lms: every roster student's score under --score-rule, as a "
                                      "CSV Canvas and Moodle import (docs/gradebook.md).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of the terminal (html opens from file:// with no network).")
@click.option("--reveal", is_flag=True,
              help="html and json: the instructor's gradebook, every student with their report as stored (secret "
                   "seed and randomized shapes included) instead of the public leaderboard. Do not publish what "
                   "it writes.")
@click.option("--include-practice", is_flag=True,
              help="also count practice runs: local `grader submit --user` runs graded with a public seed")
@click.option("--score-rule", default=None, metavar="RULE",
              help="lms: how a standing becomes points, e.g. \"accepted=60,levels=40,late=0.5,max=100\" (the "
                   "default; any subset of the keys).")
@leetgpu_option
@click.pass_obj
@handle_errors
def leaderboard(terminal: Terminal, slug: str, challenges_dir: Path, db: Path, gpu: str | None, fmt: str,
                output: Path | None, reveal: bool, include_practice: bool, score_rule: str | None,
                leetgpu_dir: Path | None) -> None:
    """The class leaderboard and gradebook of SLUG on one GPU: the best accepted secret-seed submission
    per user, ranked, then every other roster student and every graded user, with the verdict of
    their latest run or "no submission".

    The table and csv are the gradebook, for you (every student, no reports). html and json are made to
    be published: the public leaderboard, as the class server shows it (the ranked students' rank,
    name, level and times, nothing else); with --reveal, the whole gradebook with every report as
    stored, for you alone. lms is the gradebook as scores for your learning management system (every roster
    student, with a status in words), under --score-rule."""
    from grader import gradebook, leaderboard as boards
    from grader.classroom import roster, schema

    if score_rule is not None and fmt != "lms":
        raise UsageError("--score-rule is for --format lms", hint="add --format lms, or drop --score-rule")
    rule = gradebook.parse_rule(score_rule) if score_rule is not None else gradebook.DEFAULT_RULE
    challenge = load_challenge(challenges_dir, slug, leetgpu_dir)
    with schema.open_class(db, create=False) as results:  # a batch's database gets the (empty) roster's tables
        board = boards.board(results, challenge, gpu, reveal=reveal, include_practice=include_practice,
                             on_roster=roster.students(results))
        lms = gradebook.lms_file(results, challenge, board, rule, gpu) if fmt == "lms" else None
    if fmt == "table" and output is None:
        report.render_leaderboard(board, terminal.out)
        return
    shown = board if reveal else board.public()  # what html and json, the formats for publishing, carry
    if fmt == "html":
        from grader import html
        text = html.render(shown)
    elif fmt == "json":
        text = json.dumps(shown.to_json(), indent=2)
    elif fmt == "csv":
        text = boards.as_csv(board)
    elif fmt == "lms":
        text = lms
    else:
        console = report.Console(record=True, width=160, file=open(os.devnull, "w"))
        report.render_leaderboard(board, console)
        text = console.export_text()
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
        terminal.err.print(f"wrote {output}", highlight=False)


@cli.command(name="list")
@challenges_option
@leetgpu_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def list_command(terminal: Terminal, challenges_dir: Path, leetgpu_dir: Path | None, as_json: bool) -> None:
    """List the challenges (and, with --leetgpu or $LEETGPU_CHALLENGES, the official ones of your checkout)."""
    from grader import leetgpu

    found = [spec.load(challenges_dir, slug) for slug in spec.list_challenges(challenges_dir)]
    official = leetgpu.catalogue(leetgpu_dir) if leetgpu_dir else ()
    ours = {c.leetgpu: c.slug for c in found if c.leetgpu}
    if as_json:
        click.echo(json.dumps([{"slug": c.slug, "title": c.title, "version": c.version, "source": "grader",
                                "leetgpu": c.leetgpu} for c in found]
                              + [{**_official_json(o), "graded_here_as": ours.get(o.slug)} for o in official], indent=2))
        return
    table = Table("challenge", "title", "version", "signature")
    for c in found:
        table.add_row(c.slug, c.title, str(c.version), f'extern "C" {c.prototype()}')
    terminal.out.print(table)
    if official:
        table = Table("challenge", "difficulty", "title", "signature (the starter's)", "graded here as",
                      title=f"LeetGPU's official challenges ({leetgpu_dir}): {len(official)}")
        for o in official:
            table.add_row(o.slug, o.difficulty, o.title or "?", o.prototype() or f"(unread: {o.problem or 'no starter'})",
                          ours.get(o.slug, "not yet"))
        terminal.out.print(table)


def _official_json(o) -> dict:
    from grader import leetgpu

    kit = leetgpu.mapped(o)
    return {"types_supported": kit.unsupported is None, "unsupported": kit.unsupported, "notes": list(kit.notes),"slug": o.slug, "title": o.title, "source": "leetgpu", "difficulty": o.difficulty, "number": o.number,
            "atol": o.atol, "rtol": o.rtol, "num_gpus": o.num_gpus, "signature": o.prototype(),
            "parameters": [{"name": p.name, "ctype": p.ctype, "role": p.role} for p in o.params], "problem": o.problem}


def _official(leetgpu_dir: Path | None, slug: str, challenges_dir: Path):
    """The official challenge SLUG of the checkout, when the grader has no challenge of that name."""
    from grader import leetgpu

    if leetgpu_dir is None or (challenges_dir / slug / spec.SPEC_FILE).is_file():
        return None
    return leetgpu.find(leetgpu_dir, slug)


@cli.command()
@click.argument("slug")
@challenges_option
@leetgpu_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def show(terminal: Terminal, slug: str, challenges_dir: Path, leetgpu_dir: Path | None, as_json: bool) -> None:
    """Show a challenge: statement, signature, tolerance and shapes (an official one of your LeetGPU checkout:
    its statement as text, signature and tolerance)."""
    official = _official(leetgpu_dir, slug, challenges_dir)
    if official is not None:
        _show_official(terminal, official, as_json)
        return
    c = spec.load(challenges_dir, slug)
    if as_json:
        click.echo(json.dumps(_challenge_json(c), indent=2))
        return
    out = terminal.out
    if c.statement_path.is_file():
        out.print(Markdown(c.statement_path.read_text()))
    out.print()
    out.print(Text.assemble(("signature", "bold"), "  ", _broken_at_parameters(f'extern "C" {c.prototype()}', 11,
                                                                            out.width)), highlight=False)
    checks = ", ".join(f"{p.name} {p.check.value}" for p in c.outputs)
    if any(p.check is spec.Check.TOLERANCE for p in c.outputs):
        checks += (f"; tolerance: max scaled error {c.tolerance.max_scaled_error:g}, "
                   f"relative Frobenius {c.tolerance.max_relative_frobenius:g}")
    out.print(f"[bold]checks[/]  {checks}", highlight=False)
    if c.scalars:
        out.print("[bold]values[/]  " + ", ".join(f"{p.name} {p.value.describe()}" for p in c.scalars), highlight=False)
    out.print(f"[bold]functional shapes[/] (v{c.functional_version})  " + ", ".join(s.label() for s in c.functional))
    r = c.randomized
    out.print(f"[bold]randomized[/]  {r.count} shapes from the seed, " +
              ", ".join(f"{d} in [{lo}, {hi}]" for d, (lo, hi) in r.ranges.items()))
    out.print(f"[bold]performance shapes[/] (v{c.performance_version})  " + ", ".join(s.label() for s in c.performance))
    out.print(_limits_text(c.limits), highlight=False)


def _show_official(terminal: Terminal, o, as_json: bool) -> None:
    from grader import leetgpu

    text = leetgpu.statement_text(o)
    if as_json:
        click.echo(json.dumps({**_official_json(o), "statement": text}, indent=2))
        return
    out = terminal.out
    out.print(Text(f"{o.title or o.slug} (LeetGPU, {o.difficulty})", style="bold"))
    out.print(Text(text))
    out.print(Text.assemble(("signature", "bold"), f'  extern "C" {o.prototype() or "(the starter declares none)"}'),
              highlight=False)
    out.print(f"[bold]tolerance[/]  |x - r| <= atol + rtol |r|, atol {o.atol:g}, rtol {o.rtol:g}"
              if o.atol is not None and o.rtol is not None else "[bold]tolerance[/]  not read", highlight=False)


def _broken_at_parameters(prototype: str, start: int, width: int) -> str:
    """A prototype as a person breaks it: after a comma where the line (begun at column `start`) is
    full, the next parameters under the first, so a type is never parted from its name."""
    head, params = prototype.split("(", 1)
    pieces = [p + ", " for p in params[:-1].split(", ")]
    pieces[-1] = pieces[-1][:-2] + ")"
    indent = start + len(head) + 1 if start + len(head) + 1 <= width // 2 else 4
    lines, line = [], head + "("
    for piece in pieces:
        if start + len(line) + len(piece.rstrip()) > width and not line.endswith("("):
            lines.append(line.rstrip())
            line, start = " " * indent, 0
        line += piece
    return "\n".join(lines + [line])


def _limits_text(limits: spec.Limits) -> str:
    """The time limits as on a GPU, and how the CPU emulator scales them."""
    from grader.backends.emulator import LIMIT_SLACK
    return (f"[bold]limits[/] (GPU)  a call {limits.case_s:g} s; the whole job {limits.job_s:g} s (the compile, itself "
            f"at most {limits.compile_s:g} s, and every case, correctness and timing); in the CPU emulator the call's "
            f"limit and the job's bound each add {LIMIT_SLACK:g}× what a slow kernel of the cases' shapes costs there. "
            f"Timing budget {limits.timing_budget_s:g} s per performance case")


def _parameter_json(p: spec.Param) -> dict:
    found = {"name": p.name, "type": p.ctype.text, "role": p.role.value if p.role else None,
             "shape": [int(e.text) if e.text.isdigit() else e.text for e in p.shape]}
    if p.check is not None:
        found["check"] = p.check.value
    if p.value is not None:
        found["value"] = p.value.describe()
    return found


def _challenge_json(c: spec.Challenge) -> dict:
    return {
        "slug": c.slug, "title": c.title, "version": c.version, "signature": f'extern "C" {c.prototype()}',
        "parameters": [_parameter_json(p) for p in c.params],
        "require": [str(r) for r in c.require],
        "tolerance": {"max_scaled_error": c.tolerance.max_scaled_error,
                      "max_relative_frobenius": c.tolerance.max_relative_frobenius},
        "functional": {"version": c.functional_version, "cases": [dict(s.dims, **s.values) for s in c.functional]},
        "randomized": {"count": c.randomized.count, "ranges": c.randomized.ranges,
                       "max_flops": c.randomized.max_flops, "max_bytes": c.randomized.max_bytes},
        "performance": {"version": c.performance_version,
                        "cases": [dict(s.dims, **s.values, name=s.name) for s in c.performance]},
        "limits": {"compile_s": c.limits.compile_s, "case_s": c.limits.case_s,
                   "timing_budget_s": c.limits.timing_budget_s, "job_s": c.limits.job_s},
        "baseline": c.baseline_label,
    }


@cli.command()
@click.argument("slug")
@click.argument("dest", type=click.Path(dir_okay=False, path_type=Path))
@challenges_option
@leetgpu_option
@click.option("--force", is_flag=True, help="Overwrite DEST if it exists.")
@click.pass_obj
@handle_errors
def init(terminal: Terminal, slug: str, dest: Path, challenges_dir: Path, leetgpu_dir: Path | None, force: bool) -> None:
    """Write the challenge's starter file to DEST (e.g. solutions/mine.cu); for an official challenge of your
    LeetGPU checkout, its CUDA starter."""
    official = _official(leetgpu_dir, slug, challenges_dir)
    starter = official.starter_path if official is not None else spec.load(challenges_dir, slug).starter_path
    if not starter.is_file():
        raise UsageError(f"{starter} does not exist", hint="check the checkout (git status in it)")
    if dest.exists() and not force:
        raise UsageError(f"{dest} already exists", hint="choose another path, or pass --force to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(starter, dest)
    terminal.out.print(f"wrote {dest}; next: [bold]grader run {dest}[/] (correctness) or "
                       f"[bold]grader submit {dest}[/] (correctness and timing)", highlight=False)


