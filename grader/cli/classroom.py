"""The class server's commands: `serve`, `roster add|import|list|expire`, `deadline`, `login`, and the client
side of `submit --server` (the `submit` command itself, which also grades here, is in `grading`)."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path

import click
from rich.table import Table

from grader import leetgpu, spec
from grader.classroom import schema
from grader.cli.common import (DEFAULT_CHALLENGE, GraderGroup, RichProgress, Terminal, backend_option, budget_option,
                               cache_option, challenges_option, check_source, cli, engine_options, fell_back,
                               handle_errors, leetgpu_option, libraries_option, load_challenge, make_engine,
                               nvcc_option, strict_option)
from grader.exitcodes import ExitCode
from grader.sandbox import SandboxMode

WAIT_TIMEOUT_S = 1800.0
"""How long `grader submit --server` waits for the report by default (`--wait-timeout`): a class's queue
on a deadline night, with time to spare; past it the submission is stored still, and the command says so."""


@cli.command()
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), required=True,
              envvar="GRADER_DB", help="The class's results database (roster, queue, runs); created if there never "
                                       "was one. Checked at start (damaged, read-only or locked: exit 5); deleted or "
                                       "replaced while serving, the server refuses work (503).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every interface).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free one, printed). One in use is refused before anything starts (exit 2).")
@backend_option
@engine_options
@click.option("--challenge", "slugs", multiple=True, help="Serve only this challenge (repeatable; default: all).")
@challenges_option
@nvcc_option
@cache_option
@click.option("--sandbox", "sandbox_mode", type=click.Choice([m.value for m in SandboxMode]), default="required",
              show_default=True, help="Sandbox every compile and run; a class server refuses to grade without it "
                                      "unless told otherwise (auto, off: only for code you trust).")
@budget_option
@libraries_option
@leetgpu_option
@strict_option
@click.option("--max-pending", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Submissions a student may have waiting or being graded, all challenges together "
                   "(they are graded one at a time, however many GPUs grade).")
@click.option("--hourly-cap", type=click.IntRange(1, 10000), default=30, show_default=True,
              help="Submissions a student may make per hour.")
@click.option("--max-upload-kb", type=click.IntRange(1, 1024), default=256, show_default=True,
              help="Largest source file accepted, in KiB.")
@click.option("--public-url", default=None, metavar="URL",
              help="The address students open, e.g. https://class.example.edu behind a TLS proxy: the web pages' "
                   "forms must come from it, and with https the login cookie is Secure (default: the address "
                   "each request names).")
@click.option("--session-hours", type=click.IntRange(1, 24 * 30), default=12, show_default=True,
              help="How long a web page login lasts (logging out ends it at once).")
@click.option("--max-connections", type=click.IntRange(8, 100000), default=512, show_default=True,
              help="Connections served at once; more get 503 (try again).")
@click.option("--score-rule", default=None, metavar="RULE", help="How the gradebook's LMS file (format=lms) scores a "
              "student, e.g. \"accepted=60,levels=40,late=0.5,max=100\" (the default; any subset of the keys).")
@click.pass_obj
@handle_errors
def serve(terminal: Terminal, db: Path, host: str, port: int, backend: str, engine_name: str, gpus: str | None,
          ray_address: str | None, ray_insecure: bool, slugs: tuple[str, ...], challenges_dir: Path, nvcc: str | None,
          cache_dir: Path, sandbox_mode: str, timing_budget_s: float | None, libraries: str,
          leetgpu_dir: Path | None, strict: bool, max_pending: int, hourly_cap: int,
          max_upload_kb: int, public_url: str | None, session_hours: int, max_connections: int,
          score_rule: str | None) -> None:
    """Serve a class: students submit over HTTP with their tokens, the leaderboard is live.

    \b
    grader serve --db class.sqlite3                 # then open http://127.0.0.1:8000/
    grader roster add alice --db class.sqlite3      # prints alice's token (last line)
    grader submit mine.cu --server http://HOST:8000 --token TOKEN

    Submissions wait in a queue in the database (nothing is lost when the server stops; a job that was
    being graded is graded again at the next start, and kept once). Each is graded on hidden shapes of
    its own (a seed derived from the class's secret seed), round-robin between students, one grading
    process per GPU (--gpus), or on Ray actors (--engine ray). Give yourself an instructor token
    (`grader roster add NAME --instructor`) for the gradebook pages; deadlines: `grader deadline`."""
    import logging

    import uvicorn

    from grader import backends, batch
    from grader.classroom import app as apps, dispatch, queue, server as servers, transport
    from grader.engines import Config
    from grader.gradebook import DEFAULT_RULE, parse_rule

    rule = parse_rule(score_rule) if score_rule is not None else DEFAULT_RULE  # refused before anything starts
    origin = servers.public_origin(public_url) if public_url else None
    root = leetgpu.checkout_root(leetgpu_dir) if leetgpu_dir else None
    challenges = served_challenges(challenges_dir, slugs, root)
    limits = queue.Limits(max_pending, hourly_cap, max_upload_kb * 1024)
    with schema.serving(db) as lock, apps.listening_socket(host, port) as listener:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        started = schema.start(db, lock)  # checked, migrated, writable; created only if there never was one
        if started.created:
            terminal.err.print(f"a new class database at {db} (add people with `grader roster add NAME --db {db}`)",
                               highlight=False)
        with started.database.connect() as results:
            returned = queue.requeue_running(results)
        if returned:
            terminal.err.print(f"{returned} job(s) left running by the last server go back in the queue", highlight=False)
        backend = backends.resolve(backend, nvcc, fell_back(terminal))  # once: every process grades alike
        hidden = (cache_dir, db.parent)
        hidden += (root,) if root else ()
        config = Config(challenges_dir, backend, nvcc, cache_dir, sandbox_mode, hidden, timing_budget_s,
                        libraries=libraries, leetgpu=root, strict=strict)
        default_gpus = "all" if backend == "cuda" else "1"
        engine = make_engine(terminal, engine_name, gpus, ray_address, config, tuple(challenges), default_gpus,
                             ray_insecure=ray_insecure)
        try:
            served = dispatch.Class(challenges, batch.secret_seed(db))
            dispatcher = dispatch.Dispatcher(db, engine, served, database=started.database)
            settings = apps.Settings(db, challenges, limits, engine.describe(), origin, session_hours * 3600,
                                     started.database, score_rule=rule)
            application = apps.create_app(settings, dispatcher)
            where = f"[{host}]" if ":" in host else host
            terminal.err.print(f"serving {', '.join(challenges)} at http://{where}:{listener.getsockname()[1]}/ "
                               + (f"(students open {origin}) " if origin else "")
                               + "(Ctrl-C stops; queued jobs wait for the next start)", highlight=False)
            server = uvicorn.Server(transport.uvicorn_config(application, max_connections=max_connections))
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a server is stopped: not an error
                server.run(sockets=[listener])
        finally:
            engine.close()
    if not server.started:  # uvicorn logged why; its own exit code (3) means "invalid challenge" here
        raise RuntimeError("the web server did not start")


@cli.group(cls=GraderGroup)
def roster() -> None:
    """Who may submit to the class server: add students, import a class list, list it, let tokens expire."""


roster_db = click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), required=True,
                         envvar="GRADER_DB", help="The class's results database.")
expires_option = click.option(
    "--expires", "expires", default=None, metavar="WHEN",
    help="The token stops working at WHEN (ISO 8601, e.g. 2026-12-01T23:59; no zone: this machine's). "
         "Default: never; `grader roster expire` changes it.")


def _expiry(text: str | None):
    from grader.classroom import roster as people

    return None if text is None else people.parse_expiry(text)


def _shown_expiry(expires_at: str | None) -> str:
    return f"{expires_at[:16].replace('T', ' ')} UTC" if expires_at else "never"


@cli.command()
@roster_db
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def backup(terminal: Terminal, db: Path, out: Path, force: bool, as_json: bool) -> None:
    """Copy the results database to OUT, safely while a server runs: one consistent moment of it (SQLite's
    online backup), readable by its owner only, checked before it is put in place. An existing OUT is
    refused unless --force. Restore by stopping the server, removing DB-wal and DB-shm, and copying OUT
    over the database."""
    from grader.backup import backup as copy

    made = copy(db, out, force)
    if as_json:
        click.echo(json.dumps(made.to_json(), indent=2))
        return
    rows = ", ".join(f"{n} {name}" for name, n in made.rows.items())
    terminal.err.print(f"backed up {db} to {out} ({made.size_bytes:,} bytes; {rows}; quick check ok)",
                       highlight=False, markup=False)


@roster.command(name="add")
@click.argument("name")
@roster_db
@click.option("--instructor", is_flag=True, help="An instructor: sees the gradebook and every report.")
@click.option("--new-token", is_flag=True,
              help="NAME is on the roster already and lost their token: replace it (the old one stops working; "
                   "their role, and their expiry unless --expires, stay). A name not on the roster is refused, "
                   "not added.")
@expires_option
@click.pass_obj
@handle_errors
def roster_add(terminal: Terminal, name: str, db: Path, instructor: bool, new_token: bool, expires: str | None) -> None:
    """Add NAME and print their token on the last line (shown once: only its hash is kept). A name on
    the roster already is refused unless --new-token."""
    from grader.classroom import roster as people

    role = people.Role.INSTRUCTOR if instructor else people.Role.STUDENT
    when = _expiry(expires)
    with schema.open_class(db) as results:
        if new_token:
            added = people.new_token(results, name, role if instructor else None,
                                     **({"expires": when} if expires is not None else {}))
        else:
            added = people.add(results, name, role, when)
    until = f"valid until {_shown_expiry(added.person.expires_at)}; " if added.person.expires_at else ""
    if new_token:
        said = (f"{name} ({added.person.role.value}) is on the roster of {db} already: their token is replaced, "
                f"the old one no longer works; the new one ({until}give it to them, it is not shown again):")
    else:
        said = f"{role.value} {name} added to {db}; their token ({until}give it to them, it is not shown again):"
    terminal.err.print(said, highlight=False, markup=False)
    click.echo(added.token)


@roster.command(name="import")
@click.argument("csv_file", type=click.Path(dir_okay=False, path_type=Path, exists=True))
@roster_db
@click.option("--tokens", "tokens_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write name,token lines to this file (owner-only) instead of the terminal.")
@expires_option
@click.pass_obj
@handle_errors
def roster_import(terminal: Terminal, csv_file: Path, db: Path, tokens_file: Path | None, expires: str | None) -> None:
    """Add every student of CSV_FILE (a `name` column, or the first column) and print name,token lines.
    Students already on the roster keep their tokens (and their expiries: `roster expire` changes one)."""
    from grader.classroom import roster as people

    when = _expiry(expires)
    names = people.read_csv(csv_file)
    with schema.open_class(db) as results:
        imported = people.add_all(results, names, when)
    if tokens_file:
        people.write_tokens(tokens_file, imported)
        terminal.err.print(f"wrote {len(imported.added)} tokens to {tokens_file}", highlight=False)
    else:
        click.echo("name,token\n" + imported.tokens_csv(), nl=False)
    if imported.kept:
        terminal.err.print(f"{len(imported.kept)} already on the roster, tokens unchanged: "
                           f"{', '.join(imported.kept[:10])}" + (" …" if len(imported.kept) > 10 else ""),
                           highlight=False, markup=False)


@roster.command(name="list")
@roster_db
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def roster_list(terminal: Terminal, db: Path, as_json: bool) -> None:
    """List the roster (names, roles, when their tokens expire; tokens are never shown again)."""
    from grader.classroom import roster as people

    with schema.open_class(db, create=False) as results:
        found = people.people(results)
    if as_json:
        click.echo(json.dumps([{"name": p.name, "role": p.role.value, "added_at": p.added_at,
                                "expires_at": p.expires_at, "expired": p.expired()} for p in found], indent=2))
        return
    table = Table("name", "role", "added", "token expires")
    for p in found:
        table.add_row(p.name, p.role.value, p.added_at[:16].replace("T", " "),
                      _shown_expiry(p.expires_at) + (" (expired)" if p.expired() else ""))
    terminal.out.print(table)
    terminal.err.print(f"{sum(p.role.value == 'student' for p in found)} students", style="dim", highlight=False)


@roster.command(name="expire")
@click.argument("name")
@click.argument("when")
@roster_db
@click.pass_obj
@handle_errors
def roster_expire(terminal: Terminal, name: str, when: str, db: Path) -> None:
    """Make NAME's token expire at WHEN (ISO 8601, e.g. 2026-12-01T23:59; no zone: this machine's), `now`
    (it stops working at once, and so do their web page logins), or `never`. Their token stays the same."""
    from grader.classroom import roster as people

    expires = people.parse_expiry(when)
    with schema.open_class(db, create=False) as results:
        person = people.set_expiry(results, name, expires)
    terminal.out.print(f"{person.name}'s token expires: {_shown_expiry(person.expires_at)}"
                       + (" (it no longer works)" if person.expired() else ""), highlight=False, markup=False)


def served_challenges(challenges_dir: Path, slugs: tuple[str, ...],
                      leetgpu_dir: Path | None) -> dict[str, spec.Challenge]:
    """The challenges a class serves, by slug: the grader's own, and official ones of the checkout by their folder
    names (each submission graded on its own draw of the file's cases). One that cannot be graded here stops the
    server before it starts, saying why."""
    return {slug: load_challenge(challenges_dir, slug, leetgpu_dir)
            for slug in slugs or tuple(spec.list_challenges(challenges_dir))}


@cli.command()
@click.argument("slug")
@click.argument("when", required=False)
@roster_db
@click.option("--clear", is_flag=True, help="Remove SLUG's deadline.")
@challenges_option
@leetgpu_option
@click.pass_obj
@handle_errors
def deadline(terminal: Terminal, slug: str, when: str | None, db: Path, clear: bool, challenges_dir: Path,
             leetgpu_dir: Path | None) -> None:
    """Set SLUG's deadline (WHEN in ISO 8601, e.g. 2026-12-01T23:59; no zone: this machine's), or show it.
    Submissions after it are still graded, and flagged late in the gradebook. SLUG may name an official
    LeetGPU challenge of the checkout given with --leetgpu."""
    from grader.classroom import queue

    if leetgpu_dir is None or leetgpu.find(leetgpu.checkout_root(leetgpu_dir), slug) is None:
        spec.load(challenges_dir, slug)
    with schema.open_class(db) as results:
        if clear or when:
            due = queue.parse_due(when) if when else None
            queue.set_deadline(results, slug, due)
        shown = queue.deadlines(results).get(slug)
    terminal.out.print(f"{slug}: " + (f"due {shown} (UTC)" if shown else "no deadline"), highlight=False)


@cli.command()
@click.option("--server", required=True, envvar="GRADER_SERVER", help="The class server's URL.")
@click.option("--token", default=None, envvar="GRADER_TOKEN", help="Your token (asked for when not given).")
@click.pass_obj
@handle_errors
def login(terminal: Terminal, server: str, token: str | None) -> None:
    """Check your token with the class server and save both (owner-only), so `grader submit FILE
    --server` needs neither."""
    from grader.classroom import client

    url = client.server_url(server)
    token = token or click.prompt("token", hide_input=True)
    checked = client.Login(url, token.strip())
    remote = client.Client(checked)
    try:
        me = remote.me()
    finally:
        remote.close()
    client.save(checked)
    terminal.out.print(f"logged in to {checked.server} as {me['name']} ({me['role']}); saved in {client.LOGIN_FILE}",
                       highlight=False, markup=False)



def submit_remote(terminal: Terminal, file: Path, slug: str | None, as_json: bool, server: str, token: str | None,
                  no_wait: bool, wait_timeout_s: float = WAIT_TIMEOUT_S) -> None:
    """Upload FILE (tried again with its key while the server does not answer or says "not now", each
    retry said on stderr), then wait for the report with a progress line, at most `wait_timeout_s`."""
    from rich.text import Text

    from grader.classroom import client

    submitted = check_source(file, slug or DEFAULT_CHALLENGE)
    remote = client.Client(client.resolve(server or None, token))
    try:
        sent = remote.submit(file.name, submitted.text.encode("utf-8"), slug,
                             on_retry=lambda retry: _say_retry(terminal, retry))
        terminal.err.print(f"submitted as {sent.id} ({sent.challenge}) to {remote.login.server}"
                           + (" [late: after the deadline]" if sent.late else ""), highlight=False, markup=False)
        if no_wait:
            click.echo(json.dumps(sent.to_json()) if as_json else str(sent.id))
            return
        with RichProgress(terminal.err) as progress:
            progress.stage("waiting for the class server")
            answer = remote.wait(sent.id, wait_timeout_s, lambda line: progress.bar.update(
                progress.task, description=f"{progress.stage_text}: {line}"))
    finally:
        remote.close()
    if as_json:
        click.echo(json.dumps(answer.report, indent=2))
    else:
        terminal.out.print(Text.from_ansi(answer.report_text or f"{answer.verdict.name if answer.verdict else ''}\n"),
                           end="")
    sys.exit(int(answer.exit_code) if answer.exit_code is not None else int(ExitCode.SERVER))


def _say_retry(terminal: Terminal, retry) -> None:
    """One line per retry of an upload (grader.classroom.client.Retry)."""
    fate = "; it may have been stored: the next try finds out" if retry.maybe_stored else ""
    terminal.err.print(f"the upload was not taken yet ({retry.why}{fate}); trying again in {retry.wait_s:.0f} s",
                       highlight=False, markup=False)
