// Approach: two passes. The first computes the pair (M, S) = (maximum, sum of exp(x - M)) online: each
// thread over a grid-stride run of float4s (four in flight), warps combining pairs with shuffles, and the
// last block to finish (an atomic ticket) combining the blocks' pairs in block order. The second writes
// exp(x - M) · (1 / S) with float4 loads and stores.
// From this project's challenges/softmax/levels/4_float4_shuffle.cu.
#include <cstdint>
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;        // threads per block: a multiple of 32, at most 1024
constexpr unsigned BLOCKS_PER_SM = 8;  // 8 × 256 = 2048 threads, a full H100/H200 multiprocessor
constexpr unsigned IN_FLIGHT = 4;      // float4 loads a thread issues before using any (pass 1)
constexpr unsigned WARPS = BLOCK / 32;
constexpr unsigned FULL_MASK = 0xffffffffu;

// (m, s) absorbs (m2, s2): afterwards s is the sum of exp(x - m) over both pairs' elements.
__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    if (m2 > m) {
        s = s * __expf(m - m2) + s2;  // m = -infinity: s is 0 and exp(-infinity) is 0
        m = m2;
    } else if (m2 != -INFINITY) {  // (-infinity, 0) adds nothing, and exp(-inf - -inf) would be NaN
        s += s2 * __expf(m2 - m);
    }
}

// Every lane ends with the warp's pair.
__device__ __forceinline__ void warp_combine(float& m, float& s) {
    for (unsigned k = 16; k > 0; k >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, k);
        float s2 = __shfl_xor_sync(FULL_MASK, s, k);
        combine(m, s, m2, s2);
    }
}

// Every thread of the block calls it; warp 0 ends with the block's pair (the other warps' values are
// partial).
__device__ __forceinline__ void block_combine(float& m, float& s) {
    __shared__ float warp_m[WARPS], warp_s[WARPS];
    unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    warp_combine(m, s);
    if (lane == 0) {
        warp_m[warp] = m;
        warp_s[warp] = s;
    }
    __syncthreads();  // every warp's pair is in shared memory
    if (warp == 0) {
        m = lane < WARPS ? warp_m[lane] : -INFINITY;
        s = lane < WARPS ? warp_s[lane] : 0.0f;
        warp_combine(m, s);
    }
}

__device__ __forceinline__ void absorb(float& m, float& s, float x) {
    if (x > m) {
        s = s * __expf(m - x) + 1.0f;  // the first element: 0 · exp(-infinity) + 1
        m = x;
    } else {
        s += __expf(x - m);
    }
}

__device__ unsigned blocks_done = 0;  // the counter; the last block of every call sets it back to 0

// Pass 1: the blocks' pairs into maxima[] and sums[], then the last block to finish writes
// stats[0] = M and stats[1] = S.
template <bool FLOAT4>
__global__ void pass_stats(const float* in, float* maxima, float* sums, float* stats, unsigned count) {
    __shared__ bool last;
    // Unsigned: indices stay below count <= INT_MAX and the stride is under 2^21: no wrap.
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    float m = -INFINITY, s = 0.0f;
    if (FLOAT4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        unsigned quads = count / 4;  // float4s that lie entirely inside the input
        unsigned i = first;
        // IN_FLIGHT float4 loads issued before any is used; one rescale for the largest of them all.
        // Unsigned arithmetic: quads < 2^29 and IN_FLIGHT · stride < 2^23, so nothing wraps.
        for (; i + (IN_FLIGHT - 1) * stride < quads; i += IN_FLIGHT * stride) {
            float4 v[IN_FLIGHT];
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) v[u] = in4[i + u * stride];
            float top = m;
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u) top = fmaxf(top, fmaxf(fmaxf(v[u].x, v[u].y), fmaxf(v[u].z, v[u].w)));
            if (top > m) {
                s *= __expf(m - top);  // 0 · exp(-infinity) = 0 on the first step
                m = top;
            }
#pragma unroll
            for (unsigned u = 0; u < IN_FLIGHT; ++u)
                s += (__expf(v[u].x - m) + __expf(v[u].y - m)) + (__expf(v[u].z - m) + __expf(v[u].w - m));
        }
        for (; i < quads; i += stride) {  // fewer than IN_FLIGHT grid widths left
            float4 v = in4[i];
            float top = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
            if (top > m) {
                s *= __expf(m - top);
                m = top;
            }
            s += (__expf(v.x - m) + __expf(v.y - m)) + (__expf(v.z - m) + __expf(v.w - m));
        }
        unsigned tail = 4 * quads + first;  // thread t < N % 4 takes element 4·(N / 4) + t
        if (tail < count) absorb(m, s, in[tail]);
    } else {
        for (unsigned i = first; i < count; i += stride) absorb(m, s, in[i]);
    }
    block_combine(m, s);
    if (threadIdx.x == 0) {
        maxima[blockIdx.x] = m;
        sums[blockIdx.x] = s;
        __threadfence();  // the pair is visible to every block before this block counts itself done
        last = atomicAdd(&blocks_done, 1u) == gridDim.x - 1;
    }
    __syncthreads();
    if (!last) return;
    // The last block: every other block's pair is written. __ldcg reads them from L2, past this
    // multiprocessor's L1, which does not see other multiprocessors' writes.
    m = -INFINITY;
    s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) combine(m, s, __ldcg(maxima + b), __ldcg(sums + b));
    block_combine(m, s);
    if (threadIdx.x == 0) {
        stats[0] = m;
        stats[1] = s;
        blocks_done = 0;  // ready for the next call, which starts after this kernel ends
    }
}

