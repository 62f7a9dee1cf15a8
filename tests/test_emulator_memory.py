"""Device memory in emulation behaves as beside a GPU (issue 19), graded end to end on tiny_add: host
code cannot touch it, a kernel reading past an allocation is seen, and a block's dynamic shared memory
ends where its launch's request does. Pinned and managed memory stay host memory."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import pipeline, spec
from grader.results import Mode
from grader.verdict import Verdict

from conftest import read

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

TESTS = Path(__file__).resolve().parent

ADD = """
#include <cuda_runtime.h>
constexpr unsigned BLOCK = 256;

__global__ void add(const float* A, const float* B, float* C, unsigned N) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}
%s
extern "C" void solve(const float* A, const float* B, float* C, int N) {
    unsigned blocks = ((unsigned)N + BLOCK - 1) / BLOCK;
%s
}
"""
LAUNCH = "    add<<<blocks, BLOCK>>>(A, B, C, (unsigned)N);"


@pytest.fixture(scope="module")
def tiny_add() -> spec.Challenge:
    return spec.load(TESTS / "challenges", "tiny_add")


@pytest.fixture(scope="module")
def emulator():
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("emulator-cache")


@pytest.fixture
def grade(tiny_add, emulator, cache, tmp_path):
    def grade(kernels: str, body: str):
        path = tmp_path / "solve.cu"
        path.write_text(ADD % (kernels, body))
        return pipeline.grade(read(path, "solve.cu"), tiny_add, emulator, pipeline.Options(Mode.RUN, 7, cache))
    return grade


# --------------------------------------------------------------------------- host code and device memory


def test_host_code_reading_a_device_pointer_faults_and_is_named(grade):
    report = grade("", "    volatile float first = A[0]; (void)first;\n" + LAUNCH)
    assert report.verdict is Verdict.RUNTIME_ERROR, report.message
    assert "SIGSEGV" in report.message and "in host code: it read `A`, a device pointer, at byte 0" in report.message
    assert "cudaMemcpy" in report.message


def test_host_code_writing_its_own_device_memory_faults(grade):
    body = "    float* scratch; cudaMalloc(&scratch, 64);\n    scratch[3] = 1.0f;\n" + LAUNCH
    report = grade("", body)
    assert report.verdict is Verdict.RUNTIME_ERROR, report.message
    assert "in host code: it wrote memory it allocated with cudaMalloc, a device pointer, at byte 12" in report.message


def test_copies_fills_symbols_pinned_and_managed_memory_work_from_host_code(grade):
    """What host code may do: copy to and from device memory, fill it, copy it into a __constant__ symbol
    (a device-to-device copy), and touch pinned and managed memory, which kernels reach too."""
    kernels = """
__constant__ float bias[1];
__global__ void add_bias(float* C, const float* one, unsigned N) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < N) C[i] += (bias[0] - 1.0f) + (one[0] - 1.0f);
}
"""
    body = """
    float* pinned; float* managed; float* device;
    cudaMallocHost(&pinned, sizeof(float));
    cudaMallocManaged(&managed, sizeof(float));
    cudaMalloc(&device, sizeof(float));
    *pinned = 1.0f;
    *managed = 0.0f;
    cudaMemcpy(device, pinned, sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpyToSymbol(bias, device, sizeof(float), 0, cudaMemcpyDeviceToDevice);
    cudaMemcpy(managed, device, sizeof(float), cudaMemcpyDeviceToHost);
    float back = 0.0f;
    cudaMemcpy(&back, A, sizeof(float), cudaMemcpyDeviceToHost);
    cudaMemset(C, 0, N * sizeof(float));
""" + LAUNCH + """
    add_bias<<<blocks, BLOCK>>>(C, managed, (unsigned)N);
    cudaDeviceSynchronize();
    if (*managed != 1.0f || back != back) cudaMemset(C, 0xFF, sizeof(float));
    cudaFree(device); cudaFreeHost(pinned); cudaFree(managed);
"""
    report = grade(kernels, body)
    assert report.verdict is Verdict.ACCEPTED, (report.message, report.worker_output[-2000:])


# --------------------------------------------------------------------------- reads past an allocation


def test_a_kernel_reading_past_an_inputs_end_is_a_wrong_answer_that_says_so(grade):
    kernels = """
__global__ void add_first_past(const float* A, const float* B, float* C, unsigned N) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    float past = A[N + 4096 / sizeof(float)];  // one page past the end: the guard's NaN on a GPU
    if (i < N) C[i] = A[i] + B[i] + (past != past ? 0.0f : past);
}
"""
    report = grade(kernels, "    add_first_past<<<blocks, BLOCK>>>(A, B, C, (unsigned)N);")
    assert report.verdict is Verdict.WRONG_ANSWER, report.message
    assert "read `A` at byte " in report.message and "past its end" in report.message
    assert "kernel `add_first_past`" in report.message and "thread (" in report.message


def test_a_read_far_before_an_inputs_start_is_named_too(grade):
    kernels = """
