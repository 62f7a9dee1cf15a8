"""Grading LeetGPU's official challenges from a checkout (issue 27), against tests/leetgpu_fixture: a small
checkout written for this project in LeetGPU's published format (its own challenges, none of LeetGPU's
content). PyTorch's CPU build runs the files' generators and references, the emulator the submissions.

Each submission in tests/submissions/leetgpu/ says in its header the verdict LeetGPU's judge would give
(`// expect:`, the run's verdict) and what the checks beyond it conclude (`// strict:`, the verdict with the
strict cases counted)."""

from __future__ import annotations

import dataclasses
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from grader import check, pipeline, spec
from grader.cli import cli
from grader.errors import UsageError
from grader.results import CaseKind, Mode
from grader.verdict import Verdict, overall

from conftest import ROOT, read

torch = pytest.importorskip("torch", reason="the leetgpu extra (PyTorch) is not installed")
from grader.leetgpu import loader, official  # noqa: E402

FIXTURE = ROOT / "tests" / "leetgpu_fixture"
SUBMISSIONS = ROOT / "tests" / "submissions" / "leetgpu"
SLUGS = {"vector_add": "1_vector_add", "half_axpby": "902_half_axpby", "value_count": "903_value_count",
         "min_max": "904_min_max", "bf16_scale": "905_bf16_scale", "short_copy": "907_short_copy"}
SEED = 5


def _header(path: Path, key: str) -> str:
    for line in path.read_text().splitlines()[:4]:
        if line.startswith(f"// {key}:"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"{path.name} has no // {key}: line")


def _slug(path: Path) -> str:
    return next(slug for prefix, slug in SLUGS.items() if path.name.startswith(prefix))


@pytest.fixture(scope="module")
def emulator():
    if shutil.which("g++") is None:
        pytest.skip("the emulator needs g++")
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(SUBMISSIONS.glob("*.cu")), ids=lambda p: p.stem)
def test_parity_verdict_and_the_strict_checks_apart(path, emulator, tmp_path):
    """The run's verdict is the one LeetGPU's judge would give; the strict cases run after, reported apart,
    and change it only where the run is strict."""
    try:
        challenge = official.challenge(FIXTURE, _slug(path), SEED, "cpu")
    except official.Unsupported as why:
        assert _header(path, "expect") == "UNSUPPORTED" == _header(path, "strict"), why.message
        return
    report = pipeline.grade(read(path, path.name), challenge, emulator, pipeline.Options(Mode.RUN, SEED, tmp_path))
    assert report.verdict.name == _header(path, "expect"), report.message
    strict_cases = [c for c in report.cases if c.kind is CaseKind.STRICT]
    if report.accepted:
        assert strict_cases, "the strict checks run after an accepted parity run"
    assert overall([c.verdict for c in report.cases]).name == _header(path, "strict")
    assert report.parity is not None and report.parity.atol == challenge.tolerance.allclose[0]
    assert report.parity.extras_failed == sum(1 for c in strict_cases if c.verdict.failed)


@pytest.mark.slow
def test_strict_makes_the_extra_checks_count(emulator, tmp_path):
    path = SUBMISSIONS / "value_count_unzeroed.cu"
    challenge = official.challenge(FIXTURE, "903_value_count", SEED, "cpu")
    report = pipeline.grade(read(path, path.name), challenge, emulator,
                            pipeline.Options(Mode.RUN, SEED, tmp_path, strict=True))
    assert report.verdict is Verdict.WRONG_ANSWER
    assert report.message.startswith("strict case") and "NaN" in report.message
    assert report.parity.strict and report.parity.extras_failed


