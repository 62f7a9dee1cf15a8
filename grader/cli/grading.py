"""The grading commands: `run` and `submit` (a file, here or on a class server), `levels` (the reference
ladder on this GPU) and `grade` (a folder of submissions, with seeds derived from the class's secret seed)."""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path

import click

from grader import exitcodes, report, source, spec, store
from grader.cli.boards import leaderboard_command
from grader.cli.classroom import WAIT_TIMEOUT_S, submit_remote
from grader.cli.common import (DEBUG_KEY, DEFAULT_CHALLENGE, DEFAULT_DB, RichProgress, Terminal, _fail,
                               backend_option, budget_option, cache_option, challenges_option, check_memory,
                               check_source, choose_backend, cli, db_option, engine_options, handle_errors,
                               known_challenges, leetgpu_option, libraries_option, load_challenge, make_box,
                               make_engine, nvcc_option, sandbox_option, strict_option)
from grader.cli.leetgpu import OfficialChoice, named_official, official_for
from grader.errors import UsageError
from grader.exitcodes import ExitCode
from grader.libraries import LibraryPolicy
from grader.results import Mode


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
        libraries_option,
        leetgpu_option,
        click.option("--ladder", "ladder_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
                     default=None,
                     help="With an official LeetGPU challenge: the folder of a challenge of the grader's (with "
                          "levels) whose reference ladder to place the submission on. Default: the grader's "
                          "challenge for the same problem, if there is one."),
        strict_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


def _grade(terminal: Terminal, mode: Mode, file: Path, slug: str, challenges_dir: Path, seed: int | None,
           as_json: bool, backend: str, nvcc: str | None, cache_dir: Path, no_cache: bool, sandbox_mode: str,
           sanitize: bool, user: str | None, db: Path | None, leetgpu_dir: Path | None, strict: bool,
           libraries: str, ladder_dir: Path | None, timing_budget_s: float | None = None,
           placement: bool = False) -> None:
    from grader import pipeline

    submitted = check_source(file, slug or DEFAULT_CHALLENGE)
    official = named_official(leetgpu_dir, slug)
    known = known_challenges(terminal, challenges_dir) if not slug else []  # loaded once: each load says what it skips
    if official is None and not slug and leetgpu_dir is not None:
        official = official_for(terminal, submitted, known, leetgpu_dir)
    if official is None and (strict or ladder_dir):
        raise UsageError("--strict and --ladder are for LeetGPU's official challenges",
                         hint="pass --challenge with a folder name of your checkout (see `grader list --leetgpu PATH`)")
    if official is not None:
        ladder = ladder_dir.resolve() if ladder_dir else None
        if ladder is not None and not (ladder / spec.SPEC_FILE).is_file():
            raise UsageError(f"{ladder_dir} holds no {spec.SPEC_FILE}", hint="pass a challenge folder with levels")
        challenge = dataclasses.replace(official, ladder=ladder)
    else:
        challenge = (spec.load(challenges_dir, slug) if slug else
                     _challenge_for(terminal, submitted, known, challenges_dir))
    with contextlib.ExitStack() as stack:
        if no_cache:
            cache_dir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="grader-nocache-")))
        options = pipeline.Options(mode, seed if seed is not None else secrets.randbelow(2**31), cache_dir,
                                   timing_budget_s, libraries=LibraryPolicy(libraries), strict=strict)
        database = db or (DEFAULT_DB if user else None)
        hidden = [cache_dir, file.resolve().parent] + ([database.resolve().parent] if database else [])
        if official is not None:
            hidden.append(official.root.resolve())  # the checkout's tests and references: the grader's, not the box's
        box = make_box(terminal, sandbox_mode, hidden)
        result = _grade_with_progress(terminal, submitted, challenge, options, backend, nvcc, placement, box, sanitize,
                                      challenges_dir)
    if database:
        from grader import job

        with store.Store.open(database) as results:
            run_id = job.keep(results, result, submitted, job.Keeping(user or getpass.getuser(), str(file),
                                                                      secret_seed=False))
        terminal.err.print(f"kept as run {run_id} in {database}", style="dim", highlight=False)
        terminal.err.print("a practice run: graded with a public seed, so not on the class leaderboard (the class "
                           "server and `grader grade` grade with secret seeds); `grader leaderboard "
                           "--include-practice` lists practice runs", style="dim", highlight=False)
    if as_json:
        click.echo(report.as_json(result))
    else:
        report.render(result, terminal.out)
    sys.exit(int(exitcodes.for_verdict(result.verdict)))


def _challenge_for(terminal: Terminal, submitted: source.Source, known: list[spec.Challenge],
                   challenges_dir: Path) -> spec.Challenge:
    """The challenge among `known` the file's solve signature names, said in one line; several: a usage error."""
    from grader import signature

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
    loaded = next((c for c in known if c.slug == DEFAULT_CHALLENGE), None)
    return loaded if loaded is not None else spec.load(challenges_dir, DEFAULT_CHALLENGE)


