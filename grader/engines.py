"""Where grading jobs run. Every engine runs `run_task` (the job layer, grader.job) on a `Task` and
hands back an `Outcome`; the dispatcher (the server) or the batch keeps what comes back.

- `InProcessEngine`: in the calling process, on a backend it already has (`grader grade` on one GPU).
- `LocalEngine`: one long-lived process per GPU, each seeing only its GPU (CUDA_VISIBLE_DEVICES set
  before CUDA starts in it), or N processes on the emulator. The default; needs nothing installed.
- `RayEngine` (`pip install -e '.[ray]'`): each job a Ray task on an actor that holds one GPU (one CPU
  on the emulator), on a local Ray instance or a cluster. A node whose grader or challenge differs from
  the server's is refused, by a probe on every node when the engine starts and by every task itself.

Grading processes never touch the results database: each job's seed reaches them inside the task
(a secret run's derived from the class's secret seed by the caller, grader.seeds: the class's seed
itself never leaves the process that owns the database), and only that process keeps reports.
"""

from __future__ import annotations

import concurrent.futures
import functools
import hashlib
import multiprocessing
import os
import threading
import traceback
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from grader import __version__
from grader.errors import Failure, GraderError, UsageError
from grader.libraries import LibraryPolicy
from grader.results import GradeReport, Mode
from grader.source import Source


@dataclass(frozen=True)
class Config:
    """How every job of one server or batch is graded (the command line's choices)."""

    challenges_dir: Path
    backend: str = "auto"
    nvcc: str | None = None
    cache_dir: Path = Path.home() / ".cache" / "cuda-grader"
    sandbox_mode: str = "auto"
    hidden: tuple[Path, ...] = ()
    """Folders the sandbox hides from submissions besides the private ones (cache, database folder)."""
    timing_budget_s: float | None = None
    placement: bool = True
    leetgpu: Path | None = None
    """A checkout of LeetGPU's official challenges: a task naming one of its folders grades against it."""
    strict: bool = False
    """An official challenge's checks beyond LeetGPU's judge count in the verdict (pipeline.Options.strict)."""
    ladder: Path | None = None
    """A folder of the grader's challenges whose ladder official challenges are placed on (default: the one of
    the same problem, if any)."""
    libraries: str = "none"
    """The library policy (grader.libraries.LibraryPolicy's value) every job is graded under."""


@dataclass(frozen=True)
class Task:
    key: int
    """The caller's name for the job (a submission id, an index into a batch)."""
    source: Source
    challenge: str
    seed: int
    """The job's own seed: for a secret run, derived for this submission from the class's (grader.seeds)."""
    secret: bool
    grader_version: str = __version__
    fingerprint: str | None = None
    """The challenge's fingerprint where the task was made: a worker with another one refuses it."""
    mode: Mode = Mode.SUBMIT
    """`grader run` asks for correctness only; the batch and the server always submit."""
    sanitize: bool = False
    """Also run the functional cases under compute-sanitizer (`grader run/submit --sanitize`, GPU only)."""


@dataclass(frozen=True)
class Outcome:
    key: int
    report: GradeReport | None
    error: str | None = None
    """The grader's own failure on this job (type and message), when there is no report."""
    traceback: str | None = None
    failure: Failure = Failure.BUG
    """Which kind of grader failure `error` is (when there is no report)."""
    fatal: GraderError | None = None
    """A failure that would repeat for every job (no GPU, a broken challenge, another grader version):
    not the student's fault, so never kept as theirs; `raise_fatal` raises it where the caller is."""

    def raise_fatal(self) -> None:
        if self.fatal is not None:
            raise self.fatal


class VersionMismatch(GraderError):
    """A worker whose grader or challenge differs from the server's."""


class Engine(Protocol):
    slots: int
    name: str

    def submit(self, task: Task) -> concurrent.futures.Future: ...

    def describe(self) -> str: ...

    def close(self) -> None: ...


# -- what runs where the job runs ----------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def _challenge(challenges_dir: Path, slug: str):
    from grader import spec
    return spec.load(challenges_dir, slug)


def _known(config: Config, slug: str):
    """What a fingerprint reads of a challenge (its slug, version and files), without PyTorch for an official one."""
    from grader import leetgpu

    found = leetgpu.find(config.leetgpu, slug) if config.leetgpu is not None else None
    if found is not None:
        return types.SimpleNamespace(slug=slug, version=1, root=found.folder)
    return _challenge(config.challenges_dir, slug)


