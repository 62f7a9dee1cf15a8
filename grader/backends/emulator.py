"""The emulator backend: grade a `.cu` file's correctness on any Linux machine with g++.

The build checks the file with nvcc where nvcc exists (so a file nvcc rejects is rejected here with
nvcc's message), rewrites it (`grader.emulator.translate`), and links it with the runtime
(`grader/emulator/runtime.cpp`) into a worker executable.
Every case runs twice, threads in forward and then reversed order, to expose missing barriers.
Emulated runs report correctness only: no timings, no level placement.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import shutil
import statistics
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grader import build, channel, run
from grader import sandbox as sandboxes
from grader.backends.base import Environment, worker_memory_bytes
from grader.libraries import LibraryPolicy, includes_library
from grader.buffers import ArenaPerWorker, SharedArena, SharedHostBuffer
from grader.emulator import CALIBRATION, FOLDER, INCLUDE, RUNTIME
from grader.emulator.translate import translate
from grader.errors import BackendUnavailable, GraderError
from grader.results import JobLimit
from grader.source import Source
from grader.spec import Challenge, Param

EXECUTABLE = "worker"
IFUNC_MESSAGE = ("GNU indirect functions (__attribute__((ifunc)), target_clones) are not supported in emulation: "
                 "their resolvers run before the emulator's runtime starts; grade the file on a GPU")
RUNTIME_FILTERS = 1
"""Seccomp filters the runtime installs itself, before any constructor (runtime.cpp, start_confined)."""
CXX_FLAGS = ("-std=c++17", "-O2", "-fno-strict-aliasing", "-pthread")
NVCC_CHECK_ARCH = (9, 0)

LIMIT_SLACK = 10.0
"""An emulated call may take this many times what the slow model below predicts (beyond the GPU's
limit), so a loaded machine or a kernel slower than the model still finishes."""
THREADS_PER_OUTPUT = 32
"""The slow model: one warp per output element (a shuffle reduction), the costliest structure common
in submissions, plus every floating-point operation done one at a time, plus one emulated thread
for every 4-byte word the challenge says a kernel must move (a reduction has one output but reads N
words: without this its limit stayed at the GPU's 20 s, and 17.8 million elements took 9.8 s)."""
UNTIMED_MAX_FLOPS = 1e9
"""A timed shape a submit checks in emulation does at most this much floating-point work (ten times
the largest randomized matmul) and moves at most UNTIMED_MAX_BYTES (256 MiB, a softmax of 2^25
elements). Measured on this project's 2-core CI machine, such a shape costs about 10 s in all: 1 to 9 s
of emulated kernel and as much again for the grader's inputs, FP64 reference and comparison. Larger
ones (vector_add's and transpose's 300 to 540 MB, 50 s a submit for transpose's four) and a matmul's
10^11 flops (hours) are left out; the report says so."""
UNTIMED_MAX_BYTES = 2 ** 28
CALIBRATION_WARPS = 16_384
CALIBRATION_FLOPS = 2 * 64 * 256 * 2_000
CALIBRATION_REPEATS = 3
FALLBACK_SPEED_NOTE = "the emulator's speed could not be measured here; assumed slow figures"


@dataclass(frozen=True)
class Speed:
    """The emulator's throughput on this machine, all worker threads busy."""

    thread_s: float
    """One emulated thread doing five warp shuffles, as in a warp-per-element reduction."""
    flop_s: float
    """One floating-point operation of a dependent multiply-add chain."""
    measured: bool = True


FALLBACK_SPEED = Speed(thread_s=2e-6, flop_s=2e-8, measured=False)


class EmulatorBackend:
    name = "emulator"
    measures_time = False
    orders = ("forward", "reverse")
    parity_order = "parity"
    """An official challenge's own cases run as a GPU runs them in practice: forward, shared and allocated memory
    zeroed, shuffles from lanes not taking part reading 0 (runtime.cpp, g_gpu_like)."""
    xp = np

    def __init__(self, nvcc: str | None = None, cxx: str | None = None, sandbox=None):
        self.sandbox = sandbox
        found = shutil.which(cxx or "g++")
        if not found:
            raise BackendUnavailable(f"the emulator needs a C++ compiler and {cxx or 'g++'} was not found",
                                     hint="install g++ (Debian/Ubuntu: apt-get install g++)")
        self.cxx = found
        self.cxx_version = _cxx_version(found)
        self._speed: Speed | None = None
        try:
            self.nvcc = build.toolchain(*NVCC_CHECK_ARCH, nvcc)
        except BackendUnavailable:
            self.nvcc = None  # still emulate; the report says nvcc did not check the file

    def environment(self) -> Environment:
        return Environment(self.name, None, None, None, self.nvcc.version if self.nvcc else None, None, None)

    # -- build
    def build(self, source: Source, challenge: Challenge, cache_dir: Path | None,
              libraries: LibraryPolicy = LibraryPolicy.NONE) -> build.BuildResult:
        notes: list[str] = []
        if self.nvcc is not None:
            checked = build.build(build.BuildRequest(source, challenge.prototype(), challenge.entry, self.nvcc,
                                                     cache_dir, challenge.limits.compile_s, self.sandbox,
                                                     libraries=libraries))
            if checked.status is not build.BuildStatus.OK:
                return checked
        library = includes_library(source.text) if libraries is not LibraryPolicy.NONE else None
        if library:
            return build.BuildResult(build.BuildStatus.UNSUPPORTED, (
                f"the file uses {library}, which the library policy allows ({libraries.describe}), but the CPU "
                "emulator runs none of CCCL: grade it on a GPU"))
        else:
            notes.append("nvcc was not found, so nvcc did not check this file; the GPU may reject what the emulator accepts")
        display_path = source.display_path
        translated = translate(source.text)
        if translated.unsupported:
            first = translated.unsupported[0]
            return build.BuildResult(build.BuildStatus.UNSUPPORTED, f"{display_path}:{first.line}: {first.message}")
        notes += [f"{display_path}:{w.line}: {w.message}" for w in translated.warnings]
        unit = _unit(translated.text, display_path, challenge)
        runtime = self._runtime_object(cache_dir, challenge.limits.compile_s)
        key = hashlib.sha256(json.dumps([unit, self.cxx_version, CXX_FLAGS, _runtime_hash()]).encode()).hexdigest()[:24]
        result = build.cached_build(cache_dir, "emu-" + key, EXECUTABLE,
                                    lambda work: self._compile(unit, work, runtime, display_path, challenge))
        if result.status is build.BuildStatus.COMPILE_ERROR and self.nvcc is not None:
            return _emulator_gap(result)
        if result.status is not build.BuildStatus.OK:
            return result
        return dataclasses.replace(result, notes=tuple(notes) + result.notes)

    def _compile(self, unit: str, work: Path, runtime: Path, display_path: str, challenge: Challenge) -> build.BuildResult:
        source = work / "submission.cpp"
        source.write_text(unit)
        build.write_solve_header(work, challenge.prototype())
        command = self._link_command(source.name, runtime)
        tool = build.run_tool(command, work, challenge.limits.compile_s, self.sandbox, self._compile_paths(runtime))
        result = build.compiled(tool, command, work, source, display_path, challenge.entry, challenge.prototype(),
                                challenge.limits.compile_s)
        if result.status is not build.BuildStatus.OK:
            return result
        if self._has_indirect_functions(work, runtime, challenge.limits.compile_s):
            return dataclasses.replace(result, status=build.BuildStatus.UNSUPPORTED, message=IFUNC_MESSAGE)
        return dataclasses.replace(result, artifact=work / EXECUTABLE)

    def _has_indirect_functions(self, work: Path, runtime: Path, timeout_s: float) -> bool:
        """Does the linked worker carry IRELATIVE relocations (GNU ifunc resolvers, target_clones)? The
        dynamic loader runs their resolvers while it relocates, before any .preinit_array entry: code of
        the submission's would run before the runtime has confined the process. Read by readelf, boxed."""
        command = ("readelf", "--relocs", "--wide", EXECUTABLE)
        listing = build.run_tool(command, work, timeout_s, self.sandbox, self._compile_paths(runtime))
        if listing.returncode != 0:
            raise GraderError(f"readelf could not read the emulator's worker:\n{listing.log[-1000:]}",
                              hint="install binutils (readelf), which g++ needs too")
        return any(len(fields) > 2 and fields[2].endswith("_IRELATIVE")
                   for fields in (line.split() for line in listing.log.splitlines()))

    def _compile_paths(self, runtime: Path | None = None) -> tuple[Path, ...]:
        """What the boxed g++ must see: its installation, the runtime's source and headers, its object."""
        return (*build.toolchain_paths(Path(self.cxx)), FOLDER, *((runtime.parent,) if runtime else ()))

    def _link_command(self, source_name: str, runtime: Path) -> tuple[str, ...]:
        """g++ on a translated unit (the compatibility header forced in), linked with the runtime. The
        runtime comes first: its `.preinit_array` entry, which confines the process (crash handlers and
        its seccomp filter) before any static constructor runs, must run before any the submission brings."""
        return (self.cxx, *CXX_FLAGS, "-I", str(INCLUDE), str(runtime), "-include", "cuda_emu.h", "-x", "c++",
                source_name, "-o", EXECUTABLE)

    def _runtime_object(self, cache_dir: Path | None, timeout_s: float) -> Path:
        """The runtime, compiled once per runtime source and compiler. It is the grader's own code, so
        a failure to build it is the grader's (GraderError), never a verdict on a submission."""
        key = "emu-runtime-" + hashlib.sha256(json.dumps([_runtime_hash(), self.cxx_version, CXX_FLAGS]).encode()).hexdigest()[:24]
        command = (self.cxx, *CXX_FLAGS, "-I", str(INCLUDE), "-c", str(RUNTIME), "-o", "runtime.o")

        def compile_in(work: Path) -> build.BuildResult:
            tool = build.run_tool(command, work, timeout_s, self.sandbox, self._compile_paths())
            if tool.returncode != 0:
                raise GraderError("the emulator's runtime failed to compile:\n" + tool.log[-2000:],
                                  hint="this is a grader bug or a broken g++; please report it with this output")
            return build.BuildResult(build.BuildStatus.OK, "compiled", work / "runtime.o", command=command,
                                     seconds=tool.seconds)

        result = build.cached_build(cache_dir, key, "runtime.o", compile_in)
        if result.status is not build.BuildStatus.OK:  # compiled, but not published: a cache problem
            raise GraderError(f"the emulator's runtime could not be cached: {result.message}",
                              hint="check that the cache folder (--cache-dir) is writable")
        return result.artifact

    # -- limits
    def call_limit(self, challenge: Challenge, dims: dict, cache_dir: Path | None) -> run.CallLimit:
        """The GPU's limit plus LIMIT_SLACK times what a warp-per-element kernel of this shape costs
        in emulation on this machine: the emulator is a thousand times slower than a GPU, so the GPU's
        limit alone cut off correct kernels on large shapes."""
        speed = self.speed(cache_dir, challenge.limits.compile_s)
        model_s = _model_s(challenge, dims, speed)
        seconds = challenge.limits.case_s + LIMIT_SLACK * model_s
        why = (f"the emulator's limit for this shape: the challenge's {challenge.limits.case_s:g} s for a GPU, plus "
               f"{LIMIT_SLACK:g}× the {model_s:.2g} s this machine needs to emulate a kernel with one warp per output "
               f"element and one thread per word it moves ({_speed_text(speed)})")
        return run.CallLimit(seconds, why)

    def job_limit(self, challenge: Challenge, cases, cache_dir: Path | None) -> JobLimit:
        """The GPU's bound on the whole job plus, as in `call_limit`, LIMIT_SLACK times the slow model,
        summed over every call the job makes (each case once per thread order)."""
        speed = self.speed(cache_dir, challenge.limits.compile_s)
        model_s = len(self.orders) * sum(_model_s(challenge, dims, speed) for dims in cases)
        seconds = challenge.limits.job_s + LIMIT_SLACK * model_s
        why = (f"the emulator's bound for this job: the challenge's {challenge.limits.job_s:g} s for a GPU "
               f"(limits.job_s), plus {LIMIT_SLACK:g}× the {model_s:.2g} s this machine needs to emulate its "
               f"{len(cases)} cases in {len(self.orders)} thread orders by the per-call limit's model ({_speed_text(speed)})")
        return JobLimit(seconds, why, shape_dependent=True)

    def untimed_checks(self, challenge: Challenge) -> tuple[int, ...]:
        """The timed shapes a submit checks here (correctness only), by the challenge's count of their
        work, the same on every machine: a verdict must not depend on how fast the grader's host is."""
        return tuple(i for i, shape in enumerate(challenge.performance) if _affordable(challenge, dict(shape.dims)))

    def too_large(self, challenge: Challenge, shape) -> str | None:
        """The rule of `untimed_checks`, for a case whose data an official challenge gives: the same on every
        machine, so that which cases a verdict rests on does not depend on the host."""
        dims = dict(shape.dims)
        if _affordable(challenge, dims):
            return None
        flops = challenge.reference.flops(dims) if challenge.reference.flops else 0.0
        moved = challenge.reference.bytes(dims) if challenge.reference.bytes else 0.0
        return (f"not run in emulation: {moved / 2**20:,.0f} MiB of buffers and {flops:.3g} flops, beyond the "
                f"emulator's {UNTIMED_MAX_BYTES / 2**20:,.0f} MiB and {UNTIMED_MAX_FLOPS:.0e} flops a case; a GPU runs it")

    def speed(self, cache_dir: Path | None, timeout_s: float) -> Speed:
        """Measured once per backend, with a trusted calibration program (no submission code)."""
        if self._speed is None:
            self._speed = self._measure_speed(cache_dir, timeout_s)
        return self._speed

    def _measure_speed(self, cache_dir: Path | None, timeout_s: float) -> Speed:
        built = self._calibration_program(cache_dir, timeout_s)
        if built.status is not build.BuildStatus.OK:
            return FALLBACK_SPEED
        executable, box = str(built.artifact), sandboxes.given(self.sandbox)
        before = str(sandboxes.filters_in_box(box))
        worker = run.Worker(lambda commands, results: [executable, "--commands-fd", str(commands),
                                                       "--results-fd", str(results), "--filters-before", before],
                            encode=encode_command, sandbox=box, visible=[built.artifact.parent], filters=RUNTIME_FILTERS)
        with worker:
            if worker.start().outcome is not run.Outcome.OK:
                return FALLBACK_SPEED
            thread_s = _median_seconds(worker, 0, CALIBRATION_WARPS, timeout_s) / (CALIBRATION_WARPS * 32)
            flop_s = _median_seconds(worker, 1, CALIBRATION_FLOPS // 2, timeout_s) / CALIBRATION_FLOPS
        if not (thread_s > 0 and flop_s > 0 and math.isfinite(thread_s + flop_s)):
            return FALLBACK_SPEED
        return Speed(thread_s, flop_s)

    def _calibration_program(self, cache_dir: Path | None, timeout_s: float) -> build.BuildResult:
        runtime = self._runtime_object(cache_dir, timeout_s)
        unit = f'#line 1 "{CALIBRATION.name}"\n' + translate(CALIBRATION.read_text()).text
        key = "emu-calibrate-" + hashlib.sha256(json.dumps([unit, self.cxx_version, CXX_FLAGS, _runtime_hash()])
                                                .encode()).hexdigest()[:24]
        command = self._link_command("calibrate.cpp", runtime)

        def compile_in(work: Path) -> build.BuildResult:
            (work / "calibrate.cpp").write_text(unit)
            tool = build.run_tool(command, work, timeout_s, self.sandbox, self._compile_paths(runtime))
            status = build.BuildStatus.OK if tool.returncode == 0 else build.BuildStatus.COMPILE_ERROR
            return build.BuildResult(status, tool.log, work / EXECUTABLE, log=tool.log, command=command,
                                     seconds=tool.seconds)

        return build.cached_build(cache_dir, key, EXECUTABLE, compile_in)

    # -- run
    def worker(self, built: build.BuildResult, challenge: Challenge) -> run.Worker:
        """The worker inherits its arena's descriptor (bubblewrap passes it through): the buffers the
        grader makes while it runs are reachable by that descriptor only, never by a name."""
        executable = str(built.artifact)
        arena = self._arenas.for_worker()
        box = sandboxes.with_memory(sandboxes.given(self.sandbox), worker_memory_bytes(challenge, self.name))
        before = str(sandboxes.filters_in_box(box))
        return run.Worker(lambda commands, results: [executable, "--commands-fd", str(commands),
                                                     "--results-fd", str(results), "--arena-fd", str(arena.fd),
                                                     "--filters-before", before],
                          encode=lambda command: encode_command(command, arena), sandbox=box,
                          visible=[built.artifact.parent], pass_fds=(arena.fd,), filters=RUNTIME_FILTERS)

    def buffer_memory(self) -> tuple[int, str] | None:
        """The host's physical memory: the buffers are host memory shared with the worker."""
        try:
            return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's memory"
        except (ValueError, OSError):
            return None  # not known here: the allocator says so, if it comes to that

    def buffer(self, name, shape, dtype) -> SharedHostBuffer:
        return SharedHostBuffer(name, shape, dtype, arena=self._arenas.for_buffers())

    @functools.cached_property
    def _arenas(self) -> ArenaPerWorker:
        return ArenaPerWorker()

    def synchronize(self) -> None:
        pass  # host memory: the worker sees writes as soon as they are made

    def free_memory(self) -> None:
        pass


def _model_s(challenge: Challenge, dims: dict, speed: Speed) -> float:
    """What one call at `dims` costs in emulation by the slow model (THREADS_PER_OUTPUT)."""
    outputs = sum(math.prod(p.extent(dims)) for p in challenge.outputs)
    flops = challenge.reference.flops(dims) if challenge.reference.flops else 0.0
    elements = challenge.reference.bytes(dims) / 4 if challenge.reference.bytes else 0.0
    return (outputs * THREADS_PER_OUTPUT + elements) * speed.thread_s + flops * speed.flop_s


def _affordable(challenge: Challenge, dims: dict) -> bool:
    flops = challenge.reference.flops(dims) if challenge.reference.flops else 0.0
    moved = challenge.reference.bytes(dims) if challenge.reference.bytes else 0.0
    return flops <= UNTIMED_MAX_FLOPS and moved <= UNTIMED_MAX_BYTES


def _speed_text(speed: Speed) -> str:
    measured = "measured" if speed.measured else "assumed (measurement failed)"
    return f"{measured} speed: {speed.thread_s * 1e9:.0f} ns a thread, {speed.flop_s * 1e9:.2g} ns a floating-point operation"


def _emulator_gap(failed: build.BuildResult) -> build.BuildResult:
    """nvcc compiled the file, g++ did not: the emulator lacks something the file uses (a CUDA API
    or header it does not provide), which is not the student's error."""
    return dataclasses.replace(failed, status=build.BuildStatus.UNSUPPORTED, message=(
        "nvcc compiles this file, but the emulator cannot: it uses something the emulator does not provide "
        "(a CUDA library, header or API call); grade it on a GPU. The emulator's compiler said:\n" + failed.message))


def encode_command(command: dict, arena: SharedArena | None = None) -> str:
    """The runtime's line protocol: `ID call ORDER N ARG...` with p<start>,<length>@<offset>+<bytes>=<name>
    (a buffer: bytes [start, start+length) of the worker's arena, the pointer `offset` bytes in, at the
    `bytes` of parameter `name`; the rest is guard, which the worker keeps shut to kernels), i<int>,
    f<float> (ID: the request's id, which the answer repeats), `ID ping`, `ID exit`. `arena` is the
    one the worker holds: a buffer of any other would be read as the wrong bytes."""
    request = str(int(command.get("id", 0)))
    if command["op"] in ("exit", "ping"):
        return f"{request} {command['op']}"
    if command["op"] != "call":
        raise ValueError(f"the emulator cannot {command['op']!r}: it reports correctness only")
    args = []
    for arg in command["args"]:
        if "arena" in arg:
            args.append(_encode_buffer(arg, arena))
        elif "int" in arg:
            args.append(f"i{int(arg['int'])}")
        else:
            args.append(f"f{float(arg['float'])!r}")
    return " ".join([request, "call", command.get("order", "forward"), str(len(args)), *args])


def _encode_buffer(arg: dict, arena: SharedArena | None) -> str:
    if arena is None or arg["arena"] != arena.token:
        raise ValueError("a buffer made in an arena this worker does not hold (made for another worker?)")
    name = str(arg["name"])
    if not name.isidentifier() or not name.isascii() or len(name) > 63:
        raise ValueError(f"a buffer name the worker cannot take: {name[:80]!r}")
    return f"p{int(arg['start'])},{int(arg['length'])}@{int(arg['offset'])}+{int(arg['bytes'])}={name}"


def _unit(translated: str, display_path: str, challenge: Challenge) -> str:
    quoted = build.line_name(display_path)
    args = ", ".join(_argument(i, p) for i, p in enumerate(challenge.params))
    return (f'#line 1 "{quoted}"\n{translated}\n#line 1 "{build.EPILOGUE_NAME}"\n'
            f'extern "C" {challenge.prototype()};\n'
            f'extern "C" void emu_invoke_entry(const ::emu::Arg* a) {{ {challenge.entry}({args}); }}\n')


def _argument(index: int, param: Param) -> str:
    if param.ctype.pointer:
        return f"static_cast<{param.ctype.text}>(a[{index}].p)"
    field = "f" if param.ctype.dtype.kind == "f" else "i"
    return f"static_cast<{param.ctype.text}>(a[{index}].{field})"


def _median_seconds(worker: run.Worker, mode: int, count: int, timeout_s: float) -> float:
    """The calibration program's own clock around the call, median of a few calls."""
    times = []
    for _ in range(CALIBRATION_REPEATS):
        reply = worker.call([{"int": mode}, {"int": count}], timeout_s)
        if reply.outcome is not run.Outcome.OK:
            return math.nan
        times.append(reply.data.seconds if isinstance(reply.data, channel.Called) else math.nan)
    return statistics.median(times)


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
