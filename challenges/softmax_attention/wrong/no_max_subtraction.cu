// expect: WRONG_ANSWER
// expect-message: NaN
// The formula as a textbook writes it, exp(score) / sum exp(score), in one pass over the keys: no
// maximum subtracted first. In exact arithmetic it is the same softmax; in FP32 exp overflows to
// infinity above 88.7 and is 0 below -103.9. On LeetGPU's random values the scores stay within ±0.01
// and the kernel is right, which is what makes the bug easy to ship. A third of the grader's cases
// move every key by one common vector (statement.md, "Inputs"), which moves each row's scores by 100
// to 320, up or down, and leaves the softmax unchanged: rows moved up give inf / inf, rows moved down
// 0 / 0, NaN either way. (One of LeetGPU's own tests, M = N = 4 and d = 3 with entries up to 12, has
// scores from -211 to +154 and trips it too.)
#include <cuda_runtime.h>
#include <math.h>

constexpr int BLOCK = 128;
constexpr int MAX_D = 128;

// One thread per query row, one pass over the keys.
__global__ void attention_rows(const float* Q, const float* K, const float* V, float* out, int M, int N, int d,
                               float scale) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= M) return;
    const float* q = Q + (size_t)i * d;
    float acc[MAX_D] = {};
    float total = 0.0f;
    for (int j = 0; j < N; ++j) {
        const float* k = K + (size_t)j * d;
        float dot = 0.0f;
        for (int t = 0; t < d; ++t) dot += q[t] * k[t];
        float e = expf(dot * scale);  // BUG: exp of the score itself, not of score - row maximum
        total += e;
        for (int c = 0; c < d; ++c) acc[c] += e * V[(size_t)j * d + c];
    }
    for (int c = 0; c < d; ++c) out[(size_t)i * d + c] = acc[c] / total;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_rows<<<(M + BLOCK - 1) / BLOCK, BLOCK>>>(Q, K, V, output, M, N, d, 1.0f / sqrtf((float)d));
}
