"""challenge.yaml parsing: the real challenge loads, and every mistake names its file and key."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from grader import spec
from grader.errors import SpecError, UsageError

from conftest import CHALLENGES


def test_matmul_loads(matmul):
    assert matmul.prototype() == "void solve(const float* A, const float* B, float* C, int M, int N, int K)"
    assert matmul.dims == ("M", "N", "K")
    assert [p.name for p in matmul.inputs] == ["A", "B"] and [p.name for p in matmul.outputs] == ["C"]
    assert matmul.inputs[0].extent({"M": 2, "N": 3, "K": 4}) == (2, 3)
    assert matmul.performance[0].dims == {"M": 8192, "N": 6144, "K": 4096}
    assert matmul.tolerance.max_scaled_error == 1.5e-6
    assert matmul.randomized.max_flops == 1e8  # written 1.0e8, which YAML 1.1 reads as text
    assert matmul.statement_path.is_file() and matmul.starter_path.is_file()


def test_functional_set_has_the_edge_shapes(matmul):
    shapes = [tuple(s.dims.values()) for s in matmul.functional]
    assert (1, 1, 1) in shapes
    assert any(n == 1 for _, n, _ in shapes), "an inner dimension of 1"
    assert any(n >= 65536 for _, n, _ in shapes), "a very large inner dimension"
    assert any(m % 2 == 1 and m > 1 for m, _, _ in shapes), "an odd M"
    assert all(m * n * k <= 2e7 for m, n, k in shapes), "small enough for a CPU emulator"


def test_levels_say_what_hardware_they_need(matmul):
    needs = {level.number: level for level in matmul.levels}
    assert [level.number for level in matmul.levels] == [1, 2, 3, 4, 5, 6, 7]
    assert needs[1].needs == "" and needs[1].available_on(7, 0)
    assert needs[6].needs == "sm_80" and needs[6].available_on(9, 0) and needs[6].available_on(10, 0)
    assert not needs[6].available_on(7, 5)
    # wgmma is sm_90a's own: a newer GPU lacks it, so level 7 is unavailable there, not failed
    assert needs[7].needs == "sm_90a" and needs[7].available_on(9, 0)
    assert not needs[7].available_on(10, 0) and not needs[7].available_on(8, 9)
    assert "9.0 exactly" in needs[7].unavailable_reason("10.0")


def _challenge_copy(tmp_path: Path, edit) -> Path:
    root = tmp_path / "matmul"
    shutil.copytree(CHALLENGES / "matmul", root)
    data = yaml.safe_load((root / "challenge.yaml").read_text())
    edit(data)
    (root / "challenge.yaml").write_text(yaml.safe_dump(data))
    return root


@pytest.mark.parametrize("edit, key, problem", [
    (lambda d: d.update(colour="red"), "colour", "unknown key"),
    (lambda d: d["tolerance"].pop("max_scaled_error"), "tolerance.max_scaled_error", "missing"),
    (lambda d: d["tolerance"].update(max_scaled_error=-1), "tolerance.max_scaled_error", "positive"),
    (lambda d: d["limits"].update(case_s="soon"), "limits.case_s", "expected float"),
    (lambda d: d["parameters"][0].update(type="half*"), "parameters[0].type", "unsupported type"),
    (lambda d: d["parameters"][0].update(role="both"), "parameters[0].role", "input or output"),
    (lambda d: d["parameters"][2].update(type="const float*"), "parameters[2].type", "must not be const"),
    (lambda d: d["parameters"][0].update(shape=["M", "Q"]), "parameters[0].shape", "'Q'"),
    (lambda d: d["functional"]["cases"][1].update(M=0), "functional.cases[1].M", "positive"),
    (lambda d: d["functional"]["cases"][1].update(L=3), "functional.cases[1].L", "unknown key"),
    (lambda d: d["randomized"]["ranges"].update(M=[5, 2]), "randomized.ranges.M", "low <= high"),
    (lambda d: d.update(slug="other"), "slug", "folder name"),
    (lambda d: d["levels"][5].update(requires="sm80"), "levels[5].requires", "compute capability like"),
    (lambda d: d["levels"][5].update(requires="9"), "levels[5].requires", "compute capability like"),
])
def test_bad_spec_names_file_and_key(tmp_path, edit, key, problem):
    root = _challenge_copy(tmp_path, edit)
    with pytest.raises(SpecError) as error:
        spec.parse(root)
    assert error.value.key == key
    assert str(root / "challenge.yaml") in error.value.message
    assert problem in error.value.message


def test_invalid_yaml_is_a_spec_error(tmp_path):
    root = _challenge_copy(tmp_path, lambda d: None)
    (root / "challenge.yaml").write_text("slug: [unclosed\n")
    with pytest.raises(SpecError, match="not valid YAML"):
        spec.parse(root)


def test_reference_without_a_function_is_named(tmp_path):
    root = _challenge_copy(tmp_path, lambda d: None)
    (root / "reference.py").write_text("def generate(dims, rng):\n    return {}\n")
    with pytest.raises(SpecError) as error:
        spec.parse(root)
    assert error.value.key == "reference"
    assert "reference.py" in error.value.message


def test_unknown_challenge_lists_the_known_ones():
    with pytest.raises(UsageError) as error:
        spec.load(CHALLENGES, "sorting")
    assert "matmul" in error.value.hint
