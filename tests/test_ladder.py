"""The ladder's measurement on a fake GPU (no nvcc, no worker): builds all started up front and each
finished before its level is graded, the ladder's own timing budget, progress per level, the cache."""

from __future__ import annotations

import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader import ladder, pipeline


class FakeGpu:
    info = SimpleNamespace(major=8, minor=0, compute_capability="8.0")  # level 7 (sm_90a) is unavailable

    def __init__(self):
        self.events: list[str] = []
        self.lock = threading.Lock()
        self.building: set[str] = set()
        self.concurrent = 0
        self.started = 0
        self.second_started = threading.Event()

    def build(self, source, challenge, cache_dir, libraries=None):
        """The first build waits (up to 10 s) for a second one to start: builds made in parallel meet
        here whatever the machine's load, where a fixed sleep only made an overlap likely."""
        name = Path(source.display_path).name
        with self.lock:
            self.building.add(name)
            self.concurrent = max(self.concurrent, len(self.building))
            self.started += 1
            order = self.started
        if order == 1:
            self.second_started.wait(10)
        elif order == 2:
            self.second_started.set()
        with self.lock:
            self.building.discard(name)
            self.events.append(f"built {name}")
        return SimpleNamespace(status="ok")

    def bandwidth_gbps(self):
        return 4000.0

    def environment(self):
        return SimpleNamespace(gpu="Fake GPU", driver="13.0")


class Recorder:
    def __init__(self):
        self.lines: list[str] = []

    def stage(self, text, total=None):
        self.lines.append(text)

    def advance(self, text):
        self.lines.append("  " + text)


def fake_grade(gpu: FakeGpu, seen: list):
    def grade(source, challenge, backend, options, progress):
        gpu.events.append(f"graded {Path(source.display_path).name}")
        seen.append(options)
        progress.stage("timing", total=1)
        progress.advance("leetgpu")
        perf = [SimpleNamespace(label=s.label(), stats=SimpleNamespace(median_ms=10.0), gflops=1.0, gbps=None,
                                baseline=SimpleNamespace(median_ms=8.0) if options.time_baseline else None)
                for s in challenge.performance]
        return SimpleNamespace(accepted=True, performance=perf, cases=())
    return grade


@pytest.fixture
def measured(matmul, tmp_path, monkeypatch):
    gpu, seen, progress = FakeGpu(), [], Recorder()
    monkeypatch.setattr(pipeline, "grade", fake_grade(gpu, seen))
    result = ladder.measure(matmul, gpu, tmp_path, seed=1, progress=progress)
    return SimpleNamespace(ladder=result, gpu=gpu, options=seen, progress=progress.lines, cache=tmp_path)


def test_levels_build_in_parallel_and_each_before_it_is_graded(measured):
    assert measured.gpu.concurrent > 1, "nvcc ran for several levels at once"
    events = measured.gpu.events
    for name in {e.split()[1] for e in events if e.startswith("graded")}:
        assert events.index(f"built {name}") < events.index(f"graded {name}")


def test_the_ladder_times_with_its_own_budget_and_the_baseline_once(measured):
    assert [o.timing_budget_s for o in measured.options] == [ladder.TIMING_BUDGET_S] * 6
    assert [o.time_baseline for o in measured.options] == [True] + [False] * 5
    assert measured.ladder.timing_budget_s == ladder.TIMING_BUDGET_S


def test_progress_names_the_level_and_the_shape(measured):
    assert "ladder level 3 of 7 (1-D thread tiles, conflict-free shared memory): timing" in measured.progress
    assert "  leetgpu" in measured.progress


def test_unavailable_levels_are_not_built(measured):
    assert not any("7_" in e for e in measured.gpu.events)
    assert measured.ladder.rungs[-1].status is ladder.RungStatus.UNAVAILABLE


def test_the_saved_ladder_loads_back(measured, matmul):
    env = measured.gpu.environment()
    assert ladder.load(measured.cache, matmul, env) == measured.ladder


def test_an_older_format_is_measured_again(measured, matmul):
    env = measured.gpu.environment()
    path = ladder.cache_path(measured.cache, matmul, env)
    path.write_text(path.read_text().replace(f'"format": {ladder.FORMAT}', '"format": 1'))
    assert ladder.load(measured.cache, matmul, env) is None
