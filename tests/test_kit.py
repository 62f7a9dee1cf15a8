"""The challenge kit: `grader new` writes a challenge that passes `grader check` as it is, and the check
fails, naming the part, for each thing a new challenge gets wrong (edges missing, a tolerance too tight
or too loose, a level that fails, a wrong file whose verdict differs from its header)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import cli, kit, spec
from grader.exitcodes import ExitCode

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")


def _invoke(*args, cwd: Path):
    """The CLI run in `cwd` (where `grader new` writes ./challenges/ and `grader check` looks first)."""
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(cli.cli, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> Path:
    """A fresh `grader new demo` in an empty folder."""
    folder = tmp_path_factory.mktemp("kit")
    result = _invoke("new", "demo", cwd=folder)
    assert result.exit_code == 0, result.output
    return folder


def test_new_writes_every_file_and_refuses_to_overwrite(made):
    root = made / "challenges" / "demo"
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == sorted(kit.SKELETON)
    again = _invoke("new", "demo", cwd=made)
    assert again.exit_code == ExitCode.USAGE and "exists already" in again.output
    assert _invoke("new", "Bad-Name", cwd=made).exit_code == ExitCode.USAGE


@pytest.mark.slow
def test_the_skeleton_passes_its_own_check(made):
    result = _invoke("check", "demo", "--backend", "emulator", "--json", cwd=made)
    found = json.loads(result.output[result.output.index("{"):])
    assert result.exit_code == 0 and found["passed"], result.output
    parts = {f["part"] for f in found["findings"] if f["status"] == "pass"}
    assert parts == {"edges", "tolerance", "levels", "wrong"}
    margins = {m["method"]: m for m in found["margins"]}
    assert all(m["worst"] * kit.MARGIN <= 1 for m in margins.values() if m["must"] == "pass")
    assert all(m["worst"] >= kit.MARGIN for m in margins.values() if m["must"] == "fail")
    assert any(name.startswith("level 1") for name in margins)


def _copy(made: Path, tmp_path: Path, edit) -> spec.Challenge:
    root = tmp_path / "demo"
    shutil.copytree(made / "challenges" / "demo", root)
    edit(root)
    return spec.load(tmp_path, "demo")


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_missing_edge_sizes_fail(made, tmp_path):
    def edit(root):
        text = (root / "challenge.yaml").read_text()
        text = re.sub(r"    - \{N: (1|3|31|33|255|257|1000, offset: 0.0|4097)\}\n", "", text)
        (root / "challenge.yaml").write_text(text.replace("  cases:\n    - {name: large", "  cases:\n    - {name: large")
                                             .replace("functional:\n  version: 1\n  cases:\n",
                                                      "functional:\n  version: 1\n  cases:\n    - {N: 64}\n"))
    found = kit.edge_findings(_copy(made, tmp_path, edit))
    assert found[0].status is kit.Status.FAIL and "a size of 1" in found[0].detail and "warp" in found[0].detail


def test_a_tolerance_too_tight_for_a_correct_method_fails(made, tmp_path):
    challenge = _copy(made, tmp_path, lambda root: _replace(root / "challenge.yaml", "max_scaled_error: 5.0e-7",
                                                            "max_scaled_error: 2.0e-7"))
    margins = kit.variant_margins(challenge, 1)
    failed = [f for f in kit.tolerance_findings(challenge, margins) if f.status is kit.Status.FAIL]
    assert {f.subject for f in failed} >= {"product then sum, FP32", "margins"}


def test_a_tolerance_too_loose_for_a_wrong_method_fails(made, tmp_path):
    challenge = _copy(made, tmp_path, lambda root: (
        _replace(root / "challenge.yaml", "max_scaled_error: 5.0e-7", "max_scaled_error: 1.0e-3"),
        _replace(root / "challenge.yaml", "max_relative_frobenius: 5.0e-7", "max_relative_frobenius: 1.0e-3")))
    failed = [f for f in kit.tolerance_findings(challenge, kit.variant_margins(challenge, 1)) if f.status is kit.Status.FAIL]
    assert "input rounded to FP16" in {f.subject for f in failed}


def test_a_challenge_without_variants_is_unmeasured(made, tmp_path):
    challenge = _copy(made, tmp_path, lambda root: _replace(root / "reference.py", "def variants(", "def _unused("))
    found = kit.tolerance_findings(challenge, kit.variant_margins(challenge, 1))
    assert found[0].status is kit.Status.FAIL and "not measured" in found[0].detail


@pytest.mark.slow
def test_a_wrong_file_with_the_wrong_promise_and_a_failing_level_fail(made, tmp_path):
    from grader.backends.emulator import EmulatorBackend

    def edit(root):
        _replace(root / "wrong" / "skips_last.cu", "// expect: WRONG_ANSWER", "// expect: OUT_OF_BOUNDS")
        _replace(root / "levels" / "1_naive.cu", "if (i < n)", "if (i < n - 1)")
    found = kit.check_challenge(_copy(made, tmp_path, edit), EmulatorBackend(), tmp_path / "cache")
    failed = {(f.part, f.status) for f in found.findings}
    assert ("levels", kit.Status.FAIL) in failed and ("wrong", kit.Status.FAIL) in failed and not found.passed


def test_expectation_headers_are_read_as_the_tests_read_them(tmp_path):
    path = tmp_path / "x.cu"
    path.write_text("// expect: RACE\n// expect-cuda: WRONG_ANSWER\n// backends: emulator\n// graded-with: submit\n")
    found = kit.expectation(path)
    assert (found.verdict_on("emulator"), found.verdict_on("cuda"), found.backends, found.mode.value) == \
        ("RACE", "WRONG_ANSWER", frozenset({"emulator"}), "submit")
    path.write_text("int x;\n")
    with pytest.raises(spec.SpecError):
        kit.expectation(path)
