"""`grader check` passes for every challenge the grader ships, in the CPU emulator: edge sizes, the
tolerance's measured margins, every level ACCEPTED and every wrong file the verdict its header promises.
This is where CI grades the challenges' own levels and wrong files (tests/test_gpu_grading.py grades them
on a GPU, and `grader check` on a GPU also times the ladder: bench/, docs/benchmarks.md)."""

from __future__ import annotations

import shutil

import pytest

from grader import kit, spec

from conftest import CHALLENGES

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")


@pytest.fixture(scope="module")
def emulator():
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


@pytest.mark.parametrize("slug", spec.list_challenges(CHALLENGES))
def test_every_challenge_passes_its_check(slug, emulator, tmp_path_factory):
    found = kit.check_challenge(spec.load(CHALLENGES, slug), emulator, tmp_path_factory.getbasetemp() / "check-cache")
    failed = [f"{f.part} {f.subject}: {f.detail}" for f in found.findings if f.status is kit.Status.FAIL]
    assert not failed, "\n".join(failed)
    assert any(f.part == "levels" and f.status is kit.Status.PASS for f in found.findings)