// Pass 2: every quotient, exp(x - M) · (1 / S).
template <bool FLOAT4>
__global__ void pass_quotients(const float* in, float* out, const float* stats, unsigned count) {
    float top = stats[0], scale = 1.0f / stats[1];
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    if (FLOAT4) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        float4* out4 = reinterpret_cast<float4*>(out);
        unsigned quads = count / 4;
        for (unsigned i = first; i < quads; i += stride) {
            float4 v = __ldcs(in4 + i);
            __stcs(out4 + i, make_float4(__expf(v.x - top) * scale, __expf(v.y - top) * scale,
                                         __expf(v.z - top) * scale, __expf(v.w - top) * scale));
        }
        unsigned tail = 4 * quads + first;
        if (tail < count) out[tail] = __expf(in[tail] - top) * scale;
    } else {
        for (unsigned i = first; i < count; i += stride) __stcs(out + i, __expf(__ldcs(in + i) - top) * scale);
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

// The blocks' pairs (full_grid() maxima, as many sums) and M and S: allocated by the first call and
// never freed (the process ends with them; freeing them in every call would cost a cudaMalloc, and
// cudaFree's device synchronization, in every call).
static float* scratch = nullptr;

static bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, float* output, int N) {
    unsigned count = (unsigned)N;
    if (scratch == nullptr && cudaMalloc(&scratch, (2 * full_grid() + 2) * sizeof(float)) != cudaSuccess) {
        scratch = nullptr;
        return;  // out of memory: output stays unwritten, and the check says so
    }
    float* maxima = scratch;
    float* sums = scratch + full_grid();
    float* stats = sums + full_grid();
    bool vector_in = aligned(input), vector_out = vector_in && aligned(output);
    // Enough blocks for one item (a float4, or an element on the scalar path) per thread, at most a
    // full GPU; at least one block, whose first threads take the tail when there is no whole float4.
    unsigned items = vector_in ? count / 4 : count;
    unsigned needed = items > 0 ? (items - 1) / BLOCK + 1 : 1;
    unsigned blocks = needed < full_grid() ? needed : full_grid();
    if (vector_in) pass_stats<true><<<blocks, BLOCK>>>(input, maxima, sums, stats, count);
    else pass_stats<false><<<blocks, BLOCK>>>(input, maxima, sums, stats, count);
    unsigned out_items = vector_out ? count / 4 : count;
    unsigned out_needed = out_items > 0 ? (out_items - 1) / BLOCK + 1 : 1;
    unsigned out_blocks = out_needed < full_grid() ? out_needed : full_grid();
    if (vector_out) pass_quotients<true><<<out_blocks, BLOCK>>>(input, output, stats, count);
    else pass_quotients<false><<<out_blocks, BLOCK>>>(input, output, stats, count);
}
