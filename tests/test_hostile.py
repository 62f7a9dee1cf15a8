"""Broken and hostile submissions: each gets its verdict, nothing it starts outlives the verdict,
nothing it reads leaks, nothing it writes changes a later verdict, and a correct submission graded
right after it is ACCEPTED. Runs through the emulator everywhere (CI included) and through the GPU
where one is usable.

Before each file the harness plants secrets where a submission must never reach them: a private
folder (a C string literal in `secret.h`, an SSH key, the class's database and secret seed, another
student's submission), a variable in the grader's environment. A corpus file names the private
folder as `@PLANTED@`, replaced before grading (so parallel runs never share it), and may write the
control bytes ESC and BEL as `@ESC@` and `@BEL@`. After grading, no
planted token may appear in the report (terminal and JSON), the worker's output, the build log or any
file of the build cache (nor may root's line of the host's /etc/shadow, where the tests can read it);
the host's /dev/shm holds nothing new; every cached artifact still has the hash recorded at publish;
and the rendered report carries no raw control character. While a file runs, a host process carries
a planted token in its command line and a unix socket listens in the host's /run (host_bait).
"""

from __future__ import annotations

import hashlib
import json
import contextlib
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from rich.console import Console

from grader import pipeline, report as reports, sandbox, source as sources
from grader.results import Mode
from grader.verdict import Verdict

from conftest import HOSTILE, NAIVE, backends, expectation, read, requirements

FILES = sorted(HOSTILE.glob("*.cu"))
PLACEHOLDER = "@PLANTED@"


@dataclass(frozen=True)
class Planted:
    root: Path
    """The private folder; hidden from every box."""
    tokens: tuple[str, ...]
    """Strings that exist only in planted files, the grader's environment, a host process's command line
    (host_bait) and the host's /etc/shadow."""
    command_token: str = ""
    """The one in a host process's command line."""


def host_secrets() -> tuple[str, ...]:
    """Root's line of the host's /etc/shadow, where the tests can read it (as root): it reaches no output,
    whatever a file includes or opens."""
    try:
        lines = Path("/etc/shadow").read_text().splitlines()
    except OSError:
        return ()
    return tuple(line for line in lines if line.startswith("root:"))[:1]


