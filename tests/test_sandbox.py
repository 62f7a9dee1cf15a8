"""The sandbox's decisions and command line, and the limits, without grading anything."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from grader import sandbox
from grader.errors import BackendUnavailable

from conftest import ROOT


def test_off_is_inactive_but_keeps_the_limits():
    box = sandbox.make(sandbox.SandboxMode.OFF, [])
    assert not box.active and box.wrap(["x"], []) == ["x"]
    assert "INACTIVE" in box.describe() and "files 64 MiB" in box.describe()


def test_required_without_bubblewrap_refuses_to_grade(monkeypatch):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    with pytest.raises(BackendUnavailable, match="--sandbox required") as error:
        sandbox.make(sandbox.SandboxMode.REQUIRED, [])
    assert "apt-get install bubblewrap" in error.value.hint
    auto = sandbox.make(sandbox.SandboxMode.AUTO, [])
    assert not auto.active and "not installed" in auto.describe()


def test_command_line_hides_private_folders_and_shows_what_the_worker_needs(tmp_path):
    hidden = tmp_path / "cache"
    hidden.mkdir()
    artifact = hidden / "builds" / "abc"
    artifact.mkdir(parents=True)
    box = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap", hidden=(hidden,))
    argv = box.wrap(["worker", "--x"], [artifact, artifact / "inner"])
    assert argv[0] == "/usr/bin/bwrap" and argv[-3:] == ["--", "worker", "--x"]
    for flag in ("--unshare-net", "--unshare-user", "--unshare-pid", "--die-with-parent"):
        assert flag in argv
    assert argv[argv.index("--tmpfs", argv.index("--proc")) + 1] == "/tmp"
    shown = argv.index(str(artifact.resolve()))
    assert argv[argv.index(str(hidden)) - 1] == "--tmpfs" and argv.index(str(hidden)) < shown
    assert argv.count(str(artifact.resolve())) == 2, "the inner path is covered by its parent's bind"


def test_python_worker_sees_its_environment_but_not_the_repository():
    paths = sandbox.python_paths(ROOT)
    assert Path(sys.prefix).resolve() in paths
    assert all(p != ROOT and ROOT not in p.parents for p in paths)


def test_limits_apply_in_the_child():
    limits = sandbox.Limits(file_bytes=1 << 20, open_files=64)
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_FSIZE)[0], resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limits.apply)
    assert out.stdout.split() == [str(1 << 20), "64"]
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] != 1 << 20, "the grader's own limits are untouched"


def test_limits_are_hard_so_the_child_cannot_raise_them():
    limits = sandbox.Limits(file_bytes=1 << 20)
    code = ("import resource\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)\n"
            "try:\n    resource.setrlimit(resource.RLIMIT_FSIZE, (hard + 1, hard + 1)); print('raised')\n"
            "except (ValueError, OSError):\n    print(soft, hard)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, preexec_fn=limits.apply)
    assert out.stdout.split() == [str(1 << 20), str(1 << 20)]


def test_the_box_has_its_own_dev_and_shm_and_a_gpu_worker_gets_the_gpu_nodes(tmp_path):
    box = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap")
    argv = box.wrap(["w"], [], writable=[tmp_path], chdir=tmp_path)
    assert argv[argv.index("--dev") + 1] == "/dev" and "--dev-bind" not in argv
    assert argv[argv.index("/dev/shm") - 1] == "--tmpfs"
    assert argv[argv.index("--bind") + 1:argv.index("--bind") + 3] == [str(tmp_path), str(tmp_path)]
    assert argv[argv.index("--chdir") + 1] == str(tmp_path)
    gpu = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap", share_pid=True)
    gpu_argv = gpu.wrap(["w"], [])
    assert "--unshare-pid" not in gpu_argv
    bound = [gpu_argv[i + 1] for i, a in enumerate(gpu_argv) if a == "--dev-bind"]
    assert all(b.startswith("/dev/nvidia") for b in bound)


def test_the_environment_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "k")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    env = sandbox.clean_environment({"PYTHONPATH": "/x"}, home="/tmp")
    assert "AWS_SECRET_ACCESS_KEY" not in env and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["HOME"] == env["TMPDIR"] == "/tmp" and env["PYTHONPATH"] == "/x" and "PATH" in env


@pytest.mark.skipif(sandbox.find_bwrap() is None, reason="bubblewrap is not installed")
def test_inside_the_box_private_places_and_the_hosts_shm_are_gone(tmp_path):
    box = sandbox.make(sandbox.SandboxMode.AUTO, [tmp_path / "private"])
    if not box.active:
        pytest.skip(box.reason)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "key").write_text("k")
    marker = f"/dev/shm/grader-test-{tmp_path.name}"
    Path(marker).write_text("host")
    try:
        script = (f"test ! -e {tmp_path}/private/key && test ! -e {marker} && test -e /dev/null && "
                  f"touch /dev/shm/inside && echo ok")
        out = subprocess.run(box.wrap(["sh", "-c", script], []), capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == "ok", out.stderr
        assert not Path("/dev/shm/inside").exists(), "the box's /dev/shm is its own"
    finally:
        Path(marker).unlink()


def test_relative_paths_reach_bubblewrap_absolute(tmp_path, monkeypatch):
    """`--cache-dir cache` from a class folder: bubblewrap resolves a relative path against the new
    root and fails ("Can't mkdir cache: Read-only file system"), which a batch once stored as every
    student's COMPILE_ERROR."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "cache").mkdir()
    box = sandbox.Sandbox(sandbox.SandboxMode.REQUIRED, True, "test", "/usr/bin/bwrap", hidden=(Path("cache"),))
    argv = box.wrap(["true"], [], writable=[Path("cache")], chdir=Path("cache"))
    named = [argv[i + 1] for i, a in enumerate(argv) if a in ("--tmpfs", "--bind", "--chdir")]
    assert str(tmp_path / "cache") in named and "cache" not in named


def test_a_box_that_never_starts_is_the_graders_failure_not_a_compile_error(tmp_path):
    """bubblewrap failing before the compiler runs (it says why on stderr, exits 1, and never writes
    to its info descriptor) raises SandboxFailed: a batch records that as a grader failure and grades
    the file again, instead of a COMPILE_ERROR against the student."""
    from grader import build
    from grader.errors import SandboxFailed
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho \"bwrap: Can't mkdir cc2: Read-only file system\" >&2\nexit 1\n")
    fake.chmod(0o755)
    box = sandbox.Sandbox(sandbox.SandboxMode.REQUIRED, True, "test", str(fake))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SandboxFailed, match="Can't mkdir cc2"):
        build.run_tool(("g++", "--version"), work, 30, box)


@pytest.mark.skipif(not sandbox.make(sandbox.SandboxMode.AUTO, []).active, reason="bubblewrap cannot run here")
def test_a_box_that_starts_runs_the_tool_even_when_the_tool_fails(tmp_path):
    from grader import build
    work = tmp_path / "work"
    work.mkdir()
    box = sandbox.make(sandbox.SandboxMode.AUTO, [])
    ran = build.run_tool(("sh", "-c", "echo compiled-nothing; exit 3"), work, 30, box)
    assert ran.returncode == 3 and "compiled-nothing" in ran.log
