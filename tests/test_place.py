"""Placement on the ladder and the ladder cache, with synthetic measurements (no GPU)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from grader import ladder, place
from grader.spec import Shape

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
    rungs = (ladder.Rung(1, "naive", ladder.RungStatus.MEASURED, "", times(80, 25, 23), times(5052, 5384, 5849), 3.5e-7),
             ladder.Rung(6, "tensor cores", ladder.RungStatus.UNAVAILABLE, "needs compute capability 8.0"))
    saved = ladder.Ladder("matmul", 1, 1, "NVIDIA H200", "13.0", "0.1.0", "2026-11-21T12:00:00+00:00",
                          "cuBLAS FP32", times(8.1, 2.7, 2.9), rungs)
    path = ladder.save(tmp_path, matmul, env, saved)
    assert "NVIDIA-H200" in path.name and "driver13.0" in path.name
    assert ladder.load(tmp_path, matmul, env) == saved
    assert saved.measured() == {1: times(80, 25, 23)}
    assert ladder.load(tmp_path, matmul, SimpleNamespace(gpu="NVIDIA H100", driver="13.0")) is None


# --------------------------------------------------------------------------- the level on each shape


def ladder_ms(matmul) -> dict[int, dict[str, float]]:
    """The H200 ladder of docs/benchmarks.md, rounded, keyed by the real case labels."""
    labels = [s.label() for s in matmul.performance]
    rows = {1: (81.6, 25.5, 23.5), 2: (47.9, 16.1, 16.1), 3: (20.1, 6.84, 6.9), 4: (12.9, 4.25, 4.27),
            5: (10.0, 3.38, 3.58), 6: (7.8, 2.64, 3.19)}
    return {n: dict(zip(labels, ms)) for n, ms in rows.items()}


def submission(matmul, *ms: float) -> dict[str, float]:
    return dict(zip([s.label() for s in matmul.performance], ms))


def test_a_float4_kernel_with_a_scalar_fallback_is_told_about_the_fallback(matmul):
    # level-5 speed on the two aligned shapes, between levels 1 and 2 on 4095×4097×4093
    p = place.place(submission(matmul, 10.0, 3.4, 17.0), ladder_ms(matmul), matmul.levels, matmul.performance)
    assert p.level == 3  # the headline stays the geometric mean
    assert list(p.shape_levels.values()) == [5, 5, 1]
    assert p.per_shape() == "leetgpu 5 · square 5 · irregular 1"
    lag = p.lag
    assert lag.case == "irregular 4095×4097×4093" and lag.level == 1 and lag.best_level == 5
    assert lag.cause is place.LagCause.UNALIGNED and lag.multiple == 4
    assert lag.detail == "M = 4095, N = 4097 and K = 4093 are not multiples of 4"
    assert lag.summary() == ("your kernel reaches level 5 on leetgpu and square but level 1 on irregular "
                             "(4095×4097×4093), where M = 4095, N = 4097 and K = 4093 are not multiples of 4")
    assert "fallback path for sizes that are not multiples of 4" in lag.advice()
    assert lag.level_if_matched == 5 and "overall level would be 5" in lag.advice()


def test_one_rung_between_shapes_is_not_called_out(matmul):
    p = place.place(submission(matmul, 10.0, 3.4, 4.3), ladder_ms(matmul), matmul.levels, matmul.performance)
    assert list(p.shape_levels.values()) == [5, 5, 4]
    assert p.lag is None


def test_two_rungs_down_is_called_out(matmul):
    p = place.place(submission(matmul, 10.0, 3.4, 6.9), ladder_ms(matmul), matmul.levels, matmul.performance)
    assert list(p.shape_levels.values()) == [5, 5, 3] and p.lag is not None and p.lag.level == 3


def test_rungs_are_counted_over_measured_levels(matmul):
    measured = {n: ms for n, ms in ladder_ms(matmul).items() if n != 2}  # level 2 failed on this GPU
    p = place.place(submission(matmul, 20.0, 6.8, 17.0), measured, matmul.levels, matmul.performance)
    assert list(p.shape_levels.values()) == [3, 3, 1]
    assert p.lag is None  # level 3 is the next measured rung above level 1


def test_below_level_1_on_one_shape(matmul):
    p = place.place(submission(matmul, 12.9, 4.25, 40.0), ladder_ms(matmul), matmul.levels, matmul.performance)
    assert p.shape_levels[matmul.performance[2].label()] == 0
    assert "but below level 1 on irregular" in p.lag.summary()


def test_without_shapes_the_cause_is_left_open(matmul):
    p = place.place(submission(matmul, 10.0, 3.4, 17.0), ladder_ms(matmul), matmul.levels)
    assert p.lag.cause is place.LagCause.CLIFF and "shapes unknown" in p.lag.detail


def shape(name: str, m: int, n: int, k: int) -> Shape:
    return Shape({"M": m, "N": n, "K": k}, name)


@pytest.mark.parametrize("slow, cause, multiple, detail", [
    (shape("odd", 4096, 4097, 4096), place.LagCause.UNALIGNED, 4, "N = 4097 is not a multiple of 4"),
    (shape("tiles", 4100, 4096, 4096), place.LagCause.UNALIGNED, 8, "M = 4100 is not a multiple of 8"),
    (shape("thin", 65536, 256, 256), place.LagCause.THIN, None, "the longest side is 256 times the shortest"),
    (shape("mid", 3072, 3072, 3072), place.LagCause.CLIFF, None, "as aligned and as square"),
], ids=["vector", "tile", "thin", "cliff"])
def test_causes_from_the_dimensions(slow, cause, multiple, detail):
    fast = [shape("big", 8192, 6144, 4096), shape("square", 4096, 4096, 4096)]
    found = place.explain(slow, fast)
    assert found[0] is cause and found[1] == multiple and detail in found[2]