def _grade_with_progress(terminal: Terminal, submitted: source.Source, challenge: spec.Challenge, options,
                         backend: str, nvcc: str | None, placement: bool, box, sanitize: bool = False,
                         challenges_dir: Path | None = None):
    """The job, through an engine as a batch's and the server's are (this process, this backend): a
    failure that would fail every job is raised; the grader's own failure on this file is its
    GRADER_ERROR report (the traceback with --debug)."""
    from grader import engines, job, pipeline

    with RichProgress(terminal.err) as progress:
        progress.stage("starting the backend")
        chosen = choose_backend(backend, nvcc, terminal, box)
        leetgpu_dir = ladder = None
        if isinstance(challenge, OfficialChoice):
            progress.stage("loading the official challenge and its cases (PyTorch)")
            leetgpu_dir, ladder = challenge.root, challenge.ladder_for(challenges_dir)
            made = challenge.made(options.seed, chosen.name, ladder)
            if isinstance(made, str):  # why it cannot be graded here
                return pipeline.unsupported(submitted.display_path, challenge.slug, made, chosen.environment(), options)
            challenge = made
        check_memory(challenge, chosen)
        if sanitize and not chosen.measures_time:
            raise UsageError("--sanitize needs a GPU", hint="the CPU emulator finds races by itself (RACE verdicts)")
        config = engines.Config(challenges_dir or challenge.root.parent, backend, nvcc, options.cache_dir,
                                timing_budget_s=options.timing_budget_s, placement=placement, leetgpu=leetgpu_dir,
                                strict=options.strict, libraries=options.libraries.value, ladder=ladder)
        task = engines.Task(0, submitted, challenge.slug, options.seed, secret=False, mode=options.mode,
                            sanitize=sanitize)
        started = time.perf_counter()
        engine = engines.InProcessEngine(config, chosen, progress)
        outcome = engine.submit(task).result()
    if outcome.report is None and outcome.fatal is None and click.get_current_context().meta.get(DEBUG_KEY):
        terminal.err.print(outcome.traceback or "", markup=False, highlight=False, soft_wrap=True)
    return job.report_of(outcome, submitted.display_path, challenge, engine.environment, options,
                         time.perf_counter() - started)


LOCAL_ONLY = ("seed", "backend", "nvcc", "no_cache", "user", "db", "sanitize", "sandbox_mode", "timing_budget_s", "strict",
              "libraries", "placement")
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
@click.option("--wait-timeout", "wait_timeout_s", type=click.FloatRange(min=1), default=WAIT_TIMEOUT_S,
              metavar="SECONDS", show_default=True, help="With --server: wait at most this many seconds for the report; then say "
                                      "the submission is stored, where to see it, and exit 7.")
