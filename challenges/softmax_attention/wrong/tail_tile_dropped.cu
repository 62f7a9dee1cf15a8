// expect: WRONG_ANSWER
// Keys in shared memory, a tile of 32 at a time, one thread per query row, and a loop that only runs
// over whole tiles: `j0 + TILE <= N`. When N is a multiple of 32 (LeetGPU's 128 and 256, and its
// timed 256) every key is seen and the answer is right. Otherwise the last N % 32 keys never enter the
// softmax: the weights of the rest add up to 1 without them, and the outputs are those of a shorter K
// and V. With fewer than 32 keys nothing is summed at all, and every output is 0 / 0 = NaN.
#include <cuda_runtime.h>
#include <math.h>

constexpr int ROWS = 64;    // threads per block, a query row each
constexpr int TILE = 32;    // keys per tile
constexpr int MAX_D = 128;  // LeetGPU's largest d

__global__ void attention_tiles(const float* Q, const float* K, const float* V, float* out, int M, int N, int d,
                                float scale) {
    __shared__ float keys[TILE][MAX_D];
    __shared__ float values[TILE][MAX_D];
    int i = blockIdx.x * ROWS + threadIdx.x;
    bool active = i < M;  // a thread past M still copies its share of every tile
    float q[MAX_D], acc[MAX_D];
    for (int t = 0; t < d; ++t) {
        q[t] = active ? Q[(size_t)i * d + t] * scale : 0.0f;
        acc[t] = 0.0f;
    }
    float m = -INFINITY, l = 0.0f;
    for (int j0 = 0; j0 + TILE <= N; j0 += TILE) {  // BUG: a last, partial tile is never loaded
        for (int x = threadIdx.x; x < TILE * d; x += ROWS) {
            int r = x / d, t = x % d;
            keys[r][t] = K[(size_t)(j0 + r) * d + t];
            values[r][t] = V[(size_t)(j0 + r) * d + t];
        }
        __syncthreads();  // the tile is complete
        for (int r = 0; r < TILE; ++r) {
            float s = 0.0f;
            for (int t = 0; t < d; ++t) s += q[t] * keys[r][t];
            float m_new = fmaxf(m, s);
            float correction = expf(m - m_new), e = expf(s - m_new);
            l = l * correction + e;
            for (int c = 0; c < d; ++c) acc[c] = acc[c] * correction + e * values[r][c];
            m = m_new;
        }
        __syncthreads();  // every thread is done with the tile before the next one overwrites it
    }
    if (active)
        for (int c = 0; c < d; ++c) out[(size_t)i * d + c] = acc[c] / l;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_tiles<<<(M + ROWS - 1) / ROWS, ROWS>>>(Q, K, V, output, M, N, d, 1.0f / sqrtf((float)d));
}
