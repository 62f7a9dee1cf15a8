"""The command line: parse, call the pipeline, map errors to exit codes. Nothing else lives here."""

from __future__ import annotations

import functools
import json
import contextlib
import dataclasses
import getpass
import os
import secrets
import shlex
import shutil
import sys
import tempfile
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.markdown import Markdown
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from grader import __version__, exitcodes, report, sandbox, source, spec, store
from grader.errors import GraderError, SpecError, UsageError
from grader.exitcodes import ExitCode
from grader.results import Mode
from grader.sandbox import SandboxMode

DEFAULT_CHALLENGES = Path(__file__).resolve().parent / "challenges"
"""Inside the package (in the repository, a link to the top-level challenges/), so an installed
wheel finds them from any folder."""
DEFAULT_CHALLENGE = "matmul"
DEFAULT_CACHE = Path.home() / ".cache" / "cuda-grader"
DEFAULT_DB = Path.home() / ".local" / "share" / "cuda-grader" / "results.sqlite3"


class Terminal:
    """Where output goes; tests swap in consoles that record."""

    def __init__(self, out: Console | None = None, err: Console | None = None):
        self.out = out or Console()
        self.err = err or Console(stderr=True)


class RichProgress:
    """The pipeline's progress, shown on stderr while it works and cleared when it is done."""

    def __init__(self, console: Console):
        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), console=console, transient=True)
        self.task = None

    def __enter__(self):
        self.bar.start()
        return self

    def __exit__(self, *exc):
        self.bar.stop()

    def stage(self, text: str, total: int | None = None) -> None:
        if self.task is not None:
            self.bar.remove_task(self.task)
        self.stage_text = text
        self.task = self.bar.add_task(text, total=total)

    def advance(self, text: str) -> None:
        self.bar.update(self.task, description=f"{self.stage_text}: {text}")
        self.bar.advance(self.task)


def _fail(terminal: Terminal, error: GraderError, as_json: bool = False, **extra) -> None:
    """The error on stderr, and its exit code; with --json also as a JSON object on stdout, so a script
    reading stdout always gets JSON: `error`, `hint`, `exit_code`, and whatever `extra` the command adds."""
    terminal.err.print(f"[bold red]error:[/] {error.message}", highlight=False)
    if error.hint:
        terminal.err.print(f"[dim]hint:[/] {error.hint}", highlight=False)
    if as_json:
        click.echo(error_json(error.message, error.hint, error.exit_code, **extra))
    sys.exit(int(error.exit_code))


def error_json(message: str, hint: str | None, code: ExitCode, **extra) -> str:
    return json.dumps({**extra, "error": message, "hint": hint, "exit_code": int(code)}, indent=2)


def _wants_json(kwargs: dict) -> bool:
    """Whether the command was asked for JSON on stdout (--json, or --format json without --output)."""
    return bool(kwargs.get("as_json")) or (kwargs.get("fmt") == "json" and kwargs.get("output") is None)


def handle_errors(command):
    """GraderErrors become a message and their exit code; anything else is a grader bug. A command
    asked for JSON answers with a JSON error object too."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        terminal = click.get_current_context().obj or Terminal()
        as_json = _wants_json(kwargs)
        try:
            return command(*args, **kwargs)
        except GraderError as error:
            _fail(terminal, error, as_json)
        except KeyboardInterrupt:
            terminal.err.print("interrupted")
            if as_json:
                click.echo(error_json("interrupted", None, ExitCode.INTERRUPTED))
            sys.exit(int(ExitCode.INTERRUPTED))
        except (SystemExit, click.exceptions.Exit, click.ClickException):
            raise
        except Exception:
            if click.get_current_context().meta.get(DEBUG_KEY):
                terminal.err.print(traceback.format_exc(), markup=False, highlight=False, soft_wrap=True)
            terminal.err.print("[bold red]internal error[/] in the grader (not your submission). "
                               "Re-run with --debug for the traceback and please report it.")
            if as_json:
                click.echo(error_json("internal error in the grader (not your submission)",
                                      "re-run with --debug for the traceback and please report it", ExitCode.INTERNAL))
            sys.exit(int(ExitCode.INTERNAL))

    return wrapper


class GraderCommand(click.Command):
    """A command whose --json holds on a mistyped command line too: click's usage error (an unknown
    option, a bad value) goes to stderr as always, and, where --json was asked for, a JSON error object
    to stdout, where a script reads."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        asked = "--json" in args or any(a == "--format=json" or (a == "--format" and b == "json")
                                        for a, b in zip(args, args[1:] + [""]))
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as error:
            if asked:
                click.echo(error_json(error.format_message(), f"`{ctx.command_path} --help` lists the options",
                                      ExitCode.USAGE))
            raise


DEBUG_KEY = "grader.debug"


