"""Device buffers the submission writes into, with guard regions that catch stray writes.

Each buffer is its own cudaMalloc, so it can be shared with the worker process by a CUDA IPC
handle. The submission sees only the middle: [guard | data | guard]. Guards hold a NaN pattern,
so an out-of-bounds *read* that feeds a result poisons it, and an out-of-bounds *write* changes the
pattern. Outputs start as NaN, so an element never written fails the check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GUARD_BYTES = 256 * 1024
GUARD_WORD = 0x7FC0FFEE  # a quiet NaN with a payload no arithmetic produces
OUTPUT_FILL_BYTE = 0xFF  # 0xFFFFFFFF is a NaN as float32, 0xFF..FF one as float64


@dataclass(frozen=True)
class GuardDamage:
    buffer: str
    before: int
    """Bytes changed in the guard before the buffer (how far below its start the writes reach)."""
    after: int
    """Bytes changed in the guard after the buffer (how far past its end the writes reach)."""

    def describe(self) -> str:
        sides = []
        if self.before:
            sides.append(f"up to {self.before} bytes before its start")
        if self.after:
            sides.append(f"up to {self.after} bytes past its end")
        return f"wrote outside {self.buffer}: " + " and ".join(sides)


class DeviceBuffer:
    """One guarded allocation on the GPU holding an array of `shape` and `dtype`."""

    def __init__(self, cp, name: str, shape: tuple[int, ...], dtype: np.dtype):
        self.cp, self.name, self.shape, self.dtype = cp, name, shape, np.dtype(dtype)
        self.nbytes = int(np.prod(shape, dtype=np.int64)) * self.dtype.itemsize
        padded = -(-self.nbytes // 4) * 4
        self.memory = cp.cuda.Memory(GUARD_BYTES + padded + GUARD_BYTES)
        base = cp.cuda.MemoryPointer(self.memory, 0)
        self._words = cp.ndarray(((2 * GUARD_BYTES + padded) // 4,), cp.uint32, base)
        self._words.fill(GUARD_WORD)
        self.data = cp.ndarray(shape, self.dtype, cp.cuda.MemoryPointer(self.memory, GUARD_BYTES))

    @property
    def data_ptr(self) -> int:
        return self.memory.ptr + GUARD_BYTES

    def ipc_handle(self) -> str:
        return bytes(self.cp.cuda.runtime.ipcGetMemHandle(self.memory.ptr)).hex()

    def worker_arg(self) -> dict:
        return {"ipc": self.ipc_handle(), "offset": GUARD_BYTES}

    def fill_output(self) -> None:
        """All bytes 0xFF: NaN for floats, -1 for integers."""
        self.data.view(self.cp.uint8).fill(OUTPUT_FILL_BYTE)

    def damage(self) -> GuardDamage | None:
        cp, words = self.cp, self._words
        guard_words = GUARD_BYTES // 4
        before = cp.flatnonzero(words[:guard_words] != GUARD_WORD)
        after = cp.flatnonzero(words[-guard_words:] != GUARD_WORD)
        tail_pad = (len(words) - 2 * guard_words) * 4 - self.nbytes  # bytes between data end and guard
        if before.size == 0 and after.size == 0:
            return None
        reach_before = (guard_words - int(before.min())) * 4 if before.size else 0
        reach_after = (int(after.max()) + 1) * 4 + tail_pad if after.size else 0
        return GuardDamage(self.name, reach_before, reach_after)

    def free(self) -> None:
        self.data = self._words = None
        self.memory = None
