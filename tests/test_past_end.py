"""Accesses past an allocation, grader side (issue 19): the emulator's buffers end on a page so its
worker can shut the pages after them, the GPU's layout is unchanged, and a read past the end the worker
reports turns a case into WRONG_ANSWER (a write past memory no guard watches into OUT_OF_BOUNDS)."""

from __future__ import annotations

import numpy as np
import pytest

from grader import case as cases
from grader.buffers import GUARD_BYTES, PAGE_BYTES, VECTOR_BYTES, Layout, SharedHostBuffer, padded_bytes
from grader.channel import Called, PastEnd
from grader.verdict import Verdict


@pytest.mark.parametrize("nbytes", [0, 4, 12, 16, 20, 4096, 4100, 240_000, 1_000_003])
def test_emulator_buffers_end_on_a_page_and_start_16_byte_aligned(nbytes):
    layout = Layout.ending_on_a_page(nbytes)
    vectors_end = layout.data_offset + -(-nbytes // VECTOR_BYTES) * VECTOR_BYTES
    assert vectors_end % PAGE_BYTES == 0, "the pages past the data's last float4 hold guard only"
    assert layout.data_offset % VECTOR_BYTES == 0 and layout.data_offset >= GUARD_BYTES
    assert layout.total_bytes - vectors_end == GUARD_BYTES
    assert layout.after_offset == layout.data_offset + -(-nbytes // 4) * 4


@pytest.mark.parametrize("nbytes", [0, 4, 6, 4100])
def test_the_gpu_layout_is_as_it_was(nbytes):
    layout = Layout.centred(nbytes)
    assert layout.data_offset == GUARD_BYTES
    assert layout.total_bytes == 2 * GUARD_BYTES + -(-nbytes // 4) * 4
    assert padded_bytes((nbytes,), np.uint8) == (nbytes, layout.total_bytes)


def test_a_write_into_the_tail_of_a_page_ending_buffer_is_still_caught():
    buffer = SharedHostBuffer("x", (5,), np.float32)  # 20 bytes: 12 bytes of the last float4 are guard
    try:
        words = np.ndarray((buffer.total_bytes // 4,), np.uint32, buffer=buffer.raw)
        assert buffer.damage() is None
        words[(buffer.data_offset + 20) // 4] = 0
        assert buffer.damage().after == 4
        assert (buffer.data_offset + 32) % PAGE_BYTES == 0
    finally:
        buffer.free()


READ = PastEnd(False, "kernel `k` (launched at line 9), block (0,0,0), thread (5,0,0) read `input` at byte 20, "
                      "past its end (it holds 20 bytes)")


def run(verdict: Verdict, past_end: PastEnd | None, outputs=(b"x",), order="forward", message="") -> cases.OrderRun:
    return cases.OrderRun(order, cases.Inspection(verdict, message), outputs, Called(0.1, past_end=past_end))


def test_a_read_past_the_end_is_a_wrong_answer_even_when_the_output_is_right():
    found = cases.combine_orders([run(Verdict.ACCEPTED, READ), run(Verdict.ACCEPTED, READ, order="reverse")])
    assert found.verdict is Verdict.WRONG_ANSWER and "past its end" in found.message


def test_a_wrong_output_after_a_read_past_the_end_names_both():
    found = cases.combine_orders([run(Verdict.WRONG_ANSWER, READ, message="3 of 5 elements are NaN")])
    assert found.verdict is Verdict.WRONG_ANSWER
    assert found.message.startswith("kernel `k`") and "3 of 5 elements are NaN" in found.message


def test_a_write_past_a_cudamalloc_allocation_is_out_of_bounds():
    wrote = PastEnd(True, "kernel `k` ... wrote memory it allocated with cudaMalloc at byte 1024, past its end")
    assert cases.combine_orders([run(Verdict.ACCEPTED, wrote)]).verdict is Verdict.OUT_OF_BOUNDS


def test_a_stray_write_the_guards_caught_still_comes_first():
    found = cases.combine_orders([run(Verdict.OUT_OF_BOUNDS, READ, message="wrote outside C")])
    assert found.verdict is Verdict.OUT_OF_BOUNDS and found.message == "wrote outside C"


def test_a_read_past_the_end_is_named_before_a_race():
    runs = [run(Verdict.WRONG_ANSWER, READ, (b"a",), message="wrong"),
            run(Verdict.WRONG_ANSWER, READ, (b"b",), "reverse", message="wrong")]
    assert cases.combine_orders(runs).verdict is Verdict.WRONG_ANSWER


def test_without_a_report_nothing_changes():
    assert cases.combine_orders([run(Verdict.ACCEPTED, None)]).verdict is Verdict.ACCEPTED