def _remember_debug(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    # Context.meta is shared by the group's context and its subcommand's, so either place sets it.
    if value:
        ctx.meta[DEBUG_KEY] = True


def debug_option() -> click.Option:
    return click.Option(["--debug"], is_flag=True, expose_value=False, callback=_remember_debug,
                        help="Show tracebacks of internal errors.")


class GraderGroup(click.Group):
    """Gives every subcommand `--debug`, so `grader run --debug FILE` works as well as `grader --debug run
    FILE`: people add the flag where they are typing, at the end."""

    command_class = GraderCommand

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        cmd.params.append(debug_option())
        super().add_command(cmd, name)


@click.group(cls=GraderGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
@click.option("--debug", is_flag=True, expose_value=False, callback=_remember_debug,
              help="Show tracebacks of internal errors (also accepted after the command).")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """Grade CUDA challenge submissions: compile with nvcc, check against an FP64 reference,
    time against the vendor library.

    \b
    Exit codes: 0 accepted / done, 1 graded and not accepted, 2 bad usage (an option,
    file, challenge or port to change; a class server's refusal that retrying cannot help),
    3 invalid challenge definition, 4 nothing here can run it (no GPU, no nvcc, or UNSUPPORTED
    by the emulator), 5 results database missing, locked or damaged, 6 class server unreachable
    or busy (retry later), 70 internal error,
    130 interrupted.
    With --json (or --format json), stdout is JSON whatever happens: an error is an object
    with error, hint and exit_code.
    """
    ctx.obj = ctx.obj or Terminal()


def challenges_option(command):
    return click.option("--challenges-dir", type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
                        default=DEFAULT_CHALLENGES, show_default=True, envvar="GRADER_CHALLENGES",
                        help="Folder holding one sub-folder per challenge.")(command)


nvcc_option = click.option("--nvcc", default=None, help="Path to nvcc (default: from PATH).")
cache_option = click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path, resolve_path=True), default=DEFAULT_CACHE,
                            show_default=True, help="Build and ladder cache folder.")
backend_option = click.option("--backend", type=click.Choice(["auto", "cuda", "emulator"]), default="auto",
                              show_default=True, help="Where submissions run. auto: the GPU if one is usable, else "
                                                      "the CPU emulator (correctness only).")
sandbox_option = click.option("--sandbox", "sandbox_mode", type=click.Choice([m.value for m in SandboxMode]),
                              default="auto", show_default=True,
                              help="Compile and run submissions in a bubblewrap sandbox (no network, private /tmp, "
                                   "private folders hidden). auto: when the machine allows it; required: refuse to "
                                   "grade without it; off: limits only, nothing hidden - for code you trust.")
db_option = click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), default=DEFAULT_DB,
                          show_default=True, envvar="GRADER_DB", help="Results database.")
budget_option = click.option("--timing-budget", "timing_budget_s", type=click.FloatRange(min=0.1), default=None,
                             help="Seconds of timed repetitions per performance case (default: the challenge's).")


def make_box(terminal: Terminal, mode: str, hidden: list[Path]) -> sandbox.Sandbox:
    """The sandbox for this command's workers, announced in one line."""
    box = sandbox.make(SandboxMode(mode), hidden)
    terminal.err.print(box.describe(), style="dim" if box.active else "yellow", highlight=False)
    return box


def grading_options(command):
    options = [
        click.argument("file", type=click.Path(path_type=Path)),  # check_source says what is wrong with it
        click.option("--challenge", "slug", default=None,
                     help="Challenge to grade against. Default: the one whose solve signature the file has; "
                          "when several have it, the file is refused (exit 2); when none has, matmul, said in a "
                          "warning line."),
        challenges_option,
        click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=None,
                     help="Seed for random shapes and values; the report prints the one used. Default: fresh."),
        click.option("--json", "as_json", is_flag=True, help="Print the report as JSON on stdout."),
        backend_option,
        nvcc_option,
        cache_option,
        click.option("--no-cache", is_flag=True, help="Build from scratch, ignoring and not filling the cache."),
        click.option("--user", default=None,
                     help="Keep the result in the results database under this user name (classroom use)."),
        click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), default=None, envvar="GRADER_DB",
                     help=f"Results database to keep the result in [default with --user: {DEFAULT_DB}]."),
        click.option("--sanitize", is_flag=True,
                     help="Also run the functional cases under compute-sanitizer (memcheck, racecheck) and report "
                          "each finding at its file and line. GPU only."),
        sandbox_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _grade(terminal: Terminal, mode: Mode, file: Path, slug: str, challenges_dir: Path, seed: int | None,
           as_json: bool, backend: str, nvcc: str | None, cache_dir: Path, no_cache: bool, sandbox_mode: str,
           sanitize: bool, user: str | None, db: Path | None, timing_budget_s: float | None = None,
           placement: bool = False) -> None:
    from grader import pipeline

    submitted = check_source(file, slug or DEFAULT_CHALLENGE)
    challenge = spec.load(challenges_dir, slug) if slug else _challenge_for(terminal, submitted, challenges_dir)
    with contextlib.ExitStack() as stack:
        if no_cache:
            cache_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="grader-nocache-")))
        options = pipeline.Options(mode, seed if seed is not None else secrets.randbelow(2**31), cache_dir,
                                   timing_budget_s)
        database = db or (DEFAULT_DB if user else None)
        hidden = [cache_dir, file.resolve().parent] + ([database.resolve().parent] if database else [])
        box = make_box(terminal, sandbox_mode, hidden)
        result = _grade_with_progress(terminal, submitted, challenge, options, backend, nvcc, placement, box, sanitize)
    if database:
        from grader import job

        with store.Store.open(database) as results:
            run_id = job.keep(results, result, submitted, job.Keeping(user or getpass.getuser(), str(file),
                                                                      secret_seed=False))
        terminal.err.print(f"kept as run {run_id} in {database}", style="dim", highlight=False)
        terminal.err.print("a practice run: graded with a public seed, so not on the class leaderboard (the class "
                           "server and `grader grade` grade with the secret seed); `grader leaderboard "
                           "--include-practice` lists practice runs", style="dim", highlight=False)
    if as_json:
        click.echo(report.as_json(result))
    else:
        report.render(result, terminal.out)
    sys.exit(int(exitcodes.for_verdict(result.verdict)))


