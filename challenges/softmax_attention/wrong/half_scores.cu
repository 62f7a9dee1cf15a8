// expect: WRONG_ANSWER
// expect-message: reduced-precision
// Level 1's three kernels with the M×N scratch matrix in half precision, to halve its memory traffic:
// the scores, and then the softmax's weights, are each rounded to 11 significant bits on their way
// through memory. A score s rounded to half is off by up to 2^-12 |s|, and exp turns that into a
// relative error of the same size in its weight; the weights themselves are rounded to 2^-12 of their
// size, and those below 6·10^-8 (half's smallest normal number) lose more. FP32 keeps 24 bits: the
// outputs are thousands of times further off than any FP32 kernel's (statement.md, "Accuracy"), yet
// each is close to its value, which is why the report calls the error reduced precision.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

constexpr int TILE = 16;
constexpr int ROW_BLOCK = 128;

__global__ void scores(const float* Q, const float* K, __half* S, int M, int N, int d, float scale) {
    int j = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || j >= N) return;
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot += Q[(size_t)i * d + t] * K[(size_t)j * d + t];
    S[(size_t)i * N + j] = __float2half(dot * scale);  // BUG: the score rounded to half
}

__global__ void softmax_rows(__half* S, int M, int N) {
    int i = blockIdx.x * ROW_BLOCK + threadIdx.x;
    if (i >= M) return;
    __half* row = S + (size_t)i * N;
    float top = -INFINITY;
    for (int j = 0; j < N; ++j) top = fmaxf(top, __half2float(row[j]));
    float total = 0.0f;
    for (int j = 0; j < N; ++j) total += expf(__half2float(row[j]) - top);
    for (int j = 0; j < N; ++j) row[j] = __float2half(expf(__half2float(row[j]) - top) / total);  // BUG: and the weight
}

__global__ void weighted_sum(const __half* P, const float* V, float* out, int M, int N, int d) {
    int c = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || c >= d) return;
    float acc = 0.0f;
    for (int j = 0; j < N; ++j) acc += __half2float(P[(size_t)i * N + j]) * V[(size_t)j * d + c];
    out[(size_t)i * d + c] = acc;
}

static __half* scratch = nullptr;
static size_t scratch_values = 0;

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    size_t values = (size_t)M * N;
    if (values > scratch_values) {
        cudaFree(scratch);
        scratch = nullptr;
        scratch_values = 0;
        if (cudaMalloc(&scratch, values * sizeof(__half)) != cudaSuccess) return;
        scratch_values = values;
    }
    dim3 block(TILE, TILE);
    scores<<<dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), block>>>(Q, K, scratch, M, N, d,
                                                                         1.0f / sqrtf((float)d));
    softmax_rows<<<(M + ROW_BLOCK - 1) / ROW_BLOCK, ROW_BLOCK>>>(scratch, M, N);
    weighted_sum<<<dim3((d + TILE - 1) / TILE, (M + TILE - 1) / TILE), block>>>(scratch, V, output, M, N, d);
}
