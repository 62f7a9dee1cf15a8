"""The sandbox's decisions and command line, and the limits, without grading anything."""

from __future__ import annotations

import dataclasses
import resource
import shutil
import subprocess
import sys
import time
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
    hidden = Path("/usr/share")  # a folder outside /tmp (which is the box's own tmpfs: nothing of it shows)
    artifact = hidden / "doc"
    box = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap", hidden=(hidden,),
                          kind=sandbox.BoxKind.USER_NAMESPACE)
    argv = box.wrap(["worker", "--x"], [artifact, artifact / "inner"])
    assert argv[0] == "/usr/bin/bwrap" and argv[-3:] == ["--", "worker", "--x"]
    for flag in ("--unshare-net", "--unshare-user", "--disable-userns", "--unshare-pid", "--die-with-parent"):
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
    box = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap", kind=sandbox.BoxKind.USER_NAMESPACE)
    argv = box.wrap(["w"], [], writable=[tmp_path], chdir=tmp_path)
    assert argv[argv.index("--dev") + 1] == "/dev" and "--dev-bind" not in argv
    assert argv[argv.index("/dev/shm") - 1] == "--tmpfs"
    assert argv[argv.index("/dev/shm") - 2] == str(sandbox.TMPFS_BYTES), "its size is bounded"
    assert argv[argv.index("--bind") + 1:argv.index("--bind") + 3] == [str(tmp_path), str(tmp_path)]
    assert argv[argv.index("--chdir") + 1] == str(tmp_path)
    gpu_argv = box.wrap(["w"], [], gpu=True)
    assert "--unshare-pid" in gpu_argv, "a GPU worker's buffers arrive as descriptors: it needs no host PID namespace"
    bound = [gpu_argv[i + 1] for i, a in enumerate(gpu_argv) if a == "--dev-bind"]
    assert all(b.startswith("/dev/nvidia") for b in bound)


def test_a_root_box_leaves_root_through_setpriv(tmp_path):
    box = sandbox.Sandbox(sandbox.SandboxMode.AUTO, True, "test", "/usr/bin/bwrap", kind=sandbox.BoxKind.PRIVILEGED,
                          setpriv="/usr/bin/setpriv")
    argv = box.wrap(["w"], [], uid=1_900_000_123)
    tail = argv[argv.index("/usr/bin/setpriv"):]
    assert tail[:3] == ["/usr/bin/setpriv", "--reuid=1900000123", "--regid=1900000123"]
    assert {"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"} <= set(tail)
    assert tail[-2:] == ["--", "w"]
    kept = [argv[i + 1] for i, a in enumerate(argv) if a == "--cap-add"]
    assert sorted(kept) == ["CAP_SETGID", "CAP_SETPCAP", "CAP_SETUID"] and "--unshare-user" not in argv


def test_the_environment_is_an_allow_list(monkeypatch):
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "k")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1")
    env = sandbox.clean_environment({"PYTHONPATH": "/x"}, home="/tmp")
    assert "AWS_SECRET_ACCESS_KEY" not in env and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert env["HOME"] == env["TMPDIR"] == "/tmp" and env["PYTHONPATH"] == "/x" and "PATH" in env


def boxed(box: sandbox.Sandbox, argv: list[str], **launch) -> subprocess.CompletedProcess:
    """Run `argv` in `box` as the grader starts a boxed process."""
    with box.launch(argv, **launch) as start:
        return subprocess.run(start.argv, pass_fds=start.pass_fds, preexec_fn=start.preexec, capture_output=True,
                              text=True, timeout=60, env=sandbox.clean_environment())


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
        out = boxed(box, ["sh", "-c", script])
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
    box = sandbox.Sandbox(sandbox.SandboxMode.REQUIRED, True, "test", "/usr/bin/bwrap", hidden=(Path("cache"),),
                          kind=sandbox.BoxKind.USER_NAMESPACE)
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
    box = sandbox.Sandbox(sandbox.SandboxMode.REQUIRED, True, "test", str(fake), kind=sandbox.BoxKind.PRIVILEGED,
                          setpriv="/usr/bin/setpriv")
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


