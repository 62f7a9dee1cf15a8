"""Shared fixtures. GPU tests are marked `gpu` and skipped where no GPU is usable (CI)."""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader import kit, source as sources, spec
from grader.results import Mode

ROOT = Path(__file__).resolve().parent.parent
CHALLENGES = ROOT / "challenges"
SUBMISSIONS = Path(__file__).resolve().parent / "submissions"
NAIVE = ROOT / "challenges" / "matmul" / "levels" / "1_naive.cu"


def _gpu_reason() -> str | None:
    from grader import device
    from grader.errors import BackendUnavailable
    try:
        device.query()
    except BackendUnavailable as exc:
        return exc.message
    return None


SLOW = (
    # whole modules that grade through the emulator, start servers, browsers or pip
    "tests/test_emulator_grading.py", "tests/test_hostile.py", "tests/test_box_probes.py", "tests/test_job_bound.py",
    "tests/test_server_load.py", "tests/test_server_cli.py", "tests/test_server_faults.py", "tests/test_server_db_faults.py",
    "tests/test_server_browser.py", "tests/test_class_browser.py", "tests/test_challenge_check.py",
    "tests/test_browser.py", "tests/test_server_secrets.py", "tests/test_server_hardening.py", "tests/test_leetgpu_server.py",
    "tests/test_engine.py", "tests/test_packaging.py", "tests/test_emulator_memory.py", "tests/test_emulator_grid_sync.py",
    # single tests of a second or more (nvcc compiles, emulated gradings, Chromium)
    "tests/test_classroom.py::test_batch_killed_halfway", "tests/test_classroom.py::test_concurrent_submits_all_land",
    "tests/test_secrets.py::test_emulated_runs_are_secret", "tests/test_secrets.py::test_grader_grade_marks",
    "tests/test_html.py::test_a_live_page_in_chromium", "tests/test_cli.py::test_auto_falls_back",
    "tests/test_cli.py::test_emulated_json_report", "tests/test_cli.py::test_unsupported_by_the_emulator",
    "tests/test_sandbox.py::test_the_report_says_what_isolation", "tests/test_store.py::test_concurrent_writers",
    "tests/test_build.py::test_levels_the_emulator_cannot_run", "tests/test_build.py::test_builds_are_cached",
    "tests/test_build.py::test_a_cached_build_changed", "tests/test_build.py::test_a_path_with_quotes",
    "tests/test_build.py::test_compiler_output_is_capped", "tests/test_build.py::test_leetgpu_older_files",
    "tests/test_build.py::test_corpus_build_failures",
)
"""Tests `pytest -m "not slow"` leaves out, so the loop we run while working stays under a minute on a
2-core machine (each measured with --durations on 2026-11-25). The full suite, CI's, runs them all."""


def pytest_collection_modifyitems(config, items):
    gpu_reason = None
    if any("gpu" in item.keywords for item in items):
        gpu_reason = _gpu_reason()
    for item in items:
        if item.nodeid.startswith(SLOW):
            item.add_marker(pytest.mark.slow)
        if "gpu" in item.keywords and gpu_reason:
            item.add_marker(pytest.mark.skip(reason=f"no GPU: {gpu_reason}"))
        if "nvcc" in item.keywords and shutil.which("nvcc") is None:
            item.add_marker(pytest.mark.skip(reason="nvcc is not on PATH"))


@pytest.fixture(scope="session")
def matmul() -> spec.Challenge:
    return spec.load(CHALLENGES, "matmul")


@pytest.fixture(scope="session")
def cuda_backend():
    from grader.backends.cuda import CudaBackend
    return CudaBackend()


def read(path: Path, display_path: str | None = None) -> sources.Source:
    """A submission read as the front ends read it, once, for `pipeline.grade` and `job.Job`."""
    return sources.read(path, display_path)


def text_source(text: str, display_path: str = "x.cu") -> sources.Source:
    """The Source a file holding `text` reads as: for tests that store a run without writing a file."""
    return sources.from_bytes(text.encode(), display_path)


