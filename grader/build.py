"""The build stage: nvcc turns a submission into a shared library, cached by content.

Every compile runs boxed (see sandbox.py): the compiler sees the read-only system and toolchain, a
private build folder holding the grader's copy of the submission, and nothing of the grader's home,
cache, database or the student's folder, so an `#include` or `.incbin` of any of them fails as "no
such file". The cache is written only by the grader, from the box's output: each artifact is copied
out as a regular file, its hash recorded at publish in a record sealed with a key only the grader can
read, and both checked at every load.

The translation unit is the user's file behind a `#line` directive, so every diagnostic names the
user's own path, followed by a grader epilogue that (1) re-declares the entry point with the
challenge's exact prototype, so a different signature or missing `extern "C"` fails at compile
time with a clear message, and (2) exports a helper that reads the submission's own CUDA runtime
error state (nvcc links the runtime statically, so only code inside the library can see it).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import hmac
import json
import os
import re
import secrets
import select
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from grader import libraries
from grader import sandbox as boxes
from grader.libraries import LibraryPolicy
from grader.errors import BackendUnavailable, SandboxFailed
from grader.source import Source

BUILD_FORMAT = 2  # bump when the epilogue or the flags change meaning
EPILOGUE_NAME = "grader-epilogue.cu"
SYNC_SYMBOL = "grader_sync_device"
ERROR_NAME_SYMBOL = "grader_error_name"
LIBRARY_NAME = "solution.so"
BASE_FLAGS = ("-O3", "-lineinfo", "-shared", "-Xcompiler", "-fPIC", "-Xlinker", "-z,defs")
MAX_LOG_BYTES = 256 << 10
"""Compiler output kept per compile; the rest is counted and dropped (a flood of warnings)."""
META_FILE = "build.json"
OUT_OF_MEMORY = ("out of memory", "bad_alloc", "virtual memory exhausted", "Cannot allocate memory")
"""How compilers say they hit the memory limit."""


class BuildStatus(enum.Enum):
    OK = "ok"
    COMPILE_ERROR = "compile error"
    INTERFACE_ERROR = "interface error"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    message: str
    path: str | None = None
    line: int | None = None
    column: int | None = None

    def location(self) -> str:
        parts = [p for p in (self.path, self.line, self.column) if p is not None]
        return ":".join(str(p) for p in parts)

    def __str__(self) -> str:
        where = self.location()
        return f"{where}: {self.severity}: {self.message}" if where else f"{self.severity}: {self.message}"


@dataclass(frozen=True)
class Toolchain:
    nvcc: Path
    version: str
    arch_flags: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.nvcc}|{self.version}|{' '.join(self.arch_flags)}"


@dataclass(frozen=True)
class BuildResult:
    status: BuildStatus
    message: str
    artifact: Path | None = None
    """What the worker runs: the shared library (CUDA) or the executable (emulator)."""
    diagnostics: tuple[Diagnostic, ...] = ()
    log: str = ""
    command: tuple[str, ...] = ()
    seconds: float = 0.0
    cached: bool = False
    notes: tuple[str, ...] = ()
    """Things the user should know even though the build succeeded (emulation caveats)."""


@dataclass(frozen=True)
class BuildRequest:
    source: Source
    prototype: str
    entry: str
    toolchain: Toolchain
    cache_dir: Path | None
    timeout_s: float
    box: boxes.Sandbox | None = None
    """The compile's box; None: no bubblewrap, but the limits and the clean environment still apply."""
    extra_flags: tuple[str, ...] = field(default=())
    libraries: LibraryPolicy = LibraryPolicy.NONE
    """Which of CCCL the submission may use (grader.libraries): its hidden headers, its refused symbols."""

    @property
    def display_path(self) -> str:
        return self.source.display_path


# --------------------------------------------------------------------------- toolchain


def arch_flags(major: int, minor: int) -> tuple[str, ...]:
    """nvcc flags for exactly this device; arch-specific features (wgmma on sm_90a) included."""
    cc = f"{major}{minor}"
    if (major, minor) in ((9, 0), (10, 0), (10, 3)):
        return (f"-gencode=arch=compute_{cc}a,code=sm_{cc}a",)
    return (f"-gencode=arch=compute_{cc},code=sm_{cc}",)


