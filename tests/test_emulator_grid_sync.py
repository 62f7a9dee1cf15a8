"""Grid-wide synchronization in the CPU emulator: cooperative_groups::this_grid() and grid.sync() in a
kernel launched with cudaLaunchCooperativeKernel, graded through the real pipeline (reduction challenge).

The corpus (tests/submissions/reduction/) holds the files every backend grades: a correct cooperative
reduction (ACCEPTED in both thread orders), one without its grid barrier (RACE), a launch too large
(cudaErrorCooperativeLaunchTooLarge), grid.sync() under <<<...>>> and a grid barrier some blocks never
reach (RUNTIME_ERROR). These tests check what the corpus does not: the grid group's members, the
messages' details, and the cases the emulator alone decides."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from grader import pipeline
from grader.results import Mode
from grader.verdict import Verdict

from conftest import SUBMISSIONS, read

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

COOPERATIVE = SUBMISSIONS / "reduction" / "cooperative_grid_sync.cu"


@pytest.fixture(scope="module")
def emulator():
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


@pytest.fixture(scope="module")
def reduction(challenge_named):
    return challenge_named("reduction")


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("emulator-cache")


def grade(text: str, tmp_path: Path, reduction, emulator, cache, name: str = "grid.cu"):
    path = tmp_path / name
    path.write_text(text)
    return pipeline.grade(read(path, f"solutions/{name}"), reduction, emulator, pipeline.Options(Mode.RUN, 7, cache))


# A 2-D grid of 2-D blocks that checks every member of the grid group against the built-in indices
# (a wrong one makes the sum NaN), then sums with atomics between two grid barriers: one through the
# free function cg::sync(grid), one through the split barrier (barrier_arrive, barrier_wait).
MEMBERS = r"""
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void sum_checking_members(const float* input, float* output, int N) {
    cg::grid_group grid = cg::this_grid();
    unsigned long long block = (unsigned long long)blockIdx.y * gridDim.x + blockIdx.x;
    unsigned long long threads = blockDim.x * blockDim.y;
    unsigned long long rank = block * threads + threadIdx.y * blockDim.x + threadIdx.x;
    bool right = grid.is_valid() && grid.thread_rank() == rank && grid.block_rank() == block
        && grid.num_blocks() == gridDim.x * gridDim.y && grid.size() == grid.num_threads()
        && grid.num_threads() == grid.num_blocks() * threads
        && grid.dim_blocks().x == gridDim.x && grid.dim_blocks().y == gridDim.y && grid.group_dim().y == gridDim.y
        && grid.block_index().x == blockIdx.x && grid.block_index().y == blockIdx.y
        && grid.dim_threads().x == gridDim.x * blockDim.x && grid.dim_threads().y == gridDim.y * blockDim.y
        && grid.thread_index().x == blockIdx.x * blockDim.x + threadIdx.x
        && grid.thread_index().y == blockIdx.y * blockDim.y + threadIdx.y
        && grid.num_clusters() == grid.num_blocks() && grid.cluster_rank() == grid.block_rank();
    if (grid.thread_rank() == 0) output[0] = 0.0f;
    cg::sync(grid);
    float sum = 0.0f;
    for (unsigned long long i = grid.thread_rank(); i < (unsigned long long)N; i += grid.size()) sum += input[i];
    auto token = grid.barrier_arrive();
    grid.barrier_wait(static_cast<decltype(token)&&>(token));
    atomicAdd(output, right ? sum : __int_as_float(0x7fc00000));
}

extern "C" void solve(const float* input, float* output, int N) {
    void* args[] = {&input, &output, &N};
    cudaLaunchCooperativeKernel(sum_checking_members, dim3(3, 2), dim3(16, 4), args);
}
"""


def test_every_member_of_the_grid_group_and_both_barrier_forms(tmp_path, reduction, emulator, cache):
    report = grade(MEMBERS, tmp_path, reduction, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED, (report.message, report.worker_output[-2000:])


# Threads of block 2 return before the grid barrier that the rest of their block waits at.
SOME_THREADS_RETURN = r"""
#include <cooperative_groups.h>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

__global__ void returns_early(const float* input, float* output, int N) {
    if (blockIdx.x == 2 && threadIdx.x >= 32) return;
    cg::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) output[0] = N > 0 ? input[0] : 0.0f;
}

extern "C" void solve(const float* input, float* output, int N) {
    void* args[] = {&input, &output, &N};
    cudaLaunchCooperativeKernel((void*)returns_early, 4, 64, args, 0, 0);
}
"""


def test_threads_of_one_block_that_return_before_the_grid_barrier(tmp_path, reduction, emulator, cache):
    report = grade(SOME_THREADS_RETURN, tmp_path, reduction, emulator, cache, "returns.cu")
    assert report.verdict is Verdict.RUNTIME_ERROR
    message = report.message
    assert "divergent grid.sync() in block (2,0,0)" in message, message
    assert "32 threads (first: thread (0,0,0), at solutions/returns.cu:8)" in message, message
    assert "32 threads (first: thread (32,0,0)" in message and "already returned" in message, message


def test_blocks_that_never_arrive_are_named_with_the_line(tmp_path, reduction, emulator, cache):
    report = grade((SUBMISSIONS / "reduction" / "grid_sync_divergent.cu").read_text(), tmp_path, reduction,
                   emulator, cache, "divergent.cu")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "grid.sync() can never complete: 1 block waits (first: block (0,0,0))" in report.message
    assert "first at solutions/divergent.cu:29" in report.message and "15 (first: block (1,0,0))" in report.message


def test_grid_sync_under_a_plain_launch_says_how_to_launch(tmp_path, reduction, emulator, cache):
    report = grade((SUBMISSIONS / "reduction" / "grid_sync_in_plain_launch.cu").read_text(), tmp_path, reduction,
                   emulator, cache, "plain.cu")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "cudaErrorLaunchFailure" in report.message and "launched with <<<...>>>" in report.message
    assert "grid.sync() at solutions/plain.cu:29" in report.message


def test_a_kernel_behind_a_void_pointer_variable_is_a_cuda_error_naming_the_fix(tmp_path, reduction, emulator,
                                                                                 cache):
    text = COOPERATIVE.read_text().replace(
        "    cudaLaunchCooperativeKernel((void*)sum_cooperatively,",
        "    void* kernel = (void*)sum_cooperatively;\n    cudaLaunchCooperativeKernel(kernel,")
    report = grade(text, tmp_path, reduction, emulator, cache, "pointer.cu")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "cudaErrorInvalidDeviceFunction" in report.message and "Name the kernel in the call" in report.message


def test_a_launch_one_block_too_large(tmp_path, reduction, emulator, cache):
    text = COOPERATIVE.read_text().replace("int blocks = needed < sms * per_sm ? needed : sms * per_sm;",
                                           "int blocks = sms * per_sm + 1;")
    report = grade(text, tmp_path, reduction, emulator, cache, "large.cu")
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "cudaErrorCooperativeLaunchTooLarge" in report.message
    assert "1057 blocks of 256 threads" in report.message and "at most 1056 such blocks (132 SMs x 8 per SM)" in \
        report.message
