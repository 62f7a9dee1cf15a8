"""Issue 25 probe, on the GPU machine: can a CUDA worker live in a box of its own?

Checks, each printed as one line:
- the machine: kernel, uid, bubblewrap, cgroup hierarchy and which controllers a new group gets;
- GPU memory made by `grader.devmem` (cuMemCreate, exported as a descriptor) read and written by a
  child process unboxed, boxed as root, and boxed as an unprivileged uid in a PID namespace of its own;
- legacy CUDA IPC across a PID namespace (the reason the old worker shared the host's);
- what importing and mapping a descriptor costs.
Run: python3 bench/probe/box_probe.py  (prints a table; exit status 0 even where a check fails)
"""

from __future__ import annotations

import ctypes
import glob
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

CHILD = textwrap.dedent("""
    import ctypes, os, sys
    sys.path.insert(0, sys.argv[4])  # argv[0] is "-c"
    import cupy as cp
    from grader import devmem
    fd, size, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    cp.cuda.runtime.setDevice(0); cp.cuda.runtime.free(0)
    status = {k: v.strip() for k, v in (l.split(":", 1) for l in open("/proc/self/status") if ":" in l)}
    print("child status:", {k: status[k] for k in ("Uid", "CapEff", "NoNewPrivs", "Seccomp")}, "pid", os.getpid(),
          "procs visible", sum(p.isdigit() for p in os.listdir("/proc")))
    if mode == "legacy":
        handle = bytes.fromhex(sys.argv[5])
        try:
            ptr = cp.cuda.runtime.ipcOpenMemHandle(handle, 1)
            print("legacy ipc: opened")
        except Exception as e:
            print("legacy ipc: failed:", e)
        sys.exit(0)
    m = devmem.import_fd(fd, size)
    host = (ctypes.c_ubyte * 16)()
    cp.cuda.runtime.memcpy(ctypes.addressof(host), m.pointer, 16, cp.cuda.runtime.memcpyDeviceToHost)
    print("child read:", bytes(host)[:4].hex())
    cp.cuda.runtime.memset(m.pointer, 0x3C, size)
    cp.cuda.runtime.deviceSynchronize()
    m.close()
    print("child wrote 0x3c")
""")


def line(what: str, value) -> None:
    print(f"{what:<34} {value}", flush=True)


def sh(command: str) -> str:
    out = subprocess.run(command, shell=True, capture_output=True, text=True)
    return (out.stdout + out.stderr).strip()


def machine() -> None:
    line("kernel", os.uname().release)
    line("uid", os.getuid())
    line("bwrap", sh("bwrap --version"))
    line("bwrap --disable-userns", "yes" if "--disable-userns" in sh("bwrap --help") else "no")
    line("setpriv", shutil.which("setpriv"))
    line("cgroup mounts", sh("mount | grep cgroup | awk '{print $3, $5}' | tr '\\n' ';'"))
    line("cgroup2 controllers", sh("cat /sys/fs/cgroup/cgroup.controllers 2>&1"))
    line("cgroup2 subtree_control", sh("cat /sys/fs/cgroup/cgroup.subtree_control 2>&1"))
    group = Path("/sys/fs/cgroup/grader-probe")
    try:
        group.mkdir()
        line("new group files", " ".join(sorted(p.name for p in group.iterdir() if p.name.startswith(("memory.", "pids.")))))
        (group / "memory.max").write_text(str(1 << 30))
        line("memory.max written", (group / "memory.max").read_text().strip())
    except OSError as error:
        line("cgroup2 group", f"failed: {error}")
    finally:
        try:
            group.rmdir()
        except OSError:
            pass
    line("userns sysctls", sh("cat /proc/sys/user/max_user_namespaces /proc/sys/kernel/unprivileged_userns_clone 2>&1 | tr '\\n' ' '"))
    line("python", f"{sys.executable} {oct(os.stat(sys.executable).st_mode)}")


def nvidia_nodes() -> list[str]:
    args = []
    for pattern in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia[0-9]*", "/dev/nvidia-caps"):
        for node in sorted(glob.glob(pattern)):
            args += ["--dev-bind", node, node]
    return args


def boxes(uid: int) -> dict[str, list[str]]:
    base = ["bwrap", "--die-with-parent", "--unshare-user", "--unshare-net", "--unshare-ipc", "--unshare-pid",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--setenv", "HOME", "/tmp", *nvidia_nodes(), "--"]
    drop = ["env", "HOME=/tmp", "setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    return {"unboxed": [], "boxed as root, own pid ns": base, f"boxed as uid {uid}, own pid ns": drop + base}


def main() -> None:
    machine()
    import cupy as cp
    from grader import devmem
    cp.cuda.runtime.setDevice(0)
    cp.cuda.runtime.free(0)
    line("granularity", devmem.granularity(devmem.current_device()))
    for name, prefix in boxes(1_900_000_123).items():
        m = devmem.allocate(8 << 20)
        cp.cuda.runtime.memset(m.pointer, 0xA5, m.size)
        cp.cuda.runtime.deviceSynchronize()
        fd = devmem.export(m)
        out = subprocess.run([*prefix, sys.executable, "-c", CHILD, str(fd), str(m.size), "vmm", str(REPO)],
                             pass_fds=(fd,), capture_output=True, text=True, timeout=300)
        buf = (ctypes.c_ubyte * 4)()
        cp.cuda.runtime.memcpy(ctypes.addressof(buf), m.pointer, 4, cp.cuda.runtime.memcpyDeviceToHost)
        os.close(fd)
        m.close()
        line(f"vmm fd: {name}", f"rc {out.returncode}; parent reads {bytes(buf).hex()}; "
                                f"{' | '.join(out.stdout.strip().splitlines())} {out.stderr.strip()[-400:]}")
    legacy = cp.cuda.Memory(1 << 20)
    handle = bytes(cp.cuda.runtime.ipcGetMemHandle(legacy.ptr)).hex()
    for name, prefix in boxes(1_900_000_124).items():
        out = subprocess.run([*prefix, sys.executable, "-c", CHILD, "0", "0", "legacy", str(REPO), handle],
                             capture_output=True, text=True, timeout=300)
        line(f"legacy ipc: {name}", (out.stdout.strip().splitlines() or ["-"])[-1] + " " + out.stderr.strip()[-300:])
    m = devmem.allocate(64 << 20)
    fd = devmem.export(m)
    started = time.perf_counter()
    for _ in range(100):
        imported = devmem.import_fd(fd, m.size)
        imported.close()
    line("import+map+unmap, 64 MiB", f"{(time.perf_counter() - started) * 10:.3f} ms each")
    started = time.perf_counter()
    for _ in range(100):
        devmem.allocate(64 << 20).close()
    line("allocate+free, 64 MiB", f"{(time.perf_counter() - started) * 10:.3f} ms each")
    started = time.perf_counter()
    for _ in range(100):
        cp.cuda.Memory(64 << 20)
    line("cupy Memory, 64 MiB (pool)", f"{(time.perf_counter() - started) * 10:.3f} ms each")
    os.close(fd)
    m.close()


if __name__ == "__main__":
    main()
