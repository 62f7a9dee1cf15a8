// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// Keys in shared memory, a tile of 32 at a time, one thread per query row (an online softmax per key),
// without the __syncthreads() at the end of each tile: a thread that is done with the tile goes on to
// copy its share of the next one over it while other threads of the block are still reading it. Their
// scores and weighted values then mix keys of two tiles. On a GPU the outcome depends on how the warps
// happen to be scheduled (often right, with few warps per block, which is what makes the bug hard to
// see), so only the emulator promises a verdict: it runs every block's threads in forward and in
// reverse order, and a thread that runs ahead overwrites the tile before the others have read it, with
// different results in the two orders. A row of 32 keys or fewer is one tile and never races.
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
    for (int j0 = 0; j0 < N; j0 += TILE) {
        int count = min(TILE, N - j0);
        for (int x = threadIdx.x; x < count * d; x += ROWS) {
            int r = x / d, t = x % d;
            keys[r][t] = K[(size_t)(j0 + r) * d + t];
            values[r][t] = V[(size_t)(j0 + r) * d + t];
        }
        __syncthreads();  // the tile is complete
        for (int r = 0; r < count; ++r) {
            float s = 0.0f;
            for (int t = 0; t < d; ++t) s += q[t] * keys[r][t];
            float m_new = fmaxf(m, s);
            float correction = expf(m - m_new), e = expf(s - m_new);
            l = l * correction + e;
            for (int c = 0; c < d; ++c) acc[c] = acc[c] * correction + e * values[r][c];
            m = m_new;
        }
        // BUG: no __syncthreads() here: the next tile's copy may overwrite this one while it is read
    }
    if (active)
        for (int c = 0; c < d; ++c) out[(size_t)i * d + c] = acc[c] / l;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_tiles<<<(M + ROWS - 1) / ROWS, ROWS>>>(Q, K, V, output, M, N, d, 1.0f / sqrtf((float)d));
}
