"""The command line: help everywhere, the non-grading commands, and exit codes."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader.classroom.schema import open_class
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
    """Each code as an item of the help's list ("…, 3 invalid challenge definition, …"), not as a substring:
    0, 1 and 3 were found inside 70 and 130 whether or not the help listed them."""
    _, out, _ = invoke("--help")
    block = " ".join(out.split("Exit codes:", 1)[1].split("With --json", 1)[0].split())
    listed = [int(code) for code in re.findall(r"(?:^|,) (\d+) (?=[a-z])", " " + block)]
    assert sorted(listed) == sorted(int(code) for code in ExitCode), block


def test_list():
    result, out, _ = invoke("list")
    assert result.exit_code == 0 and "matmul" in out
    result, out, _ = invoke("list", "--json")
    assert "matmul" in [c["slug"] for c in json.loads(result.stdout)]


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
    prototype = " ".join(shown[signature:shown.index(next(l for l in shown[signature:] if l.startswith("checks")))])
    assert " ".join(prototype.split()).startswith(f'signature extern "C" void solve(')
    assert all(f"{p.ctype.text} {p.name}" in prototype for p in cli.spec.load(CHALLENGES, slug).params)


def test_serve_on_a_port_in_use_says_so_before_serving_and_exits_2(tmp_path):
    """It printed "serving at …", then errno 98 from uvicorn, and exited 3 ("invalid challenge")."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result, out, err = invoke("serve", "--db", str(tmp_path / "class.sqlite3"), "--port", str(port),
                                  "--backend", "emulator", "--sandbox", "off")
    assert result.exit_code == ExitCode.USAGE, err
    assert f"port {port} is in use on 127.0.0.1: pick another with --port" in " ".join(err.split())
    assert "serving" not in err and "grading process" not in err, "refused before the engine starts"


def test_serve_on_an_address_this_machine_lacks_is_a_usage_error(tmp_path):
    result, _, err = invoke("serve", "--db", str(tmp_path / "class.sqlite3"), "--host", "192.0.2.1",
                            "--backend", "emulator", "--sandbox", "off")
    assert result.exit_code == ExitCode.USAGE and "not an address of this machine" in err


JSON_ERRORS = ["show, unknown challenge", "show, unknown option", "list, broken challenge", "run, missing file",
               "submit, not a .cu file", "submit, server unreachable", "roster list, no database",
               "leaderboard, no database", "leaderboard, bad format value"]


def _json_error_cases(tmp_path):
    broken = tmp_path / "challenges"
    (broken / "broken").mkdir(parents=True)
    (broken / "broken" / "challenge.yaml").write_text("slug: broken\n")
    source = tmp_path / "mine.cu"
    source.write_text(NAIVE.read_text())
    missing_db = str(tmp_path / "none.sqlite3")
    return {
        "show, unknown challenge": (["show", "sorting", "--json"], ExitCode.USAGE),
        "show, unknown option": (["show", "matmul", "--json", "--colour"], ExitCode.USAGE),
        "list, broken challenge": (["list", "--json", "--challenges-dir", str(broken)], ExitCode.BAD_CHALLENGE),
        "run, missing file": (["run", str(tmp_path / "nope.cu"), "--json"], ExitCode.USAGE),
        "submit, not a .cu file": (["submit", str(tmp_path), "--json"], ExitCode.USAGE),
        "submit, server unreachable": (["submit", str(source), "--json", "--server", "http://127.0.0.1:9", "--token",
                                        "t"], ExitCode.SERVER),
        "roster list, no database": (["roster", "list", "--json", "--db", missing_db], ExitCode.DATABASE),
        "leaderboard, no database": (["leaderboard", "--format", "json", "--db", missing_db], ExitCode.DATABASE),
        "leaderboard, bad format value": (["leaderboard", "--format", "json", "--gpu"], ExitCode.USAGE),
    }