def expectation(path: Path, backend: str = "cuda") -> tuple[str, str | None]:
    """The verdict and optional message a corpus file's header promises on `backend` (`// expect:`,
    `// expect-message:`, and `// expect-emulator:` / `// expect-cuda:`, which override the verdict on one
    backend: UNSUPPORTED for PTX in the emulator; WRONG_ANSWER on a GPU for a race the emulator calls RACE).
    The header is read as `grader check` reads it (grader.kit.expectation)."""
    found = kit.expectation(path)
    return found.verdict_on(backend), found.message_on(backend)


def graded_with(path: Path) -> Mode:
    """`// graded-with: submit` marks a file whose verdict shows only where a submit looks (the timed
    shapes, checked for correctness on a GPU and in the emulator); other files are graded with `run`."""
    return kit.expectation(path, default="").mode


def backends(path: Path) -> set[str]:
    """`// backends: emulator` marks a file whose behaviour on a GPU is undefined (a race, a divergent
    barrier): only the emulator promises a verdict for it. Files without the line run everywhere."""
    return set(kit.expectation(path, default="").backends)


def requirements(path: Path) -> set[str]:
    """`// requires: sandbox`: the verdict holds only where the sandbox is active; `memory cgroup`: only
    where the box's memory can be bounded by a cgroup (a root grader, here)."""
    return set(kit.expectation(path, default="").requires)


HOSTILE = Path(__file__).resolve().parent / "hostile"
LEVELS = sorted((CHALLENGES / "matmul" / "levels").glob("*.cu"))


@dataclass(frozen=True)
class CorpusFile:
    slug: str
    """The challenge the file is graded against."""
    path: Path

    @property
    def id(self) -> str:
        return f"{self.slug}/{self.path.stem}"


def corpus(backend: str, challenge_folders: bool = True) -> list[CorpusFile]:
    """Every challenge's reference ladder (`levels/`) and wrong submissions (`wrong/`), and the submissions
    in tests/submissions/ (matmul's at its top, another challenge's in a folder named after it), as far
    as `backend` promises a verdict. Without `challenge_folders`, only tests/submissions/: the emulator's
    tests grade the challenges' own folders through `grader check` (tests/test_challenge_check.py)."""
    files = [CorpusFile("matmul", p) for p in sorted(SUBMISSIONS.glob("*.cu"))]
    for slug in spec.list_challenges(CHALLENGES):
        files += [CorpusFile(slug, p) for p in sorted((SUBMISSIONS / slug).glob("*.cu"))]
        for folder in ("levels", "wrong") if challenge_folders else ():
            files += [CorpusFile(slug, p) for p in sorted((CHALLENGES / slug / folder).glob("*.cu"))]
    return [f for f in files if backend in backends(f.path)]


@pytest.fixture(scope="session")
def challenge_named():
    """`challenge_named(slug)`: each challenge loaded once per session."""
    loaded: dict[str, spec.Challenge] = {}

    def get(slug: str) -> spec.Challenge:
        if slug not in loaded:
            loaded[slug] = spec.load(CHALLENGES, slug)
        return loaded[slug]

    return get


@contextlib.contextmanager
def write_lock_when(db: Path, ready, timeout_s: float, what: str):
    """Hold the database's write lock, taken at a moment `ready(db_connection)` is true, and yield what it
    returned. While it is held no run can be kept (a run and its queue entry are written under that lock),
    so a process killed inside is killed at that moment whatever the machine's speed: a kill that must land
    mid-job or mid-batch needs no luck. Polls (every 50 ms, up to `timeout_s`) until `ready` is true."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:  # read-write, never create: a database made here first would not be the writer's
            connection = sqlite3.connect(f"file:{db}?mode=rw", uri=True, timeout=60, isolation_level=None)
        except sqlite3.OperationalError:
            connection = None
        try:
            if connection is None:
                raise sqlite3.OperationalError("not made yet")
            connection.execute("BEGIN IMMEDIATE")
            found = ready(connection)
            if found:
                try:
                    yield found
                finally:
                    connection.execute("ROLLBACK")
                return
            connection.execute("ROLLBACK")
        except sqlite3.OperationalError:  # no database or no table yet: the writer has not made them
            pass
        finally:
            if connection is not None:
                connection.close()
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout_s:.0f} s waiting for {what}")
        time.sleep(0.05)