ACTIVE = sandbox.make(sandbox.SandboxMode.AUTO, [])
needs_box = pytest.mark.skipif(not ACTIVE.active, reason=f"no box here: {ACTIVE.reason}")

INSIDE = r"""
import ctypes, errno, json, os
libc = ctypes.CDLL(None, use_errno=True)
status = dict(line.rstrip("\n").split(":\t", 1) for line in open("/proc/self/status") if ":\t" in line)
def refused(result):
    return result == -1
try:
    open("/etc/shadow").read(1); shadow = "read"
except OSError as e:
    shadow = e.strerror
print(json.dumps({
    "uid": int(status["Uid"].split()[0]), "caps": [status[k] for k in ("CapEff", "CapPrm", "CapAmb")],
    "nnp": status["NoNewPrivs"], "seccomp": status["Seccomp"], "filters": int(status["Seccomp_filters"]),
    "shadow": shadow,
    "umount_tmp": refused(libc.umount2(b"/tmp", 2)),
    "remount_root": refused(libc.mount(None, b"/", None, 0x20 | 0x1000, None)),  # MS_REMOUNT | MS_BIND
    "unshare_user": refused(libc.unshare(0x10000000)),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
}))
"""


@needs_box
def test_a_box_runs_as_an_unprivileged_uid_with_no_capabilities_and_its_policy_in_force():
    """The escape measured on the landed tree as root (umount2 of the hidden folders, a read-write
    remount of /, /etc/shadow, a new user namespace) fails in every box, whoever runs the grader."""
    import json
    out = boxed(ACTIVE, [sys.executable, "-c", INSIDE], visible=sandbox.python_paths(ROOT))
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert seen["uid"] != 0 and (seen["uid"] >= sandbox.BOX_UID_FIRST if __import__("os").geteuid() == 0 else True)
    assert seen["caps"] == ["0" * 16] * 3 and seen["nnp"] == "1" and seen["seccomp"] == "2" and seen["filters"] >= 1
    assert seen["shadow"] != "read"
    assert seen["umount_tmp"] and seen["remount_root"] and seen["unshare_user"]
    assert len(seen["processes"]) <= 3, f"its /proc lists only the box: {seen['processes']}"


@needs_box
def test_each_box_of_a_root_grader_gets_a_uid_of_its_own():
    import os
    if os.geteuid() != 0:
        pytest.skip("only a root grader can hand out uids")
    uids = set()
    for _ in range(3):
        out = boxed(ACTIVE, ["sh", "-c", "id -u"])
        uids.add(int(out.stdout))
    assert len(uids) == 3 and min(uids) >= sandbox.BOX_UID_FIRST


@needs_box
def test_the_boxes_tmp_is_bounded():
    small = dataclasses.replace(ACTIVE, limits=sandbox.Limits(tmp_bytes=4 << 20))
    out = boxed(small, ["sh", "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=16 2>&1; ls -l /tmp/fill"])
    assert "No space left on device" in out.stdout, out.stdout