def find_nvcc(explicit: str | None = None) -> Path:
    candidates = [explicit] if explicit else [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    raise BackendUnavailable(
        "nvcc was not found" + (f" at {explicit}" if explicit else " on PATH"),
        hint="install the CUDA toolkit, or pass --nvcc /path/to/nvcc",
    )


@functools.lru_cache(maxsize=8)
def nvcc_version(nvcc: Path) -> str:
    out = subprocess.run([str(nvcc), "--version"], capture_output=True, text=True, timeout=60)
    lines = [l for l in out.stdout.splitlines() if l.strip()]
    return " / ".join(lines[-2:]) if lines else "unknown"


def toolchain(major: int, minor: int, nvcc: str | None = None) -> Toolchain:
    path = find_nvcc(nvcc)
    return Toolchain(path, nvcc_version(path), arch_flags(major, minor))


# --------------------------------------------------------------------------- the translation unit


def epilogue(prototype: str) -> str:
    return f"""
#line 1 "{EPILOGUE_NAME}"
#include <cuda_runtime.h>
{type_includes(prototype)}extern "C" {prototype};
extern "C" __attribute__((visibility("default"))) int {SYNC_SYMBOL}(void) {{
    cudaError_t launch = cudaGetLastError();
    cudaError_t sync = cudaDeviceSynchronize();
    return (int)(launch != cudaSuccess ? launch : sync);
}}
extern "C" __attribute__((visibility("default"))) const char* {ERROR_NAME_SYMBOL}(int code) {{
    return cudaGetErrorName((cudaError_t)code);
}}
"""


SOLVE_HEADER = "solve.h"
"""LeetGPU's older starter files begin with `#include "solve.h"` and define `void solve(...)` without
`extern "C"`. Every compile gets this header beside the submission, so such a file builds unchanged:
the declaration it includes gives the definition C linkage."""


TYPE_HEADERS = (("half", "cuda_fp16.h"), ("__nv_bfloat16", "cuda_bf16.h"), ("int8_t", "cstdint"), ("uint8_t", "cstdint"))
"""The header that declares each element type a prototype may name (LeetGPU's solve.h includes them, so a
file that includes "solve.h" before them compiles there)."""


def type_includes(prototype: str) -> str:
    """The #include lines the prototype's element types need: the epilogue declares `solve` after the
    submission, which may not have included them (a starter taking `unsigned char*` includes no <cstdint>)."""
    words = set(re.findall(r"\w+", prototype))
    return "".join(f"#include <{header}>\n" for header in dict.fromkeys(h for t, h in TYPE_HEADERS if t in words))


def write_solve_header(work: Path, prototype: str) -> None:
    (work / SOLVE_HEADER).write_text(f'#pragma once\n{type_includes(prototype)}// The entry point, as the challenge '
                                     f'declares it.\nextern "C" {prototype};\n')


def line_name(display_path: str) -> str:
    """The file name a `#line` directive can carry: quotes, backslashes and control characters (a
    newline would end the directive) become `?`; `compiled` maps it back in the compiler's output."""
    return "".join("?" if c in '"\\' or not c.isprintable() else c for c in display_path)


def translation_unit(source_text: str, display_path: str, prototype: str) -> str:
    return f'#line 1 "{line_name(display_path)}"\n{source_text}\n{epilogue(prototype)}'


def cache_key(unit: str, request: BuildRequest) -> str:
    material = json.dumps([BUILD_FORMAT, unit, request.toolchain.key, BASE_FLAGS, request.extra_flags,
                           request.libraries.value])
    return hashlib.sha256(material.encode()).hexdigest()[:24]


# --------------------------------------------------------------------------- building


def build(request: BuildRequest) -> BuildResult:
    unit = translation_unit(request.source.text, request.display_path, request.prototype)
    command = (str(request.toolchain.nvcc), *BASE_FLAGS, *request.toolchain.arch_flags, *request.extra_flags,
               "-o", LIBRARY_NAME, "submission.cu")
    return cached_build(request.cache_dir, cache_key(unit, request), LIBRARY_NAME,
                        lambda work: _compile(unit, work, command, request))


def cached_build(cache_dir: Path | None, key: str, artifact: str, compile_in) -> BuildResult:
    """Return the cached build for `key`, or run `compile_in(work_dir)` in a private folder outside
    the cache and publish its artifact. A cached entry whose artifact and record do not carry the seal
    made when it was published (a keyed hash, the key readable by the grader alone) is dropped and
    built again: nothing the cache holds runs unless the grader itself put it there."""
    cache_root = cache_dir.resolve() if cache_dir else Path(tempfile.mkdtemp(prefix="grader-build-"))  # tools run elsewhere
    final = cache_root / "builds" / key
    seal_key = integrity_key(cache_root)
    cached = _cached(final, artifact, seal_key)
    if cached is not None:
        return cached
    with tempfile.TemporaryDirectory(prefix="grader-compile-") as work:
        result = compile_in(Path(work))
        if result.status is not BuildStatus.OK:
            return dataclasses.replace(result, artifact=None)
        return _publish(result, final, artifact, seal_key)


INTEGRITY_KEY_FILE = "integrity.key"


def integrity_key(cache_root: Path) -> bytes:
    """The cache's secret key: 32 random bytes in a file only the grader's user may read, made on first
    use. Boxes never see the cache's root (it is hidden, and a root grader's boxes run as other uids),
    so no submission can seal an entry it forged."""
    path = _ensure_dir(cache_root) / INTEGRITY_KEY_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except FileNotFoundError:
            _make_key(path)  # whoever links it first wins; everyone then reads the same key
            continue
        with os.fdopen(fd, "rb") as held:
            info = os.fstat(held.fileno())
            key = held.read(64)
        if info.st_uid == os.geteuid() and not info.st_mode & 0o077 and len(key) == 32:
            return key
        raise OSError(f"{path} is not the grader's own private key file (owner, mode or size changed): "
                      "delete it, and the cache is rebuilt on the next run")
    raise OSError(f"{path} could not be read or made")


def _make_key(path: Path) -> None:
    """Write a new key beside `path` and link it into place: the file appears whole or not at all (a
    grader thread reading it while another wrote it found it empty)."""
    fd, staged = tempfile.mkstemp(prefix=".key-", dir=path.parent)
    try:
        os.write(fd, secrets.token_bytes(32))
        os.close(fd)
        os.link(staged, path)
    except FileExistsError:
        pass
    finally:
        os.unlink(staged)


def _seal(key: bytes, meta: dict) -> str:
    record = json.dumps({k: v for k, v in meta.items() if k != "seal"}, sort_keys=True)
    return hmac.new(key, record.encode(), hashlib.sha256).hexdigest()


def _ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


@dataclass(frozen=True)
class ToolRun:
    returncode: int | None
    """None when the tool ran past its time limit and was killed."""
    log: str
    seconds: float


def run_tool(command: tuple[str, ...], work: Path, timeout_s: float, box: boxes.Sandbox | None = None,
             visible: tuple[Path, ...] = (), masked: tuple[Path, ...] = ()) -> ToolRun:
    """Run a compiler boxed in `work` (its only writable folder; `visible` are shown read-only, `masked`
    folders inside them replaced by empty ones), in its own process group and cgroup so a timeout kills
    everything it started, with a clean environment, hard limits, and its temporaries in a private /tmp
    (or, unboxed, in `work`)."""
    limits = boxes.compile_limits(timeout_s)
    box = dataclasses.replace(box or boxes.make(boxes.SandboxMode.OFF, []), limits=limits)
    home = "/tmp" if box.active else str(_ensure_dir(work / ".tmp"))
    group = boxes.Cgroup.create(limits)
    read_end, write_end = os.pipe()  # bubblewrap writes to write_end once the box is set up
    started = time.perf_counter()
    try:
        with box.launch(list(command), list(visible), writable=[work], chdir=work, info_fd=write_end,
                        masked=list(masked), group=group) as boxed:
            try:
                proc = subprocess.Popen(boxed.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, cwd=work, start_new_session=True,
                                        env=boxes.clean_environment(home=home), preexec_fn=boxed.preexec,
                                        pass_fds=(write_end, *boxed.pass_fds))
            finally:
                os.close(write_end)  # the child holds its own copy
        log, finished = _capped_output(proc, started + timeout_s)
        if not finished:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        box_started = os.read(read_end, 1) != b""  # every writer is gone: EOF unless bubblewrap wrote
    finally:
        group.remove()
        os.close(read_end)
    if box.active and not box_started:
        first_line = log.strip().splitlines()[0] if log.strip() else f"bubblewrap exited with status {proc.returncode}"
        raise SandboxFailed(first_line)
    returncode = proc.returncode if finished else None
    return ToolRun(returncode, log, time.perf_counter() - started)


def _capped_output(proc: subprocess.Popen, deadline: float) -> tuple[str, bool]:
    """The tool's output (its first MAX_LOG_BYTES), and whether it finished before the deadline."""
    kept, dropped = bytearray(), 0
    fd = proc.stdout.fileno()
    try:
        while True:
            left = deadline - time.perf_counter()
            if left <= 0:
                return _log_text(kept, dropped), False
            if not select.select([fd], [], [], left)[0]:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return _log_text(kept, dropped), True
            room = MAX_LOG_BYTES - len(kept)
            kept += chunk[:room]
            dropped += max(0, len(chunk) - room)
    finally:
        proc.stdout.close()


def _log_text(kept: bytearray, dropped: int) -> str:
    text = kept.decode(errors="replace")
    return text + (f"\n[{dropped} more bytes of compiler output not shown]" if dropped else "")


def compiled(tool: ToolRun, command: tuple[str, ...], work: Path, source: Path, display_path: str,
             entry: str, prototype: str, timeout_s: float,
             policy: LibraryPolicy = LibraryPolicy.NONE) -> BuildResult:
    """A BuildResult from a compiler run, with diagnostics pointing at the user's file."""
    if tool.returncode is None:
        return BuildResult(BuildStatus.COMPILE_ERROR, f"compilation took longer than {timeout_s:g} s and was stopped",
                           command=command, seconds=tool.seconds)
    if tool.returncode == -signal.SIGXCPU or tool.returncode == 128 + signal.SIGXCPU:
        return BuildResult(BuildStatus.COMPILE_ERROR, f"compilation used more than {timeout_s:g} s of CPU time and "
                           "was stopped", log=tool.log, command=command, seconds=tool.seconds)
    shown_as = line_name(display_path)
    log = tool.log.replace(str(source), shown_as).replace(str(work) + os.sep, "")
    diagnostics = tuple(dataclasses.replace(d, path=display_path) if d.path == shown_as else d
                        for d in parse_diagnostics(log))
    log = log.replace(shown_as, display_path) if shown_as != display_path else log
    if tool.returncode != 0:
        status, message = classify_failure(diagnostics, log, entry, prototype, policy)
        return BuildResult(status, message, diagnostics=diagnostics, log=log, command=command, seconds=tool.seconds)
    return BuildResult(BuildStatus.OK, "compiled", None, diagnostics, log, command, tool.seconds)


def _compile(unit: str, work: Path, command: tuple[str, ...], request: BuildRequest) -> BuildResult:
    source = work / "submission.cu"
    source.write_text(unit)
    write_solve_header(work, request.prototype)
    tool = run_tool(command, work, request.timeout_s, request.box, toolchain_paths(request.toolchain.nvcc),
                    masked=library_header_dirs(request.toolchain.nvcc, request.libraries.hidden))
    result = compiled(tool, command, work, source, request.display_path, request.entry, request.prototype,
                      request.timeout_s, request.libraries)
    if result.status is not BuildStatus.OK:
        return result
    result = _check_exports(dataclasses.replace(result, artifact=work / LIBRARY_NAME), request)
    if result.status is not BuildStatus.OK:
        return result
    found = libraries.refused(request.libraries, result.artifact)
    if found:
        return dataclasses.replace(result, status=BuildStatus.COMPILE_ERROR, message=(
            f"the library holds code the library policy does not allow ({request.libraries.describe}): {found}. "
            + _allowing(request.libraries)))
    return result


def _allowing(policy: LibraryPolicy) -> str:
    """What the student can do: write it, or ask for the policy that allows it."""
    if policy is LibraryPolicy.NONE:
        return ("Write the kernel yourself (an instructor may allow CUB's block-level collectives, --libraries block, "
                "or all of CCCL, --libraries cccl)")
    return "Write the whole-problem part yourself; block- and warp-level CUB collectives are allowed"


LIBRARIES = ("cub", "thrust")
"""Header-only libraries a submission may not use. Being headers, nothing is left undefined at link
time for the check above to see; instead the compile's box hides their folders (library_header_dirs)."""
LIBRARY_INCLUDE = re.compile(r"\b(cub|thrust)/")
"""A library's folder in the name of a file the compiler did not find (see _names_library_header)."""


@functools.cache
def library_header_dirs(compiler: Path, hidden: tuple[str, ...] = LIBRARIES) -> tuple[Path, ...]:
    """CUB's and Thrust's header folders as this nvcc finds them (CUDA 13: include/cccl/cub; CUDA 12:
    include/cub), hidden from every compile of a submission when the sandbox is active. nvcc (often a
    wrapper script) says where it looks in a dry run: the folders after -I and -isystem."""
    try:
        dry = subprocess.run([str(compiler), "--dryrun", "-x", "cu", "-c", os.devnull, "-o", os.devnull],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    folders = {Path(m) for m in re.findall(r'(?:-I|-isystem"?\s*"?)"?([^"\s]+)', dry.stdout + dry.stderr)}
    found = {(f / name).resolve() for f in folders for name in hidden if (f / name).is_dir()}
    return tuple(sorted(found))


def toolchain_paths(compiler: Path) -> tuple[Path, ...]:
    """What a compile must see beside the system: the compiler's installation (two levels up from
    its binary: /usr/local/cuda-13.0 for nvcc), in case it lives under a hidden folder."""
    return (Path(compiler).resolve().parent.parent,)


def _cached(final: Path, artifact: str, key: bytes) -> BuildResult | None:
    """The published build, if there is one, its record sealed with the cache's key, and its artifact
    still with the hash that record holds."""
    try:
        meta = json.loads((final / META_FILE).read_text())
        intact = (isinstance(meta, dict) and hmac.compare_digest(str(meta.get("seal", "")), _seal(key, meta))
                  and meta.get("sha256") == _file_sha256(final / artifact))
    except (OSError, ValueError):
        intact = False
    if not intact:
        if final.exists():
            shutil.rmtree(final, ignore_errors=True)  # changed since publish: build again, never load it
        return None
    diagnostics = tuple(Diagnostic(**d) for d in meta["diagnostics"])
    return BuildResult(BuildStatus.OK, "compiled (cached)", final / artifact, diagnostics, meta["log"],
                       tuple(meta["command"]), meta["seconds"], cached=True, notes=tuple(meta.get("notes", ())))


def _publish(result: BuildResult, final: Path, artifact: str, key: bytes) -> BuildResult:
    """Copy the box's artifact (a regular file, never followed through a link) into a staging folder
    of the cache with its hash and seal, then rename the folder into place: a half-written build is
    never seen. The entry is the grader's, readable by all (a box's uid must load it), writable by none
    else."""
    staging = Path(tempfile.mkdtemp(prefix=".tmp-", dir=_ensure_dir(final.parent)))
    os.chmod(staging, 0o755)
    try:
        digest = _copy_regular(result.artifact, staging / artifact)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        return BuildResult(BuildStatus.COMPILE_ERROR, f"the build produced no usable {artifact}: {error}",
                           log=result.log, command=result.command, seconds=result.seconds)
    meta = {"log": result.log, "command": list(result.command), "seconds": result.seconds, "sha256": digest,
            "diagnostics": [d.__dict__ for d in result.diagnostics], "notes": list(result.notes)}
    meta["seal"] = _seal(key, meta)
    (staging / META_FILE).write_text(json.dumps(meta))
    os.chmod(staging / META_FILE, 0o444)
    try:
        staging.rename(final)
    except OSError:  # another process published the same key first; theirs is identical
        shutil.rmtree(staging, ignore_errors=True)
    return dataclasses.replace(result, artifact=final / artifact)


def _copy_regular(source: Path, dest: Path) -> str:
    """Copy a file the box wrote into the cache, read-only; returns its SHA-256."""
    with open(dest, "xb") as out:
        digest = _file_sha256(source, out.write)
    os.chmod(dest, 0o555)
    return digest


def _file_sha256(path: Path, sink=None) -> str:
    """The SHA-256 of a regular file, read without following a link (anything else is an OSError);
    each chunk also goes to `sink` where one is given."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    digest = hashlib.sha256()
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path.name} is not a regular file")
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            if sink is not None:
                sink(chunk)
    finally:
        os.close(fd)
    return digest.hexdigest()


# --------------------------------------------------------------------------- diagnostics

_EDG = re.compile(r"^(?P<path>[^\s(][^(]*)\((?P<line>\d+)\): (?P<sev>catastrophic error|error|warning|remark)(?: #[\w-]+)?: (?P<msg>.*)$")
_GCC = re.compile(r"^(?P<path>[^:\s][^:]*):(?P<line>\d+):(?:(?P<col>\d+):)? (?P<sev>fatal error|error|warning): (?P<msg>.*)$")
_PTXAS = re.compile(r"^ptxas (?P<sev>fatal|error|warning)\s*: (?P<msg>.*)$")
# The log quotes source text (an #error line), so every pattern here must be linear in a line: the three
# above are anchored at its start and each of their `[^(]*`, `[^:]*` stops at the first `(` or `:`. A
# pattern searched for must not scan far from each place it starts: `([^']+)'` after the phrase below
# would scan to the end of the line from every quote-less repetition of it, so the symbol is cut out
# with one search for its closing quote instead.
_UNDEFINED = re.compile(r"undefined reference to `(?!')")
_MISSING_FILE = re.compile(r"(?<!\S)(\S*)(?=: No such file)")  # the phrase may run into the next name


def parse_diagnostics(log: str) -> tuple[Diagnostic, ...]:
    """nvcc's front end (EDG), host compiler (gcc), ptxas and linker messages, as Diagnostics."""
    found: list[Diagnostic] = []
    for line in log.splitlines():
        if m := _EDG.match(line):
            sev = "error" if "error" in m["sev"] else m["sev"]
            found.append(Diagnostic(sev, m["msg"].strip(), m["path"], int(m["line"])))
        elif m := _GCC.match(line):
            sev = "error" if "error" in m["sev"] else m["sev"]
            col = int(m["col"]) if m["col"] else None
            found.append(Diagnostic(sev, m["msg"].strip(), m["path"], int(m["line"]), col))
        elif m := _PTXAS.match(line):
            found.append(Diagnostic("warning" if m["sev"] == "warning" else "error", "ptxas: " + m["msg"].strip()))
        elif symbol := _undefined_symbol(line):
            found.append(Diagnostic("error", f"undefined reference to `{symbol}'"))
    return tuple(found)


def _undefined_symbol(line: str) -> str | None:
    """The symbol in the linker's "undefined reference to `symbol'"."""
    m = _UNDEFINED.search(line)
    end = line.find("'", m.end()) if m else -1
    return line[m.end():end] if end != -1 else None


def _names_library_header(message: str) -> bool:
    """Whether the message is the compiler's "cub/...: No such file": the missing file's name first (a
    search that starts only where a name starts), then the library in it; one pattern for both, searched,
    would scan from every `cub/` of `cub/cub/cub/...` to the end of the name."""
    return any(LIBRARY_INCLUDE.search(m[1]) for m in _MISSING_FILE.finditer(message))


def classify_failure(diagnostics: tuple[Diagnostic, ...], log: str, entry: str,
                     prototype: str, policy: LibraryPolicy = LibraryPolicy.NONE) -> tuple[BuildStatus, str]:
    errors = [d for d in diagnostics if d.severity == "error"]
    in_epilogue = [d for d in errors if d.path == EPILOGUE_NAME]
    undefined = [d for d in errors if d.message.startswith("undefined reference")]
    # By the same tests, not by `d not in in_epilogue`: that compares every error with every other.
    own = [d for d in errors if d.path != EPILOGUE_NAME and not d.message.startswith("undefined reference")]
    if in_epilogue and not own:
        return BuildStatus.INTERFACE_ERROR, _signature_message(in_epilogue[0], entry, prototype)
    if undefined and not own:
        symbols = ", ".join(sorted({d.message.split("`")[1] for d in undefined}))
        return BuildStatus.INTERFACE_ERROR, (
            f"the library calls functions that are not linked: {symbols}. Only the CUDA runtime is "
            "available; library calls (cuBLAS, cuDNN, thrust's device backends…) are not allowed: "
            "write the kernel yourself")
    library = next((d for d in own if _names_library_header(d.message)), None)
    if library:
        hidden = " and ".join(name.capitalize() if name == "thrust" else name.upper() for name in policy.hidden)
        return BuildStatus.COMPILE_ERROR, (
            f"{library}: {hidden} {'are' if ' and ' in hidden else 'is'} library code the library policy does not "
            f"allow ({policy.describe}); the compiler does not see {'them' if ' and ' in hidden else 'it'}. "
            + _allowing(policy))
    if own:
        first = own[0]
        return BuildStatus.COMPILE_ERROR, f"{first}" + (f" (and {len(own) - 1} more)" if len(own) > 1 else "")
    lines = log.strip().splitlines()
    starved = next((line for line in lines if any(sign in line for sign in OUT_OF_MEMORY)), None)
    if starved:
        return BuildStatus.COMPILE_ERROR, (
            f"the compiler ran out of memory ({starved.strip()}): a compile may use at most "
            f"{boxes.COMPILE_DATA_BYTES >> 30} GiB per process; huge initialized arrays or "
            "template explosions do not fit")
    return BuildStatus.COMPILE_ERROR, (lines[-1:] or ["nvcc failed without a message"])[0]


def _signature_message(diagnostic: Diagnostic, entry: str, prototype: str) -> str:
    text = diagnostic.message
    if "linkage specification is incompatible" in text or "conflicting declaration" in text and "linkage" in text:
        return f'`{entry}` has C++ linkage, so its exported name is mangled. Declare it as extern "C" {prototype}'
    return (f"`{entry}`'s signature differs from the challenge's. The grader calls: "
            f'extern "C" {prototype}  (compiler: {text})')


# --------------------------------------------------------------------------- exported symbols


def exported_functions(library: Path) -> list[str]:
    """Defined dynamic symbols of the library, read with nm (never by loading it here)."""
    out = subprocess.run(["nm", "-D", "--defined-only", "--format=posix", str(library)],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise RuntimeError(f"nm failed on {library}: {out.stderr.strip()}")
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def demangle(names: list[str]) -> list[str]:
    if not names:
        return []
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, timeout=60)
    return out.stdout.splitlines() if out.returncode == 0 else names


def _check_exports(result: BuildResult, request: BuildRequest) -> BuildResult:
    names = exported_functions(result.artifact)
    if request.entry in names:
        return result
    mangled = [n for n, d in zip(names, demangle([n for n in names])) if n.startswith("_Z") and
               d.split("(")[0].split("::")[-1] == request.entry]
    if mangled:
        message = (f'`{request.entry}` is compiled with C++ linkage (exported as {mangled[0]}); '
                   f'declare it extern "C": extern "C" {request.prototype}')
    else:
        message = (f"the file defines no function named `{request.entry}`. Add: "
                   f'extern "C" {request.prototype} {{ ... launch your kernel ... }}  '
                   f"(`grader init` writes a starter file)")
    return dataclasses.replace(result, status=BuildStatus.INTERFACE_ERROR, message=message)
