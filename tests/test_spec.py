"""challenge.yaml parsing: the real challenge loads, and every mistake names its file and key."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from grader import spec
from grader.errors import SpecError, UsageError
from grader.exitcodes import ExitCode

from conftest import CHALLENGES, NAIVE


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
    (lambda d: d["limits"].pop("job_s"), "limits.job_s", "missing"),
    (lambda d: d["limits"].update(job_s=0), "limits.job_s", "positive"),
    (lambda d: d["limits"].update(job_s=float("inf")), "limits.job_s", "positive"),
    (lambda d: d["limits"].update(job_s="an hour"), "limits.job_s", "expected float"),
    (lambda d: d["limits"].update(jobs_s=60), "limits.jobs_s", "unknown key"),
    (lambda d: d["parameters"][0].update(type="bool*"), "parameters[0].type", "unsupported type"),
    (lambda d: d["parameters"][0].update(type="const float**"), "parameters[0].type", "unsupported type"),
    (lambda d: d["parameters"][3].update(type="short"), "parameters[3].type", "unsupported type"),
    (lambda d: d["parameters"][0].update(role="both"), "parameters[0].role", "input, output or inout"),
    (lambda d: d["parameters"][2].update(role="inout", type="const float*"), "parameters[2].type", "must not be const"),
    (lambda d: d["parameters"][0].update(check="exact"), "parameters[0].check", "input is not compared"),
    (lambda d: d["parameters"][2].update(check="close"), "parameters[2].check", "unknown check"),
    (lambda d: d["parameters"].append({"name": "alpha", "type": "float"}), "parameters[6].value", "missing"),
    (lambda d: d["parameters"].append({"name": "alpha", "type": "float", "value": {"uniform": [2, 1]}}),
     "parameters[6].value.uniform", "low <= high"),
    (lambda d: d["parameters"].append({"name": "alpha", "type": "float", "value": {"normal": [0, 1]}}),
     "parameters[6].value.uniform", "missing"),
    (lambda d: d["parameters"][2].update(shape=["M / 2", "K"]), "parameters[2].shape[0]", "write // for integer"),
    (lambda d: d["parameters"][2].update(shape=["M - __import__('os').getpid()", "K"]), "parameters[2].shape[0]",
     "is not allowed here"),
    (lambda d: d["parameters"][2].update(shape=["M - K", "K"]), "functional.cases[0]", "every extent must be 1 or more"),
    (lambda d: d.update(require=["M < K"]), "functional.cases[0]", "breaks require: M < K"),
    (lambda d: d.update(require=["M + K"]), "require[0]", "not a condition"),
    (lambda d: d.update(require=["M <= Q"]), "require[0]", "'Q' is not an int parameter"),
    (lambda d: d["parameters"][2].update(type="const float*"), "parameters[2].type", "must not be const"),
    (lambda d: d["parameters"][0].update(shape=["M", "Q"]), "parameters[0].shape[1]", "'Q'"),
    (lambda d: d["functional"]["cases"][1].update(M=0), "functional.cases[1].M", "positive"),
    (lambda d: d["functional"]["cases"][1].update(L=3), "functional.cases[1].L", "unknown key"),
    (lambda d: d["randomized"]["ranges"].update(M=[5, 2]), "randomized.ranges.M", "low <= high"),
    (lambda d: d.update(slug="other"), "slug", "folder name"),
    (lambda d: d["levels"][5].update(requires="sm80"), "levels[5].requires", "compute capability like"),
    (lambda d: d["levels"][5].update(requires="9"), "levels[5].requires", "compute capability like"),
    (lambda d: d["parameters"][1].update(name="A"), "parameters[1].name", "already the name of parameters[0]"),
    (lambda d: d["parameters"][0].update(name="A-1"), "parameters[0].name", "not a C identifier"),
    (lambda d: d["parameters"][0].update(name="1A"), "parameters[0].name", "not a C identifier"),
    (lambda d: d["parameters"][0].update(name="Ä"), "parameters[0].name", "not a C identifier"),
    (lambda d: d["parameters"][2].update(name="class"), "parameters[2].name", "C/C++ keyword"),
    (lambda d: d["parameters"][2].update(name="threadIdx"), "parameters[2].name", "CUDA built-in"),
    (lambda d: d["parameters"][3].update(name="name"), "parameters[3].name", "cannot be called 'name'"),
    (lambda d: d.update(entry="solve it"), "entry", "not a C identifier"),
    (lambda d: d.update(entry="int"), "entry", "C/C++ keyword"),
    (lambda d: d["parameters"][0].update(shape=["M", {"x": 1}]), "parameters[0].shape[1]", "an int parameter's name"),
    (lambda d: d["parameters"][0].update(shape=[]), "parameters[0].shape", "at least one extent"),
    (lambda d: d["randomized"].update(count=-1), "randomized.count", "0 or more"),
    (lambda d: d["randomized"]["ranges"].update(M=[0, 5]), "randomized.ranges.M", "1 <= low <= high"),
    (lambda d: d["randomized"]["ranges"].update(M=[True, 5]), "randomized.ranges.M", "1 <= low <= high"),
    (lambda d: d["randomized"]["ranges"].update(M=[1.5, 5]), "randomized.ranges.M", "1 <= low <= high"),
    (lambda d: d["functional"]["cases"][0].update(K=2.5), "functional.cases[0].K", "expected int"),
    (lambda d: d["functional"]["cases"][0].update(K=True), "functional.cases[0].K", "expected int"),
    (lambda d: d["performance"]["cases"][2].update(N=-4), "performance.cases[2].N", "positive"),
    (lambda d: d["performance"]["cases"][2].update(N="big"), "performance.cases[2].N", "expected int"),
])
def test_bad_spec_names_file_and_key(tmp_path, edit, key, problem):
    root = _challenge_copy(tmp_path, edit)
    with pytest.raises(SpecError) as error:
        spec.parse(root)
    assert error.value.key == key
    assert str(root / "challenge.yaml") in error.value.message
    assert problem in error.value.message


@pytest.mark.parametrize("slug", spec.list_challenges(CHALLENGES))
def test_every_challenge_bounds_a_whole_job_beyond_one_call(slug):
    limits = spec.load(CHALLENGES, slug).limits
    assert limits.job_s > limits.case_s, "a job's bound under one call's limit would make that limit meaningless"


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


# --------------------------------------------------------------------------- files that are not UTF-8


@pytest.mark.parametrize("name", ["challenge.yaml", "reference.py", "statement.md", "starter.cu"])
def test_a_file_that_is_not_utf8_is_a_spec_error_naming_it(tmp_path, name):
    root = _challenge_copy(tmp_path, lambda d: None)
    data = (root / name).read_bytes()
    (root / name).write_bytes(data[:40] + b"\n\xff\xfe caf\xe9\n" + data[40:])  # Latin-1, not UTF-8
    with pytest.raises(SpecError) as error:
        spec.parse(root)
    assert error.value.path == root / name
    assert str(root / name) in error.value.message and "not UTF-8" in error.value.message
    assert "byte 0xff on line" in error.value.message and "UTF-8" in error.value.hint


# --------------------------------------------------------------------------- reference.py that raises or exits


@pytest.mark.parametrize("statement, shown", [
    ("raise SystemExit(0)", "SystemExit(0)"),
    ("import sys; sys.exit(3)", "SystemExit(3)"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt()"),
    ("raise ValueError('no data')", "ValueError('no data')"),
    ("import nonexistent_module_for_a_test", "ModuleNotFoundError"),
])
def test_reference_raising_at_import_is_a_spec_error(tmp_path, statement, shown):
    root = _challenge_copy(tmp_path, lambda d: None)
    (root / "reference.py").write_text(statement + "\n" + (root / "reference.py").read_text())
    with pytest.raises(SpecError) as error:
        spec.parse(root)
    assert error.value.path == root / "reference.py"
    assert str(root / "reference.py") in error.value.message
    assert f"raised {shown}" in error.value.message and "at import" in error.value.message


def _reference_raising(tmp_path: Path, function: str, statement: str) -> spec.Challenge:
    """The matmul challenge with `function` of its reference.py starting with `statement`."""
    root = _challenge_copy(tmp_path, lambda d: None)
    text = (root / "reference.py").read_text()
    header = next(line for line in text.splitlines() if line.startswith(f"def {function}("))
    (root / "reference.py").write_text(text.replace(header, f"{header}\n    {statement}", 1))
    return spec.parse(root)


@pytest.mark.parametrize("function, call", [
    ("generate", lambda r: r.generate({"M": 2, "N": 2, "K": 2}, np.random.default_rng(0))),
    ("reference", lambda r: r.reference({}, np)),
    ("error_scale", lambda r: r.error_scale({}, np)),
    ("flops", lambda r: r.flops({"M": 2, "N": 2, "K": 2})),
    ("baseline", lambda r: r.baseline({}, np)),
])
@pytest.mark.parametrize("statement, shown", [
    ("raise SystemExit(0)", "SystemExit(0)"),
    ("raise ZeroDivisionError('x')", "ZeroDivisionError('x')"),
])
def test_reference_function_raising_when_called_is_a_spec_error(tmp_path, function, call, statement, shown):
    challenge = _reference_raising(tmp_path, function, statement)
    with pytest.raises(SpecError) as error:
        call(challenge.reference)
    assert error.value.path == challenge.root / "reference.py" and error.value.key == function
    assert f"reference.py: {function}: raised {shown}" in error.value.message


@pytest.mark.parametrize("statement, passes", [
    ("raise KeyboardInterrupt", KeyboardInterrupt),
    ("raise MemoryError", MemoryError),
])
def test_ctrl_c_and_running_out_of_memory_pass_through_the_reference(tmp_path, statement, passes):
    """Ctrl-C stays Ctrl-C, and an exhausted machine is not a broken challenge."""
    challenge = _reference_raising(tmp_path, "flops", statement)
    with pytest.raises(passes):
        challenge.reference.flops({"M": 1, "N": 1, "K": 1})


def test_reference_functions_still_compute(matmul):
    assert matmul.reference.flops({"M": 2, "N": 3, "K": 4}) == 48.0
    out = matmul.reference.reference({"A": np.ones((2, 3), np.float32), "B": np.ones((3, 4), np.float32)}, np)
    assert out["C"].shape == (2, 4) and out["C"][0, 0] == 3.0


# --------------------------------------------------------------------------- shapes larger than the machine


def test_buffer_bytes_counts_every_pointer(matmul):
    assert spec.buffer_bytes(matmul, {"M": 2, "N": 3, "K": 5}) == 4 * (2 * 3 + 3 * 5 + 2 * 5)


def test_matmul_fits_a_gpu_of_a_few_gib(matmul):
    spec.check_fits(matmul, 4 * 2**30, "a 4 GiB GPU")


def test_a_performance_shape_larger_than_the_memory_is_named(matmul):
    leetgpu = spec.buffer_bytes(matmul, matmul.performance[0].dims)
    with pytest.raises(SpecError) as error:
        spec.check_fits(matmul, leetgpu - 1, "this GPU (a small one)")
    assert error.value.key == "performance.cases[0]"
    message = error.value.message
    assert str(matmul.root / "challenge.yaml") in message and "leetgpu 8192×6144×4096" in message
    assert "416 MiB" in message and "of this GPU (a small one)" in message


def test_a_functional_shape_larger_than_the_memory_is_named(tmp_path):
    root = _challenge_copy(tmp_path, lambda d: d["functional"]["cases"][3].update(M=100_000, N=100_000))
    with pytest.raises(SpecError) as error:
        spec.check_fits(spec.parse(root), 32 * 2**30, "this machine's memory")
    assert error.value.key == "functional.cases[3]" and "37.3 GiB" in error.value.message


def test_randomized_ranges_are_checked_when_max_flops_allows_their_largest_shape(tmp_path):
    def small_fixed_shapes(d):  # only the randomized shapes can be the largest
        d["performance"]["cases"] = [{"M": 64, "N": 64, "K": 64}]

    largest = 4 * 3 * 1536 * 1536
    capped = spec.parse(_challenge_copy(tmp_path / "capped", small_fixed_shapes))
    spec.check_fits(capped, largest - 1, "x")  # max_flops 1e8 shrinks the largest draw: no tight bound, not checked

    def uncapped(d):
        small_fixed_shapes(d)
        d["randomized"]["max_flops"] = 1e12  # above 2 × 1536³: the largest shape can be drawn
    challenge = spec.parse(_challenge_copy(tmp_path / "uncapped", uncapped))
    assert spec.buffer_bytes(challenge, {"M": 1536, "N": 1536, "K": 1536}) == largest
    spec.check_fits(challenge, largest, "x")
    with pytest.raises(SpecError) as error:
        spec.check_fits(challenge, largest - 1, "x")
    assert error.value.key == "randomized.ranges" and "1536×1536×1536" in error.value.message


# --------------------------------------------------------------------------- through the command line


def _grader_run(challenges_dir: Path, *extra: str):
    from click.testing import CliRunner
    from rich.console import Console

    from grader import cli

    terminal = cli.Terminal(Console(record=True, width=300), Console(record=True, width=300, stderr=True))
    result = CliRunner().invoke(cli.cli, ["run", str(NAIVE), "--challenges-dir", str(challenges_dir),
                                          "--backend", "emulator", *extra], obj=terminal)
    return result.exit_code, terminal.err.export_text()


def test_cli_non_utf8_challenge_yaml_exits_3(tmp_path):
    root = _challenge_copy(tmp_path, lambda d: None)
    (root / "challenge.yaml").write_bytes(b"# caf\xe9\n" + (root / "challenge.yaml").read_bytes())
    code, err = _grader_run(tmp_path)
    assert code == ExitCode.BAD_CHALLENGE == 3
    assert "challenge.yaml" in err and "not UTF-8" in err


def test_cli_reference_exiting_0_at_import_exits_3(tmp_path):
    """It used to end `grader run` with status 0 and no output, as if the submission were accepted."""
    root = _challenge_copy(tmp_path, lambda d: None)
    (root / "reference.py").write_text("raise SystemExit(0)\n")
    code, err = _grader_run(tmp_path)
    assert code == ExitCode.BAD_CHALLENGE
    assert "reference.py" in err and "SystemExit(0)" in err


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_cli_shape_larger_than_the_machine_exits_3_before_building(tmp_path):
    root = _challenge_copy(tmp_path, lambda d: d["performance"]["cases"][1].update(M=10**7, N=10**7, K=10**7))
    code, err = _grader_run(tmp_path, "--cache-dir", str(tmp_path / "cache"), "--sandbox", "off")
    assert code == ExitCode.BAD_CHALLENGE, err
    assert "performance.cases[1]" in err and "this machine's memory" in err
    assert not any(p.is_file() for p in (tmp_path / "cache").rglob("*")), "refused before building anything"


def _memory_bound_copy(tmp_path: Path, budget: dict, work: str) -> Path:
    """matmul's folder with its work counted in bytes instead of flops (`work`: the functions given)."""
    def edit(data):
        data["randomized"].pop("max_flops")
        data["randomized"].update(budget)
    root = _challenge_copy(tmp_path, edit)
    reference = (root / "reference.py").read_text().replace("def flops(dims):", "def _old_flops(dims):")
    (root / "reference.py").write_text(reference + work)
    return root