@needs_box
def test_the_grader_reads_a_boxes_confinement_from_outside(tmp_path):
    """`check_box` reads /proc/PID/status of the boxed processes from the grader's side: a program in
    the box cannot forge it."""
    with ACTIVE.launch(["sleep", "30"]) as start:
        proc = subprocess.Popen(start.argv, pass_fds=start.pass_fds, preexec_fn=start.preexec,
                                env=sandbox.clean_environment())
        uid = start.uid
    try:
        deadline = time.monotonic() + 10
        seen, problem = sandbox.check_box(proc.pid, ACTIVE, uid, sandbox.filters_in_box(ACTIVE))
        while (seen is None or problem) and time.monotonic() < deadline:  # setpriv has not reached sleep yet
            time.sleep(0.05)
            seen, problem = sandbox.check_box(proc.pid, ACTIVE, uid, sandbox.filters_in_box(ACTIVE))
        assert problem is None and seen.capabilities == 0 and seen.no_new_privs
        _, missing = sandbox.check_box(proc.pid, ACTIVE, uid, sandbox.filters_in_box(ACTIVE) + 1)
        assert "seccomp filter" in missing, "a filter the box should have and lacks is found"
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.skipif(not sandbox.cgroup_capabilities().memory, reason="no memory cgroup can be made here")
def test_a_memory_cgroup_stops_a_process_that_outgrows_it():
    limits = sandbox.Limits(memory_bytes=128 << 20)
    group = sandbox.Cgroup.create(limits)
    try:
        code = "import mmap\nm = mmap.mmap(-1, 512 << 20, flags=mmap.MAP_SHARED)\nfor i in range(0, len(m), 4096): m[i] = 1\n"
        out = subprocess.run([sys.executable, "-c", code], preexec_fn=group.join, capture_output=True, timeout=60)
        assert out.returncode == -9 and group.out_of_memory(), "shared memory counts against the bound too"
    finally:
        group.remove()


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
@pytest.mark.parametrize("mode", [sandbox.SandboxMode.AUTO, sandbox.SandboxMode.OFF])
def test_the_report_says_what_isolation_was_in_force(mode, matmul, tmp_path):
    """Boxed: the worker's uid, capabilities and filters as the grader read them from outside the box.
    Unboxed: that the submission ran with the grader's own rights, never a claim of a box."""
    from rich.console import Console

    from grader import pipeline, report as reports
    from grader.backends.emulator import EmulatorBackend
    from grader.results import Mode, to_json

    from conftest import NAIVE, read
    box = sandbox.make(mode, [])
    if mode is sandbox.SandboxMode.AUTO and not box.active:
        pytest.skip(box.reason)
    small = dataclasses.replace(matmul, functional=matmul.functional[:2],
                                randomized=dataclasses.replace(matmul.randomized, count=0))
    graded = pipeline.grade(read(NAIVE), small, EmulatorBackend(sandbox=box), pipeline.Options(Mode.RUN, 3, tmp_path))
    assert graded.accepted, graded.message
    console = Console(record=True, width=200, file=open("/dev/null", "w"))
    reports.render(graded, console)
    shown = console.export_text()
    isolation = graded.isolation
    if mode is sandbox.SandboxMode.OFF:
        assert not isolation.boxed and isolation.worker_uid is None and "isolation: UNBOXED" in shown
        return
    assert isolation.boxed and isolation.worker_uid not in (None, 0) and isolation.seccomp_filters >= 2
    assert f"worker uid {isolation.worker_uid}, no capabilities" in shown
    assert to_json(graded)["isolation"]["worker_uid"] == isolation.worker_uid


@needs_box
def test_a_compile_runs_in_the_same_box(tmp_path):
    """The compile's box (build.run_tool) is the worker's: an unprivileged uid, no capabilities, the
    policy in force, /etc/shadow unreadable, umount refused."""
    from grader import build
    work = tmp_path / "work"
    work.mkdir()
    script = ("grep -E '^(Uid|CapEff|CapPrm|NoNewPrivs|Seccomp):' /proc/self/status; "
              "cat /etc/shadow >/dev/null 2>&1 && echo shadow-read; umount /tmp 2>/dev/null && echo unmounted; "
              "touch built && echo wrote-own-folder")
    ran = build.run_tool(("sh", "-c", script), work, 30, ACTIVE)
    fields = dict(line.split(":\t", 1) for line in ran.log.splitlines() if ":\t" in line)
    assert fields["Uid"].split()[0] != "0" and fields["CapEff"] == fields["CapPrm"] == "0" * 16, ran.log
    assert fields["NoNewPrivs"] == "1" and fields["Seccomp"] == "2", ran.log
    assert "shadow-read" not in ran.log and "unmounted" not in ran.log
    assert "wrote-own-folder" in ran.log and (work / "built").exists(), "its own build folder is writable"