def test_the_files_cases_become_parity_cases_and_reseeded_extras():
    c = official.challenge(FIXTURE, "1_vector_add", SEED, "cpu")
    assert [s.name for s in c.functional][:2] == ["example", "test 1"]
    assert all(s.parity for s in c.functional) and not any(s.parity for s in c.extras)
    assert [s.dims for s in c.extras] == [s.dims for s in c.functional[1:]], "reseeded: the same shapes"
    drawn = [(a, b) for a, b in zip(c.functional[1:], c.extras) if a.dims["N"] >= 1000]
    assert drawn and all(not np.array_equal(a.given.arrays["A"], b.given.arrays["A"]) for a, b in drawn)
    again = official.challenge.__wrapped__(FIXTURE, "1_vector_add", SEED, "cpu")
    assert all(np.array_equal(a.given.arrays["A"], b.given.arrays["A"]) for a, b in zip(c.functional, again.functional))
    n = spec.c_type("int")
    assert [p.ctype.text for p in c.params] == ["const float*", "const float*", "float*", n.text]
    assert c.tolerance.allclose == (1e-5, 1e-5) and c.reference.estimated
    assert c.params[2].extent({"N": 1000}) == (1000,)


def test_half_inout_with_float_scalars_and_declarative_inputs():
    c = official.challenge(FIXTURE, "902_half_axpby", SEED, "cpu")
    y = next(p for p in c.params if p.name == "y")
    assert y.role is spec.Role.INOUT and y.ctype.element.name == "half"
    assert {p.name for p in c.scalars} == {"alpha", "beta"}
    performance = c.performance[0]
    assert performance.given.arrays["x"].dtype == np.float16 and set(performance.values) == {"alpha", "beta"}


def test_unsupported_says_why():
    with pytest.raises(official.Unsupported, match="2 GPUs"):
        official.challenge(FIXTURE, "906_two_gpu_sum", SEED, "cpu")
    with pytest.raises(official.Unsupported, match="'x'"):
        official.challenge(FIXTURE, "907_short_copy", SEED, "cpu")


def test_without_pytorch_a_grade_says_which_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_torch(name, *args, **kwargs):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("no torch here")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    with pytest.raises(UsageError) as raised:
        loader.torch_module()
    assert "[leetgpu]" in raised.value.hint


def test_allclose_is_leetgpus_rule():
    tolerance = spec.Tolerance(1.0, math.inf, (1e-3, 1e-2))
    expected = np.array([1.0, 100.0, 0.0], np.float32)
    inside = expected + np.array([1e-3 + 1e-2 * 0.999, 1.0, 9e-4], np.float32)
    assert check.compare_allclose("y", inside, expected, tolerance).passed
    outside = expected + np.array([0.0, 1.1 + 1e-3, 0.0], np.float32)
    found = check.compare_allclose("y", outside, expected, tolerance)
    assert not found.passed and found.bad_count == 1 and found.first_bad[0].index == (1,)
    assert "atol 0.001, rtol 0.01" in check.describe(found, tolerance)
    ends = np.array([-np.inf, 1.0, np.inf], np.float32)
    assert check.compare_allclose("y", ends, ends, tolerance).passed, "an infinity equals the same infinity"
    assert not check.compare_allclose("y", ends[::-1].copy(), ends, tolerance).passed
    nan = np.array([np.nan, 100.0, 0.0], np.float32)
    assert not check.compare_allclose("y", nan, nan, tolerance).passed, "NaN never equals NaN"
    counts = np.array([70_000, 3], np.int32)  # squares past int32: compared in float64
    assert check.compare_allclose("c", counts, counts, spec.Tolerance(1.0, math.inf, (0.0, 0.0))).passed


def test_an_unattainable_rule_is_widened_against_the_exact_answer():
    """Where the file's FP32 reference itself misses the rule, the submission is held to twice what it needs."""
    exact = np.array([1.0, -2.0, 1e-9])
    fp32 = (exact + np.array([3e-5, 0.0, 0.0])).astype(np.float32)
    factor = official._shortfall(fp32, exact, 1e-5, 1e-5)
    assert 1.4 < factor < 1.6  # 3e-5 over an allowance of 2e-5
    assert official._shortfall(exact.astype(np.float32), exact, 1e-5, 1e-5) <= 1.0
    assert official._shortfall(fp32, exact, 0.0, 0.0) == 1.0, "no finite factor: the rule stands"
    tolerance = spec.Tolerance(1.0, math.inf, (1e-5, 1e-5))
    other_order = (exact - np.array([3e-5, 0.0, 0.0])).astype(np.float32)
    assert not check.compare_allclose("y", other_order, exact, tolerance).passed
    widened = check.compare_allclose("y", other_order, exact, tolerance, widen=official.WIDEN_MARGIN * factor)
    assert widened.passed and widened.widened == official.WIDEN_MARGIN * factor
    assert "widened" in check.describe(dataclasses.replace(widened, passed=False), tolerance)


