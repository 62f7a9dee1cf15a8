"""The command line: help everywhere, the non-grading commands, and exit codes."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader import cli, device
from grader.errors import BackendUnavailable
from grader.exitcodes import ExitCode

from conftest import CHALLENGES, NAIVE, SUBMISSIONS


def invoke(*args: str):
    terminal = cli.Terminal(Console(record=True, width=200), Console(record=True, width=200, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.out.export_text() + result.output, terminal.err.export_text()


def all_commands():
    return sorted(cli.cli.commands)


@pytest.mark.parametrize("command", [[]] + [[c] for c in all_commands()], ids=["grader"] + all_commands())
def test_every_command_has_help(command):
    result, out, _ = invoke(*command, "--help")
    assert result.exit_code == 0
    assert "Usage:" in out and "--help" in out


def test_help_documents_the_exit_codes():
    _, out, _ = invoke("--help")
    for code in ExitCode:
        assert str(int(code)) in out


def test_list():
    result, out, _ = invoke("list")
    assert result.exit_code == 0 and "matmul" in out
    result, out, _ = invoke("list", "--json")
    assert json.loads(result.stdout)[0]["slug"] == "matmul"


def test_show_prints_statement_signature_tolerance_and_shapes():
    result, out, _ = invoke("show", "matmul")
    assert result.exit_code == 0
    assert "inner dimension" in out
    assert 'extern "C" void solve(const float* A' in out
    assert "1.5e-06" in out and "8192×6144×4096" in out
    data = json.loads(invoke("show", "matmul", "--json")[0].stdout)
    assert data["tolerance"]["max_relative_frobenius"] == 5e-5
    assert data["performance"]["cases"][0] == {"M": 8192, "N": 6144, "K": 4096, "name": "leetgpu"}


def test_show_states_the_limits_the_job_bound_among_them():
    result, out, _ = invoke("show", "matmul")
    assert "the whole job 60 s" in out and "a call 20 s" in out and "(GPU)" in out
    assert "in the CPU emulator the call's limit and the job's bound each add 10×" in out
    data = json.loads(invoke("show", "matmul", "--json")[0].stdout)
    assert data["limits"]["job_s"] == 60.0 and data["limits"]["case_s"] == 20.0


def test_show_unknown_challenge_is_a_usage_error():
    result, _, err = invoke("show", "sorting")
    assert result.exit_code == ExitCode.USAGE
    assert "no challenge named 'sorting'" in err and "matmul" in err


def test_init_writes_the_starter_and_refuses_to_overwrite(tmp_path):
    dest = tmp_path / "solutions" / "mine.cu"
    result, out, _ = invoke("init", "matmul", str(dest))
    assert result.exit_code == 0 and dest.read_text() == (CHALLENGES / "matmul" / "starter.cu").read_text()
    assert "grader run" in out
    result, _, err = invoke("init", "matmul", str(dest))
    assert result.exit_code == ExitCode.USAGE and "--force" in err
    assert invoke("init", "matmul", str(dest), "--force")[0].exit_code == 0


@pytest.mark.parametrize("command", ["run", "submit"])
def test_missing_file_is_a_usage_error(command, tmp_path):
    result, _, err = invoke(command, str(tmp_path / "nope.cu"))
    assert result.exit_code == ExitCode.USAGE and "no such file" in err


def test_bad_challenge_definition_exits_3(tmp_path):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "challenge.yaml").write_text("slug: broken\n")
    result, _, err = invoke("show", "broken", "--challenges-dir", str(tmp_path))
    assert result.exit_code == ExitCode.BAD_CHALLENGE and "challenge.yaml" in err


def _skip_if_gpu():
    try:
        device.query()
        pytest.skip("a GPU is present")
    except BackendUnavailable:
        pass


def test_asking_for_the_gpu_without_one_exits_4_with_a_hint(tmp_path):
    _skip_if_gpu()
    source = tmp_path / "mine.cu"
    source.write_text("// empty\n")
    result, _, err = invoke("run", str(source), "--backend", "cuda")
    assert result.exit_code == ExitCode.NO_BACKEND
    assert "no usable NVIDIA GPU" in err and "hint:" in err


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_auto_falls_back_to_the_emulator_and_says_so(tmp_path, monkeypatch):
    """Also: a relative --cache-dir (bubblewrap and the linker run elsewhere: it is made absolute)."""
    _skip_if_gpu()
    monkeypatch.chdir(tmp_path)
    result, out, err = invoke("run", str(NAIVE), "--cache-dir", "cache", "--seed", "3")
    assert result.exit_code == ExitCode.OK, out + err
    assert "grading on the CPU emulator" in err
    assert "ACCEPTED" in out and "emulated on the CPU" in out and "seed 3" in out


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_emulated_json_report_and_rejection_exit_code(tmp_path):
    source = tmp_path / "never.cu"
    source.write_text((SUBMISSIONS / "never_writes.cu").read_text())
    result, _, _ = invoke("run", str(source), "--backend", "emulator", "--json", "--cache-dir", str(tmp_path),
                          "--seed", "4")
    assert result.exit_code == ExitCode.REJECTED
    data = json.loads(result.stdout)
    assert data["verdict"] == "WRONG_ANSWER" and data["environment"]["backend"] == "emulator"


def test_internal_errors_are_reported_as_grader_bugs(monkeypatch, tmp_path):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli.spec, "load", broken)
    result, _, err = invoke("show", "matmul")
    assert result.exit_code == ExitCode.INTERNAL and "internal error" in err and "--debug" in err


def test_levels_without_a_gpu_shows_the_ladder_and_exits_4():
    _skip_if_gpu()
    result, out, err = invoke("levels", "matmul")
    assert result.exit_code == ExitCode.NO_BACKEND
    assert "shared-memory tiling" in out and "sm_80" in out
    assert "measuring the ladder needs a GPU" in err


@pytest.mark.parametrize("where", [["show", "matmul", "--debug"], ["--debug", "show", "matmul"]],
                         ids=["after the command", "before the command"])
def test_debug_shows_the_traceback_wherever_it_is_given(monkeypatch, where):
    def broken(*args, **kwargs):
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli.spec, "load", broken)
    result, _, err = invoke(*where)
    assert result.exit_code == ExitCode.INTERNAL
    assert "Traceback" in err and "ZeroDivisionError: boom" in err
    assert "Traceback" not in invoke("show", "matmul")[2]


def test_every_command_takes_debug():
    for name, command in cli.cli.commands.items():
        assert "--debug" in [opt for p in command.params for opt in getattr(p, "opts", [])], name


def _not_a_source(tmp_path, kind: str):
    path = {"python": tmp_path / "mine.py", "folder": tmp_path / "mine.cu", "empty": tmp_path / "empty.cu",
            "binary": tmp_path / "lib.cu"}[kind]
    if kind == "python":
        path.write_text("print('hello')\n")
    elif kind == "folder":
        path.mkdir()
    elif kind == "empty":
        path.write_text("\n  \n")
    else:
        path.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" + bytes(64))
    return path


@pytest.mark.parametrize("command", ["run", "submit"])
@pytest.mark.parametrize("kind, said", [("python", "ending in .cu"), ("folder", "is a folder"), ("empty", "is empty"),
                                        ("binary", "not a text file")])
def test_what_is_not_a_cuda_source_is_a_usage_error_before_any_build(command, kind, said, tmp_path):
    path = _not_a_source(tmp_path, kind)
    cache = tmp_path / "cache"
    result, _, err = invoke(command, str(path), "--cache-dir", str(cache), "--backend", "emulator")
    assert result.exit_code == ExitCode.USAGE, err
    assert str(path) in err and said in err and "hint:" in err
    assert not cache.exists()  # refused before the sandbox, the backend or nvcc were touched


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_unsupported_by_the_emulator_exits_4(tmp_path):
    source = tmp_path / "inline_ptx.cu"
    source.write_text(NAIVE.read_text().replace(
        "    float acc = 0.0f;",
        '    float acc = 0.0f;\n    unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));'))
    result, _, _ = invoke("run", str(source), "--backend", "emulator", "--json", "--cache-dir", str(tmp_path / "c"),
                          "--seed", "4")
    assert result.exit_code == ExitCode.NO_BACKEND
    assert json.loads(result.stdout)["verdict"] == "UNSUPPORTED"


def _preformatted_lines(statement: str) -> list[str]:
    from markdown_it import MarkdownIt
    blocks = [t.content for t in MarkdownIt().parse(statement) if t.type in ("fence", "code_block")]
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


@pytest.mark.parametrize("slug", sorted(p.parent.name for p in CHALLENGES.glob("*/statement.md")))
def test_show_fits_80_columns_without_breaking_a_code_line(slug):
    """`grader show matmul` wrapped its worked example at 80 columns: every line of a statement's code
    blocks, and the signature, must come out whole on one line."""
    terminal = cli.Terminal(Console(record=True, width=80), Console(record=True, width=80, stderr=True))
    result = CliRunner().invoke(cli.cli, ["show", slug], obj=terminal)
    assert result.exit_code == 0
    shown = [line.strip() for line in terminal.out.export_text().splitlines()]
    assert all(len(line) <= 80 for line in shown)
    for line in _preformatted_lines((CHALLENGES / slug / "statement.md").read_text()):
        assert line in shown, f"{slug}: {line!r} is broken at 80 columns"
    signature = next(i for i, line in enumerate(shown) if line.startswith("signature"))
    prototype = " ".join(shown[signature:shown.index(next(l for l in shown[signature:] if l.startswith("tolerance")))])
    assert " ".join(prototype.split()).startswith(f'signature extern "C" void solve(')
    assert all(f"{p.ctype.text} {p.name}" in prototype for p in cli.spec.load(CHALLENGES, slug).params)
