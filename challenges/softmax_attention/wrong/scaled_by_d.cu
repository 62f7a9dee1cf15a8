// expect: WRONG_ANSWER
// The scores divided by d instead of by its square root: 1.0f / d where 1.0f / sqrtf(d) was meant.
// Right at d = 1, where the two are equal; for any other d every score is sqrt(d) times too small, the
// softmax too flat, and each output drifts towards the plain mean of V's rows.
#include <cuda_runtime.h>
#include <math.h>

constexpr int BLOCK = 128;
constexpr int MAX_D = 128;

// One thread per query row: the row's maximum score, then the exponentials, their sum and the
// weighted values in a second pass.
__global__ void attention_rows(const float* Q, const float* K, const float* V, float* out, int M, int N, int d,
                               float scale) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= M) return;
    const float* q = Q + (size_t)i * d;
    float top = -INFINITY;
    for (int j = 0; j < N; ++j) {
        float dot = 0.0f;
        for (int t = 0; t < d; ++t) dot += q[t] * K[(size_t)j * d + t];
        top = fmaxf(top, dot * scale);
    }
    float acc[MAX_D] = {};
    float total = 0.0f;
    for (int j = 0; j < N; ++j) {
        float dot = 0.0f;
        for (int t = 0; t < d; ++t) dot += q[t] * K[(size_t)j * d + t];
        float e = expf(dot * scale - top);
        total += e;
        for (int c = 0; c < d; ++c) acc[c] += e * V[(size_t)j * d + c];
    }
    for (int c = 0; c < d; ++c) out[(size_t)i * d + c] = acc[c] / total;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    float scale = 1.0f / d;  // BUG: 1 / sqrt(d)
    attention_rows<<<(M + BLOCK - 1) / BLOCK, BLOCK>>>(Q, K, V, output, M, N, d, scale);
}
