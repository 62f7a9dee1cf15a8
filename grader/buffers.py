"""Buffers the submission writes into, with guard regions that catch stray writes.

The submission sees only the middle of each allocation: [guard | data | guard]. Guards hold a NaN
word of the buffer's own, drawn at random for every buffer of every case: an out-of-bounds *read*
that feeds a result poisons it, an out-of-bounds *write* changes the pattern, and a value copied
from one buffer's guard into another's (or carried there by arithmetic, which keeps a NaN's
payload) is not that buffer's word. (In a float64 buffer two such words read as about 2e307, not a
NaN: a sum that takes one in is still far off.) Outputs start as all-ones bytes (NaN), so an element
never written fails the check.

Two kinds share that logic: `DeviceBuffer` (an allocation of its own, shared with the worker process
as a descriptor) and `SharedHostBuffer` (a page-aligned piece of a `SharedArena`, anonymous shared
memory whose descriptor the CPU emulator's worker inherits). They differ only in where the data sits
(`Layout`): on the GPU at the guard's end; in emulation so that the data ends (rounded up to 16
bytes) at a page boundary, where the emulator's worker makes the guard's pages fault, and so notices
a kernel that *reads* past the end as well. The grader reads and writes them only
by plain copies and byte fills, so that on the GPU nothing makes CuPy compile a kernel; every check
runs on host copies.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import secrets
import weakref
from dataclasses import dataclass
from typing import Iterable

import numpy as np

GUARD_BYTES = 256 * 1024
QUIET_NAN = 0x7FC00000
"""Exponent all ones and the quiet bit set: with any payload below, a float32 quiet NaN."""
PAYLOAD_MASK = 0x003FFFFF
OUTPUT_FILL_BYTE = 0xFF  # 0xFFFFFFFF is a NaN as float32, 0xFF..FF one as float64
ARITHMETIC_NANS = frozenset({QUIET_NAN, 0x7FFFFFFF, 0xFFC00000, 0xFFFFFFFF})
"""NaNs that arithmetic or the grader itself produce (x86's default NaN 0xFFC00000, CUDA's 0x7FFFFFFF,
the canonical quiet NaN, the output fill): a stray write of one of them must never look like a guard."""


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


PAGE_BYTES = mmap.PAGESIZE
VECTOR_BYTES = 16
"""The widest load a kernel makes (float4, int4): CUDA aligns allocations for it, and a kernel may read
the whole last vector of a buffer whose size is not a multiple of it."""


def data_bytes(shape: tuple[int, ...], dtype: np.dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize


def _round_up(value: int, to: int) -> int:
    return -(-value // to) * to


@dataclass(frozen=True)
class Layout:
    """Where a guarded buffer's parts lie in its allocation: [guard | data | tail | guard]. The tail (the
    data rounded up to whole words) belongs to the guard after it."""

    nbytes: int
    data_offset: int
    total_bytes: int

    @property
    def after_offset(self) -> int:
        """Where the guard after the data starts: the data's end, rounded up to a whole word."""
        return self.data_offset + _round_up(self.nbytes, 4)

    @classmethod
    def centred(cls, nbytes: int) -> "Layout":
        """A full guard on each side (the GPU's buffers)."""
        return cls(nbytes, GUARD_BYTES, 2 * GUARD_BYTES + _round_up(nbytes, 4))

    @classmethod
    def ending_on_a_page(cls, nbytes: int) -> "Layout":
        """The data's end, rounded up to VECTOR_BYTES, on a page boundary, at least a full guard on each
        side (the emulator's buffers): the start stays 16-byte aligned, the pages after the data hold
        guard only, so the worker can make them fault (a read past the end), and a vector load of the
        last, partial vector stays inside the data's page, as it is harmless on a GPU."""
        vectors = _round_up(nbytes, VECTOR_BYTES)
        offset = GUARD_BYTES + (-vectors) % PAGE_BYTES
        return cls(nbytes, offset, offset + vectors + GUARD_BYTES)


def padded_bytes(shape: tuple[int, ...], dtype: np.dtype) -> tuple[int, int]:
    """(payload bytes, whole allocation bytes) for a guarded buffer laid out as on the GPU."""
    layout = Layout.centred(data_bytes(shape, dtype))
    return layout.nbytes, layout.total_bytes


def draw_guard_word(avoid: Iterable[int] = ()) -> int:
    """A float32 quiet NaN with a secret random payload: never one arithmetic makes, nor one in `avoid`."""
    taken = ARITHMETIC_NANS | set(avoid)
    while True:
        word = QUIET_NAN | secrets.randbits(22)
        if word not in taken:
            return word


