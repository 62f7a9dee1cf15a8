"""Buffers the submission writes into, with guard regions that catch stray writes.

The submission sees only the middle of each allocation: [guard | data | guard]. Guards hold a NaN
pattern, so an out-of-bounds *read* that feeds a result poisons it, and an out-of-bounds *write*
changes the pattern. Outputs start as NaN, so an element never written fails the check.

Two kinds share that logic: `DeviceBuffer` (its own cudaMalloc, shared with the worker process by
a CUDA IPC handle) and `SharedHostBuffer` (POSIX shared memory, for the CPU emulator's worker).
"""

from __future__ import annotations

from dataclasses import dataclass
from multiprocessing import shared_memory

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


def padded_bytes(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, int]:
    """(payload bytes, whole allocation bytes) for a guarded buffer."""
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    return nbytes, 2 * GUARD_BYTES + -(-nbytes // 4) * 4


class GuardedBuffer:
    """The guard logic over a flat uint32 view `words` of the allocation (any array module `xp`)."""

    def __init__(self, xp, name: str, shape: tuple[int, ...], dtype, words, data):
        self.xp, self.name, self.shape, self.dtype = xp, name, shape, np.dtype(dtype)
        self.nbytes, _ = padded_bytes(shape, dtype)
        self._words, self.data = words, data
        self._words.fill(GUARD_WORD)

    def fill_output(self) -> None:
        """All bytes 0xFF: NaN for floats, -1 for integers."""
        self.data.view(self.xp.uint8).fill(OUTPUT_FILL_BYTE)

    def damage(self) -> GuardDamage | None:
        xp, words = self.xp, self._words
        guard_words = GUARD_BYTES // 4
        before = xp.flatnonzero(words[:guard_words] != GUARD_WORD)
        after = xp.flatnonzero(words[-guard_words:] != GUARD_WORD)
        if before.size == 0 and after.size == 0:
            return None
        tail_pad = (len(words) - 2 * guard_words) * 4 - self.nbytes  # bytes between data end and guard
        reach_before = (guard_words - int(before.min())) * 4 if before.size else 0
        reach_after = (int(after.max()) + 1) * 4 + tail_pad if after.size else 0
        return GuardDamage(self.name, reach_before, reach_after)

    def free(self) -> None:
        self.data = self._words = None


class DeviceBuffer(GuardedBuffer):
    def __init__(self, cp, name: str, shape: tuple[int, ...], dtype):
        _, total = padded_bytes(shape, dtype)
        self.cp = cp
        self.memory = cp.cuda.Memory(total)
        words = cp.ndarray((total // 4,), cp.uint32, cp.cuda.MemoryPointer(self.memory, 0))
        data = cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(self.memory, GUARD_BYTES))
        super().__init__(cp, name, shape, dtype, words, data)

    def worker_arg(self) -> dict:
        handle = bytes(self.cp.cuda.runtime.ipcGetMemHandle(self.memory.ptr)).hex()
        return {"ipc": handle, "offset": GUARD_BYTES}

    def free(self) -> None:
        super().free()
        self.memory = None


class SharedHostBuffer(GuardedBuffer):
    def __init__(self, name: str, shape: tuple[int, ...], dtype):
        _, total = padded_bytes(shape, dtype)
        self.shm = shared_memory.SharedMemory(create=True, size=total)
        words = np.ndarray((total // 4,), np.uint32, buffer=self.shm.buf)
        data = np.ndarray(shape, dtype, buffer=self.shm.buf, offset=GUARD_BYTES)
        super().__init__(np, name, shape, dtype, words, data)

    def worker_arg(self) -> dict:
        return {"shm": "/" + self.shm.name.lstrip("/"), "offset": GUARD_BYTES}

    def free(self) -> None:
        super().free()
        if self.shm is not None:
            self.shm.close()
            self.shm.unlink()
            self.shm = None
