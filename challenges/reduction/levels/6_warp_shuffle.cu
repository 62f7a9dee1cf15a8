// expect: ACCEPTED
// Level 6 — float4 loads, and warp shuffles instead of shared memory for the tree.
//
// Over level 5, two changes:
// - Loads: when the input is 16-byte aligned, each step of the grid-stride loop reads a float4, four
//   elements with one instruction, and adds them as (x + y) + (z + w) before adding that to the
//   thread's sum. A quarter of the load instructions for the same bytes, so more bytes in flight per
//   instruction issued. The last N % 4 elements (up to 3) are added by the first threads after the
//   loop; a misaligned input (the signature does not promise alignment) takes a scalar loop instead.
// - The tree: __shfl_down_sync(mask, v, k) hands each lane the value of lane + k directly, register to
//   register, so the five steps within a warp (k = 16, 8, 4, 2, 1) need no shared memory and no
//   __syncwarp: the shuffle itself is the synchronization, every lane named in the mask taking part.
//   Lane 0 of each warp then holds its warp's sum; the eight warp sums go through a shared array of
//   eight floats (one __syncthreads) and warp 0 adds them with the same shuffles. One barrier per
//   block instead of level 5's three, no __syncwarp, and 8 floats of shared memory instead of 256.
//
// Two passes, as in level 5: a grid sized to the GPU leaves its partial sums in scratch, and one
// block of the same kernel adds them into output[0]. (atomicAdd of each block's sum into an output
// zeroed first would save the second launch, but its result would depend on the order the blocks
// finish in; this way every call returns the same bits.)
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;        // threads per block: a multiple of 32, at most 1024
constexpr unsigned BLOCKS_PER_SM = 8;  // 8 × 256 = 2048 threads, a full H100/H200 multiprocessor
constexpr unsigned FULL_MASK = 0xffffffffu;

// The sum of v over the 32 lanes of a warp, in lane 0 (the other lanes hold partial sums).
__device__ float warp_sum(float v) {
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(FULL_MASK, v, k);
    return v;
}

template <unsigned SIZE, bool FLOAT4>
__global__ void reduce_shuffle(const float* in, float* out, unsigned count) {
    static_assert(SIZE % 32 == 0 && SIZE <= 1024, "whole warps, at most 1024 threads");
    __shared__ float warp_sums[SIZE / 32];
    // Unsigned: indices stay below count <= INT_MAX and the stride is under 2^21: no wrap.
    unsigned first = blockIdx.x * SIZE + threadIdx.x, stride = gridDim.x * SIZE;
    float sum = 0.0f;
    if (FLOAT4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        unsigned quads = count / 4;  // float4s that lie entirely inside the input
        for (unsigned i = first; i < quads; i += stride) {
            float4 v = in4[i];
            sum += (v.x + v.y) + (v.z + v.w);
        }
        unsigned tail = 4 * quads + first;  // thread t < N % 4 takes element 4·(N / 4) + t
        if (tail < count) sum += in[tail];
    } else {
        for (unsigned i = first; i < count; i += stride) sum += in[i];
    }
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    sum = warp_sum(sum);
    if (lane == 0) warp_sums[warp] = sum;
    __syncthreads();  // every warp's sum is in shared memory
    if (warp == 0) {
        sum = warp_sum(lane < SIZE / 32 ? warp_sums[lane] : 0.0f);
        if (lane == 0) out[blockIdx.x] = sum;
    }
}

static unsigned full_grid() {
    static unsigned blocks = 0;  // 0: not asked yet; the GPU cannot change while the process runs
    if (blocks == 0) {
        int device = 0, multiprocessors = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
        blocks = (multiprocessors > 0 ? multiprocessors : 1) * BLOCKS_PER_SM;
    }
    return blocks;
}

// One pass over `count` values: float4 loads where `in` allows them.
static void reduce(const float* in, float* out, unsigned count, unsigned blocks) {
    if (reinterpret_cast<uintptr_t>(in) % 16 == 0) reduce_shuffle<BLOCK, true><<<blocks, BLOCK>>>(in, out, count);
    else reduce_shuffle<BLOCK, false><<<blocks, BLOCK>>>(in, out, count);
}

// The first pass's partial sums: at most full_grid() floats, allocated by the first call that needs
// them and never freed (the process ends with them; freeing them in every call would cost a
// cudaMalloc, and cudaFree's device synchronization, in every call).
static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / (4 * BLOCK) + 1;  // each thread takes at least a float4
    unsigned blocks = needed < full_grid() ? needed : full_grid();
    if (blocks == 1) {
        reduce(input, output, count, 1);
        return;
    }
    if (scratch == nullptr && cudaMalloc(&scratch, full_grid() * sizeof(float)) != cudaSuccess) {
        scratch = nullptr;
        return;  // out of memory: output stays unwritten, and the check says so
    }
    reduce(input, scratch, count, blocks);
    reduce(scratch, output, blocks, 1);
}