def task_challenge(config: Config, task: Task, backend_name: str):
    """The challenge a task names: an official one of the checkout (its cases drawn with the task's seed, on
    the backend's device), else one of the grader's own."""
    from grader import leetgpu
    from grader.leetgpu import official

    if config.leetgpu is not None and leetgpu.find(config.leetgpu, task.challenge) is not None:
        ladder = config.ladder or official.same_problem(config.challenges_dir, task.challenge)
        return official.challenge(config.leetgpu, task.challenge, task.seed, official.device_for(backend_name), ladder)
    return _challenge(config.challenges_dir, task.challenge)


def fingerprint(challenge) -> str:
    """What a challenge grades with: its definition and reference code (levels excluded: a ladder file
    changes placement, which the worker measures itself)."""
    digest = hashlib.sha256(f"{challenge.slug}:{challenge.version}".encode())
    for name in ("challenge.yaml", "reference.py", "challenge.py"):  # challenge.py: an official one's
        path = challenge.root / name
        if path.is_file():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


_BACKENDS: dict[tuple, object] = {}


def _backend(config: Config):
    """This process's backend, made once: a GPU process keeps its CUDA context and cuBLAS handle."""
    key = (config.backend, config.nvcc, config.sandbox_mode, config.hidden)
    if key not in _BACKENDS:
        from grader import backends, sandbox
        box = sandbox.make(sandbox.SandboxMode(config.sandbox_mode), list(config.hidden))
        _BACKENDS[key] = backends.choose(config.backend, config.nvcc, box)
    return _BACKENDS[key]


def run_task(config: Config, task: Task, backend=None, progress=None) -> Outcome:
    """Grade one task through the job layer; never raises. A GraderError (no GPU, a broken challenge,
    a version mismatch) is fatal: it would fail every job alike. `progress` (in this process only) hears
    the job's stages."""
    from grader import job, pipeline
    from grader.run import WorkerKilled

    try:
        if task.grader_version != __version__:
            raise VersionMismatch(f"this worker runs grader {__version__}, the server {task.grader_version}",
                                  hint="install the same grader version on every node")
        chosen = backend or _backend(config)
        challenge = task_challenge(config, task, chosen.name)
        if task.fingerprint and fingerprint(challenge) != task.fingerprint:
            raise VersionMismatch(f"this worker's {task.challenge} (v{challenge.version}, fingerprint "
                                  f"{fingerprint(challenge)}) differs from the server's ({task.fingerprint})",
                                  hint="install the same challenges on every node")
        options = pipeline.Options(task.mode, task.seed, config.cache_dir, config.timing_budget_s,
                                   libraries=LibraryPolicy(config.libraries), strict=config.strict, secret=task.secret)
        report = job.grade_job(job.Job(task.source, challenge, options, config.placement, task.sanitize), chosen,
                               progress)
        return Outcome(task.key, report)
    except GraderError as error:
        return Outcome(task.key, None, error.message, traceback.format_exc(), fatal=error)
    except WorkerKilled as killed:
        return Outcome(task.key, None, str(killed), traceback.format_exc(), failure=Failure.LOST)
    except Exception as error:  # a grader bug on this one job: the caller keeps it as the grader's failure
        return Outcome(task.key, None, f"{type(error).__name__}: {error}", traceback.format_exc())


def environment(config: Config):
    """Where this process grades (its backend made now, so a grading process is warm before its first
    job): an Environment, or a fatal Outcome when no backend can start here."""
    try:
        return _backend(config).environment()
    except GraderError as error:
        return Outcome(-1, None, error.message, traceback.format_exc(), fatal=error)


def _ready(answer):
    if isinstance(answer, Outcome):
        answer.raise_fatal()
    return answer


def same_as_here(mine: dict, theirs: dict, where: str) -> None:
    """VersionMismatch unless a worker's `probe` answer matches this process's."""
    if theirs["grader"] != mine["grader"] or theirs["challenges"] != mine["challenges"]:
        raise VersionMismatch(
            f"Ray node {where} ({theirs['host']}) runs grader {theirs['grader']} with challenges "
            f"{theirs['challenges']}; this server runs {mine['grader']} with {mine['challenges']}",
            hint="install the same grader and challenges on every node, or take that node out of the cluster")


