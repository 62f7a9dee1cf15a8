"""--sanitize: the functional cases again under NVIDIA compute-sanitizer, findings at the user's line.

memcheck reports accesses outside every allocation (our guard regions sit inside allocations, so
the check stage covers those); racecheck reports shared-memory hazards between threads, a
missing __syncthreads() for instance. Builds carry -lineinfo and a #line directive, so the
sanitizer names the user's own file and line.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from grader import case as cases, run
from grader.errors import BackendUnavailable

TOOLS = ("memcheck", "racecheck")
OUTPUT_BYTES = 1 << 20
# Linear on any output (it holds what the program printed): `^=+` is tried only where a line starts,
# and `[^\s:]+` stops at the next space or colon.
_ERROR = re.compile(r"^=+\s+(?:Error: )?(?P<what>(?:Invalid|Race|Program hit|Uninitialized|Barrier|Misaligned)[^\n]*)$", re.M)
_WHERE = re.compile(r"in (?P<file>[^\s:]+\.cu):(?P<line>\d+)")


@dataclass(frozen=True)
class Finding:
    tool: str
    what: str
    where: tuple[str, ...]
    """file:line locations the sanitizer gave, the user's first."""

    def __str__(self) -> str:
        return f"{self.tool}: {self.what}" + (f" at {', '.join(self.where)}" if self.where else "")


def find_tool() -> str:
    found = shutil.which("compute-sanitizer") or ("/usr/local/cuda/bin/compute-sanitizer"
                                                  if Path("/usr/local/cuda/bin/compute-sanitizer").exists() else None)
    if not found:
        raise BackendUnavailable("--sanitize needs NVIDIA compute-sanitizer, which was not found",
                                 hint="it ships with the CUDA toolkit (cuda/bin/compute-sanitizer)")
    return found


# The report's first access, then the first second one after it: two searches, not one pattern with
# `.*?` between them, which rescans to the end of the block from every first access when there is no
# second one (the block holds what the program printed: quadratic).
_RACE_FIRST = re.compile(r"Race reported between (\w+) access")
_RACE_SECOND = re.compile(r"and (\w+) access")


def _describe(what: str, block: str) -> str:
    first = _RACE_FIRST.search(block)
    second = first and _RACE_SECOND.search(block, first.end())
    if second:
        return f"race between a {first[1].lower()} and a {second[1].lower()} of shared memory"
    return what.split(" at ", 1)[0].strip().rstrip(".")


def parse(tool: str, output: str, display_path: str) -> list[Finding]:
    """Findings in `output`; the 'Program hit …' aftermath of a real finding is dropped."""
    findings = []
    blocks = re.split(r"\n(?==+\s+(?:Error: )?(?:Invalid|Race|Program hit|Uninitialized|Barrier|Misaligned))", output)
    for block in blocks:
        m = _ERROR.search(block)
        if not m:
            continue
        places = [f"{w['file']}:{w['line']}" for w in _WHERE.finditer(block)]
        own = [p for p in places if p.startswith(display_path)] or places
        findings.append(Finding(tool, _describe(m["what"], block), tuple(dict.fromkeys(own))[:3]))
    real = [f for f in findings if not f.what.startswith("Program hit")]
    unique = {str(f): f for f in (real or findings)}
    return list(unique.values())


def sanitize(challenge, backend, built, display_path: str, seed: int, progress=None) -> tuple[Finding, ...]:
    tool_path = find_tool()
    findings: list[Finding] = []
    for tool in TOOLS:
        if progress:
            progress.stage(f"compute-sanitizer {tool}", total=len(challenge.functional))
        prefix = [tool_path, "--tool", tool, "--print-limit", "20", "--target-processes", "all"]
        with run.python_worker(built.artifact, challenge.entry, backend.sandbox, prefix=prefix) as worker:
            if worker.start().outcome is not run.Outcome.OK:
                findings.append(Finding(tool, "the worker did not start under the sanitizer", ()))
                continue
            for index, shape in enumerate(challenge.functional):
                if progress:
                    progress.advance(shape.label())
                case = cases.prepare(challenge, shape, cases.rng_for(seed, cases.Purpose.FUNCTIONAL, index), backend)
                try:
                    reply = worker.call(cases.worker_args(challenge, case), challenge.limits.case_s * 20)
                finally:
                    case.release()
                if reply.outcome is not run.Outcome.OK:
                    break
            worker.stop()
            findings += parse(tool, worker.output_text(OUTPUT_BYTES), display_path)
    return tuple(findings)