BYTES = '\ndef bytes(dims):\n    return 4.0 * (dims["M"] * dims["N"] + dims["N"] * dims["K"] + dims["M"] * dims["K"])\n'


def test_a_challenge_may_count_bytes_instead_of_flops(tmp_path):
    root = _memory_bound_copy(tmp_path, {"max_bytes": 1e6}, BYTES)
    c = spec.load(root.parent, "matmul")
    assert c.reference.flops is None and c.reference.bytes({"M": 1, "N": 1, "K": 1}) == 12.0
    cost, limit = c.randomized.budget(c.reference)
    assert limit == 1e6 and cost({"M": 2, "N": 2, "K": 2}) == 48.0


@pytest.mark.parametrize("budget, work, key, problem", [
    ({"max_bytes": 1e6}, "", "flops", "neither flops nor bytes"),
    ({"max_flops": 1e6}, BYTES, "randomized.max_flops", "no flops(dims)"),
    ({"max_flops": 1e6, "max_bytes": 1e6}, BYTES, "randomized.max_flops", "exactly one of max_flops and max_bytes"),
])
def test_the_work_functions_and_the_random_budget_must_agree(tmp_path, budget, work, key, problem):
    root = _memory_bound_copy(tmp_path, budget, work)
    with pytest.raises(SpecError) as error:
        spec.load(root.parent, "matmul")
    assert error.value.key == key and problem in error.value.message


def test_a_buffer_may_have_a_fixed_size(tmp_path):
    """A reduction's output is one element whatever N: `shape: [1]`."""
    def edit(data):
        data["parameters"][2]["shape"] = ["M", 1]
    c = spec.load(_challenge_copy(tmp_path, edit).parent, "matmul")
    assert c.params[2].extent({"M": 5, "N": 2, "K": 3}) == (5, 1)


@pytest.mark.parametrize("bad", [0, -1, True, 1.5])
def test_a_fixed_size_must_be_a_whole_number_of_at_least_one(tmp_path, bad):
    def edit(data):
        data["parameters"][2]["shape"] = ["M", bad]
    with pytest.raises(SpecError) as error:
        spec.load(_challenge_copy(tmp_path, edit).parent, "matmul")
    assert error.value.key == "parameters[2].shape[1]"