@pytest.mark.slow
def test_the_command_line_grades_an_official_challenge(tmp_path):
    result = CliRunner().invoke(cli, ["run", str(SUBMISSIONS / "vector_add_right.cu"), "--challenge", "1_vector_add",
                                      "--leetgpu", str(FIXTURE), "--backend", "emulator", "--json", "--seed", "3",
                                      "--cache-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["challenge"] == "1_vector_add" and report["verdict"] == "ACCEPTED"
    assert report["parity"]["atol"] == 1e-5 and report["parity"]["extras_run"] > 0
    unsupported = CliRunner().invoke(cli, ["run", str(SUBMISSIONS / "short_copy.cu"), "--challenge", "907_short_copy",
                                           "--leetgpu", str(FIXTURE), "--backend", "emulator", "--json",
                                           "--cache-dir", str(tmp_path)])
    assert json.loads(unsupported.stdout)["verdict"] == "UNSUPPORTED"
    found = CliRunner().invoke(cli, ["run", str(SUBMISSIONS / "min_max_right.cu"), "--leetgpu", str(FIXTURE),
                                     "--backend", "emulator", "--json", "--cache-dir", str(tmp_path)])
    assert json.loads(found.stdout)["challenge"] == "904_min_max", "chosen by its solve signature"
    refused = CliRunner().invoke(cli, ["run", str(SUBMISSIONS / "vector_add_right.cu"), "--challenge", "vector_add",
                                       "--strict", "--backend", "emulator"])
    assert refused.exit_code == 2 and "are for LeetGPU's official challenges" in refused.output


def test_signature_detection_covers_the_official_starters():
    from grader import leetgpu, signature

    officials = [o for o in leetgpu.catalogue(FIXTURE) if leetgpu.mapped(o).unsupported is None]
    signatures = [signature.Signature(o.slug, "solve", tuple(spec.canonical_type(t) for t in o.starter_types))
                  for o in officials]
    text = (SUBMISSIONS / "half_axpby_right.cu").read_text()
    assert signature.choose_signature(text, signatures).challenge == "902_half_axpby"
    twice = signatures + [signature.Signature("twin", "solve", signatures[0].types)]
    assert signature.choose_signature((SUBMISSIONS / "vector_add_right.cu").read_text(), twice).matches == (
        "1_vector_add", "twin")


@pytest.mark.gpu
@pytest.mark.parametrize("path", sorted(SUBMISSIONS.glob("*.cu")), ids=lambda p: p.stem)
def test_parity_on_a_gpu(path, cuda_backend, tmp_path):
    """The file's cases made on the GPU by PyTorch, its reference run there; the same verdicts as in emulation
    except where only the emulator's thread orders show a race. Files marked `// backends: emulator` rely on
    what a GPU does only in practice (zeroed shared memory): no verdict is promised there."""
    if "// backends: emulator" in path.read_text():
        pytest.skip("undefined behaviour on a GPU: the emulator's parity order promises the verdict")
    try:
        challenge = official.challenge(FIXTURE, _slug(path), SEED, "cuda")
    except official.Unsupported:
        assert _header(path, "expect") == "UNSUPPORTED"
        return
    report = pipeline.grade(read(path, path.name), challenge, cuda_backend, pipeline.Options(Mode.SUBMIT, SEED, tmp_path))
    assert report.verdict.name == _header(path, "expect"), report.message
    if report.accepted:
        timed = report.performance[0]
        assert timed.stats.median_ms > 0 and timed.baseline.median_ms > 0, "timed against the PyTorch reference"
        expected_strict = _header(path, "strict")
        strict = overall([c.verdict for c in report.cases]).name
        assert strict == expected_strict or (expected_strict == "RACE" and strict == "ACCEPTED")


@pytest.mark.gpu
def test_an_official_challenge_is_placed_on_our_ladder(cuda_backend, tmp_path):
    from grader import job

    ladder = official.same_problem(ROOT / "challenges", "1_vector_add")
    challenge = official.challenge(FIXTURE, "1_vector_add", SEED, "cuda", ladder)
    path = SUBMISSIONS / "vector_add_right.cu"
    options = pipeline.Options(Mode.SUBMIT, SEED, tmp_path)
    report = job.grade_job(job.Job(read(path, path.name), challenge, options, placement=True), cuda_backend)
    assert report.accepted and report.placement is not None and report.placement.levels == 4
    assert set(report.placement.shape_levels) == {challenge.performance[0].label()}


@pytest.mark.slow
def test_a_batch_and_its_leaderboard_take_official_names(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    (folder / "alice.cu").write_text((SUBMISSIONS / "min_max_right.cu").read_text())
    (folder / "bob.cu").write_text((SUBMISSIONS / "min_max_race.cu").read_text())
    db = tmp_path / "class.sqlite3"
    graded = CliRunner().invoke(cli, ["grade", str(folder), "--challenge", "904_min_max", "--leetgpu", str(FIXTURE),
                                      "--strict", "--db", str(db), "--backend", "emulator",
                                      "--cache-dir", str(tmp_path / "cache")])
    assert graded.exit_code == 0, graded.output
    assert f"grader leaderboard 904_min_max --db {db} --leetgpu" in graded.output
    board = CliRunner().invoke(cli, ["leaderboard", "904_min_max", "--db", str(db), "--leetgpu", str(FIXTURE),
                                     "--format", "csv"])
    assert board.exit_code == 0, board.output
    rows = {line.split(",")[1]: line for line in board.output.splitlines()[1:] if line.count(",") > 2}
    assert "accepted" in rows["alice"] and "race" in rows["bob"].lower(), board.output


def test_a_buffer_flattened_in_some_cases_is_its_element_count():
    """On the H200 sweep five official files gave a buffer as a matrix in one case and flattened in another."""
    bare = (spec.Param("A", spec.c_type("const float*"), spec.Role.INPUT),
            spec.Param("C", spec.c_type("float*"), spec.Role.OUTPUT, (), spec.Check.ALLCLOSE),
            spec.Param("M", spec.c_type("int")), spec.Param("N", spec.c_type("int")))
    square = loader.FileCase("example", {"A": np.ones((2, 3), np.float32), "C": np.zeros((2, 3), np.float32)},
                             {"M": 2, "N": 3})
    flat = loader.FileCase("test 1", {"A": np.ones(6, np.float32), "C": np.zeros((2, 3), np.float32)},
                           {"M": 2, "N": 3})
    larger = loader.FileCase("test 2", {"A": np.ones((4, 5), np.float32), "C": np.zeros((4, 5), np.float32)},
                             {"M": 4, "N": 5})
    shapes = official._shapes("x", bare, [square, flat, larger])
    params = official._with_extents(bare, shapes, [square, flat, larger])
    a, c = params[0], params[1]
    assert a.extent({"M": 4, "N": 5}) == (20,), "flat: its element count"
    assert c.extent({"M": 4, "N": 5}) == (4, 5), "the same rank in every case: the file's shape"
    other = loader.FileCase("test 3", {"A": np.ones(7, np.float32), "C": np.zeros((2, 3), np.float32)},
                            {"M": 2, "N": 3})
    with pytest.raises(official.Unsupported, match="not decided by the int parameters"):
        official._shapes("x", bare, [square, other])


def test_outputs_made_with_torch_empty_start_as_zeros():
    with loader.zeroed_empty(torch):
        made = torch.empty(1000, dtype=torch.int32)
        like = torch.empty_like(made)
    assert not made.any() and not like.any()
    assert torch.empty is not None and torch.empty.__name__ == "empty", "restored after the generators ran"