def make_guards_distinct(buffers: Iterable["GuardedBuffer"]) -> None:
    """Give a buffer whose guard word an earlier one already has a fresh word, so that no buffer of a
    case can take a value from another's guard into its own unnoticed."""
    seen: set[int] = set()
    for buffer in buffers:
        if buffer.guard_word in seen:
            buffer.arm_guards(draw_guard_word(avoid=seen))
        seen.add(buffer.guard_word)


class GuardedBuffer:
    """The guard logic over one allocation; a subclass says how bytes move between it and the host
    (`_write`, `_read`, `_fill`, each at a byte offset into the allocation)."""

    def __init__(self, name: str, shape: tuple[int, ...], dtype, guard_word: int | None = None,
                 layout: Layout | None = None):
        self.name, self.shape, self.dtype = name, tuple(shape), np.dtype(dtype)
        self.layout = layout or Layout.centred(data_bytes(self.shape, self.dtype))
        self.nbytes, self.total_bytes = self.layout.nbytes, self.layout.total_bytes
        self.data_offset = self.layout.data_offset
        self.guard_word = 0
        self.arm_guards(guard_word if guard_word is not None else draw_guard_word())

    @property
    def _after_offset(self) -> int:
        return self.layout.after_offset

    def arm_guards(self, word: int) -> None:
        """Fill both guards with `word` (a float32 quiet NaN other than those arithmetic makes)."""
        if word & ~PAYLOAD_MASK != QUIET_NAN or word in ARITHMETIC_NANS:
            raise ValueError(f"guard word {word:#010x} is not a quiet NaN with a payload of its own")
        self._write(0, np.full(self.data_offset // 4, word, np.uint32))
        self._write(self._after_offset, np.full((self.total_bytes - self._after_offset) // 4, word, np.uint32))
        self.guard_word = word

    def upload(self, host: np.ndarray) -> None:
        """Copy a host array (this buffer's shape) into the data region."""
        array = np.ascontiguousarray(host, dtype=self.dtype)
        if array.shape != self.shape:
            raise ValueError(f"{self.name}: shape {array.shape} does not fit a buffer of shape {self.shape}")
        self._write(self.data_offset, array)

    def to_host(self) -> np.ndarray:
        """The data region as a host array (for a host buffer, a view: read it, do not write it)."""
        return self._read(self.data_offset, self.nbytes).view(self.dtype).reshape(self.shape)

    def fill_output(self) -> None:
        """All bytes 0xFF: NaN for floats, -1 for integers."""
        self._fill(self.data_offset, self.nbytes, OUTPUT_FILL_BYTE)

    def damage(self) -> GuardDamage | None:
        before = np.flatnonzero(self._read(0, self.data_offset).view(np.uint32) != self.guard_word)
        after_bytes = self.total_bytes - self._after_offset
        after = np.flatnonzero(self._read(self._after_offset, after_bytes).view(np.uint32) != self.guard_word)
        if before.size == 0 and after.size == 0:
            return None
        tail_pad = self._after_offset - self.data_offset - self.nbytes  # bytes between data end and guard
        reach_before = (self.data_offset // 4 - int(before.min())) * 4 if before.size else 0
        reach_after = (int(after.max()) + 1) * 4 + tail_pad if after.size else 0
        return GuardDamage(self.name, reach_before, reach_after)

    def free(self) -> None:
        self.data = None

    def _write(self, offset: int, host: np.ndarray) -> None:
        raise NotImplementedError

    def _read(self, offset: int, nbytes: int) -> np.ndarray:
        raise NotImplementedError

    def _fill(self, offset: int, nbytes: int, byte: int) -> None:
        raise NotImplementedError


def _host_pointer(array: np.ndarray) -> ctypes.c_void_p:
    """What CuPy's copy_from_host/copy_to_host take in every version (newer ones also take an int)."""
    return ctypes.c_void_p(array.ctypes.data)


PINNED_MIN_BYTES = 4 << 20
"""Below this, a copy's page faults cost less than pinning memory of a new size."""


def host_empty(cp, nbytes: int) -> np.ndarray:
    """Host bytes for a copy from the GPU. Large ones are page-locked, from CuPy's pinned-memory pool
    (returned to it when the array goes): the GPU copies into them at full speed, where a fresh
    pageable array took a page fault per 4 KB during the copy (3.5 GB/s measured on an H200 host)."""
    if nbytes < PINNED_MIN_BYTES:
        return np.empty(nbytes, np.uint8)
    return np.frombuffer(cp.cuda.alloc_pinned_memory(nbytes), np.uint8, nbytes)


class DeviceBuffer(GuardedBuffer):
    """An allocation of its own (never a pool block shared with anything else), made exportable as a
    descriptor (grader/devmem.py) so the worker, boxed in a PID namespace of its own, can map it;
    reached by plain copies (cudaMemcpy) and byte fills (cudaMemset) on the default stream."""

    def __init__(self, cp, name: str, shape: tuple[int, ...], dtype, guard_word: int | None = None):
        from grader import devmem
        _, total = padded_bytes(shape, dtype)
        self.cp = cp
        cp.cuda.runtime.free(0)  # the runtime's primary context, current on this thread, before the driver calls
        self.mapping = devmem.allocate(total, cp.cuda.runtime.getDevice())
        self.fd = devmem.export(self.mapping)
        self._release = weakref.finalize(self, _release_device, self.fd, self.mapping)
        self.memory = cp.cuda.UnownedMemory(self.mapping.pointer, self.mapping.size, self)
        super().__init__(name, shape, dtype, guard_word)
        self.data = cp.ndarray(self.shape, self.dtype, cp.cuda.MemoryPointer(self.memory, GUARD_BYTES))

    def worker_arg(self) -> dict:
        """The worker's argument: the descriptor (sent over the worker's handles channel, never named in
        the command's text), the whole allocation's size, and where the data starts in it."""
        return {"fd": self.fd, "size": self.mapping.size, "offset": GUARD_BYTES}

    def _pointer(self, offset: int):
        return self.cp.cuda.MemoryPointer(self.memory, offset)

    def _write(self, offset: int, host: np.ndarray) -> None:
        self._pointer(offset).copy_from_host(_host_pointer(host), host.nbytes)

    def _read(self, offset: int, nbytes: int) -> np.ndarray:
        out = host_empty(self.cp, nbytes)
        if nbytes:
            self._pointer(offset).copy_to_host(_host_pointer(out), nbytes)
        return out

    def _fill(self, offset: int, nbytes: int, byte: int) -> None:
        if nbytes:
            self._pointer(offset).memset(byte, nbytes)

    def free(self) -> None:
        super().free()
        self.memory = None
        if self._release.alive:
            self.cp.cuda.runtime.deviceSynchronize()  # nothing may still write into it
            self._release()


def _release_device(fd: int, mapping) -> None:
    """Close the exported descriptor and unmap the allocation (at interpreter exit the driver may be
    gone already: nothing is left to release then)."""
    os.close(fd)
    try:
        mapping.close()
    except Exception:
        pass


@dataclass(frozen=True)
class Extent:
    """A page-aligned piece of an arena: bytes [start, start + length) of its file."""

    start: int
    length: int

    @property
    def end(self) -> int:
        return self.start + self.length


class SharedArena:
    """Anonymous shared memory (a memfd) that the emulator's buffers are carved from.

    It has no name anywhere (nothing in /dev/shm): only a process holding its descriptor reaches it,
    that is the grader and the worker that inherits the descriptor when it starts. Buffers are made
    per case while that worker runs, so they cannot each bring a descriptor of their own; they are
    page-aligned extents of this one file, which grows (ftruncate) before the grader maps a new
    extent, and so before the worker, told the extent in its call, maps it too. A released extent
    has its pages given back (a hole punched) and is carved again by the next case, so the file
    never outgrows the largest case and holds no memory between cases.
    """

    def __init__(self) -> None:
        self.fd = os.memfd_create("grader-buffers", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        # The worker holds the descriptor too. Shrinking the file under the grader's mappings would
        # kill the grader with SIGBUS on its next read, and a seal against growing or writing would
        # make the next case's allocation fail: no one may shrink it, nor add seals after these.
        fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL)
        self.token = secrets.randbits(62)
        """Names this arena in worker arguments, so a buffer is never sent to a worker holding another."""
        self._free: list[Extent] = []  # sorted by start, never touching one another nor the end
        self._end = 0  # everything at or past this offset is free
        self._close = weakref.finalize(self, os.close, self.fd)

    @property
    def closed(self) -> bool:
        return not self._close.alive

    def allocate(self, nbytes: int) -> Extent:
        """A page-aligned extent of at least `nbytes`, the file grown to hold it: first fit, else the end."""
        length = max(PAGE_BYTES, -(-nbytes // PAGE_BYTES) * PAGE_BYTES)
        for index, free in enumerate(self._free):
            if free.length >= length:
                rest = Extent(free.start + length, free.length - length)
                self._free[index:index + 1] = [rest] if rest.length else []
                return Extent(free.start, length)
        extent = Extent(self._end, length)
        self._end = extent.end
        self._grow(extent.end)
        return extent

    def map(self, extent: Extent) -> mmap.mmap:
        return mmap.mmap(self.fd, extent.length, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE,
                         offset=extent.start)

    def release(self, extent: Extent, mapping: mmap.mmap) -> None:
        """Give the extent's pages back to the system and its range back to the arena."""
        mapping.madvise(mmap.MADV_REMOVE)  # punches a hole in the file: every mapping of it reads zeros
        mapping.close()
        self._give_back(extent)

    def close(self) -> None:
        """Close the grader's descriptor; memory still mapped lives until its buffers are freed."""
        self._close()

    def _grow(self, size: int) -> None:
        # Never shrink (sealed) and never undo a growth the worker may have made on its own.
        if os.fstat(self.fd).st_size < size:
            os.ftruncate(self.fd, size)

    def _give_back(self, extent: Extent) -> None:
        merged = extent
        kept = []
        for free in self._free:
            if free.end == merged.start or merged.end == free.start:
                merged = Extent(min(free.start, merged.start), free.length + merged.length)
            else:
                kept.append(free)
        if merged.end == self._end:
            self._end = merged.start  # the tail is carved again from the end, no entry needed
        else:
            kept.append(merged)
        self._free = sorted(kept, key=lambda e: e.start)


class ArenaPerWorker:
    """Which arena a backend's buffers go to: the one the next worker will be given.

    Each worker gets an arena of its own, so a process the submission left behind (should one outlive
    its worker) holds only memory no later submission's buffers are in. Buffers made before the worker
    starts (a case prepared first) go into the arena that worker then takes."""

    def __init__(self) -> None:
        self._arena: SharedArena | None = None
        self._given = False

    def for_buffers(self) -> SharedArena:
        if self._arena is None:
            self._arena = SharedArena()
        return self._arena

    def for_worker(self) -> SharedArena:
        if self._arena is not None and self._given:
            self._arena.close()  # its worker is done with it; mapped buffers keep their memory till freed
            self._arena = None
        arena = self.for_buffers()
        self._given = True
        return arena


class SharedHostBuffer(GuardedBuffer):
    """Host memory the emulator's worker maps too: an extent of `arena` (without one, an arena of its
    own, as in tests that need no worker)."""

    def __init__(self, name: str, shape: tuple[int, ...], dtype, guard_word: int | None = None,
                 arena: SharedArena | None = None):
        layout = Layout.ending_on_a_page(data_bytes(tuple(shape), np.dtype(dtype)))
        self._own_arena = arena is None
        self.arena = arena or SharedArena()
        self.extent = self.arena.allocate(layout.total_bytes)
        self._mapping = self.arena.map(self.extent)
        self._bytes = np.ndarray((layout.total_bytes,), np.uint8, buffer=self._mapping)
        super().__init__(name, shape, dtype, guard_word, layout)
        self.data = self.to_host()

    @property
    def raw(self) -> memoryview:
        """The whole allocation, guards included, as a stray pointer in the submission sees it."""
        return memoryview(self._mapping)[:self.total_bytes]

    def worker_arg(self) -> dict:
        """The extent, where the data starts in it and how long it is (the worker opens the data's pages to
        kernels only), and the parameter's name (for its messages)."""
        return {"arena": self.arena.token, "start": self.extent.start, "length": self.extent.length,
                "offset": self.data_offset, "bytes": self.nbytes, "name": self.name}

    def _write(self, offset: int, host: np.ndarray) -> None:
        self._bytes[offset:offset + host.nbytes] = host.reshape(-1).view(np.uint8)

    def _read(self, offset: int, nbytes: int) -> np.ndarray:
        return self._bytes[offset:offset + nbytes]

    def _fill(self, offset: int, nbytes: int, byte: int) -> None:
        self._bytes[offset:offset + nbytes] = byte

    def free(self) -> None:
        super().free()
        self._bytes = None
        if self._mapping is not None:
            self.arena.release(self.extent, self._mapping)
            self._mapping = None
            if self._own_arena:
                self.arena.close()