def probe(config: Config, slugs: tuple[str, ...]) -> dict:
    """What a worker has: its grader version and the fingerprints of the challenges asked about."""
    found = {}
    for slug in slugs:
        try:
            found[slug] = fingerprint(_known(config, slug))
        except GraderError as error:
            found[slug] = f"unloadable: {error.message}"
    return {"grader": __version__, "challenges": found, "host": os.uname().nodename}


# -- engines -------------------------------------------------------------------------------------------

class InProcessEngine:
    """Runs each job at once, in the caller's thread, on the caller's backend (`grader run` and `submit`,
    `grader grade` on one GPU), telling `progress` the job's stages."""

    name = "local"
    slots = 1

    def __init__(self, config: Config, backend, progress=None):
        self.config, self.backend, self.progress = config, backend, progress
        self.environment = backend.environment()

    def submit(self, task: Task) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        future.set_result(run_task(self.config, task, self.backend, self.progress))
        return future

    def describe(self) -> str:
        return f"local engine: this process, {self.backend.name} backend"

    def close(self) -> None:
        pass


PR_SET_PDEATHSIG = 1


def _pin(device: int | None) -> None:
    """In a fresh grading process, before CUDA starts: see only this GPU, and die with the server (a
    server killed with -9 must not leave grading processes behind, still holding a GPU)."""
    if device is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = str(device)
    try:
        import ctypes
        import signal
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pool's own pipe still ends it, later
        pass


class LocalEngine:
    """One grading process per slot (per GPU), started when the engine starts; a slot runs one job at a
    time. A process that dies is replaced, and its job comes back lost (Failure.LOST): the submission
    runs in a sandboxed worker of that process, never in it, so its death is never the submission's."""

    name = "local"

    def __init__(self, config: Config, devices: list[int | None]):
        if not devices:
            raise UsageError("the local engine needs at least one GPU or worker")
        self.config, self.devices = config, devices
        self.pools = [self._pool(d) for d in devices]
        self.busy = [False] * len(devices)
        self.slots = len(devices)
        try:  # every process makes its backend now: errors (no GPU) show at start, and the first job is warm
            answers = [pool.submit(environment, config) for pool in self.pools]
            self.environment = [_ready(a.result()) for a in answers][0]
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _pool(device: int | None) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                      initializer=_pin, initargs=(device,))

    def submit(self, task: Task) -> concurrent.futures.Future:
        slot = self.busy.index(False)  # the caller never has more jobs out than slots
        self.busy[slot] = True
        try:
            inner = self.pools[slot].submit(run_task, self.config, task)
        except concurrent.futures.BrokenExecutor:
            self.pools[slot] = self._pool(self.devices[slot])
            inner = self.pools[slot].submit(run_task, self.config, task)
        outer: concurrent.futures.Future = concurrent.futures.Future()
        inner.add_done_callback(functools.partial(self._finished, slot, task, outer))
        return outer

    def _finished(self, slot: int, task: Task, outer: concurrent.futures.Future, inner) -> None:
        try:
            outcome = inner.result()
        except concurrent.futures.process.BrokenProcessPool as error:  # killed, or crashed: never the submission's
            self.pools[slot] = self._pool(self.devices[slot])
            outcome = Outcome(task.key, None, f"the grading process died ({error})", traceback.format_exc(),
                              failure=Failure.LOST)
        except Exception as error:
            outcome = Outcome(task.key, None, f"{type(error).__name__}: {error}", traceback.format_exc())
        self.busy[slot] = False
        outer.set_result(outcome)

    def describe(self) -> str:
        where = ", ".join("emulator" if d is None else f"GPU {d}" for d in self.devices)
        return f"local engine: {self.slots} grading process(es) ({where})"

    def close(self) -> None:
        for pool in self.pools:
            pool.shutdown(wait=False, cancel_futures=True)


class _RayGrader:
    """A Ray actor that holds one GPU (one CPU on the emulator) and its backend, made once: each job is
    an actor task on it. A plain task per job would pay a new process, CuPy and the backend each time
    (3 s a job on an H200, measured), and a reused task worker keeps the CUDA context of its first GPU
    while Ray may hand it another."""

    def __init__(self, config: Config):
        self.config = config
        self.ready = environment(config)

    def environment(self):
        return self.ready

    def grade(self, task: Task) -> Outcome:
        return run_task(self.config, task)


