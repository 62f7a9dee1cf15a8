"""The challenge kit's commands: `grader new` writes a challenge to edit, `grader check` validates one."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click
from rich.table import Table

from grader import kit, spec
from grader.cli.common import (DEFAULT_CHALLENGES, RichProgress, Terminal, backend_option, cache_option,
                               choose_backend, cli, handle_errors, nvcc_option)
from grader.exitcodes import ExitCode

WORKSPACE = Path("challenges")
"""Where `grader new` writes, and where `grader check` looks first: ./challenges/ of the current folder."""


@cli.command()
@click.argument("slug")
@click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=WORKSPACE,
              show_default=True, help="Folder to make the challenge's folder in.")
@click.option("--title", default=None, help="The challenge's title (default: from the slug).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON: the folder and the files written.")
@click.pass_obj
@handle_errors
def new(terminal: Terminal, slug: str, folder: Path, title: str | None, as_json: bool) -> None:
    """Write a new challenge SLUG to edit: challenge.yaml, reference.py, statement.md, starter.cu, one
    level and one wrong file, which pass `grader check SLUG` as they are."""
    root = kit.new_challenge(folder, slug, title)
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    if as_json:
        click.echo(json.dumps({"challenge": slug, "folder": str(root.resolve()), "files": files}))
        return
    terminal.out.print(f"wrote {root}/: {', '.join(files)}", highlight=False)
    terminal.out.print(f"next: edit them, then `grader check {slug}`"
                       + ("" if folder == WORKSPACE else f" --challenges-dir {folder}"), highlight=False)


@cli.command(name="check")
@click.argument("slug")
@click.option("--challenges-dir", type=click.Path(file_okay=False, path_type=Path, resolve_path=True), default=None,
              envvar="GRADER_CHALLENGES",
              help="Folder holding one sub-folder per challenge (default: ./challenges if it holds SLUG, else the "
                   "grader's own).")
@backend_option
@nvcc_option
@cache_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON: every finding and margin.")
@click.pass_obj
@handle_errors
def check_command(terminal: Terminal, slug: str, challenges_dir: Path | None, backend: str, nvcc: str | None,
                  cache_dir: Path, as_json: bool) -> None:
    """Validate challenge SLUG end to end: edge sizes in its cases, its tolerance measured against correct
    and wrong methods (margin 3× each way), every level ACCEPTED (and, on a GPU, faster than the one
    below), every wrong file the verdict its header promises. Exit 0 when all pass, 3 when any fails."""
    folder = challenges_dir or (WORKSPACE.resolve() if (WORKSPACE / slug / spec.SPEC_FILE).is_file() else DEFAULT_CHALLENGES)
    challenge = spec.load(folder, slug)
    grader_backend = choose_backend(backend, nvcc, terminal)
    with RichProgress(terminal.err) as progress:
        found = kit.check_challenge(challenge, grader_backend, cache_dir, progress=progress)
    if as_json:
        click.echo(json.dumps(_json(found), indent=2))
    else:
        _render(terminal, found)
    if not found.passed:
        raise click.exceptions.Exit(int(ExitCode.BAD_CHALLENGE))


def _json(found: kit.KitReport) -> dict:
    data = dataclasses.asdict(found)
    for finding in data["findings"]:
        finding["status"] = finding["status"].value
    for margin in data["margins"]:
        margin["worst"] = margin["worst"] if margin["worst"] != float("inf") else None
    data["passed"] = found.passed
    return data


STYLE = {kit.Status.PASS: "green", kit.Status.FAIL: "bold red", kit.Status.SKIPPED: "yellow"}


def _render(terminal: Terminal, found: kit.KitReport) -> None:
    table = Table("part", "subject", "status", "detail", title=f"grader check {found.challenge} ({found.backend})")
    for f in found.findings:
        table.add_row(f.part, f.subject, f"[{STYLE[f.status]}]{f.status.value}[/]", f.detail)
    terminal.out.print(table)
    if found.margins:
        margins = Table("method", "must", "worst / limit", "failed cases", title="tolerance: each method's worst case")
        for m in sorted(found.margins, key=lambda m: (m.must, m.worst)):
            mark = "" if m.ok else " [bold red]✗[/]"
            margins.add_row(m.method, m.must, f"{m.worst:.3g}{mark}", f"{m.failed_cases}/{m.cases}")
        terminal.out.print(margins)
    verdict = "[green]passed[/]" if found.passed else "[bold red]failed[/]"
    terminal.out.print(f"{found.challenge}: {verdict}")