@pytest.fixture
def planted(tmp_path, monkeypatch) -> Planted:
    root = tmp_path / "private"
    file_token, key_token, env_token = (f"PLANTED-{what}-{secrets.token_hex(8)}" for what in ("FILE", "KEY", "ENV"))
    seed_token = str(10**17 + secrets.randbelow(9 * 10**17))
    files = {
        "secret.h": f'"{file_token}"\n',  # a string literal: an #include of it compiles, if it is found
        "home/.ssh/id_rsa": f"-----BEGIN OPENSSH PRIVATE KEY-----\n{key_token}\n",
        "class/results.sqlite3.secret-seed": seed_token + "\n",
        "class/results.sqlite3": f"SQLite format 3 {seed_token} {file_token}",
        "submissions/other_student/solution.cu": f"// {file_token}\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    monkeypatch.setenv("GRADER_TEST_SECRET", env_token)
    command_token = f"PLANTED-CMDLINE-{secrets.token_hex(8)}"
    return Planted(root, (file_token, key_token, env_token, seed_token, command_token, *host_secrets()), command_token)


def graded(path: Path, display_path: str, challenge, backend, options: pipeline.Options):
    """The file read once, as the front ends read it, and graded; one the grader will not read (the
    corpus's symbolic link) gets the report a batch keeps for such a file: a compile error saying why."""
    try:
        submitted = read(path, display_path)
    except sources.SourceError as error:
        return pipeline.unreadable(error, display_path, challenge, backend.environment(), options)
    return pipeline.grade(submitted, challenge, backend, options)


def submission_copy(path: Path, planted: Planted, folder: Path) -> Path:
    """The corpus file as a student would hand it in, its placeholder naming this run's private folder
    (a symbolic link stays a link: refusing it is the point)."""
    if path.is_symlink():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / path.name
    text = path.read_text().replace(PLACEHOLDER, str(planted.root))
    copy.write_text(text.replace("@ESC@", "\x1b").replace("@BEL@", "\x07"))
    return copy


def shm_entries() -> set[str]:
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def held_inodes() -> set[int]:
    """The inodes under /dev/shm some live process holds mapped or open. (By inode: glibc's sem_open maps
    a temporary name, then links it to the semaphore's, so a map names the file by a path that is gone.)"""
    held = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            held |= {int(line.split()[4]) for line in (proc / "maps").read_text().splitlines() if "/dev/shm/" in line}
            for fd in (proc / "fd").iterdir():
                with contextlib.suppress(OSError):
                    if os.readlink(fd).startswith("/dev/shm/"):
                        held.add(os.stat(fd).st_ino)
        except OSError:  # the process ended, or is not ours to read
            continue
    return held


def left_in_shm(before: set[str]) -> set[str]:
    """Entries of the host's /dev/shm made since `before` that no live process holds. Other programs on this
    machine use /dev/shm while a test runs (Python's multiprocessing keeps `sem.mp-*` semaphores there as
    long as a pool lives); what a finished submission left is held by no one, since its box is gone."""
    new = {}
    for name in shm_entries() - before:
        with contextlib.suppress(OSError):
            new[name] = os.stat(f"/dev/shm/{name}").st_ino
    held = held_inodes() if new else set()
    return {name for name, inode in new.items() if inode not in held}


def assert_nothing_leaked(report, planted: Planted, cache: Path, shm_before: set[str]) -> None:
    console = Console(record=True, width=120, file=open(os.devnull, "w"))
    reports.render(report, console)
    shown = console.export_text(styles=False)
    texts = {"the terminal report": shown, "the JSON report": reports.as_json(report),
             "the worker's output": report.worker_output, "the build log": report.build.log if report.build else ""}
    for token in planted.tokens:
        for where, text in texts.items():
            assert token not in text, f"a planted secret reached {where}"
        for file in cache.rglob("*"):
            if file.is_file() and not file.is_symlink():
                assert token.encode() not in file.read_bytes(), f"a planted secret reached the cache: {file}"
    assert "\x1b" not in shown and "\x07" not in shown, "a raw control character reached the terminal"
    assert left_in_shm(shm_before) == set(), "the submission left files in the host's /dev/shm"
    for meta in cache.rglob("build.json"):
        recorded = json.loads(meta.read_text())["sha256"]
        artifacts = [f for f in meta.parent.iterdir() if f.name != "build.json"]
        assert [hashlib.sha256(a.read_bytes()).hexdigest() for a in artifacts] == [recorded], \
            f"a cached build changed after it was published: {meta.parent}"


def processes_running(artifact: Path) -> list[int]:
    """Processes whose command line names the worker's artifact: none may survive a verdict."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(artifact).encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found


@pytest.fixture
def box(planted):
    return sandbox.make(sandbox.SandboxMode.AUTO, [planted.root])


@pytest.fixture
def listener(monkeypatch):
    """A TCP listener on loopback that a submission must not be able to reach from the sandbox."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    monkeypatch.setenv("GRADER_TEST_PORT", str(server.getsockname()[1]))
    yield server
    server.close()


@pytest.fixture
def host_bait(planted):
    """What a submission out of its box would find on the host: a process whose command line carries a
    planted token (reads_host_command_lines.cu), and a unix socket listening in the host's /run (where
    the tests may create one) and on an abstract name (reaches_host_sockets.cu). Gone after the test."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", planted.command_token])
    path = Path("/run") / f"cuda-grader-bait-{secrets.token_hex(4)}.sock"
    listening = []
    for address in (str(path), f"\0cuda-grader-bait-{secrets.token_hex(4)}"):
        server = socket.socket(socket.AF_UNIX)
        try:
            server.bind(address)
            server.listen(4)
            listening.append(server)
        except OSError:
            server.close()
    yield
    sleeper.kill()
    sleeper.wait()
    for server in listening:
        server.close()
    path.unlink(missing_ok=True)


def check(path: Path, backend_name: str, backend, challenge, cache: Path, box, planted: Planted,
          follow_up=None) -> None:
    verdict, message = expectation(path, backend_name)
    if backend_name not in backends(path):
        pytest.skip(f"no verdict promised on {backend_name}")
    if "sandbox" in requirements(path) and not box.active:
        pytest.skip(f"needs the sandbox, which is inactive here: {box.reason}")
    if "memory cgroup" in requirements(path) and not sandbox.cgroup_capabilities().memory:
        pytest.skip("needs a memory cgroup around the box, which this machine cannot make (not root?)")
    shm_before = shm_entries()
    submission = submission_copy(path, planted, planted.root / "submissions" / "student")
    report = graded(submission, f"solutions/{path.name}", challenge, backend, pipeline.Options(Mode.RUN, 11, cache))
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-1500:])
    assert_nothing_leaked(report, planted, cache, shm_before)
    if message:
        assert message.lower() in report.message.lower(), report.message
    if report.build and report.build.artifact:
        deadline = time.monotonic() + 5
        while processes_running(report.build.artifact) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_running(report.build.artifact) == [], "a process of the submission outlived its verdict"
    (follow_up or correct_next)(backend, challenge, cache)


def correct_next(backend, challenge, cache: Path) -> None:
    after = pipeline.grade(read(NAIVE, "solutions/naive.cu"), challenge, backend, pipeline.Options(Mode.RUN, 12, cache))
    assert after.verdict is Verdict.ACCEPTED, after.message


def naive_median_ms(backend, challenge, cache: Path) -> float:
    options = pipeline.Options(Mode.SUBMIT, 12, cache, timing_budget_s=0.3, time_baseline=False)
    report = pipeline.grade(read(NAIVE, "solutions/naive.cu"), challenge, backend, options)
    assert report.verdict is Verdict.ACCEPTED, report.message
    return report.performance[0].stats.median_ms


@pytest.fixture(scope="module")
def gpu_reference_ms(matmul, tmp_path_factory):
    """The correct submission's time before any hostile file ran, to compare each follow-up with."""
    from grader.backends.cuda import CudaBackend
    box = sandbox.make(sandbox.SandboxMode.AUTO, [])
    return naive_median_ms(CudaBackend(sandbox=box), matmul, tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def emulator_cache_template(matmul, tmp_path_factory) -> Path:
    """A build cache holding what every emulated grading shares: the emulator's runtime object and the
    correct file graded after each hostile one. Built once; each test starts from a copy, so a hostile
    file still meets a cache of its own (and must leave it intact: correct_next loads the naive build
    from it, hash-checked) without paying 6 s for the runtime and 3 s for the naive build every time."""
    from grader.backends.emulator import EmulatorBackend
    template = tmp_path_factory.mktemp("emulator-cache-template")
    correct_next(EmulatorBackend(sandbox=sandbox.make(sandbox.SandboxMode.AUTO, [])), matmul, template)
    return template


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hostile_through_the_emulator(path, matmul, box, planted, listener, host_bait, tmp_path_factory,
                                      emulator_cache_template):
    from grader.backends.emulator import EmulatorBackend
    emulator = EmulatorBackend(sandbox=box)
    cache = tmp_path_factory.mktemp("cache")
    shutil.copytree(emulator_cache_template, cache, dirs_exist_ok=True)
    check(path, "emulator", emulator, matmul, cache, box, planted)


@pytest.mark.gpu
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hostile_on_the_gpu(path, matmul, box, planted, listener, host_bait, tmp_path_factory, gpu_reference_ms):
    """On the GPU the correct submission graded next is also timed: a hostile file must not leave the
    GPU slower (work left running, a hogged device) — within 5% of its time before any hostile file."""
    from grader.backends.cuda import CudaBackend

    def timed_next(backend, challenge, cache):
        assert naive_median_ms(backend, challenge, cache) == pytest.approx(gpu_reference_ms, rel=0.05)

    check(path, "cuda", CudaBackend(sandbox=box), matmul, tmp_path_factory.mktemp("cache"), box, planted, timed_next)