def _challenge_for(terminal: Terminal, submitted: source.Source, challenges_dir: Path) -> spec.Challenge:
    """The challenge the file's solve signature names, said in one line; several: a usage error."""
    from grader import signature

    known = _known_challenges(terminal, challenges_dir)
    choice = signature.choose(submitted.text, known)
    if choice.challenge:
        terminal.err.print(f"challenge: {choice.challenge} ({choice.why}; --challenge to choose another)",
                           style="dim", highlight=False)
        return next(c for c in known if c.slug == choice.challenge)
    if choice.matches:
        raise UsageError(f"{submitted.display_path}: {choice.why}",
                         hint="pass one of: " + ", ".join(f"--challenge {slug}" for slug in choice.matches))
    if len(known) > 1:
        terminal.err.print(f"challenge: {DEFAULT_CHALLENGE} ({choice.why}; --challenge to choose)", style="yellow",
                           highlight=False)
    return spec.load(challenges_dir, DEFAULT_CHALLENGE)


def _known_challenges(terminal: Terminal, challenges_dir: Path) -> list[spec.Challenge]:
    """Every challenge that loads; a broken one is said and left out, so it does not stop grading
    against the others."""
    known = []
    for slug in spec.list_challenges(challenges_dir):
        try:
            known.append(spec.load(challenges_dir, slug))
        except SpecError as error:
            terminal.err.print(f"challenge {slug} skipped: {error.message}", style="yellow", markup=False,
                               highlight=False)
    return known


def check_source(file: Path, slug: str) -> source.Source:
    """The file as read, once; refused before anything is built if it cannot be a CUDA source (nvcc
    would fail on it with a message about the wrong thing: a .py file as host code, an empty file as a
    missing solve) or the grader will not read it (a symbolic link, a file past the size cap)."""
    example = "pass the path of your .cu file, e.g. solutions/mine.cu"
    if file.is_dir() and not file.is_symlink():
        raise UsageError(f"{file} is a folder, not a .cu file",
                         hint=f"{example}; to grade every submission in a folder, use `grader grade {file}`")
    if file.suffix != ".cu" and file.is_file():
        raise UsageError(f"{file} is not a CUDA source file: the grader expects a name ending in .cu",
                         hint=f"write the solution in CUDA C++ (`grader init {slug} solutions/mine.cu` writes a "
                              f"starter); if {file.name} is CUDA C++ already, rename it to end in .cu")
    try:
        return source.read(file)
    except source.SourceError as error:
        hint = f"`grader init {slug} {file} --force` fills it with the starter" if error.problem is \
            source.Problem.EMPTY else error.hint
        raise UsageError(error.message, hint=hint) from error


def check_memory(challenge: spec.Challenge, backend) -> None:
    """A SpecError when a shape of the challenge cannot fit the memory the backend's buffers live in:
    the GPU's own memory for the CUDA backend, the host's physical memory for the emulator (its buffers
    are host memory). Asked here rather than of the backends, which know nothing of challenges' sizes."""
    if backend.name == "cuda":
        memory, where = backend.info.memory_bytes, f"this GPU ({backend.info.name})"
    else:
        try:
            memory, where = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's memory"
        except (ValueError, OSError):
            return  # not known here: the allocator says so, if it comes to that
    spec.check_fits(challenge, memory, where)


def _grade_with_progress(terminal: Terminal, submitted: source.Source, challenge: spec.Challenge, options,
                         backend: str, nvcc: str | None, placement: bool, box, sanitize: bool = False):
    from grader import job

    with RichProgress(terminal.err) as progress:
        progress.stage("starting the backend")
        chosen = choose_backend(backend, nvcc, terminal, box)
        check_memory(challenge, chosen)
        if sanitize and not chosen.measures_time:
            raise UsageError("--sanitize needs a GPU", hint="the CPU emulator finds races by itself (RACE verdicts)")
        return job.grade_job(job.Job(submitted, challenge, options, placement, sanitize), chosen, progress)


def choose_backend(name: str, nvcc: str | None, terminal: Terminal, box=None):
    """`backends.choose`, saying in one line when auto falls back to the emulator."""
    from grader import backends

    def fell_back(why: str) -> None:
        terminal.err.print(f"[yellow]no usable GPU ({why}); grading on the CPU emulator: "
                           "correctness only, no timings[/]", highlight=False)

    return backends.choose(name, nvcc, box, fell_back)


LOCAL_ONLY = ("seed", "backend", "nvcc", "no_cache", "user", "db", "sanitize", "sandbox_mode", "timing_budget_s",
              "placement")
"""`submit` options that choose how a local run grades; the class server chooses those itself."""


@cli.command()
@grading_options
@budget_option
@click.option("--placement/--no-placement", default=True, show_default=True,
              help="Place the submission on the reference ladder measured on this GPU (measured once per "
                   "GPU, driver and grader version, then cached).")
@click.option("--server", default=None, is_flag=False, flag_value="", envvar="GRADER_SERVER",
              help="Submit to this class server (URL) instead of grading here; `--server` alone uses the "
                   "one `grader login` saved. Also GRADER_SERVER.")
