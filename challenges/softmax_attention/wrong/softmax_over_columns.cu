// expect: WRONG_ANSWER
// Level 1's three kernels with the softmax taken along the wrong axis: each column of the M×N score
// matrix (one key, every query) is normalised, where each row (one query, every key) should be. The
// kernel looks as plausible as the right one, one thread per line of S walking it three times, and for
// a square, symmetric S the two even agree. In general each query's weights no longer add up to 1, so
// its output is not a weighted mean of V's rows at all: wrong by up to the size of V's values.
#include <cuda_runtime.h>
#include <math.h>

constexpr int TILE = 16;
constexpr int LINE_BLOCK = 128;

__global__ void scores(const float* Q, const float* K, float* S, int M, int N, int d, float scale) {
    int j = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || j >= N) return;
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot += Q[(size_t)i * d + t] * K[(size_t)j * d + t];
    S[(size_t)i * N + j] = dot * scale;
}

// BUG: one thread per key j normalises column j of S (over the M queries): the softmax must run along
// row i (over the N keys).
__global__ void softmax_columns(float* S, int M, int N) {
    int j = blockIdx.x * LINE_BLOCK + threadIdx.x;
    if (j >= N) return;
    float top = -INFINITY;
    for (int i = 0; i < M; ++i) top = fmaxf(top, S[(size_t)i * N + j]);
    float total = 0.0f;
    for (int i = 0; i < M; ++i) {
        float e = expf(S[(size_t)i * N + j] - top);
        S[(size_t)i * N + j] = e;
        total += e;
    }
    for (int i = 0; i < M; ++i) S[(size_t)i * N + j] /= total;
}

__global__ void weighted_sum(const float* P, const float* V, float* out, int M, int N, int d) {
    int c = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || c >= d) return;
    float acc = 0.0f;
    for (int j = 0; j < N; ++j) acc += P[(size_t)i * N + j] * V[(size_t)j * d + c];
    out[(size_t)i * d + c] = acc;
}

static float* scratch = nullptr;
static size_t scratch_floats = 0;

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    size_t floats = (size_t)M * N;
    if (floats > scratch_floats) {
        cudaFree(scratch);
        scratch = nullptr;
        scratch_floats = 0;
        if (cudaMalloc(&scratch, floats * sizeof(float)) != cudaSuccess) return;
        scratch_floats = floats;
    }
    dim3 block(TILE, TILE);
    scores<<<dim3((N + TILE - 1) / TILE, (M + TILE - 1) / TILE), block>>>(Q, K, scratch, M, N, d,
                                                                         1.0f / sqrtf((float)d));
    softmax_columns<<<(N + LINE_BLOCK - 1) / LINE_BLOCK, LINE_BLOCK>>>(scratch, M, N);
    weighted_sum<<<dim3((d + TILE - 1) / TILE, (M + TILE - 1) / TILE), block>>>(scratch, V, output, M, N, d);
}
