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
