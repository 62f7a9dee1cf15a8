"""Broken and hostile submissions: each gets its verdict, nothing it starts outlives the verdict,
and a correct submission graded right after it is ACCEPTED. Runs through the emulator everywhere
(CI included) and through the GPU where one is usable."""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import pytest

from grader import pipeline, sandbox
from grader.results import Mode
from grader.verdict import Verdict

from conftest import HOSTILE, NAIVE, backends, expectation, requirements

FILES = sorted(HOSTILE.glob("*.cu"))


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


@pytest.fixture(scope="module")
def box():
    """The GPU backend shares the PID namespace (CUDA IPC finds the exporting process by pid);
    the emulator test gives its worker a namespace of its own."""
    return sandbox.make(sandbox.SandboxMode.AUTO, [], share_pid=True)


@pytest.fixture
def listener(monkeypatch):
    """A TCP listener on loopback that a submission must not be able to reach from the sandbox."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    monkeypatch.setenv("GRADER_TEST_PORT", str(server.getsockname()[1]))
    yield server
    server.close()


def check(path: Path, backend_name: str, backend, challenge, cache: Path, box, follow_up=None) -> None:
    verdict, message = expectation(path, backend_name)
    if backend_name not in backends(path):
        pytest.skip(f"no verdict promised on {backend_name}")
    if "sandbox" in requirements(path) and not box.active:
        pytest.skip(f"needs the sandbox, which is inactive here: {box.reason}")
    report = pipeline.grade(path, f"solutions/{path.name}", challenge, backend, pipeline.Options(Mode.RUN, 11, cache))
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-1500:])
    if message:
        assert message.lower() in report.message.lower(), report.message
    if report.build and report.build.artifact:
        deadline = time.monotonic() + 5
        while processes_running(report.build.artifact) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_running(report.build.artifact) == [], "a process of the submission outlived its verdict"
    (follow_up or correct_next)(backend, challenge, cache)


def correct_next(backend, challenge, cache: Path) -> None:
    after = pipeline.grade(NAIVE, "solutions/naive.cu", challenge, backend, pipeline.Options(Mode.RUN, 12, cache))
    assert after.verdict is Verdict.ACCEPTED, after.message


def naive_median_ms(backend, challenge, cache: Path) -> float:
    options = pipeline.Options(Mode.SUBMIT, 12, cache, timing_budget_s=0.3, time_baseline=False)
    report = pipeline.grade(NAIVE, "solutions/naive.cu", challenge, backend, options)
    assert report.verdict is Verdict.ACCEPTED, report.message
    return report.performance[0].stats.median_ms


@pytest.fixture(scope="module")
def gpu_reference_ms(matmul, box, tmp_path_factory):
    """The correct submission's time before any hostile file ran, to compare each follow-up with."""
    from grader.cuda_backend import CudaBackend
    return naive_median_ms(CudaBackend(sandbox=box), matmul, tmp_path_factory.mktemp("reference"))


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hostile_through_the_emulator(path, matmul, box, listener, tmp_path_factory):
    import dataclasses

    from grader.emulator.backend import EmulatorBackend
    emulator = EmulatorBackend(sandbox=dataclasses.replace(box, share_pid=False))
    check(path, "emulator", emulator, matmul, tmp_path_factory.mktemp("cache"), box)


@pytest.mark.gpu
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_hostile_on_the_gpu(path, matmul, box, listener, tmp_path_factory, gpu_reference_ms):
    """On the GPU the correct submission graded next is also timed: a hostile file must not leave the
    GPU slower (work left running, a hogged device) — within 5% of its time before any hostile file."""
    from grader.cuda_backend import CudaBackend

    def timed_next(backend, challenge, cache):
        assert naive_median_ms(backend, challenge, cache) == pytest.approx(gpu_reference_ms, rel=0.05)

    check(path, "cuda", CudaBackend(sandbox=box), matmul, tmp_path_factory.mktemp("cache"), box, timed_next)