@click.option("--token", default=None, envvar="GRADER_TOKEN",
              help="Your token for the class server (default: GRADER_TOKEN, else the one `grader login` saved).")
@click.option("--no-wait", is_flag=True, help="With --server: print the submission id and return at once.")
@click.pass_context
@handle_errors
def submit(ctx: click.Context, server: str | None, token: str | None, no_wait: bool, **kwargs) -> None:
    """Grade FILE fully: correctness on every case, timing against the baseline, and its level.

    With --server, FILE goes to the class server, which grades it with the class's secret seed; this
    waits with progress, prints the same report (secret cases shown as "hidden case N") and exits with
    the same code a local run would. Without it, `--user NAME` keeps a practice run in a local
    database (graded with a public seed, so not on the class leaderboard)."""
    terminal = ctx.obj
    if server is None:
        if no_wait or token:
            raise UsageError("--no-wait and --token are for --server", hint="pass --server URL, or drop them")
        _grade(terminal, Mode.SUBMIT, **kwargs)
        return
    chosen = [name for name in LOCAL_ONLY
              if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if chosen:
        flags = ", ".join("--" + name.replace("_mode", "").replace("_s", "").replace("_", "-") for name in chosen)
        raise UsageError(f"{flags}: the class server chooses how it grades", hint="drop them, or grade here without --server")
    _submit_remote(terminal, kwargs["file"], kwargs["slug"], kwargs["as_json"], server, token, no_wait)


def _submit_remote(terminal: Terminal, file: Path, slug: str | None, as_json: bool, server: str, token: str | None,
                   no_wait: bool) -> None:
    from rich.text import Text

    from grader.classroom import client

    submitted = check_source(file, slug or DEFAULT_CHALLENGE)
    remote = client.Client(client.resolve(server or None, token))
    try:
        sent = remote.submit(file.name, submitted.text.encode("utf-8"), slug)
        terminal.err.print(f"submitted as {sent['id']} ({sent['challenge']}) to {remote.login.server}"
                           + (" [late: after the deadline]" if sent.get("late") else ""), highlight=False, markup=False)
        if no_wait:
            click.echo(json.dumps(sent) if as_json else str(sent["id"]))
            return
        with RichProgress(terminal.err) as progress:
            progress.stage("waiting for the class server")
            answer = remote.wait(sent["id"], lambda a: progress.bar.update(
                progress.task, description=f"{progress.stage_text}: {client.describe_status(a)}"))
    finally:
        remote.close()
    if as_json:
        click.echo(json.dumps(answer.get("report"), indent=2))
    else:
        terminal.out.print(Text.from_ansi(answer.get("report_text") or f"{answer['verdict']}\n"), end="")
    sys.exit(int(answer["exit_code"]))


@cli.command(name="run")
@grading_options
@click.pass_obj
@handle_errors
def run_command(terminal: Terminal, **kwargs) -> None:
    """Check FILE for correctness only: fast feedback, no timing."""
    _grade(terminal, Mode.RUN, **kwargs)


@cli.command()
@click.argument("slug", default="matmul")
@challenges_option
@click.option("--remeasure", is_flag=True, help="Measure again even if this GPU's ladder is cached.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@nvcc_option
@cache_option
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=1, show_default=True, help="Seed for the inputs.")
@budget_option
@click.pass_obj
@handle_errors
def levels(terminal: Terminal, slug: str, challenges_dir: Path, remeasure: bool, as_json: bool, nvcc: str | None,
           cache_dir: Path, seed: int, timing_budget_s: float | None) -> None:
    """Print the reference ladder of SLUG measured on this GPU (cached; --remeasure to redo).

    Each level is graded like a submission, its performance cases timed for up to 1 s each
    (--timing-budget to change); the levels compile in parallel while the first ones are measured.
    Without a GPU: the ladder's levels unmeasured, why, and exit 4 (--json: an object with the
    challenge, its levels, and the error, hint and exit code)."""
    from grader import ladder
    from grader.backends.cuda import CudaBackend
    from grader.errors import BackendUnavailable

    challenge = spec.load(challenges_dir, slug)
    if not challenge.levels:
        raise UsageError(f"challenge {slug!r} has no reference ladder")
    try:
        gpu = CudaBackend(nvcc)
    except BackendUnavailable as error:
        unmeasured = BackendUnavailable(f"measuring the ladder needs a GPU: {error.message}", error.hint)
        if not as_json:
            report.render_ladder_definition(challenge, terminal.out)
            raise unmeasured from error
        levels = [{"level": level.number, "name": level.name, "needs": level.needs, "technique": level.technique}
                  for level in challenge.levels]
        _fail(terminal, unmeasured, True, challenge=slug, gpu=None, measured=False, levels=levels)
    measured = None if remeasure else ladder.load(cache_dir, challenge, gpu.environment())
    if measured is None:
        with RichProgress(terminal.err) as progress:
            measured = ladder.measure(challenge, gpu, cache_dir, seed, progress, timing_budget_s)
    if as_json:
        click.echo(json.dumps(dataclasses.asdict(measured), indent=2))
    else:
        report.render_ladder(challenge, measured, terminal.out)


def engine_options(command):
    options = [
        click.option("--engine", "engine_name", type=click.Choice(["local", "ray"]), default="local",
                     show_default=True,
                     help="local: grading processes on this machine, one per GPU; ray: one Ray actor per GPU of "
                          "the cluster (per CPU on the emulator), each job a task on a free one, on a local Ray or "
                          "a cluster (pip install -e '.[ray]')."),
        click.option("--gpus", default=None,
                     help="local engine: 'all' or how many GPUs to grade on, one grading process each (on the "
                          "emulator: how many grading processes). Ray: how many actors (default: one per GPU of "
                          "the cluster)."),
        click.option("--ray-address", default=None, envvar="RAY_ADDRESS",
                     help="The Ray cluster to join (default: start a local Ray)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_engine(terminal: Terminal, engine_name: str, gpus: str | None, ray_address: str | None, config,
                slugs: tuple[str, ...], default_gpus: str, in_process=None):
    """The engine the options name, said in one line. `in_process` (a backend already made) serves the
    local engine's single-GPU default without a process of its own."""
    from grader import engines

    if engine_name == "ray":
        slots = int(gpus) if gpus and gpus.isdigit() else None
        made = engines.RayEngine(config, ray_address, slugs, slots)
    elif in_process is not None and gpus is None:
        made = engines.InProcessEngine(config, in_process)
    else:
        emulated = config.backend == "emulator"
        made = engines.LocalEngine(config, engines.gpu_devices(gpus or default_gpus, emulated))
    terminal.err.print(made.describe(), style="dim", highlight=False)
    return made


@cli.command()
@click.argument("folder", type=click.Path(file_okay=False, path_type=Path))
@click.option("--challenge", "slug", default=None,
              help="Grade every file against this challenge. Default: each file against the challenge whose solve "
                   "signature it has; a file whose signature matches none or several is not graded (said, with "
                   "the --challenge that would grade it), and the command exits 2 once the rest are graded.")
@challenges_option
@db_option
@backend_option
@nvcc_option
@cache_option
@sandbox_option
@budget_option
@engine_options
@click.pass_obj
@handle_errors
def grade(terminal: Terminal, folder: Path, slug: str | None, challenges_dir: Path, db: Path, backend: str,
          nvcc: str | None, cache_dir: Path, sandbox_mode: str, timing_budget_s: float | None, engine_name: str,
          gpus: str | None, ray_address: str | None) -> None:
    """Grade every submission in FOLDER (NAME.cu, or NAME/ with one .cu) with the secret seed.

    Results go to the database; a student's source graded before (same hash, grader version and GPU) is
    skipped, so an interrupted batch resumes where it stopped. With --gpus N (or --engine ray) N
    submissions are graded at once, each on a GPU of its own. The last lines are the `grader
    leaderboard` commands that rank what was graded. Exits 0 once every submission is graded (whatever
    its verdict), 2 when a file's challenge could not be told, 70 when the grader failed on a file.
    """
    from grader import batch
    from grader.inert import visible

    forced = spec.load(challenges_dir, slug) if slug else None
    found = batch.discover(folder)
    for skipped in found.skipped:  # the names are the students', so shown inert
        terminal.err.print(f"skipped {visible(str(skipped.path))}: {visible(skipped.reason)}", style="yellow",
                           markup=False, highlight=False)
    submissions = found.require_submissions()
    plan = batch.plan(submissions, () if forced else _known_challenges(terminal, challenges_dir), forced)
    for undecided in plan.undecided:
        terminal.err.print(f"not graded {visible(str(undecided.path))}: {visible(undecided.why)}; {undecided.hint}",
                           style="yellow", markup=False, highlight=False)
    if not plan.jobs:
        raise UsageError(f"no submission in {folder} could be given a challenge",
                         hint="pass --challenge SLUG to grade them all against one challenge (`grader list` names them)")
    summary, gpu = _grade_batch(terminal, plan, folder, challenges_dir, db, backend, nvcc, cache_dir, sandbox_mode,
                                timing_budget_s, engine_name, gpus, ray_address)
    for failure in summary.failures:
        terminal.err.print(f"the grader failed on {visible(str(failure.path))} ({visible(failure.error)}): recorded "
                           f"as GRADER_ERROR for {visible(failure.user)} (not their verdict), graded again by the "
                           "next batch; please report it", style="red", markup=False, highlight=False)
        if click.get_current_context().meta.get(DEBUG_KEY):
            terminal.err.print(failure.traceback, markup=False, highlight=False, soft_wrap=True)
    commands = [_leaderboard_command(c.slug, db, challenges_dir, gpu) for c in plan.challenges]
    report.render_batch_summary(summary, plan, commands, terminal.out)
    if summary.failures:  # every student was graded; the grader's own failures still need a person
        sys.exit(int(ExitCode.INTERNAL))
    if plan.undecided:  # said above, file by file, with the --challenge that grades each
        sys.exit(int(ExitCode.USAGE))


def _grade_batch(terminal: Terminal, plan, folder: Path, challenges_dir: Path, db: Path, backend: str,
                 nvcc: str | None, cache_dir: Path, sandbox_mode: str, timing_budget_s: float | None,
                 engine_name: str, gpus: str | None, ray_address: str | None):
    """The batch's summary, and the GPU it was graded on (None on the emulator)."""
    from grader import batch, pipeline
    from grader.engines import Config

    hidden = [cache_dir, folder.resolve(), db.resolve().parent]
    options = pipeline.Options(Mode.SUBMIT, batch.secret_seed(db), cache_dir, timing_budget_s, secret=True)
    config = Config(challenges_dir, backend, nvcc, cache_dir, sandbox_mode, tuple(hidden), timing_budget_s)
    slugs = tuple(c.slug for c in plan.challenges)
    with store.Store.open(db) as results, RichProgress(terminal.err) as progress:
        progress.stage("starting the grading engine")
        chosen = None
        if engine_name == "local" and gpus is None:
            chosen = choose_backend(backend, nvcc, terminal, make_box(terminal, sandbox_mode, hidden))
            for challenge in plan.challenges:
                check_memory(challenge, chosen)
        engine = make_engine(terminal, engine_name, gpus, ray_address, config, slugs, "1", chosen)
        try:
            return batch.grade_all(plan.jobs, engine, results, options, progress), engine.environment.gpu
        finally:
            engine.close()


def _leaderboard_command(slug: str, db: Path, challenges_dir: Path, gpu: str | None) -> str:
    """The `grader leaderboard` command that shows what a batch graded, as it runs from any folder."""
    words = ["grader", "leaderboard", slug, "--db", str(db)]
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
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "html"]), default="table",
              show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write to this file instead of the terminal (html opens from file:// with no network).")
@click.option("--reveal", is_flag=True,
              help="Instructor view: show the secret seed and the randomized shapes in the reports (hidden "
                   "otherwise, as the board is meant for students). Do not publish what it writes.")
@click.option("--include-practice", is_flag=True,
              help="also count practice runs: local `grader submit --user` runs graded with a public seed")
@click.pass_obj
@handle_errors
def leaderboard(terminal: Terminal, slug: str, challenges_dir: Path, db: Path, gpu: str | None, fmt: str,
                output: Path | None, reveal: bool, include_practice: bool) -> None:
    """The class leaderboard and gradebook of SLUG on one GPU: the best accepted secret-seed submission
    per user, ranked, then every other roster student and every graded user, with the verdict of
    their latest run or "no submission".

    Its reports hide the secret seed and the randomized shapes drawn from it unless --reveal."""
    from grader import leaderboard as boards
    from grader.classroom import roster

    challenge = spec.load(challenges_dir, slug)
    with store.Store.existing(db) as results:
        data = boards.board(results, challenge, gpu, reveal=reveal, include_practice=include_practice,
                            on_roster=roster.students(results))
    if fmt == "table" and output is None:
        report.render_leaderboard(data, terminal.out)
        return
    if fmt == "html":
        from grader import html
        text = html.render(data)
    elif fmt == "json":
        text = json.dumps(data, indent=2)
    elif fmt == "csv":
        text = boards.as_csv(data)
    else:
        console = report.Console(record=True, width=160, file=open(os.devnull, "w"))
        report.render_leaderboard(data, console)
        text = console.export_text()
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
        terminal.err.print(f"wrote {output}", highlight=False)


@cli.command(name="list")
@challenges_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def list_command(terminal: Terminal, challenges_dir: Path, as_json: bool) -> None:
    """List the challenges."""
    found = [spec.load(challenges_dir, slug) for slug in spec.list_challenges(challenges_dir)]
    if as_json:
        click.echo(json.dumps([{"slug": c.slug, "title": c.title, "version": c.version} for c in found], indent=2))
        return
    table = Table("challenge", "title", "version", "signature")
    for c in found:
        table.add_row(c.slug, c.title, str(c.version), f'extern "C" {c.prototype()}')
    terminal.out.print(table)


@cli.command()
@click.argument("slug")
@challenges_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def show(terminal: Terminal, slug: str, challenges_dir: Path, as_json: bool) -> None:
    """Show a challenge: statement, signature, tolerance and shapes."""
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
    out.print(f"[bold]tolerance[/]  max scaled error {c.tolerance.max_scaled_error:g}, "
              f"relative Frobenius {c.tolerance.max_relative_frobenius:g}")
    out.print(f"[bold]functional shapes[/] (v{c.functional_version})  " + ", ".join(s.label() for s in c.functional))
    r = c.randomized
    out.print(f"[bold]randomized[/]  {r.count} shapes from the seed, " +
              ", ".join(f"{d} in [{lo}, {hi}]" for d, (lo, hi) in r.ranges.items()))
    out.print(f"[bold]performance shapes[/] (v{c.performance_version})  " + ", ".join(s.label() for s in c.performance))
    out.print(_limits_text(c.limits), highlight=False)


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


def _challenge_json(c: spec.Challenge) -> dict:
    return {
        "slug": c.slug, "title": c.title, "version": c.version, "signature": f'extern "C" {c.prototype()}',
        "parameters": [{"name": p.name, "type": p.ctype.text, "role": p.role.value if p.role else None,
                        "shape": list(p.shape)} for p in c.params],
        "tolerance": {"max_scaled_error": c.tolerance.max_scaled_error,
                      "max_relative_frobenius": c.tolerance.max_relative_frobenius},
        "functional": {"version": c.functional_version, "cases": [dict(s.dims) for s in c.functional]},
        "randomized": {"count": c.randomized.count, "ranges": c.randomized.ranges,
                       "max_flops": c.randomized.max_flops, "max_bytes": c.randomized.max_bytes},
        "performance": {"version": c.performance_version,
                        "cases": [dict(s.dims, name=s.name) for s in c.performance]},
        "limits": {"compile_s": c.limits.compile_s, "case_s": c.limits.case_s,
                   "timing_budget_s": c.limits.timing_budget_s, "job_s": c.limits.job_s},
        "baseline": c.baseline_label,
    }


@cli.command()
@click.argument("slug")
@click.argument("dest", type=click.Path(dir_okay=False, path_type=Path))
@challenges_option
@click.option("--force", is_flag=True, help="Overwrite DEST if it exists.")
@click.pass_obj
@handle_errors
def init(terminal: Terminal, slug: str, dest: Path, challenges_dir: Path, force: bool) -> None:
    """Write the challenge's starter file to DEST (e.g. solutions/mine.cu)."""
    c = spec.load(challenges_dir, slug)
    if dest.exists() and not force:
        raise UsageError(f"{dest} already exists", hint="choose another path, or pass --force to overwrite it")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(c.starter_path, dest)
    terminal.out.print(f"wrote {dest}; next: [bold]grader run {dest}[/] (correctness) or "
                       f"[bold]grader submit {dest}[/] (correctness and timing)", highlight=False)


# -- the class server ------------------------------------------------------------------------------------

def _challenges_served(challenges_dir: Path, slugs: tuple[str, ...]) -> dict:
    chosen = slugs or tuple(spec.list_challenges(challenges_dir))
    return {slug: spec.load(challenges_dir, slug) for slug in chosen}


def _resolve_backend(terminal: Terminal, backend: str) -> str:
    """auto as what it means here, once, so every grading process grades alike."""
    from grader import device

    if backend != "auto":
        return backend
    if device.count() > 0:
        return "cuda"
    terminal.err.print("[yellow]no usable GPU: grading on the CPU emulator (correctness only, no timings)[/]",
                       highlight=False)
    return "emulator"


@contextlib.contextmanager
def _serving_lock(db: Path):
    """One server per database: a second would claim the same queue and requeue the first's running jobs."""
    import fcntl

    db.parent.mkdir(parents=True, exist_ok=True)
    with open(db.with_name(db.name + ".serve-lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            raise UsageError(f"another `grader serve` is using {db}",
                             hint="stop it first, or serve another class with another --db") from error
        yield


@cli.command()
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), required=True,
              envvar="GRADER_DB", help="The class's results database (roster, queue, runs); created if missing.")
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
@click.option("--max-pending", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Submissions a student may have waiting or being graded, all challenges together "
                   "(they are graded one at a time, however many GPUs grade).")
