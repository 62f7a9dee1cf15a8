// expect: RUNTIME_ERROR
// expect-message: 65535
// expect-cuda: RUNTIME_ERROR
// One block per query row, with the rows on the grid's y axis: dim3 grid(1, M). Correct in every other
// respect (level 2's kernel, reading blockIdx.y where level 2 reads blockIdx.x), and right on all of
// LeetGPU's examples. But a grid's y and z extents are limited to 65,535 blocks, only x goes to 2^31 - 1,
// and LeetGPU's M goes to 100,000: at M = 65,537 (the grader's many_queries case) the launch is refused
// with cudaErrorInvalidConfiguration, nothing runs, and the output is never written.
#include <cuda_runtime.h>
#include <math.h>

constexpr int THREADS = 128;  // one per output column, d <= 128
constexpr int WARPS = THREADS / 32;
constexpr int CHUNK = 2048;
constexpr unsigned FULL = 0xffffffffu;

template <bool MAX>
__device__ float block_reduce(float v, float* slots) {
    for (int offset = 16; offset > 0; offset >>= 1) {
        float other = __shfl_xor_sync(FULL, v, offset);
        v = MAX ? fmaxf(v, other) : v + other;
    }
    if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = v;
    __syncthreads();
    float result = slots[0];
    for (int w = 1; w < WARPS; ++w) result = MAX ? fmaxf(result, slots[w]) : result + slots[w];
    __syncthreads();
    return result;
}

__global__ void attention_row(const float* Q, const float* K, const float* V, float* out, int N, int d, float scale) {
    __shared__ float w[CHUNK];
    __shared__ float slots[WARPS];
    int row = blockIdx.y;  // BUG: the y axis holds at most 65,535 blocks
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const float* query = Q + (size_t)row * d;
    float m = -INFINITY, l = 0.0f, acc = 0.0f;
    for (int j0 = 0; j0 < N; j0 += CHUNK) {
        int count = min(CHUNK, N - j0);
        for (int x = warp; x < count; x += WARPS) {
            const float* key = K + (size_t)(j0 + x) * d;
            float part = 0.0f;
            for (int t = lane; t < d; t += 32) part += query[t] * key[t];
            for (int offset = 16; offset > 0; offset >>= 1) part += __shfl_xor_sync(FULL, part, offset);
            if (lane == 0) w[x] = part * scale;
        }
        __syncthreads();
        float top = -INFINITY;
        for (int x = tid; x < count; x += THREADS) top = fmaxf(top, w[x]);
        float m_new = fmaxf(m, block_reduce<true>(top, slots));
        float part = 0.0f;
        for (int x = tid; x < count; x += THREADS) {
            float e = expf(w[x] - m_new);
            w[x] = e;
            part += e;
        }
        float total = block_reduce<false>(part, slots);
        float correction = expf(m - m_new);
        l = l * correction + total;
        m = m_new;
        if (tid < d) {
            float sum = 0.0f;
            for (int x = 0; x < count; ++x) sum += w[x] * V[(size_t)(j0 + x) * d + tid];
            acc = acc * correction + sum;
        }
        __syncthreads();
    }
    if (tid < d) out[(size_t)row * d + tid] = acc / l;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_row<<<dim3(1, M), THREADS>>>(Q, K, V, output, N, d, 1.0f / sqrtf((float)d));
}