class RayEngine:
    """Grading on Ray: one actor per GPU of the cluster (or `slots` of them), each job a task on a free
    one. Ray places the actors on the nodes; the caller keeps at most `slots` jobs out. Ray is reached
    through grader.ray_access: a local cluster it starts requires a token, and a cluster it joins must
    (unless `insecure`). A Ray this process had already started is used as it is, and left running."""

    name = "ray"

    def __init__(self, config: Config, address: str | None, slugs: tuple[str, ...], slots: int | None = None,
                 insecure: bool = False):
        try:
            import ray
        except ImportError as error:
            raise UsageError("--engine ray needs Ray", hint="pip install -e '.[ray]' (or pip install 'ray>=2.52')") from error
        from grader import ray_access

        self.ray, self.config, self.connected = ray, config, None
        if not ray.is_initialized():
            self.connected = ray_access.connect(ray, address, insecure, include_dashboard=False, log_to_driver=False,
                                                runtime_env={"env_vars": {"PYTHONUNBUFFERED": "1"}})
        try:
            self._start(slugs, slots)
        except BaseException:
            ray_access.disconnect(ray, self.connected)
            raise

    def _start(self, slugs: tuple[str, ...], slots: int | None) -> None:
        ray, config = self.ray, self.config
        self.emulated = config.backend == "emulator"
        resource = "CPU" if self.emulated else "GPU"
        available = int(ray.cluster_resources().get(resource, 0))
        if available < 1:
            raise UsageError(f"the Ray cluster has no {resource}", hint="start Ray on a GPU machine, or use --backend emulator")
        self.slots = min(slots or available, available)
        self.check_nodes(slugs)
        gpus, cpus = (0, 1) if self.emulated else (1, 0)
        actor = ray.remote(num_gpus=gpus, num_cpus=cpus, max_restarts=1)(_RayGrader)
        self.free = [actor.remote(config) for _ in range(self.slots)]
        self.lock = threading.Lock()
        self.environment = [_ready(e) for e in ray.get([a.environment.remote() for a in self.free])][0]

    def check_nodes(self, slugs: tuple[str, ...]) -> None:
        """Ask every live node what it has; refuse to start when one differs from this process."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        mine = probe(self.config, slugs)
        asking = self.ray.remote(num_cpus=0)(probe)
        nodes = [n for n in self.ray.nodes() if n.get("Alive")]
        answers = self.ray.get([asking.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
                                .remote(self.config, slugs) for n in nodes])
        for node, theirs in zip(nodes, answers):
            same_as_here(mine, theirs, node.get("NodeManagerAddress", "?"))
        self.nodes = len(nodes)

    def submit(self, task: Task) -> concurrent.futures.Future:
        with self.lock:
            grader = self.free.pop()  # the caller never has more jobs out than slots
        outer: concurrent.futures.Future = concurrent.futures.Future()
        inner = grader.grade.remote(task).future()
        inner.add_done_callback(functools.partial(self._finished, grader, task, outer))
        return outer

    def _finished(self, grader, task: Task, outer: concurrent.futures.Future, inner) -> None:
        try:
            outcome = inner.result()
        except Exception as error:  # the actor died (its node went away): Ray restarts it once
            outcome = Outcome(task.key, None, f"the Ray grading actor failed ({type(error).__name__}: {error})",
                              traceback.format_exc(), failure=Failure.LOST)
        with self.lock:
            self.free.append(grader)
        outer.set_result(outcome)

    def describe(self) -> str:
        what = "CPU" if self.emulated else "GPU"
        where = f" ({self.connected.describe()})" if self.connected else ""
        return f"ray engine: {self.slots} grading actor(s), one {what} each, on {self.nodes} node(s){where}"

    def close(self) -> None:
        from grader import ray_access

        for grader in self.free:
            self.ray.kill(grader)
        ray_access.disconnect(self.ray, self.connected)


def gpu_devices(spec: str, emulated: bool) -> list[int | None]:
    """`--gpus all|N` as the devices of a local engine: all GPUs (or N of them); on the emulator, N
    grading processes (default 1: one emulated grading already uses every core)."""
    if emulated:
        return [None] * (1 if spec == "all" else _positive(spec))
    from grader import device
    count = device.count()
    if count < 1:
        raise UsageError("no GPU is visible", hint="use --backend emulator, or check nvidia-smi")
    wanted = count if spec == "all" else _positive(spec)
    if wanted > count:
        raise UsageError(f"--gpus {wanted}: only {count} GPU(s) here")
    return list(range(wanted))


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise UsageError(f"--gpus {text!r}: expected 'all' or a positive number")
    return value

