"""Attacks on the box that take more than one grading (issue 25): a correct submission that rewrites
the build cache so that a wrong file graded after it is ACCEPTED, and one that replaces the emulator's
calibration program so that the next speed measurement runs its code outside the box.

Their sources are in tests/hostile/sequences/ (outside the corpus that test_hostile.py grades one by
one: their placeholders name this test's cache, `@CACHE@`, and a marker file on the host,
`@MARKER@`). Each gets where it would get only out of its box: it takes the box apart first, then
finds the cache. The box keeps the cache out of reach and the grader seals its records with a key
the box cannot read, so the wrong file stays WRONG_ANSWER and the marker never appears.
"""

from __future__ import annotations

import hashlib
import secrets
import shutil
from pathlib import Path

import pytest

from grader import pipeline, sandbox
from grader.results import Mode
from grader.verdict import Verdict

from conftest import HOSTILE, NAIVE, read, text_source

SEQUENCES = HOSTILE / "sequences"
WRONG = HOSTILE / "off_by_one_last_row.cu"
TARGET_MARK = "cache-poisoning-target"
"""A file in a cache's root: the poisoner replaces artifacts in a cache holding it, and only there."""


def probe(name: str, **placeholders: Path):
    """A sequence source as a student would hand it in, its @NAME@ placeholders filled in."""
    text = (SEQUENCES / name).read_text()
    for key, value in placeholders.items():
        text = text.replace(f"@{key}@", str(value))
    return text_source(text, f"solutions/{name}")


def active_box(cache: Path) -> sandbox.Sandbox:
    """The box as the grader makes it, the cache among the folders it hides (a server's cache is in
    a hidden home folder; this test's is under /tmp, hidden too)."""
    box = sandbox.make(sandbox.SandboxMode.AUTO, [cache])
    if not box.active:
        pytest.skip(f"needs the sandbox, which is inactive here: {box.reason}")
    return box


def artifacts(cache: Path) -> dict[Path, str]:
    """SHA-256 of every cached artifact (every file of a build but its record)."""
    return {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted((cache / "builds").glob("*/*"))
            if f.is_file() and f.name != "build.json"}


def grade(source, challenge, backend, cache: Path, seed: int = 11):
    return pipeline.grade(source, challenge, backend, pipeline.Options(Mode.RUN, seed, cache))


def poisoning_sequence(challenge, backend, cache: Path) -> None:
    """Wrong file, poisoner, wrong file again, one cache: the second grading of the wrong file must not
    run the poisoner's code, and no artifact the poisoner did not build may hold its bytes."""
    cache.mkdir(parents=True, exist_ok=True)
    (cache / TARGET_MARK).write_text("the poisoner may replace artifacts here\n")
    first = grade(read(WRONG, "solutions/wrong.cu"), challenge, backend, cache)
    assert first.verdict is Verdict.WRONG_ANSWER, first.message
    before = artifacts(cache)
    assert before, "the wrong file's build was not cached"

    poisoner = grade(probe("poisons_the_build_cache.cu", CACHE=cache.resolve()), challenge, backend, cache)
    assert poisoner.verdict is Verdict.ACCEPTED, (poisoner.message, poisoner.worker_output[-2000:])
    own = hashlib.sha256(poisoner.build.artifact.read_bytes()).hexdigest()

    again = grade(read(WRONG, "solutions/wrong.cu"), challenge, backend, cache, seed=12)
    assert again.verdict is Verdict.WRONG_ANSWER, (f"a wrong file graded after the poisoner was {again.verdict.name}; "
                                                   f"the poisoner said:\n{poisoner.worker_output[-2000:]}")
    after = artifacts(cache)
    for path in before:  # unchanged, or rebuilt from its own source: never the poisoner's bytes
        assert after.get(path) != own, f"the poisoner's code replaced {path}"


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_a_poisoned_cache_never_makes_a_wrong_file_accepted_in_the_emulator(matmul, tmp_path):
    from grader.backends.emulator import EmulatorBackend
    cache = tmp_path / "cache"
    poisoning_sequence(matmul, EmulatorBackend(sandbox=active_box(cache)), cache)


@pytest.mark.gpu
def test_a_poisoned_cache_never_makes_a_wrong_file_accepted_on_the_gpu(matmul, tmp_path):
    from grader.backends.cuda import CudaBackend
    cache = tmp_path / "cache"
    poisoning_sequence(matmul, CudaBackend(sandbox=active_box(cache)), cache)


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_the_calibration_program_cannot_be_replaced_by_a_submission(matmul, tmp_path):
    """The poisoner replaces the cached calibration program with its own executable, whose constructor
    writes a marker file on the host; a new backend measures its speed again from the same cache. The
    marker never appears, and the correct file graded with the new backend is ACCEPTED."""
    from grader.backends.emulator import EmulatorBackend
    cache = tmp_path / "cache"
    marker = tmp_path / f"calibration-marker-{secrets.token_hex(6)}"
    box = active_box(cache)
    poisoner = grade(probe("poisons_the_calibration.cu", CACHE=cache.resolve(), MARKER=marker.resolve()), matmul,
                     EmulatorBackend(sandbox=box), cache)
    assert poisoner.verdict is Verdict.ACCEPTED, (poisoner.message, poisoner.worker_output[-2000:])
    assert list((cache / "builds").glob("emu-calibrate-*")), "the calibration program was not built into this cache"
    assert not marker.exists(), "the poisoner's code ran outside the box while it was graded"

    fresh = EmulatorBackend(sandbox=box)  # measures the emulator's speed again, from the same cache
    after = grade(read(NAIVE, "solutions/naive.cu"), matmul, fresh, cache, seed=12)
    assert not marker.exists(), \
        f"the calibration ran the poisoner's code outside the box; the poisoner said:\n{poisoner.worker_output[-2000:]}"
    assert after.verdict is Verdict.ACCEPTED, after.message