@click.option("--hourly-cap", type=click.IntRange(1, 10000), default=30, show_default=True,
              help="Submissions a student may make per hour.")
@click.option("--max-upload-kb", type=click.IntRange(1, 1024), default=256, show_default=True,
              help="Largest source file accepted, in KiB.")
@click.pass_obj
@handle_errors
def serve(terminal: Terminal, db: Path, host: str, port: int, backend: str, engine_name: str, gpus: str | None,
          ray_address: str | None, slugs: tuple[str, ...], challenges_dir: Path, nvcc: str | None, cache_dir: Path,
          sandbox_mode: str, timing_budget_s: float | None, max_pending: int, hourly_cap: int,
          max_upload_kb: int) -> None:
    """Serve a class: students submit over HTTP with their tokens, the leaderboard is live.

    \b
    grader serve --db class.sqlite3                 # then open http://127.0.0.1:8000/
    grader roster add alice --db class.sqlite3      # prints alice's token (last line)
    grader submit mine.cu --server http://HOST:8000 --token TOKEN

    Submissions wait in a queue in the database (nothing is lost when the server stops; a job that was
    being graded is graded again at the next start, and kept once). They are graded with the class's
    secret seed, round-robin between students, one grading process per GPU (--gpus), or on Ray actors
    (--engine ray). Give yourself an instructor token (`grader roster add NAME --instructor`) for the
    gradebook pages; deadlines: `grader deadline`."""
    import logging

    import uvicorn

    from grader import batch
    from grader.classroom import app as apps, dispatch, queue
    from grader.engines import Config

    challenges = _challenges_served(challenges_dir, slugs)
    limits = queue.Limits(max_pending, hourly_cap, max_upload_kb * 1024)
    with _serving_lock(db), apps.listening_socket(host, port) as listener, store.Store.open(db) as results:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
        returned = queue.requeue_running(results)
        if returned:
            terminal.err.print(f"{returned} job(s) left running by the last server go back in the queue", highlight=False)
        backend = _resolve_backend(terminal, backend)
        hidden = (cache_dir, db.parent)
        config = Config(challenges_dir, backend, nvcc, cache_dir, sandbox_mode, hidden, timing_budget_s)
        default_gpus = "all" if backend == "cuda" else "1"
        engine = make_engine(terminal, engine_name, gpus, ray_address, config, tuple(challenges), default_gpus)
        try:
            served = dispatch.Class(challenges, batch.secret_seed(db))
            dispatcher = dispatch.Dispatcher(db, engine, served)
            settings = apps.Settings(db, challenges, limits, engine.describe())
            application = apps.create_app(settings, dispatcher)
            where = f"[{host}]" if ":" in host else host
            terminal.err.print(f"serving {', '.join(challenges)} at http://{where}:{listener.getsockname()[1]}/ "
                               "(Ctrl-C stops; queued jobs wait for the next start)", highlight=False)
            server = uvicorn.Server(uvicorn.Config(application, log_level="warning", access_log=False))
            with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C is how a server is stopped: not an error
                server.run(sockets=[listener])
        finally:
            engine.close()
    if not server.started:  # uvicorn logged why; its own exit code (3) means "invalid challenge" here
        raise RuntimeError("the web server did not start")


