"""Grading on a GPU must not make CuPy compile kernels: on a fresh machine each elementwise or
reduction kernel costs NVRTC about a second (39 s against 3.4 s warm, measured on an H200).

The source scan below covers one thing: every call made through the CuPy module (`cp.…`, `cupy.…`,
`xp.…`, `self.cp.…`) in the modules on the CUDA grading path must be one of the calls listed as
compiling nothing. It does not see methods called on device arrays (`.astype`, `.fill`, `.sum`), which
look like numpy's; the GPU test at the end, which counts the files in an empty CuPy kernel cache after
a real grading, covers those too.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NAIVE, ROOT

CUDA_PATH = [ROOT / "grader" / name for name in ("buffers.py", "case.py", "check.py", "backends/cuda.py", "l2flush.py",
                                                "timing.py", "worker.py")]
CUDA_PATH += sorted((ROOT / "challenges").glob("*/reference.py"))
CUPY_NAMES = {"cp", "cupy", "xp"}
COMPILES_NOTHING = {
    # allocation, copies, byte fills, synchronization, events: the CUDA runtime itself
    "cuda.Memory", "cuda.MemoryPointer", "cuda.alloc", "cuda.alloc_pinned_memory", "ndarray", "get_default_memory_pool",
    "cuda.runtime.memsetAsync", "cuda.runtime.deviceSynchronize", "cuda.runtime.setDevice", "cuda.runtime.free",
    "cuda.runtime.memset", "cuda.runtime.memcpyAsync", "cuda.runtime.memGetInfo",
    "cuda.runtime.getDevice", "cuda.runtime.pointerGetAttributes", "cuda.get_current_stream",
    "cuda.UnownedMemory",  # wraps device memory the grader mapped itself (grader/devmem.py)
    "cuda.Event", "cuda.get_elapsed_time", "cuda.get_cublas_handle",
    # a module image given to the driver: the L2 flush's hand-written PTX, which the driver's JIT turns
    # into machine code in milliseconds (no NVRTC)
    "cuda.function.Module",
    # cuBLAS: matmul of 2-D float arrays goes to gemmEx (the library baseline, timed only at the large
    # performance shapes; a 1×1 product would be a compiled reduction, hence matmul64's DGEMM)
    "matmul",
}


LIBRARY_BASELINE = "baseline"
"""A challenge's `baseline` is the library the submission is compared with (cuBLAS for matmul,
`cupy.add` for vector_add): whatever that library does is its own cost, timed as such, and a CuPy
elementwise call there compiles once per machine (CuPy caches it). The scan skips it; everything that
checks a submission must compile nothing."""


def cupy_calls(path: Path) -> list[tuple[int, str]]:
    """(line, dotted name after the CuPy root) for every call whose callee is rooted at a CuPy name,
    outside a challenge's library baseline."""
    tree = ast.parse(path.read_text(), str(path))
    skipped = {id(inner) for node in ast.walk(tree)
               if isinstance(node, ast.FunctionDef) and node.name == LIBRARY_BASELINE for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in skipped:
            chain = _chain(node.func)
            if chain and chain[0] in CUPY_NAMES and len(chain) > 1:
                found.append((node.lineno, ".".join(chain[1:])))
    return found


def _chain(node) -> list[str]:
    """`self.cp.cuda.alloc` → ["cp", "cuda", "alloc"]; [] for a callee not rooted at a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return []
    parts.append(node.id)
    parts.reverse()
    return parts[1:] if parts[0] == "self" else parts


def test_the_scan_sees_a_compiling_call(tmp_path):
    """The scan itself: a call like the ones removed from the check stage is found and not allowed."""
    sample = tmp_path / "sample.py"
    sample.write_text("def f(xp, a):\n    return xp.count_nonzero(xp.abs(a) > 1)\n\n"
                      "class B:\n    def g(self):\n        self.cp.cuda.runtime.deviceSynchronize()\n")
    calls = cupy_calls(sample)
    assert sorted(name for _, name in calls) == ["abs", "count_nonzero", "cuda.runtime.deviceSynchronize"]
    assert {name for _, name in calls} - COMPILES_NOTHING == {"count_nonzero", "abs"}


@pytest.mark.parametrize("path", CUDA_PATH, ids=lambda p: str(p.relative_to(ROOT)))
def test_cuda_path_calls_only_what_compiles_nothing(path):
    unknown = [f"{path.name}:{line}: {name}" for line, name in cupy_calls(path) if name not in COMPILES_NOTHING]
    assert not unknown, ("CuPy calls that may compile a kernel at run time (check CuPy's source; if the call "
                         "compiles nothing, add it to COMPILES_NOTHING): " + "; ".join(unknown))


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("command", [["run"], ["submit", "--no-placement", "--timing-budget", "0.1"]])
def test_grading_leaves_the_cupy_kernel_cache_empty(tmp_path, command):
    kernels = tmp_path / "cupy-cache"
    kernels.mkdir()
    env = dict(os.environ, CUPY_CACHE_DIR=str(kernels))
    done = subprocess.run([sys.executable, "-m", "grader", *command, str(NAIVE), "--backend", "cuda", "--seed", "1",
                           "--cache-dir", str(tmp_path / "builds"), "--sandbox", "off"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    compiled = sorted(str(p.relative_to(kernels)) for p in kernels.rglob("*") if p.is_file())
    assert compiled == [], f"CuPy compiled kernels while grading: {compiled}"