@pytest.mark.parametrize("case", JSON_ERRORS)
def test_json_is_json_on_the_error_paths_too(case, tmp_path):
    cases = _json_error_cases(tmp_path)
    assert sorted(cases) == sorted(JSON_ERRORS)
    args, code = cases[case]
    result, _, err = invoke(*args)
    assert result.exit_code == code, err
    answer = json.loads(result.stdout)
    assert answer["exit_code"] == code and answer["error"] and "hint" in answer


def test_levels_json_without_a_gpu_is_the_ladder_and_why_it_is_not_measured():
    """`grader levels --json` without a GPU printed nothing."""
    _skip_if_gpu()
    result, _, err = invoke("levels", "matmul", "--json")
    assert result.exit_code == ExitCode.NO_BACKEND, err
    answer = json.loads(result.stdout)
    assert answer["challenge"] == "matmul" and answer["measured"] is False and answer["gpu"] is None
    assert [level["level"] for level in answer["levels"]] == list(range(1, 8))
    assert answer["levels"][1]["name"] == "shared-memory tiling"
    assert answer["error"].startswith("measuring the ladder needs a GPU") and answer["exit_code"] == 4


def test_roster_add_new_token_replaces_the_token_of_someone_on_the_roster_only(tmp_path):
    """`--new-token` said "added" for a student on the roster; for a name not on it, it added a stranger."""
    from grader.classroom import roster

    db = str(tmp_path / "class.sqlite3")
    first, _, _ = invoke("roster", "add", "alice", "--db", db)
    again, _, err = invoke("roster", "add", "alice", "--db", db)
    assert again.exit_code == ExitCode.USAGE and "on the roster already" in err and "--new-token" in err
    replaced, _, err = invoke("roster", "add", "alice", "--db", db, "--new-token")
    assert replaced.exit_code == 0, err
    said = " ".join(err.split())
    assert "alice (student) is on the roster" in said and "their token is replaced, the old one no longer works" in said
    assert "added" not in said
    old, new = first.stdout.strip(), replaced.stdout.strip()
    stranger, _, err = invoke("roster", "add", "alicee", "--db", db, "--new-token")
    assert stranger.exit_code == ExitCode.USAGE and "alicee is not on the roster: nothing changed" in err
    invoke("roster", "add", "prof", "--db", db, "--instructor")
    promoted, _, err = invoke("roster", "add", "alice", "--db", db, "--new-token", "--instructor")
    assert promoted.exit_code == ExitCode.USAGE and "as student, not instructor" in err
    kept, _, _ = invoke("roster", "add", "prof", "--db", db, "--new-token")
    with open_class(tmp_path / "class.sqlite3") as results:
        assert roster.authenticate(results, old) is None and roster.authenticate(results, new).name == "alice"
        assert roster.authenticate(results, kept.stdout.strip()).role is roster.Role.INSTRUCTOR
        assert [p.name for p in roster.people(results)] == ["alice", "prof"]


@pytest.mark.parametrize("status, code", [(413, ExitCode.USAGE), (400, ExitCode.USAGE), (401, ExitCode.USAGE),
                                          (429, ExitCode.SERVER), (503, ExitCode.SERVER)])
def test_a_class_server_s_refusal_exits_6_only_when_trying_again_can_help(status, code):
    """A file too large (413) stays too large: exit 2, as any file the grader will not take; the hourly
    cap or a submission still waiting (429) passes: exit 6, try again later."""
    import httpx

    from grader.classroom import client
    from grader.errors import GraderError

    keys = []

    def answer(request):
        keys.append(request.headers[client.UPLOAD_KEY_HEADER])
        return httpx.Response(status, json={"error": "no", "hint": None})

    clock = [0.0]
    remote = client.Client(client.Login("http://class", "token"), transport=httpx.MockTransport(answer),
                           sleep=lambda s: clock.__setitem__(0, clock[0] + s), clock=lambda: clock[0])
    with pytest.raises(GraderError) as refused:
        remote.submit("mine.cu", b"x", None)
    assert refused.value.exit_code == code
    if status == 503:  # "not now": tried again, with the same key, until the upload's deadline
        assert len(keys) > 3 and len(set(keys)) == 1 and clock[0] <= client.UPLOAD_DEADLINE_S
        assert "nothing was stored" in refused.value.message
    else:
        assert len(keys) == 1, "a refusal that trying again cannot change is not tried again"