@cli.group(cls=GraderGroup)
def roster() -> None:
    """Who may submit to the class server: add students, import a class list, list it."""


roster_db = click.option("--db", type=click.Path(dir_okay=False, path_type=Path, resolve_path=True), required=True,
                         envvar="GRADER_DB", help="The class's results database.")


@roster.command(name="add")
@click.argument("name")
@roster_db
@click.option("--instructor", is_flag=True, help="An instructor: sees the gradebook and every report.")
@click.option("--new-token", is_flag=True,
              help="NAME is on the roster already and lost their token: replace it (the old one stops working; "
                   "their role stays). A name not on the roster is refused, not added.")
@click.pass_obj
@handle_errors
def roster_add(terminal: Terminal, name: str, db: Path, instructor: bool, new_token: bool) -> None:
    """Add NAME and print their token on the last line (shown once: only its hash is kept). A name on
    the roster already is refused unless --new-token."""
    from grader.classroom import roster as people

    role = people.Role.INSTRUCTOR if instructor else people.Role.STUDENT
    with store.Store.open(db) as results:
        if new_token:
            added = people.new_token(results, name, role if instructor else None)
            said = (f"{name} ({added.person.role.value}) is on the roster of {db} already: their token is replaced, "
                    "the old one no longer works; the new one (give it to them, it is not shown again):")
        else:
            added = people.add(results, name, role)
            said = f"{role.value} {name} added to {db}; their token (give it to them, it is not shown again):"
    terminal.err.print(said, highlight=False, markup=False)
    click.echo(added.token)


