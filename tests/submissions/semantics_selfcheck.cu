// expect: ACCEPTED
// A self-checking submission: before computing C it checks the CUDA semantics a kernel ladder
// relies on (warp shuffles and votes, barrier reductions, atomics, large dynamic shared memory,
// constant memory, 3-D indices, launch errors) and leaves C unwritten if any check fails, printing
// which. Run on a GPU and in the emulator, it shows that both agree.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

constexpr int CHECKS = 16;
__device__ int g_failed[CHECKS];
__constant__ float c_scale[4];

__device__ void expect(int id, bool ok) {
    if (!ok) atomicAdd(&g_failed[id], 1);
}

__global__ void warp_checks() {
    int lane = threadIdx.x % 32;
    expect(0, __shfl_sync(0xffffffffu, lane * 10, 3) == 30);
    expect(1, __shfl_down_sync(0xffffffffu, lane, 4) == (lane + 4 < 32 ? lane + 4 : lane));
    expect(2, __shfl_up_sync(0xffffffffu, lane, 1, 8) == (lane % 8 == 0 ? lane : lane - 1));
    expect(3, __shfl_xor_sync(0xffffffffu, lane, 5, 16) == (lane ^ 5));
    expect(4, __ballot_sync(0xffffffffu, lane % 3 == 0) == 0x49249249u);
    expect(5, __any_sync(0xffffffffu, lane == 31) && !__all_sync(0xffffffffu, lane < 31) && __all_sync(0xffffffffu, lane < 32));
    float sum = (float)lane;
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
    expect(6, sum == 496.0f);
    if (lane < 16) {  // a converged half-warp with its own mask
        unsigned half = 0x0000ffffu;
        expect(7, __shfl_sync(half, lane + 100, 15) == 115 && __ballot_sync(half, 1) == half);
    }
    expect(8, __reduce_add_sync(0xffffffffu, (unsigned)lane) == 496u);
}

__global__ void barrier_checks(float* scratch) {
    int t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    int count = __syncthreads_count(t % 2 == 0);
    expect(9, count == (int)(blockDim.x * blockDim.y * blockDim.z + 1) / 2);
    expect(9, __syncthreads_and(t >= 0) == 1 && __syncthreads_or(t == 5) == 1);
    expect(10, blockDim.x == 4 && blockDim.y == 3 && blockDim.z == 2 && gridDim.x == 2 && gridDim.z == 1);
    atomicAdd(&scratch[0], 1.0f);
    atomicMax((int*)&scratch[1], t);
    atomicCAS((int*)&scratch[2], 0, 7);
}

__global__ void big_shared_checks() {
    extern __shared__ float big[];  // 64 KiB: needs cudaFuncSetAttribute
    const int n = 16384;
    for (int i = threadIdx.x; i < n; i += blockDim.x) big[i] = (float)i * c_scale[1];
    __syncthreads();
    float total = 0.0f;
    if (threadIdx.x == 0) {
        for (int i = 0; i < n; ++i) total += big[n - 1 - i] == (float)(n - 1 - i) * 2.0f ? 1.0f : 0.0f;
        expect(11, total == (float)n);
    }
}

template <int TILE>
__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE + 1], Bs[TILE][TILE + 1];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        As[threadIdx.y][threadIdx.x] = (row < M && t + threadIdx.x < N) ? A[(size_t)row * N + t + threadIdx.x] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (t + threadIdx.y < N && col < K) ? B[(size_t)(t + threadIdx.y) * K + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[threadIdx.y][k], Bs[k][threadIdx.x], acc);
        __syncthreads();
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

static bool host_check(bool ok, const char* what) {
    if (!ok) std::printf("selfcheck: host check failed: %s\n", what);
    return ok;
}

static bool host_checks() {
    bool ok = true;
    cudaDeviceProp prop;
    cudaError_t e = cudaGetDeviceProperties(&prop, 0);
    ok &= host_check(e == cudaSuccess && prop.warpSize == 32 && prop.maxThreadsPerBlock == 1024, "device properties");
    warp_checks<<<1, 1025>>>();  // too many threads: a launch error, reported and cleared
    e = cudaGetLastError();      // CUDA 13 on an H200 says cudaErrorInvalidValue
    if (e != cudaErrorInvalidValue) std::printf("selfcheck: 1025-thread launch gave %s\n", cudaGetErrorName(e));
    ok &= host_check(e == cudaErrorInvalidValue, "launch error reported");
    ok &= host_check(cudaGetLastError() == cudaSuccess, "launch error cleared");
    int blocks = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, matmul<16>, 256, 0);
    if (e != cudaSuccess || blocks <= 0) std::printf("selfcheck: occupancy gave %s, %d blocks\n", cudaGetErrorName(e), blocks);
    ok &= host_check(e == cudaSuccess && blocks > 0, "occupancy");
    return ok;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    int zeros[CHECKS] = {};
    cudaMemcpyToSymbol(g_failed, zeros, sizeof zeros);
    float scale[4] = {1.0f, 2.0f, 3.0f, 4.0f};
    cudaMemcpyToSymbol(c_scale, scale, sizeof scale);
    float* scratch = nullptr;
    cudaMalloc(&scratch, 4 * sizeof(float));
    cudaMemset(scratch, 0, 4 * sizeof(float));

    bool ok = host_checks();
    warp_checks<<<2, 64>>>();
    barrier_checks<<<dim3(2, 1, 1), dim3(4, 3, 2)>>>(scratch);
    cudaFuncSetAttribute(big_shared_checks, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
    big_shared_checks<<<1, 128, 65536>>>();
    ok &= cudaDeviceSynchronize() == cudaSuccess;

    int failed[CHECKS];
    float got[4];
    cudaMemcpyFromSymbol(failed, g_failed, sizeof failed);
    cudaMemcpy(got, scratch, sizeof got, cudaMemcpyDeviceToHost);
    cudaFree(scratch);
    for (int i = 0; i < CHECKS; ++i) {
        if (failed[i]) std::printf("selfcheck: check %d failed %d times\n", i, failed[i]);
        ok &= failed[i] == 0;
    }
    int max_t, cas;
    std::memcpy(&max_t, &got[1], 4);
    std::memcpy(&cas, &got[2], 4);
    if (got[0] != 48.0f || max_t != 23 || cas != 7) {
        std::printf("selfcheck: atomics gave %g %d %d\n", got[0], max_t, cas);
        ok = false;
    }
    if (!ok) return;  // C stays NaN: WRONG_ANSWER, with the printed reasons in the report
    dim3 block(16, 16), grid((K + 15) / 16, (M + 15) / 16);
    matmul<16><<<grid, block>>>(A, B, C, M, N, K);
}