def test_the_memory_check_asks_the_backend_where_its_buffers_live():
    """`check_memory` branched on the backend's name; each backend now says where its buffers live."""
    from grader.backends.emulator import EmulatorBackend
    from grader.cli.common import check_memory
    from grader.errors import SpecError

    class Small:
        def buffer_memory(self):
            return 1 << 20, "this GPU (a small one)"

    class Unknown:
        def buffer_memory(self):
            return None

    matmul = cli.spec.load(CHALLENGES, "matmul")
    with pytest.raises(SpecError) as refused:
        check_memory(matmul, Small())
    assert "of this GPU (a small one)" in str(refused.value.message)
    check_memory(matmul, Unknown())  # not known: not checked
    memory, where = EmulatorBackend.buffer_memory(None)  # reads the host, not the backend's state
    assert memory > 1 << 28 and where == "this machine's memory"


def test_auto_means_the_same_to_submit_and_serve(monkeypatch):
    """`serve` read auto as "a GPU is there" and `submit` as "the GPU backend starts": with a GPU and no
    nvcc the server chose the GPU and failed every job. Both ask `backends.resolve` now."""
    from types import SimpleNamespace

    from grader import backends, build

    def no_nvcc(*args):
        raise BackendUnavailable("nvcc was not found on PATH")

    monkeypatch.setattr(device, "query", lambda ordinal=0: SimpleNamespace(major=9, minor=0))
    monkeypatch.setattr(build, "toolchain", no_nvcc)
    heard = []
    assert backends.resolve("auto", None, heard.append) == "emulator" and heard == ["nvcc was not found on PATH"]
    assert backends.resolve("cuda", None, heard.append) == "cuda" and len(heard) == 1
    monkeypatch.setattr(build, "toolchain", lambda *args: None)
    assert backends.resolve("auto", None, heard.append) == "cuda" and len(heard) == 1
    asked = []
    monkeypatch.setattr(backends, "resolve", lambda name, nvcc, fell_back=None: asked.append(name) or "emulator")
    if shutil.which("g++"):
        assert backends.choose("auto", None).name == "emulator" and asked == ["auto"]


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_the_grader_failing_on_a_submit_is_a_grader_error_kept_as_such(monkeypatch, tmp_path):
    """`grader submit` runs its job through an engine, as the batch and the server do: the grader's own
    failure on the file is a GRADER_ERROR report (exit 70), kept as that with --user, never as the
    student's verdict; the traceback only with --debug."""
    import sqlite3

    from grader import pipeline

    def broken(*args, **kwargs):
        raise ZeroDivisionError("the grader tripped")

    monkeypatch.setattr(pipeline, "grade", broken)
    db = tmp_path / "r.sqlite3"
    args = ("submit", str(NAIVE), "--backend", "emulator", "--cache-dir", str(tmp_path), "--user", "ann",
            "--db", str(db), "--json", "--sandbox", "off")
    result, out, err = invoke(*args)
    assert result.exit_code == ExitCode.INTERNAL, err
    data = json.loads(result.stdout)
    assert data["verdict"] == "GRADER_ERROR" and "ZeroDivisionError: the grader tripped" in data["message"]
    assert "Traceback" not in err
    with sqlite3.connect(db) as c:
        assert c.execute("SELECT verdict FROM runs").fetchall() == [("GRADER_ERROR",)]
    assert "Traceback" in invoke(*args, "--debug")[2]
