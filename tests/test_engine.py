"""The grading engines (grader.engines) on the CPU emulator: the job layer run in another
process or as Ray actor tasks gives the reports a local run gives; a worker whose grader or challenge
differs refuses the job, and that refusal stops a batch instead of being blamed on a student."""

from __future__ import annotations

import pickle
import shutil

import pytest

from conftest import ROOT
from grader import source, spec
from grader import engines as engine
from grader.errors import SpecError
from grader.verdict import Verdict

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

CHALLENGES = ROOT / "tests" / "challenges"
FILES = {"levels/1_naive.cu": Verdict.ACCEPTED, "wrong/writes_input.cu": Verdict.INPUT_MODIFIED,
         "levels/3_float4.cu": Verdict.ACCEPTED}


@pytest.fixture
def config(tmp_path) -> engine.Config:
    return engine.Config(CHALLENGES, "emulator", None, tmp_path / "cache", "auto", (tmp_path / "cache",))


def tasks() -> list[engine.Task]:
    mark = engine.fingerprint(spec.load(CHALLENGES, "tiny_add"))
    return [engine.Task(i, source.read(ROOT / "challenges" / "vector_add" / name), "tiny_add", 7, True, fingerprint=mark)
            for i, name in enumerate(FILES)]


def test_a_worker_of_another_grader_or_challenge_refuses_the_job(config):
    other_grader = engine.run_task(config, engine.Task(0, tasks()[0].source, "tiny_add", 7, True, grader_version="0.0.1"))
    assert isinstance(other_grader.fatal, engine.VersionMismatch) and "0.0.1" in other_grader.fatal.message
    other_challenge = engine.run_task(config, engine.Task(0, tasks()[0].source, "tiny_add", 7, True, fingerprint="x"))
    assert isinstance(other_challenge.fatal, engine.VersionMismatch) and "fingerprint" in other_challenge.fatal.message
    mine = engine.probe(config, ("tiny_add",))
    engine.same_as_here(mine, dict(mine), "here")
    with pytest.raises(engine.VersionMismatch, match="runs grader 9.9"):
        engine.same_as_here(mine, {**mine, "grader": "9.9"}, "10.0.0.2")


def test_grader_errors_cross_processes_whole():
    error = pickle.loads(pickle.dumps(SpecError("c.yaml", "tolerance", "must be positive", "fix it")))
    assert (type(error), error.key, error.hint, int(error.exit_code)) == (SpecError, "tolerance", "fix it", 3)


def test_the_local_engine_grades_in_processes_of_its_own(config):
    local = engine.LocalEngine(config, [None, None])
    try:
        assert local.environment.backend == "emulator" and local.slots == 2
        futures = [local.submit(t) for t in tasks()[:2]]
        outcomes = [f.result(timeout=300) for f in futures]
        assert [o.report.verdict for o in outcomes] == list(FILES.values())[:2]
        assert all(o.report.secret for o in outcomes)
        third = local.submit(tasks()[2]).result(timeout=300)
        assert third.report.verdict is Verdict.ACCEPTED
    finally:
        local.close()


def test_the_ray_engine_grades_on_actors_of_a_local_ray_that_requires_its_token(config, monkeypatch):
    """The engine starts its own Ray (grader.ray_access): one that turns away a caller without its
    token, checked from another process; stopped, its private folder gone, when the engine closes."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[ray]')")
    from grader import ray_access

    for name in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_ADDRESS"):
        monkeypatch.setenv(name, "")  # so that the test's end restores each as it was (the engine sets some)
        monkeypatch.delenv(name)
    on_ray = engine.RayEngine(config, None, ("tiny_add",), slots=2)
    try:
        assert on_ray.slots == 2 and "2 grading actor(s)" in on_ray.describe()
        assert on_ray.connected.token_required and "token-authenticated" in on_ray.describe()
        stranger = ray_access.requires_token(ray.get_runtime_context().gcs_address)
        assert stranger.probe is ray_access.Probe.REFUSED, stranger.detail
        outcomes = [f.result(timeout=300) for f in [on_ray.submit(t) for t in tasks()[:2]]]
        assert [o.report.verdict for o in outcomes] == list(FILES.values())[:2]
    finally:
        on_ray.close()
    assert not ray.is_initialized() and not on_ray.connected.folder.exists()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_a_grading_process_grades_in_the_box_with_the_servers_folders_hidden(tmp_path):
    """The engines' processes make their backend from the Config: with the sandbox required, every
    compile and run is boxed, and the folders the server names (its cache, its database's folder)
    are among those the box hides."""
    hidden = (tmp_path / "cache", tmp_path / "db")
    for folder in hidden:
        folder.mkdir()
    boxed = engine.Config(CHALLENGES, "emulator", None, tmp_path / "cache", "required", hidden)
    backend = engine._backend(boxed)
    assert backend.sandbox.active
    assert set(hidden) <= set(backend.sandbox.hidden)
