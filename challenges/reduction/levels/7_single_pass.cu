// expect: ACCEPTED
// Level 7 — one launch, four loads in flight per thread.
//
// Over level 6, two changes, both about keeping the memory busy from the first nanosecond to the last:
// - Four float4 loads per loop step. Level 6's loop adds each float4 into the thread's sum before the
//   next one is asked for, so a thread has one 16-byte load in flight at a time. Here a step issues four
//   loads (a grid's width apart, so each is still coalesced across the warp) into four registers, and
//   only then adds them, each into an accumulator of its own: 64 bytes in flight per thread, and the
//   four additions no longer wait on one another. The leftover float4s (fewer than four grid widths)
//   and the last N % 4 elements are added one at a time.
// - One launch. Level 6 ends with a second kernel, one block adding the grid's partial sums: its launch
//   and its start-up sit in the timed call while the memory idles. Here every block writes its partial
//   sum, makes it visible to the whole GPU (__threadfence), and counts itself done with an atomic
//   increment of a counter in global memory; the block that counts last knows every partial sum is
//   written, adds them in block order, writes output[0] and sets the counter back to zero for the next
//   call. The partial sums are added in the same order whichever block finishes last, so every call
//   still returns the same bits; the only atomic is on the counter, never on the sum.
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;        // threads per block: a multiple of 32, at most 1024
constexpr unsigned BLOCKS_PER_SM = 8;  // 8 × 256 = 2048 threads, a full H100/H200 multiprocessor
constexpr unsigned IN_FLIGHT = 4;      // float4 loads a thread issues before adding any of them
constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ unsigned blocks_done = 0;  // blocks of the current call that have written their partial sum

__device__ float warp_sum(float v) {
    for (unsigned k = 16; k > 0; k >>= 1) v += __shfl_down_sync(FULL_MASK, v, k);
    return v;
}

// The sum of v over the block, right in thread 0: shuffles within each warp, then warp 0 over the
// warps' sums (level 6's tree).
__device__ float block_sum(float v) {
    __shared__ float warp_sums[BLOCK / 32];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = warp == 0 ? warp_sum(lane < BLOCK / 32 ? warp_sums[lane] : 0.0f) : 0.0f;
    __syncthreads();  // warp_sums may be written again by the next block_sum of this block
    return v;
}

// This thread's share of the input: float4s (when aligned) IN_FLIGHT at a time, then the rest.
template <bool FLOAT4>
__device__ float thread_sum(const float* in, unsigned count) {
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    float acc[IN_FLIGHT] = {};
    if (FLOAT4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        unsigned quads = count / 4, i = first;
        // Unsigned arithmetic: quads < 2^29 and IN_FLIGHT · stride < 2^23, so nothing wraps.
        for (; i + (IN_FLIGHT - 1) * stride < quads; i += IN_FLIGHT * stride) {
            float4 v[IN_FLIGHT];
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) v[u] = in4[i + u * stride];  // all four loads issued
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) acc[u] += (v[u].x + v[u].y) + (v[u].z + v[u].w);
        }
        for (; i < quads; i += stride) {
            float4 v = in4[i];
            acc[0] += (v.x + v.y) + (v.z + v.w);
        }
        unsigned tail = 4 * quads + first;  // thread t < N % 4 takes element 4·(N / 4) + t
        if (tail < count) acc[0] += in[tail];
    } else {
        for (unsigned i = first; i < count; i += stride) acc[0] += in[i];
    }
    float sum = 0.0f;
#pragma unroll
    for (unsigned u = 0; u < IN_FLIGHT; ++u) sum += acc[u];
    return sum;
}

template <bool FLOAT4>
__global__ void __launch_bounds__(BLOCK) reduce_once(const float* in, float* partial, float* out, unsigned count) {
    float sum = block_sum(thread_sum<FLOAT4>(in, count));
    if (gridDim.x == 1) {  // a single block needs no partial sums
        if (threadIdx.x == 0) out[0] = sum;
        return;
    }
    __shared__ bool last;
    if (threadIdx.x == 0) {
        partial[blockIdx.x] = sum;
        __threadfence();  // the partial sum is visible to every block before the count says so
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();  // the other blocks' partial sums are read after their counts
    float total = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) total += __ldcg(partial + b);  // from L2, not a stale L1
    total = block_sum(total);
    if (threadIdx.x == 0) {
        out[0] = total;
        blocks_done = 0;  // every block has counted: ready for the next call
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

// The partial sums: at most full_grid() floats, allocated by the first call and kept (level 6).
static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    unsigned needed = (count - 1) / (4 * BLOCK) + 1;  // each thread takes at least a float4
    unsigned blocks = needed < full_grid() ? needed : full_grid();
    if (scratch == nullptr && cudaMalloc(&scratch, full_grid() * sizeof(float)) != cudaSuccess) {
        scratch = nullptr;
        return;  // out of memory: output stays unwritten, and the check says so
    }
    if (reinterpret_cast<uintptr_t>(input) % 16 == 0) reduce_once<true><<<blocks, BLOCK>>>(input, scratch, output, count);
    else reduce_once<false><<<blocks, BLOCK>>>(input, scratch, output, count);
}
