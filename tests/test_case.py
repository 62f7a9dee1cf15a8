"""A case prepared and inspected on host buffers, the submission's writes played by the test (no GPU,
no worker): what the CUDA backend does with device copies, the check stage does with these."""

from __future__ import annotations

import numpy as np
import pytest

from grader import case as cases
from grader.buffers import SharedHostBuffer
from grader.spec import Shape
from grader.verdict import Verdict


class HostBackend:
    xp = np

    def buffer(self, name, shape, dtype):
        return SharedHostBuffer(name, shape, dtype)

    def synchronize(self):
        pass


@pytest.fixture
def prepared(matmul):
    shape = Shape({"M": 5, "N": 3, "K": 4})
    case = cases.prepare(matmul, shape, cases.rng_for(7, cases.Purpose.FUNCTIONAL, 0), HostBackend())
    yield case
    case.release()


def words(buffer) -> np.ndarray:
    """The whole allocation as uint32 words, as a stray pointer in the submission sees it."""
    return np.ndarray((buffer.total_bytes // 4,), np.uint32, buffer=buffer.raw)


def solve(case):
    a, b = case.pristine["A"], case.pristine["B"]
    case.buffers["C"].data[...] = a @ b


def test_host_arrays_and_distinct_guards(prepared):
    assert all(isinstance(v, np.ndarray) for v in (*prepared.pristine.values(), *prepared.expected.values()))
    assert prepared.expected["C"].dtype == np.float64
    assert len({b.guard_word for b in prepared.buffers.values()}) == 3


def test_a_correct_answer_is_accepted(matmul, prepared):
    solve(prepared)
    assert cases.inspect(matmul, prepared).verdict is Verdict.ACCEPTED


def test_copying_past_b_into_past_c_is_out_of_bounds(matmul, prepared):
    """C[M*K] = B[N*K]: caught because C's guard holds C's own word, not B's."""
    solve(prepared)
    b, c = prepared.buffers["B"], prepared.buffers["C"]
    words(c)[(c.data_offset + c.nbytes) // 4] = words(b)[(b.data_offset + b.nbytes) // 4]
    found = cases.inspect(matmul, prepared)
    assert found.verdict is Verdict.OUT_OF_BOUNDS
    assert "outside C" in found.message and "past its end" in found.message


def test_a_changed_input_is_named(matmul, prepared):
    solve(prepared)
    prepared.buffers["B"].data[1, 2] += 1
    found = cases.inspect(matmul, prepared)
    assert found.verdict is Verdict.INPUT_MODIFIED and "1 of its elements changed" in found.message


def test_an_output_never_written_is_wrong(matmul, prepared):
    found = cases.inspect(matmul, prepared)
    assert found.verdict is Verdict.WRONG_ANSWER and "never written" in found.message


def test_reset_outputs_fills_with_nan_again(matmul, prepared):
    solve(prepared)
    cases.reset_outputs(matmul, prepared, HostBackend())
    assert np.isnan(prepared.buffers["C"].to_host()).all()


def test_inputs_depend_on_the_seed_and_shape_not_on_threads(matmul):
    """Large inputs are drawn on threads, block by block from streams seeded by the case's generator."""
    dims = {"M": 1100, "N": 1000, "K": 3}  # A spans two streams of 2^20 values
    settings = matmul.reference.generate.function.__globals__
    first = matmul.reference.generate(dims, cases.rng_for(3, cases.Purpose.TIMED, 0))
    threads = settings["THREADS"]
    try:
        settings["THREADS"] = 1
        alone = matmul.reference.generate(dims, cases.rng_for(3, cases.Purpose.TIMED, 0))
    finally:
        settings["THREADS"] = threads
    assert all(np.array_equal(first[k], alone[k]) for k in "AB")
    other = matmul.reference.generate(dims, cases.rng_for(4, cases.Purpose.TIMED, 0))
    assert not np.array_equal(first["A"], other["A"])
    assert first["A"].dtype == np.float32 and -1 <= first["A"].min() and first["A"].max() < 1