@click.pass_context
@handle_errors
def submit(ctx: click.Context, server: str | None, token: str | None, no_wait: bool, wait_timeout_s: float,
           **kwargs) -> None:
    """Grade FILE fully: correctness on every case, timing against the baseline, and its level.

    With --server, FILE goes to the class server, which grades it on hidden shapes of its own; this
    waits with progress, prints the same report (secret cases shown as "hidden case N") and exits with
    the same code a local run would. Without it, `--user NAME` keeps a practice run in a local
    database (graded with a public seed, so not on the class leaderboard)."""
    terminal = ctx.obj
    if server is None:
        waits = ctx.get_parameter_source("wait_timeout_s") not in (None, click.core.ParameterSource.DEFAULT)
        if no_wait or token or waits:
            raise UsageError("--no-wait, --wait-timeout and --token are for --server",
                             hint="pass --server URL, or drop them")
        _grade(terminal, Mode.SUBMIT, **kwargs)
        return
    chosen = [name for name in LOCAL_ONLY
              if ctx.get_parameter_source(name) not in (None, click.core.ParameterSource.DEFAULT)]
    if chosen:
        flags = ", ".join("--" + name.replace("_mode", "").replace("_s", "").replace("_", "-") for name in chosen)
        raise UsageError(f"{flags}: the class server chooses how it grades", hint="drop them, or grade here without --server")
    submit_remote(terminal, kwargs["file"], kwargs["slug"], kwargs["as_json"], server, token, no_wait,
                  wait_timeout_s)



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
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=1, show_default=True,
              help="Seed for the inputs (a placement that measures the ladder uses the default).")
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
@libraries_option
@leetgpu_option
@strict_option
@engine_options
@click.pass_obj
@handle_errors
def grade(terminal: Terminal, folder: Path, slug: str | None, challenges_dir: Path, db: Path, backend: str,
          nvcc: str | None, cache_dir: Path, sandbox_mode: str, timing_budget_s: float | None, libraries: str,
          leetgpu_dir: Path | None, strict: bool, engine_name: str, gpus: str | None, ray_address: str | None,
          ray_insecure: bool) -> None:
    """Grade every submission in FOLDER (NAME.cu, or NAME/ with one .cu), each with its own secret seed.

    Results go to the database; a student's source graded before (same hash, grader version and GPU) is
    skipped, so an interrupted batch resumes where it stopped. With --gpus N (or --engine ray) N
    submissions are graded at once, each on a GPU of its own. The last lines are the `grader
    leaderboard` commands that rank what was graded. Exits 0 once every submission is graded (whatever
    its verdict), 2 when a file's challenge could not be told, 70 when the grader failed on a file.
    """
    from grader import batch, leetgpu
    from grader.inert import visible

    forced = load_challenge(challenges_dir, slug, leetgpu_dir) if slug else None
    official = forced is not None and forced.tolerance.allclose is not None
    root = leetgpu.checkout_root(leetgpu_dir) if official else None
    if strict and not official:
        raise UsageError("--strict is for LeetGPU's official challenges",
                         hint="pass --challenge with a folder name of your checkout and --leetgpu")
    found = batch.discover(folder)
    for skipped in found.skipped:  # the names are the students', so shown inert
        terminal.err.print(f"skipped {visible(str(skipped.path))}: {visible(skipped.reason)}", style="yellow",
                           markup=False, highlight=False)
    submissions = found.require_submissions()
    plan = batch.plan(submissions, () if forced else known_challenges(terminal, challenges_dir), forced)
    for undecided in plan.undecided:
        terminal.err.print(f"not graded {visible(str(undecided.path))}: {visible(undecided.why)}; {undecided.hint}",
                           style="yellow", markup=False, highlight=False)
    if not plan.jobs:
        raise UsageError(f"no submission in {folder} could be given a challenge",
                         hint="pass --challenge SLUG to grade them all against one challenge (`grader list` names them)")
    summary, gpu = _grade_batch(terminal, plan, folder, challenges_dir, db, backend, nvcc, cache_dir, sandbox_mode,
                                timing_budget_s, engine_name, gpus, ray_address, ray_insecure, libraries, root, strict)
    for failure in summary.failures:
        terminal.err.print(f"the grader failed on {visible(str(failure.path))} ({visible(failure.error)}): recorded "
                           f"as GRADER_ERROR for {visible(failure.user)} (not their verdict), graded again by the "
                           "next batch; please report it", style="red", markup=False, highlight=False)
        if click.get_current_context().meta.get(DEBUG_KEY):
            terminal.err.print(failure.traceback, markup=False, highlight=False, soft_wrap=True)
    commands = [leaderboard_command(c.slug, db, challenges_dir, gpu, root) for c in plan.challenges]
    report.render_batch_summary(summary, plan, commands, terminal.out)
    if summary.failures:  # every student was graded; the grader's own failures still need a person
        sys.exit(int(ExitCode.INTERNAL))
    if plan.undecided:  # said above, file by file, with the --challenge that grades each
        sys.exit(int(ExitCode.USAGE))


def _grade_batch(terminal: Terminal, plan, folder: Path, challenges_dir: Path, db: Path, backend: str,
                 nvcc: str | None, cache_dir: Path, sandbox_mode: str, timing_budget_s: float | None,
                 engine_name: str, gpus: str | None, ray_address: str | None, ray_insecure: bool = False,
                 libraries: str = "none", leetgpu_root: Path | None = None, strict: bool = False):
    """The batch's summary, and the GPU it was graded on (None on the emulator)."""
    from grader import batch, pipeline
    from grader.engines import Config

    hidden = [cache_dir, folder.resolve(), db.resolve().parent]
    hidden += [leetgpu_root] if leetgpu_root else []
    options = pipeline.Options(Mode.SUBMIT, batch.secret_seed(db), cache_dir, timing_budget_s,
                               libraries=LibraryPolicy(libraries), strict=strict, secret=True)
    config = Config(challenges_dir, backend, nvcc, cache_dir, sandbox_mode, tuple(hidden), timing_budget_s,
                    libraries=libraries, leetgpu=leetgpu_root, strict=strict)
    slugs = tuple(c.slug for c in plan.challenges)
    with store.Store.open(db) as results, RichProgress(terminal.err) as progress:
        progress.stage("starting the grading engine")
        chosen = None
        if engine_name == "local" and gpus is None:
            chosen = choose_backend(backend, nvcc, terminal, make_box(terminal, sandbox_mode, hidden))
            for challenge in plan.challenges:
                check_memory(challenge, chosen)
        engine = make_engine(terminal, engine_name, gpus, ray_address, config, slugs, "1", chosen, ray_insecure)
        try:
            return batch.grade_all(plan.jobs, engine, results, options, progress), engine.environment.gpu
        finally:
            engine.close()
