// Probe, not a level: softmax in ONE cooperative launch, to measure what the second launch of level 4
// costs. Phase 1 folds each thread's float4s into an online (max, sum) pair and each block writes its
// pair; grid.sync(); every block combines all pairs (a few KB from L2) into M and S; phase 2 re-reads
// the same addresses (still in L2 for moderate N) and writes exp(x - M) / S. Aligned pointers and
// N % 4 == 0 only (the probe's sizes): enough to time the idea, not a submission.
#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <math.h>

namespace cg = cooperative_groups;

#ifndef BLOCK
#define BLOCK 256
#endif

__device__ __forceinline__ void combine(float& m, float& s, float m2, float s2) {
    if (m2 > m) { s = s * __expf(m - m2) + s2; m = m2; }
    else if (m2 != -INFINITY) s += s2 * __expf(m2 - m);
}

__device__ __forceinline__ void block_combine(float& m, float& s) {
    __shared__ float wm[BLOCK / 32], ws[BLOCK / 32];
    for (int k = 16; k > 0; k >>= 1) combine(m, s, __shfl_xor_sync(~0u, m, k), __shfl_xor_sync(~0u, s, k));
    if (threadIdx.x % 32 == 0) { wm[threadIdx.x / 32] = m; ws[threadIdx.x / 32] = s; }
    __syncthreads();
    m = threadIdx.x < BLOCK / 32 ? wm[threadIdx.x] : -INFINITY;
    s = threadIdx.x < BLOCK / 32 ? ws[threadIdx.x] : 0.0f;
    if (threadIdx.x < 32)
        for (int k = 16; k > 0; k >>= 1) combine(m, s, __shfl_xor_sync(~0u, m, k), __shfl_xor_sync(~0u, s, k));
    __syncthreads();
}

__global__ void __launch_bounds__(BLOCK) softmax_once(const float4* in, float4* out, float2* pairs, unsigned quads) {
    unsigned first = blockIdx.x * BLOCK + threadIdx.x, stride = gridDim.x * BLOCK;
    float m = -INFINITY, s = 0.0f;
    for (unsigned i = first; i < quads; i += stride) {
        float4 v = in[i];
        float top = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
        if (top > m) { s *= __expf(m - top); m = top; }
        s += (__expf(v.x - m) + __expf(v.y - m)) + (__expf(v.z - m) + __expf(v.w - m));
    }
    block_combine(m, s);
    if (threadIdx.x == 0) pairs[blockIdx.x] = make_float2(m, s);
    cg::this_grid().sync();
    __shared__ float total_m, total_s;
    m = -INFINITY; s = 0.0f;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK) { float2 p = __ldcg(pairs + b); combine(m, s, p.x, p.y); }
    block_combine(m, s);
    if (threadIdx.x == 0) { total_m = m; total_s = s; }
    __syncthreads();
    float top = total_m, scale = 1.0f / total_s;
    for (unsigned i = first; i < quads; i += stride) {
        float4 v = __ldcs(in + i);
        __stcs(out + i, make_float4(__expf(v.x - top) * scale, __expf(v.y - top) * scale,
                                    __expf(v.z - top) * scale, __expf(v.w - top) * scale));
    }
}

extern "C" void solve(const float* input, float* output, int N) {
    static int blocks = 0;
    static float2* pairs = nullptr;
    if (blocks == 0) {
        int sms = 0, per_sm = 0;
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, softmax_once, BLOCK, 0);
        blocks = sms * per_sm;
        cudaMalloc(&pairs, blocks * sizeof(float2));
    }
    const float4* in = reinterpret_cast<const float4*>(input);
    float4* out = reinterpret_cast<float4*>(output);
    unsigned quads = (unsigned)N / 4;
    void* args[] = {&in, &out, &pairs, &quads};
    cudaLaunchCooperativeKernel((void*)softmax_once, blocks, BLOCK, args, 0, 0);
}
