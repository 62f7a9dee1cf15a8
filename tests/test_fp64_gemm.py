"""The CUDA backend's FP64 product (host arrays in, one cuBLAS DGEMM, host array out), run against a
fake CuPy whose "device" memory is host memory and whose DGEMM follows cuBLAS's column-major
definition: the row-major ↔ column-major argument order is checked without a GPU."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from grader.backends import cuda as cuda_backend


def doubles(address: int, count: int) -> np.ndarray:
    return np.ctypeslib.as_array((ctypes.c_double * count).from_address(address)) if count else np.zeros(0)


class Pointer:
    def __init__(self, owner: np.ndarray, offset: int = 0):
        self.owner, self.offset = owner, offset
        self.ptr = owner.ctypes.data + offset

    def __add__(self, offset: int) -> "Pointer":
        return Pointer(self.owner, self.offset + offset)

    def copy_from_host(self, source: ctypes.c_void_p, nbytes: int) -> None:
        ctypes.memmove(self.ptr, source.value, nbytes)

    def copy_to_host(self, destination: ctypes.c_void_p, nbytes: int) -> None:
        ctypes.memmove(destination.value, self.ptr, nbytes)


class DeviceArray:
    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize
        self.memory = np.zeros(max(1, int(np.prod(self.shape))), self.dtype)  # never empty: a real address
        self.data = Pointer(self.memory)


class Cublas:
    CUBLAS_OP_N = 0
    CUBLAS_POINTER_MODE_HOST = 0
    calls: list = []

    def setPointerMode(self, handle, mode):
        assert mode == self.CUBLAS_POINTER_MODE_HOST

    def dgemm(self, handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc):
        """cuBLAS: C (m×n) = alpha·op(A) (m×k) · op(B) (k×n) + beta·C, column-major with leading dims."""
        assert transa == transb == self.CUBLAS_OP_N and lda >= m and ldb >= k and ldc >= m
        A = doubles(a, lda * k).reshape(k, lda).T[:m, :]
        B = doubles(b, ldb * n).reshape(n, ldb).T[:k, :]
        C = doubles(c, ldc * n).reshape(n, ldc).T[:m, :]
        C[...] = doubles(alpha, 1)[0] * (A @ B) + doubles(beta, 1)[0] * C
        self.calls.append((m, n, k))


class FakeCupy:
    ndarray = DeviceArray

    class cuda:
        cublas = Cublas()

        class runtime:
            @staticmethod
            def deviceSynchronize():
                pass

        @staticmethod
        def get_cublas_handle():
            return 1

        @staticmethod
        def alloc_pinned_memory(nbytes):
            return bytearray(nbytes)


@pytest.mark.parametrize("shape", [(1, 1, 1), (2, 3, 4), (17, 1, 5), (1, 257, 1), (64, 33, 70)])
@pytest.mark.parametrize("absolute", [False, True])
def test_matches_numpy_in_fp64(shape, absolute):
    m, n, k = shape
    rng = np.random.default_rng(sum(shape))
    a = rng.random((m, n), dtype=np.float32) * 2 - 1
    b = rng.random((n, k), dtype=np.float32) * 2 - 1
    got = cuda_backend.matmul64(a, b, FakeCupy(), absolute)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    want = np.abs(a64) @ np.abs(b64) if absolute else a64 @ b64
    assert got.shape == (m, k) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_inputs_larger_than_one_conversion_block(monkeypatch):
    monkeypatch.setattr(cuda_backend, "FP64_BLOCK_ELEMENTS", 100)
    rng = np.random.default_rng(5)
    a = rng.random((30, 41), dtype=np.float32) - 0.5
    b = rng.random((41, 23), dtype=np.float32) - 0.5
    got = cuda_backend.matmul64(a, b, FakeCupy(), absolute=True)
    np.testing.assert_allclose(got, np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)), rtol=1e-13)


def test_the_matmul_reference_uses_it_when_given_cupy(matmul):
    """With xp = a CuPy (here the fake), the reference's FP64 products go through matmul64's DGEMM."""
    rng = np.random.default_rng(9)
    inputs = {"A": rng.random((5, 6), dtype=np.float32), "B": rng.random((6, 7), dtype=np.float32)}
    Cublas.calls.clear()
    on_gpu = matmul.reference.reference(inputs, FakeCupy())["C"]
    on_host = matmul.reference.reference(inputs, np)["C"]
    assert Cublas.calls == [(7, 5, 6)], "one DGEMM, B first: Cᵀ (K×M) = Bᵀ (K×N) · Aᵀ (N×M)"
    np.testing.assert_allclose(on_gpu, on_host, rtol=1e-13)
