"""Placement on the ladder and the ladder cache, with synthetic measurements (no GPU)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from grader import ladder, place

CASES = ("leetgpu", "square", "irregular")


def times(*ms: float) -> dict[str, float]:
    return dict(zip(CASES, ms))


@pytest.fixture
def measured():
    return {1: times(80, 25, 23), 2: times(40, 12, 12), 3: times(20, 6, 6), 4: times(10, 3, 3)}


def test_speed_ratio_is_a_geometric_mean():
    assert place.speed_ratio(times(10, 10, 10), times(20, 20, 20)) == pytest.approx(2.0)
    assert place.speed_ratio(times(10, 10, 10), times(40, 10, 2.5)) == pytest.approx(1.0)
    assert place.speed_ratio({}, times(1, 1, 1)) is None


def test_places_on_the_highest_level_it_beats(matmul, measured):
    p = place.place(times(15, 5, 5), measured, matmul.levels)
    assert p.level == 3 and p.name == matmul.levels[2].name
    assert p.ratio_to_level == pytest.approx((20 / 15 * 6 / 5 * 6 / 5) ** (1 / 3))
    assert p.next_level == 4 and p.ratio_to_next < 1
    assert p.next_technique == matmul.levels[3].technique
    assert "level 3 of" in p.headline() and "× level 4" in p.headline()


def test_slower_than_everything_is_below_level_1(matmul, measured):
    p = place.place(times(160, 50, 46), measured, matmul.levels)
    assert p.level == 0 and p.next_level == 1
    assert p.headline().startswith("below level 1 — 2.0× slower")


def test_faster_than_every_measured_level(matmul, measured):
    p = place.place(times(5, 1, 1), measured, matmul.levels)
    assert p.level == 4 and p.next_level is None


def test_unmeasured_levels_are_skipped_for_the_next_rung(matmul):
    measured = {1: times(80, 25, 23), 3: times(20, 6, 6)}  # level 2 failed or was unavailable
    p = place.place(times(50, 15, 15), measured, matmul.levels)
    assert p.level == 1 and p.next_level == 3


def test_ladder_cache_round_trip(tmp_path, matmul):
    env = SimpleNamespace(gpu="NVIDIA H200", driver="13.0")
    rungs = (ladder.Rung(1, "naive", "measured", "", times(80, 25, 23), times(5052, 5384, 5849), 3.5e-7),
             ladder.Rung(6, "tensor cores", "unavailable", "needs compute capability 8.0"))
    saved = ladder.Ladder("matmul", 1, 1, "NVIDIA H200", "13.0", "0.1.0", "2026-11-21T12:00:00+00:00",
                          "cuBLAS FP32", times(8.1, 2.7, 2.9), rungs)
    path = ladder.save(tmp_path, matmul, env, saved)
    assert "NVIDIA-H200" in path.name and "driver13.0" in path.name
    assert ladder.load(tmp_path, matmul, env) == saved
    assert saved.measured() == {1: times(80, 25, 23)}
    assert ladder.load(tmp_path, matmul, SimpleNamespace(gpu="NVIDIA H100", driver="13.0")) is None