__global__ void add_before(const float* A, const float* B, float* C, unsigned N) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    float before = A[-2048];  // 8 KiB before the start
    if (i < N) C[i] = A[i] + B[i] + (before != before ? 0.0f : before);
}
"""
    report = grade(kernels, "    add_before<<<blocks, BLOCK>>>(A, B, C, (unsigned)N);")
    assert report.verdict is Verdict.WRONG_ANSWER and "read `A` at byte -8192, before its start" in report.message


def test_a_partial_last_float4_is_no_read_past_the_end(grade):
    """float4 loads of a buffer whose size is not a multiple of 4 floats read the last vector whole and
    use what is inside: harmless on a GPU (allocations are 256-byte granular), and not flagged here."""
    kernels = """
__global__ void add4(const float* A, const float* B, float* C, unsigned N) {
    unsigned v = blockIdx.x * BLOCK + threadIdx.x;
    if (4 * v >= N) return;
    float4 a = reinterpret_cast<const float4*>(A)[v], b = reinterpret_cast<const float4*>(B)[v];
    float sums[4] = {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
    for (unsigned k = 0; k < 4 && 4 * v + k < N; ++k) C[4 * v + k] = sums[k];
}
"""
    report = grade(kernels, "    add4<<<blocks, BLOCK>>>(A, B, C, (unsigned)N);")
    assert report.verdict is Verdict.ACCEPTED, report.message


def test_reads_and_writes_past_the_submissions_own_allocation(grade):
    kernels = """
__global__ void touch_past(float* scratch, unsigned count, int write) {
    if (write) scratch[count + 512] = 1.0f;
    else if (scratch[count + 512] == 12345.0f) scratch[0] = 0.0f;
}
"""
    body = ("    float* scratch; cudaMalloc(&scratch, 64 * sizeof(float));\n"
            "    touch_past<<<1, 1>>>(scratch, 64, %d);\n" + LAUNCH + "\n    cudaFree(scratch);")
    read_past = grade(kernels, body % 0)
    assert read_past.verdict is Verdict.WRONG_ANSWER, read_past.message
    assert "read memory it allocated with cudaMalloc at byte 2304, past its end (it holds 256 bytes)" in read_past.message
    wrote_past = grade(kernels, body % 1)
    assert wrote_past.verdict is Verdict.OUT_OF_BOUNDS, wrote_past.message
    assert "wrote memory it allocated with cudaMalloc" in wrote_past.message


# --------------------------------------------------------------------------- dynamic shared memory


STAGED = """
__global__ void add_staged(const float* A, const float* B, float* C, unsigned N, unsigned span) {
    extern __shared__ float stage[];
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    for (unsigned k = threadIdx.x; k < span; k += BLOCK) stage[k] = 0.0f;
    __syncthreads();
    if (i < N) C[i] = A[i] + B[i] + stage[threadIdx.x % span];
}
"""


def test_dynamic_shared_memory_is_bounded_by_the_request(grade):
    exact = grade(STAGED, "    add_staged<<<blocks, BLOCK, 300 * sizeof(float)>>>(A, B, C, (unsigned)N, 300);")
    assert exact.verdict is Verdict.ACCEPTED, exact.message
    within_page = grade(STAGED, "    add_staged<<<blocks, BLOCK, 256>>>(A, B, C, (unsigned)N, 256);")
    assert within_page.verdict is Verdict.RUNTIME_ERROR, within_page.message
    assert "cudaErrorIllegalAddress" in within_page.message
    assert "wrote past the end of its dynamic shared memory (extern __shared__), up to byte 1024" in within_page.message
    assert "the launch asked for 256 bytes" in within_page.message


def test_dynamic_shared_memory_past_the_requests_last_page_faults(grade):
    report = grade(STAGED, "    add_staged<<<blocks, BLOCK, 256>>>(A, B, C, (unsigned)N, 2048);")
    assert report.verdict is Verdict.RUNTIME_ERROR, report.message
    assert "illegal memory access (SIGSEGV) in kernel `add_staged`" in report.message
    assert "wrote its dynamic shared memory (extern __shared__) at byte 4096, past its end" in report.message
