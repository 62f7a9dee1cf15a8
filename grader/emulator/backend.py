"""The emulator backend: grade a `.cu` file's correctness on any Linux machine with g++.

The build checks the file with nvcc where nvcc exists (so a file nvcc rejects is rejected here with
nvcc's message), rewrites it (`translate`), and links it with the runtime into a worker executable.
Every case runs twice, threads in forward and then reversed order, to expose missing barriers.
Emulated runs report correctness only: no timings, no level placement.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np

from grader import build, run
from grader.buffers import SharedHostBuffer
from grader.cuda_backend import Environment
from grader.emulator.translate import translate
from grader.errors import BackendUnavailable
from grader.spec import Challenge, Param

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
RUNTIME = HERE / "runtime.cpp"
EXECUTABLE = "worker"
CXX_FLAGS = ("-std=c++17", "-O2", "-fno-strict-aliasing", "-pthread")
NVCC_CHECK_ARCH = (9, 0)


class EmulatorBackend:
    name = "emulator"
    measures_time = False
    orders = ("forward", "reverse")
    xp = np

    def __init__(self, nvcc: str | None = None, cxx: str | None = None, sandbox=None):
        self.sandbox = sandbox
        found = shutil.which(cxx or "g++")
        if not found:
            raise BackendUnavailable(f"the emulator needs a C++ compiler and {cxx or 'g++'} was not found",
                                     hint="install g++ (Debian/Ubuntu: apt-get install g++)")
        self.cxx = found
        self.cxx_version = _cxx_version(found)
        try:
            self.nvcc = build.toolchain(*NVCC_CHECK_ARCH, nvcc)
        except BackendUnavailable:
            self.nvcc = None  # still emulate; the report says nvcc did not check the file

    def environment(self) -> Environment:
        return Environment(self.name, None, None, None, self.nvcc.version if self.nvcc else None, None, None)

    # -- build
    def build(self, source: Path, display_path: str, challenge: Challenge, cache_dir: Path | None) -> build.BuildResult:
        notes: list[str] = []
        if self.nvcc is not None:
            checked = build.build(build.BuildRequest(source, display_path, challenge.prototype(), challenge.entry,
                                                     self.nvcc, cache_dir, challenge.limits.compile_s))
            if checked.status is not build.BuildStatus.OK:
                return checked
        else:
            notes.append("nvcc was not found, so nvcc did not check this file; the GPU may reject what the emulator accepts")
        try:
            text = source.read_text(errors="replace")
        except OSError as exc:
            return build.unreadable(display_path, exc)
        translated = translate(text)
        if translated.unsupported:
            first = translated.unsupported[0]
            return build.BuildResult(build.BuildStatus.UNSUPPORTED, f"{display_path}:{first.line}: {first.message}")
        notes += [f"{display_path}:{w.line}: {w.message}" for w in translated.warnings]
        unit = _unit(translated.text, display_path, challenge)
        runtime = self._runtime_object(cache_dir, challenge.limits.compile_s)
        if isinstance(runtime, build.BuildResult):
            return runtime
        key = hashlib.sha256(json.dumps([unit, self.cxx_version, CXX_FLAGS, _runtime_hash()]).encode()).hexdigest()[:24]
        result = build.cached_build(cache_dir, "emu-" + key, EXECUTABLE,
                                    lambda work: self._compile(unit, work, runtime, display_path, challenge))
        if result.status is not build.BuildStatus.OK:
            return result
        return dataclasses.replace(result, notes=tuple(notes) + result.notes)

    def _compile(self, unit: str, work: Path, runtime: Path, display_path: str, challenge: Challenge) -> build.BuildResult:
        source = work / "submission.cpp"
        source.write_text(unit)
        command = (self.cxx, *CXX_FLAGS, "-I", str(INCLUDE), "-include", "cuda_emu.h", "-x", "c++", source.name,
                   "-x", "none", str(runtime), "-o", EXECUTABLE, "-lrt")
        tool = build.run_tool(command, work, challenge.limits.compile_s)
        result = build.compiled(tool, command, work, source, display_path, challenge.entry, challenge.prototype(),
                                challenge.limits.compile_s)
        if result.status is not build.BuildStatus.OK:
            return result
        return dataclasses.replace(result, artifact=work / EXECUTABLE)

    def _runtime_object(self, cache_dir: Path | None, timeout_s: float) -> Path | build.BuildResult:
        """The runtime, compiled once per runtime source and compiler."""
        key = "emu-runtime-" + hashlib.sha256(json.dumps([_runtime_hash(), self.cxx_version, CXX_FLAGS]).encode()).hexdigest()[:24]
        command = (self.cxx, *CXX_FLAGS, "-I", str(INCLUDE), "-c", str(RUNTIME), "-o", "runtime.o")

        def compile_in(work: Path) -> build.BuildResult:
            tool = build.run_tool(command, work, timeout_s)
            if tool.returncode != 0:
                return build.BuildResult(build.BuildStatus.COMPILE_ERROR,
                                         "the grader's emulator runtime failed to compile (a grader bug):\n" + tool.log,
                                         log=tool.log, command=command, seconds=tool.seconds)
            return build.BuildResult(build.BuildStatus.OK, "compiled", work / "runtime.o", command=command,
                                     seconds=tool.seconds)

        result = build.cached_build(cache_dir, key, "runtime.o", compile_in)
        return result.artifact if result.status is build.BuildStatus.OK else result

    # -- run
    def worker(self, built: build.BuildResult, challenge: Challenge) -> run.Worker:
        executable = str(built.artifact)
        return run.Worker(lambda commands, results: [executable, "--commands-fd", str(commands),
                                                     "--results-fd", str(results)], encode=encode_command,
                          sandbox=self.sandbox, visible=[built.artifact.parent])

    def buffer(self, name, shape, dtype) -> SharedHostBuffer:
        return SharedHostBuffer(name, shape, dtype)

    def synchronize(self) -> None:
        pass  # host memory: the worker sees writes as soon as they are made

    def free_memory(self) -> None:
        pass


def encode_command(command: dict) -> str:
    """The runtime's line protocol: `call ORDER N ARG...` with p<shm>@<offset>, i<int>, f<float>."""
    if command["op"] == "exit":
        return "exit"
    if command["op"] != "call":
        raise ValueError(f"the emulator cannot {command['op']!r}: it reports correctness only")
    args = []
    for arg in command["args"]:
        if "shm" in arg:
            args.append(f"p{arg['shm']}@{arg['offset']}")
        elif "int" in arg:
            args.append(f"i{int(arg['int'])}")
        else:
            args.append(f"f{float(arg['float'])!r}")
    return " ".join(["call", command.get("order", "forward"), str(len(args)), *args])