@roster.command(name="import")
@click.argument("csv_file", type=click.Path(dir_okay=False, path_type=Path, exists=True))
@roster_db
@click.option("--tokens", "tokens_file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write name,token lines to this file (owner-only) instead of the terminal.")
@click.pass_obj
@handle_errors
def roster_import(terminal: Terminal, csv_file: Path, db: Path, tokens_file: Path | None) -> None:
    """Add every student of CSV_FILE (a `name` column, or the first column) and print name,token lines.
    Students already on the roster keep their tokens."""
    from grader.classroom import roster as people

    names = people.read_csv(csv_file)
    lines, kept = ["name,token"], []
    with store.Store.open(db) as results:
        known = {p.name for p in people.people(results)}
        for name in names:
            if name in known:
                kept.append(name)
                continue
            lines.append(f"{name},{people.add(results, name).token}")
    text = "\n".join(lines) + "\n"
    if tokens_file:
        fd = os.open(tokens_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        terminal.err.print(f"wrote {len(lines) - 1} tokens to {tokens_file}", highlight=False)
    else:
        click.echo(text, nl=False)
    if kept:
        terminal.err.print(f"{len(kept)} already on the roster, tokens unchanged: {', '.join(kept[:10])}"
                           + (" …" if len(kept) > 10 else ""), highlight=False, markup=False)


@roster.command(name="list")
@roster_db
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_obj
@handle_errors
def roster_list(terminal: Terminal, db: Path, as_json: bool) -> None:
    """List the roster (names and roles; tokens are never shown again)."""
    from grader.classroom import roster as people

    with store.Store.existing(db) as results:
        found = people.people(results)
    if as_json:
        click.echo(json.dumps([{"name": p.name, "role": p.role.value, "added_at": p.added_at} for p in found], indent=2))
        return
    table = Table("name", "role", "added")
    for p in found:
        table.add_row(p.name, p.role.value, p.added_at[:16].replace("T", " "))
    terminal.out.print(table)
    terminal.err.print(f"{sum(p.role.value == 'student' for p in found)} students", style="dim", highlight=False)


@cli.command()
@click.argument("slug")
@click.argument("when", required=False)
@roster_db
@click.option("--clear", is_flag=True, help="Remove SLUG's deadline.")
@challenges_option
@click.pass_obj
@handle_errors
def deadline(terminal: Terminal, slug: str, when: str | None, db: Path, clear: bool, challenges_dir: Path) -> None:
    """Set SLUG's deadline (WHEN in ISO 8601, e.g. 2026-12-01T23:59; no zone: this machine's), or show it.
    Submissions after it are still graded, and flagged late in the gradebook."""
    import datetime

    from grader.classroom import queue

    spec.load(challenges_dir, slug)
    with store.Store.open(db) as results:
        if clear or when:
            due = None
            if when:
                try:
                    due = datetime.datetime.fromisoformat(when)
                except ValueError as error:
                    raise UsageError(f"{when!r} is not a date and time", hint="write it as 2026-12-01T23:59") from error
                due = due if due.tzinfo else due.astimezone()
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

    token = token or click.prompt("token", hide_input=True)
    checked = client.Login(server.rstrip("/"), token.strip())
    remote = client.Client(checked)
    try:
        me = remote.me()
    finally:
        remote.close()
    client.save(checked)
    terminal.out.print(f"logged in to {checked.server} as {me['name']} ({me['role']}); saved in {client.LOGIN_FILE}",
                       highlight=False, markup=False)


def main() -> None:
    cli(prog_name="grader")
