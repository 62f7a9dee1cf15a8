"""Guarded buffers on the host (SharedHostBuffer: no GPU needed): guard words random per buffer and per
case, stray writes found by comparing each guard with its own buffer's word; and the anonymous arena
the emulator's buffers are carved from, which nothing can open by name."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import numpy as np
import pytest

from grader import buffers
from grader.buffers import GUARD_BYTES, PAGE_BYTES, ArenaPerWorker, Extent, SharedArena, SharedHostBuffer


@pytest.fixture
def made():
    made: list[SharedHostBuffer] = []

    def make(name="C", shape=(5, 7), dtype=np.float32, guard_word=None):
        made.append(SharedHostBuffer(name, shape, dtype, guard_word))
        return made[-1]

    yield make
    for buffer in made:
        buffer.free()


def raw_words(buffer: SharedHostBuffer) -> np.ndarray:
    """The whole allocation as uint32 words, as a submission's stray pointer sees it."""
    return np.ndarray((buffer.total_bytes // 4,), np.uint32, buffer=buffer.raw)


def test_guard_word_is_a_quiet_nan_with_a_payload_of_its_own(made):
    for _ in range(50):
        word = made().guard_word
        value = np.array([word], np.uint32).view(np.float32)[0]
        assert np.isnan(value)
        assert word & 0x7FC00000 == 0x7FC00000, "exponent all ones and the quiet bit set"
        assert word & buffers.PAYLOAD_MASK, "a non-zero payload"
        assert word not in (0x7FC00000, 0xFFFFFFFF, 0x7FFFFFFF, 0xFFC00000)


def test_words_are_drawn_afresh():
    words = {buffers.draw_guard_word() for _ in range(200)}
    assert len(words) > 190  # 22 random bits: a repeat among 200 draws is rare, many repeats mean no randomness


def test_buffers_of_a_case_get_different_words(made):
    a, b, c = made("A"), made("B"), made("C")
    buffers.make_guards_distinct([a, b, c])
    assert len({a.guard_word, b.guard_word, c.guard_word}) == 3


def test_a_colliding_word_is_redrawn_and_the_guards_rewritten(made):
    b = made("B")
    c = made("C", guard_word=b.guard_word)
    buffers.make_guards_distinct([b, c])
    assert c.guard_word != b.guard_word
    assert c.damage() is None, "both guards hold the new word"
    assert b.damage() is None


def test_guards_start_intact_and_data_round_trips(made):
    b = made("B", shape=(3, 5))
    values = np.arange(15, dtype=np.float32).reshape(3, 5)
    b.upload(values)
    assert b.damage() is None
    assert np.array_equal(b.to_host(), values)
    b.fill_output()
    assert np.isnan(b.to_host()).all()
    assert (b.to_host().view(np.uint32) == 0xFFFFFFFF).all()
    assert b.damage() is None


def test_copying_another_buffers_guard_word_past_the_end_is_caught(made):
    """C[M*K] = B[N*K]: the value past B's end lands past C's end. With one word for every buffer this
    went unnoticed; each buffer's guard is compared with its own word."""
    b, c = made("B", shape=(4, 6)), made("C", shape=(5, 6))
    buffers.make_guards_distinct([b, c])
    words_b, words_c = raw_words(b), raw_words(c)
    past_b, past_c = (b.data_offset + b.nbytes) // 4, (c.data_offset + c.nbytes) // 4
    assert words_b[past_b] == b.guard_word
    words_c[past_c] = words_b[past_b]
    assert b.damage() is None
    found = c.damage()
    assert found is not None and found.after == 4 and found.before == 0
    assert "past its end" in found.describe() and "C" in found.describe()


def test_a_nan_carried_through_arithmetic_is_caught(made):
    """x86 and GPUs keep a NaN's payload through arithmetic: B's guard read out of range, turned into a
    result and written past C's end, still has B's payload."""
    b, c = made("B"), made("C")
    buffers.make_guards_distinct([b, c])
    carried = (np.array([b.guard_word], np.uint32).view(np.float32) * np.float32(2) + np.float32(1))
    raw_words(c)[(c.data_offset + c.nbytes) // 4 + 3] = carried.view(np.uint32)[0]
    assert c.damage().after == 16


def test_writes_before_the_start_report_their_reach(made):
    c = made("C")
    raw_words(c)[c.data_offset // 4 - 10] = 0
    assert c.damage().before == 40


def test_upload_rejects_another_shape(made):
    with pytest.raises(ValueError):
        made("A", shape=(2, 3)).upload(np.zeros((3, 2), np.float32))


def test_a_word_that_is_not_a_quiet_nan_is_refused(made):
    c = made("C")
    for word in (0x3F800000, 0x7F800001, 0x7FC00000, 0xFFFFFFFF):
        with pytest.raises(ValueError):
            c.arm_guards(word)


# --------------------------------------------------------------------------- the arena


@pytest.fixture
def arena():
    made = SharedArena()
    yield made
    made.close()


def blocks_in_use(arena: SharedArena) -> int:
    return os.fstat(arena.fd).st_blocks


def test_extents_are_page_aligned_and_the_file_grows_before_one_is_mapped(arena):
    first, second = arena.allocate(1), arena.allocate(3 * PAGE_BYTES + 1)
    assert first == Extent(0, PAGE_BYTES)
    assert second == Extent(PAGE_BYTES, 4 * PAGE_BYTES)
    assert os.fstat(arena.fd).st_size >= second.end, "a worker mapping past the file's end would die of SIGBUS"


def test_a_case_released_leaves_the_arena_empty_for_the_next(arena):
    """Every case frees all its buffers: the next case's are carved from the start again, so the
    file never outgrows the largest case however many cases run."""
    for _ in range(20):
        made = [SharedHostBuffer(name, (300, 200), np.float32, arena=arena) for name in "ABC"]
        assert [b.extent.start for b in made][0] == 0
        for buffer in made:
            buffer.free()
    assert os.fstat(arena.fd).st_size <= 3 * (2 * GUARD_BYTES + 300 * 200 * 4 + PAGE_BYTES)


def test_released_memory_goes_back_to_the_system(arena):
    buffer = SharedHostBuffer("C", (512, 512), np.float32, arena=arena)
    buffer.fill_output()
    assert blocks_in_use(arena) * 512 >= buffer.total_bytes
    buffer.free()
    assert blocks_in_use(arena) == 0


def test_freed_extents_are_merged_and_reused_first_fit(arena):
    a, b, c = (arena.allocate(PAGE_BYTES) for _ in range(3))
    mappings = {e: arena.map(e) for e in (a, b, c)}
    arena.release(a, mappings[a])
    arena.release(b, mappings[b])
    assert arena.allocate(2 * PAGE_BYTES) == Extent(0, 2 * PAGE_BYTES), "a and b merged into one hole"
    arena.release(c, mappings[c])
    assert arena.allocate(PAGE_BYTES) == c, "the freed tail is carved again, not past it"


def test_no_one_can_shrink_or_seal_the_arena(arena):
    """The worker holds the descriptor too: shrinking the file would kill the grader with SIGBUS when it
    reads a buffer, a seal against growing or writing would make the next case fail."""
    buffer = SharedHostBuffer("C", (4, 4), np.float32, arena=arena)
    with pytest.raises(PermissionError):
        os.ftruncate(arena.fd, 0)
    for seal in (fcntl.F_SEAL_GROW, fcntl.F_SEAL_WRITE):
        with pytest.raises(PermissionError):
            fcntl.fcntl(arena.fd, fcntl.F_ADD_SEALS, seal)
    assert buffer.damage() is None
    buffer.free()


def test_a_growth_made_by_someone_else_is_kept(arena):
    grown = 1024 * PAGE_BYTES  # more than one buffer needs (its guards are 2 × 256 KiB)
    os.ftruncate(arena.fd, grown)  # the worker may grow the file; the grader must not shrink it back
    buffer = SharedHostBuffer("C", (4, 4), np.float32, arena=arena)
    assert os.fstat(arena.fd).st_size == grown and buffer.damage() is None
    buffer.free()


def test_the_arena_has_no_name_anyone_could_open(arena):
    buffer = SharedHostBuffer("C", (4, 4), np.float32, arena=arena)
    target = os.readlink(f"/proc/self/fd/{arena.fd}")
    assert target.startswith("/memfd:"), target
    own_maps = Path("/proc/self/maps").read_text()
    assert "/dev/shm/" not in own_maps
    buffer.free()


def test_a_worker_is_given_the_arena_its_buffers_are_in():
    supply = ArenaPerWorker()
    early = supply.for_buffers()  # a case prepared before the worker starts
    assert supply.for_worker() is early and supply.for_buffers() is early
    second = supply.for_worker()  # the next worker: an arena of its own
    assert second is not early and early.closed and supply.for_buffers() is second
    second.close()


def test_a_buffer_outlives_its_arena_being_closed():
    """The arena of a finished worker is closed when the next worker starts; a buffer still mapped keeps
    its memory until freed."""
    supply = ArenaPerWorker()
    buffer = SharedHostBuffer("C", (4, 4), np.float32, arena=supply.for_buffers())
    supply.for_worker()
    supply.for_worker()
    buffer.upload(np.ones((4, 4), np.float32))
    assert buffer.damage() is None and (buffer.to_host() == 1).all()
    buffer.free()
    supply.for_buffers().close()
