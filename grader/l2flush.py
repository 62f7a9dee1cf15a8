"""Emptying the L2 cache before a timed call, leaving it clean.

Every timed call starts from a cold cache, as it would in a program that has just done other work. The
obvious flush, a memset of twice the L2's size, empties the cache of the inputs but fills it with dirty
lines: the timed kernel then pays for writing those back to memory as it reads. Measured on an H200
(60 MiB of L2, docs/benchmarks.md "Timing memory-bound kernels"), that made a 2^25-element sum 22% slower and put
every memory-bound kernel's bandwidth under the device's; a compute-bound kernel barely notices.

This flush *reads* twice the L2's size instead: every line the cache held (dirty ones from the last
call's writes included) is evicted, and written back, before the timer starts, and the cache is left
full of clean lines of a buffer the submission never touches. That is what Nsight Compute's cache
control does (flush and invalidate before each measured kernel).

The same kernel then holds the stream for a moment (HOLD_NS, counted from its start, by one thread
watching the GPU's clock). A timed sample starts with an event recorded after the flush; if the GPU
reached that event before the host had launched the submission's kernels, the host's launch latency
(Python, ctypes, the submission's own host code: tens of microseconds) would be timed as if it were the
kernel's. Held, the GPU reaches the start event only once the submission's work is already queued
behind it, as in a C++ benchmark loop. On a 40 µs kernel this is the difference between 15% and 0%.

The read is a tiny kernel written here in PTX: the driver's JIT turns it into machine code for the GPU
at hand in milliseconds, so nothing is compiled by NVRTC (which costs CuPy about a second per kernel on
a fresh machine; tests/test_no_runtime_compile.py) and no nvcc is needed at timing time. PTX ISA 7.0
and target sm_70 are the oldest this needs: any driver from CUDA 11 on loads it, for any GPU since Volta.
"""

from __future__ import annotations

import numpy as np

KERNEL = "grader_l2_flush"
HOLD_NS = 200_000
"""How long the flush keeps the stream busy, from its start: well above the 20-50 µs the host takes to
reach the submission's launch, and a small part of a sample's cost (a sample takes about 0.5 ms of
wall time on an H200 host)."""
BLOCKS = 1024
THREADS = 256
WORD = 16
"""Bytes per load: one 16-byte vector load per thread per step."""
NEVER = 0x5EED1234
"""The XOR of every word read is compared with this, and written out only if equal: the buffer is
zero-filled, so the store never happens, but the compiler cannot know that and must do every load."""

PTX = f"""
.version 7.0
.target sm_70
.address_size 64

// {KERNEL}(data, words, sink, hold): XOR every 16-byte word of data[0 .. words) into a register,
// thread i taking words i, i + stride, ...; store the result to *sink only if it equals {NEVER:#x}.
// Thread 0 of block 0 then waits until `hold` nanoseconds have passed since it started.
.visible .entry {KERNEL}(
    .param .u64 data,
    .param .u64 words,
    .param .u64 sink,
    .param .u64 hold
)
{{
    .reg .pred  %p<4>;
    .reg .b32   %r<11>;
    .reg .b64   %rd<13>;

    mov.u64             %rd9, %globaltimer;
    ld.param.u64        %rd1, [data];
    ld.param.u64        %rd2, [words];
    ld.param.u64        %rd3, [sink];
    cvta.to.global.u64  %rd1, %rd1;
    cvta.to.global.u64  %rd3, %rd3;
    mov.u32             %r1, %ctaid.x;
    mov.u32             %r2, %ntid.x;
    mov.u32             %r3, %tid.x;
    mov.u32             %r4, %nctaid.x;
    mul.wide.u32        %rd4, %r1, %r2;
    cvt.u64.u32         %rd5, %r3;
    add.u64             %rd4, %rd4, %rd5;
    mul.wide.u32        %rd6, %r4, %r2;
    mov.u32             %r5, 0;
    setp.ge.u64         %p1, %rd4, %rd2;
    @%p1 bra            DONE;
LOOP:
    shl.b64             %rd7, %rd4, 4;
    add.u64             %rd8, %rd1, %rd7;
    ld.global.v4.u32    {{%r6, %r7, %r8, %r9}}, [%rd8];
    xor.b32             %r5, %r5, %r6;
    xor.b32             %r5, %r5, %r7;
    xor.b32             %r5, %r5, %r8;
    xor.b32             %r5, %r5, %r9;
    add.u64             %rd4, %rd4, %rd6;
    setp.lt.u64         %p2, %rd4, %rd2;
    @%p2 bra            LOOP;
DONE:
    setp.ne.u32         %p1, %r5, {NEVER};
    @%p1 bra            HOLD;
    st.global.u32       [%rd3], %r5;
HOLD:
    or.b32              %r10, %r1, %r3;
    setp.ne.u32         %p3, %r10, 0;
    @%p3 bra            END;
    ld.param.u64        %rd10, [hold];
    add.u64             %rd10, %rd9, %rd10;
WAIT:
    mov.u64             %rd11, %globaltimer;
    setp.lt.u64         %p3, %rd11, %rd10;
    @%p3 bra            WAIT;
END:
    ret;
}}
"""


class L2Flush:
    """Reads `nbytes` (rounded down to 16-byte words) of a zero-filled device buffer of its own in
    one kernel launch on a given stream, which then stays busy until `hold_ns` after the launch began.
    Construct once per timing loop: it allocates the buffer and loads the kernel."""

    def __init__(self, cp, nbytes: int, hold_ns: int = HOLD_NS):
        self.hold_ns = hold_ns
        self.words = nbytes // WORD
        self.buffer = cp.cuda.alloc(self.words * WORD + WORD)
        self.sink = self.buffer.ptr + self.words * WORD
        cp.cuda.runtime.memset(self.buffer.ptr, 0, self.words * WORD + WORD)
        module = cp.cuda.function.Module()
        module.load(PTX.encode() + b"\0")
        self.module = module  # the function lives as long as its module
        self.kernel = module.get_function(KERNEL)

    def __call__(self, stream) -> None:
        self.kernel((BLOCKS,), (THREADS,), (np.uint64(self.buffer.ptr), np.uint64(self.words),
                                            np.uint64(self.sink), np.uint64(self.hold_ns)), stream=stream)
