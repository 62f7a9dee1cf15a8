// expect: WRONG_ANSWER
// expect-message: never written
// float4 loads and stores over the first 4·(N / 4) elements, and nothing for the rest: the last N % 4
// elements (up to 3) are left out of the maximum and the sum, and their outputs are never written,
// so they keep the NaN the output arrives filled with. At N = 1, 2 or 3 nothing is written at all.
// (With an alignment check added, this is level 4 of the ladder without its tail.)
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;
constexpr unsigned MAX_BLOCKS = 64;

__device__ void combine(float& m, float& s, float m2, float s2) {
    if (m2 > m) {
        s = s * expf(m - m2) + s2;
        m = m2;
    } else if (m2 != -INFINITY) {
        s += s2 * expf(m2 - m);
    }
}

__global__ void pass_stats(const float4* in4, float* maxima, float* sums, unsigned quads) {
    __shared__ float ms[BLOCK], ss[BLOCK];
    unsigned tid = threadIdx.x, stride = gridDim.x * BLOCK;
    float m = -INFINITY, s = 0.0f;
    for (unsigned i = blockIdx.x * BLOCK + tid; i < quads; i += stride) {
        float4 v = in4[i];
        float top = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
        if (top > m) {
            s *= expf(m - top);
            m = top;
        }
        s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
    }
    // BUG: no tail: elements 4·quads .. N - 1 are never read
    ms[tid] = m;
    ss[tid] = s;
    __syncthreads();
    for (unsigned step = BLOCK / 2; step > 0; step >>= 1) {
        if (tid < step) combine(ms[tid], ss[tid], ms[tid + step], ss[tid + step]);
        __syncthreads();
    }
    if (tid == 0) {
        maxima[blockIdx.x] = ms[0];
        sums[blockIdx.x] = ss[0];
    }
}

__global__ void pass_quotients(const float4* in4, const float* maxima, const float* sums, unsigned blocks,
                               float4* out4, unsigned quads) {
    __shared__ float stats[2];
    if (threadIdx.x == 0) {
        float m = -INFINITY, s = 0.0f;
        for (unsigned b = 0; b < blocks; ++b) combine(m, s, maxima[b], sums[b]);
        stats[0] = m;
        stats[1] = s;
    }
    __syncthreads();
    float top = stats[0], total = stats[1];
    unsigned stride = gridDim.x * BLOCK;
    for (unsigned i = blockIdx.x * BLOCK + threadIdx.x; i < quads; i += stride) {
        float4 v = in4[i];
        out4[i] = make_float4(expf(v.x - top) / total, expf(v.y - top) / total, expf(v.z - top) / total,
                              expf(v.w - top) / total);
    }
    // BUG: the same tail is never written
}

static float* scratch = nullptr;

extern "C" void solve(const float* input, float* output, int N) {
    unsigned quads = (unsigned)N / 4;
    unsigned needed = quads > 0 ? (quads - 1) / BLOCK + 1 : 1;  // at least one block: a valid launch
    unsigned blocks = needed < MAX_BLOCKS ? needed : MAX_BLOCKS;
    if (scratch == nullptr) cudaMalloc(&scratch, 2 * MAX_BLOCKS * sizeof(float));
    const float4* in4 = reinterpret_cast<const float4*>(input);
    pass_stats<<<blocks, BLOCK>>>(in4, scratch, scratch + MAX_BLOCKS, quads);
    pass_quotients<<<blocks, BLOCK>>>(in4, scratch, scratch + MAX_BLOCKS, blocks, reinterpret_cast<float4*>(output),
                                      quads);
}
