"""The library policy: which of CUDA's own C++ libraries (CCCL: CUB, Thrust) a submission may use.

LeetGPU's statements forbid library code, and the grader's default (`none`) keeps that rule: the compile's
box hides CUB's and Thrust's headers. Real solutions use them, mostly for block-level collectives
(`cub::BlockReduce`, `BlockScan`, `BlockLoad`, `WarpReduce`), a few for device-wide algorithms that do the whole
problem (`cub::DeviceScan`, `DeviceRadixSort`, Thrust). An instructor may allow either, per run or per class:

- `block`: CCCL's headers are visible (CUB's include Thrust's); a library holding a kernel of CUB's or Thrust's
  own (their device-wide algorithms: found by name in the built library, which no macro hides) is refused.
- `cccl`: all of CUB and Thrust.

Every report states the policy it was graded under. The CPU emulator runs none of CCCL: where the policy
allows a library the file includes, the verdict there is UNSUPPORTED (grade it on a GPU).
"""

from __future__ import annotations

import enum
import re
import subprocess
from pathlib import Path


class LibraryPolicy(enum.Enum):
    NONE = "none"
    BLOCK = "block"
    CCCL = "cccl"

    @property
    def hidden(self) -> tuple[str, ...]:
        """The header folders a submission's compile does not see."""
        return ("cub", "thrust") if self is LibraryPolicy.NONE else ()  # CUB's headers include Thrust's

    @property
    def describe(self) -> str:
        return {LibraryPolicy.NONE: "none: no library code (LeetGPU's statements' rule)",
                LibraryPolicy.BLOCK: "block: CUB's block- and warp-level collectives allowed; its device-wide "
                                     "algorithms and Thrust not",
                LibraryPolicy.CCCL: "cccl: all of CCCL (CUB, Thrust) allowed"}[self]


CHOICES = tuple(policy.value for policy in LibraryPolicy)
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cub|thrust)/', re.M)
DEVICE_WIDE = re.compile(r"__device_stub__ZN(?:3cub|6thrust)\w*")
"""The host stub of a kernel in CUB's or Thrust's namespace, as nm names it (the kernel's mangled name after
the prefix): CUB's device-wide algorithms (DeviceReduceKernel, DeviceRadixSortOnesweepKernel...) and Thrust's,
which run on them. Block- and warp-level collectives are device functions inlined into the submission's own
kernels and have none; CUB's EmptyKernel (which it launches to learn the PTX version) is no algorithm."""
HARMLESS = ("EmptyKernel",)


def includes_library(source_text: str) -> str | None:
    """The library (cub or thrust) the file includes, if any."""
    found = INCLUDE.search(source_text)
    return found[1] if found else None


ANY = re.compile(r"\b(?:cub|thrust)::")


def refused(policy: LibraryPolicy, library: Path) -> str | None:
    """A demangled name in the built library of code the policy does not allow (any of CUB or Thrust under
    `none`, where the box's hidden headers are the first line and this the second, which also holds without a
    sandbox; a device-wide CUB kernel or Thrust under `block`), or None. Read with nm (every symbol, local ones
    too: the kernels' host stubs are local), never by loading the library."""
    pattern = {LibraryPolicy.NONE: ANY, LibraryPolicy.BLOCK: DEVICE_WIDE}.get(policy)
    if pattern is None:
        return None
    out = subprocess.run(["nm", "-C", "--defined-only", str(library)], capture_output=True, text=True, timeout=60)
    for line in out.stdout.splitlines():
        found = pattern.search(line)
        if found and not any(name in found[0] for name in HARMLESS):
            return _kernel_name(found[0])
    return None


def _kernel_name(stub: str) -> str:
    """`cub::...::DeviceReduceKernel` from its host stub's name (template arguments left out)."""
    mangled = "_" + stub.removeprefix("__device_stub__")
    out = subprocess.run(["c++filt"], input=mangled, capture_output=True, text=True, timeout=60)
    name = out.stdout.strip() if out.returncode == 0 and out.stdout.strip() != mangled else stub
    return re.sub(r"<.*", "", name)[:200]
