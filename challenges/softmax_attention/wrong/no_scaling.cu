// expect: WRONG_ANSWER
// The 1 / sqrt(d) left out: softmax(Q K^T) V instead of softmax(Q K^T / sqrt(d)) V. Everything else is
// right (the maximum subtracted, two passes over the keys), and at d = 1 the two formulas agree, so a
// test of d = 1 alone would pass it. For any other d every score is sqrt(d) times too large: the
// softmax is sharper than it should be, and the outputs lean towards the values of the best-matching
// keys (wrong by up to the size of V's values, millions of times the tolerance).
#include <cuda_runtime.h>
#include <math.h>

constexpr int BLOCK = 128;
constexpr int MAX_D = 128;

__device__ float score(const float* q, const float* k, int d) {
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot += q[t] * k[t];
    return dot;  // BUG: never divided by sqrt(d)
}

// One thread per query row: the row's maximum score, then the exponentials, their sum and the
// weighted values in a second pass.
__global__ void attention_rows(const float* Q, const float* K, const float* V, float* out, int M, int N, int d) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= M) return;
    const float* q = Q + (size_t)i * d;
    float top = -INFINITY;
    for (int j = 0; j < N; ++j) top = fmaxf(top, score(q, K + (size_t)j * d, d));
    float acc[MAX_D] = {};
    float total = 0.0f;
    for (int j = 0; j < N; ++j) {
        float e = expf(score(q, K + (size_t)j * d, d) - top);
        total += e;
        for (int c = 0; c < d; ++c) acc[c] += e * V[(size_t)j * d + c];
    }
    for (int c = 0; c < d; ++c) out[(size_t)i * d + c] = acc[c] / total;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_rows<<<(M + BLOCK - 1) / BLOCK, BLOCK>>>(Q, K, V, output, M, N, d);
}