def _unit(translated: str, display_path: str, challenge: Challenge) -> str:
    quoted = display_path.replace("\\", "\\\\").replace('"', '\\"')
    args = ", ".join(_argument(i, p) for i, p in enumerate(challenge.params))
    return (f'#line 1 "{quoted}"\n{translated}\n#line 1 "{build.EPILOGUE_NAME}"\n'
            f'extern "C" {challenge.prototype()};\n'
            f'extern "C" void emu_invoke_entry(const ::emu::Arg* a) {{ {challenge.entry}({args}); }}\n')


def _argument(index: int, param: Param) -> str:
    if param.ctype.pointer:
        return f"static_cast<{param.ctype.text}>(a[{index}].p)"
    field = "f" if param.ctype.dtype.kind == "f" else "i"
    return f"static_cast<{param.ctype.text}>(a[{index}].{field})"


@functools.lru_cache(maxsize=1)
def _runtime_hash() -> str:
    digest = hashlib.sha256(RUNTIME.read_bytes())
    for header in sorted(INCLUDE.glob("*.h")):
        digest.update(header.name.encode() + header.read_bytes())
    return digest.hexdigest()


@functools.lru_cache(maxsize=4)
def _cxx_version(cxx: str) -> str:
    out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines()[0] if out.stdout else "unknown"
