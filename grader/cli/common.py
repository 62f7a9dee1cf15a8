"""What every command shares: where output goes, progress, errors as messages and exit codes (JSON too),
the `cli` group and its command class, the options several commands take, and the helpers that start a
sandbox, a backend or an engine and say so in one line. The commands themselves are in `grading`,
`boards` and `classroom`; each registers on `cli` from here."""

from __future__ import annotations

import functools
import json
import sys
import traceback
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from grader import __version__, sandbox, source, spec
from grader.errors import GraderError, SpecError, UsageError
from grader.exitcodes import ExitCode
from grader.sandbox import SandboxMode

DEFAULT_CHALLENGES = Path(__file__).resolve().parent.parent / "challenges"
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
            _fail(terminal, error, as_json, **getattr(error, "details", {}))
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
    or busy (retry later), 7 submitted to a class server and stored, no report within
    --wait-timeout (do not submit again), 70 internal error, 130 interrupted.
    With --json (or --format json), stdout is JSON whatever happens: an error is an object
    with error, hint and exit_code.
    """
    ctx.obj = ctx.obj or Terminal()


def challenges_option(command):
    return click.option("--challenges-dir", type=click.Path(file_okay=False, path_type=Path, resolve_path=True),
                        default=DEFAULT_CHALLENGES, show_default=True, envvar="GRADER_CHALLENGES",
                        help="Folder holding one sub-folder per challenge.")(command)


leetgpu_option = click.option(
    "--leetgpu", "leetgpu_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
    envvar="LEETGPU_CHALLENGES",
    help="Your checkout of LeetGPU's official challenges (github.com/AlphaGPU/leetgpu-challenges): its challenges "
         "are listed and shown beside the grader's own, by their folder names (13_histogramming). "
         "Default: $LEETGPU_CHALLENGES.")
libraries_option = click.option(
    "--libraries", type=click.Choice(["none", "block", "cccl"]), default="none", show_default=True,
    help="Which of CUDA's C++ libraries submissions may use: none (LeetGPU's rule), block (CUB's block- and "
         "warp-level collectives), cccl (all of CUB and Thrust). Every report states it; the CPU emulator runs "
         "none of them (UNSUPPORTED where a file uses one the policy allows).")
strict_option = click.option(
    "--strict", is_flag=True,
    help="Official LeetGPU challenges: their checks beyond LeetGPU's judge (values drawn again, outputs filled with "
         "NaN instead of zeros, inputs checked unmodified, thread orders) count in the verdict; without it they are "
         "reported beside it.")
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


def known_challenges(terminal: Terminal, challenges_dir: Path) -> list[spec.Challenge]:
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


def load_challenge(challenges_dir: Path, slug: str, leetgpu_dir: Path | None) -> spec.Challenge:
    """The challenge a command names: an official one of the checkout (`--leetgpu`), its cases drawn from a
    public seed (what listing, boards and batches need of it: its shapes, labels, levels; each job grades on its
    own draw), else one of the grader's own. One that cannot be graded here is a usage error saying why."""
    from grader import leetgpu
    from grader.leetgpu import official

    root = leetgpu.checkout_root(leetgpu_dir) if leetgpu_dir else None
    if root is None or leetgpu.find(root, slug) is None:
        return spec.load(challenges_dir, slug)
    try:
        return official.challenge(root, slug, 0, "cpu", official.same_problem(challenges_dir, slug))
    except official.Unsupported as why:
        raise UsageError(f"{slug} cannot be graded here: {why.message}", hint="choose another challenge") from why


def check_memory(challenge: spec.Challenge, backend) -> None:
    """A SpecError when a shape of the challenge cannot fit the memory the backend's buffers live in (the
    backend knows where that is; the challenge, what its shapes need)."""
    memory = backend.buffer_memory()
    if memory is not None:
        spec.check_fits(challenge, *memory)


def fell_back(terminal: Terminal):
    """What hears why `--backend auto` is not the GPU: it says so in one line (a student expecting timings
    must learn why there are none)."""
    def said(why: str) -> None:
        terminal.err.print(f"[yellow]no usable GPU ({why}); grading on the CPU emulator: "
                           "correctness only, no timings[/]", highlight=False)

    return said


def choose_backend(name: str, nvcc: str | None, terminal: Terminal, box=None):
    """`backends.choose`, saying in one line when auto falls back to the emulator."""
    from grader import backends

    return backends.choose(name, nvcc, box, fell_back(terminal))


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
                     help="The Ray cluster to join (default: start a local Ray, which requires a token). Its token "
                          "comes from RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH or ~/.ray/auth_token; a cluster that takes "
                          "jobs without one is refused."),
        click.option("--ray-insecure", is_flag=True,
                     help="Use a Ray cluster that takes jobs without a token (anyone who reaches it runs code as "
                          "the grader): only where no one else can reach it (SECURITY.md)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def make_engine(terminal: Terminal, engine_name: str, gpus: str | None, ray_address: str | None, config,
                slugs: tuple[str, ...], default_gpus: str, in_process=None, ray_insecure: bool = False):
    """The engine the options name, said in one line. `in_process` (a backend already made) serves the
    local engine's single-GPU default without a process of its own."""
    from grader import engines

    if ray_insecure and engine_name != "ray":
        raise UsageError("--ray-insecure is for --engine ray", hint="drop it, or add --engine ray")
    if engine_name == "ray":
        slots = int(gpus) if gpus and gpus.isascii() and gpus.isdigit() else None
        made = engines.RayEngine(config, ray_address, slugs, slots, insecure=ray_insecure)
    elif in_process is not None and gpus is None:
        made = engines.InProcessEngine(config, in_process)
    else:
        emulated = config.backend == "emulator"
        made = engines.LocalEngine(config, engines.gpu_devices(gpus or default_gpus, emulated))
    terminal.err.print(made.describe(), style="dim", highlight=False)
    return made

