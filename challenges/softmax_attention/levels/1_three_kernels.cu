// expect: ACCEPTED
// Level 1 — three kernels, the formula step by step, the M×N scores kept in global memory.
//
// output = softmax(Q K^T / sqrt(d)) V, read from left to right:
//   1. the scores: one thread per (query i, key j) computes S[i][j] = (q_i · k_j) / sqrt(d), a dot
//      product of d terms, and writes it to an M×N scratch matrix in global memory;
//   2. the softmax of each row: one thread per row finds the row's maximum m, replaces every score by
//      exp(S[i][j] - m) while adding them up, then divides the row by that sum. Subtracting m changes
//      nothing in exact arithmetic (softmax cannot see a shift common to a row) but keeps every exp at
//      most 1: exp(score) itself overflows FP32 for scores above 88.7;
//   3. the weighted sum: one thread per output element (i, c) adds P[i][j] · V[j][c] over the N keys.
// The kernels queue one after the other on the default stream: each starts when the one before it is
// done, with no synchronization on the host.
//
// Correct and simple, with costs the next levels remove: the scores go through memory again and again
// (written; read, then read and rewritten twice by the softmax's three passes; read by the product),
// about 28·M·N bytes (470 MB at M = N = 4096); step 2 has only M threads, each walking a row of N scores alone (at LeetGPU's M = 512, four
// blocks for the whole GPU); and in step 1 the 16 threads of a half-warp read 16 different rows of K
// at once, each from its own cache line.
#include <cuda_runtime.h>
#include <math.h>

constexpr int TILE = 16;      // 16×16 threads per block in steps 1 and 3
constexpr int ROW_BLOCK = 128;  // threads per block in step 2, one per row

// Step 1: S[i][j] = (q_i · k_j) · scale, scale = 1 / sqrt(d). x runs over keys, y over queries.
__global__ void scores(const float* Q, const float* K, float* S, int M, int N, int d, float scale) {
    int j = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || j >= N) return;
    const float* q = Q + (size_t)i * d;
    const float* k = K + (size_t)j * d;
    float dot = 0.0f;
    for (int t = 0; t < d; ++t) dot += q[t] * k[t];
    S[(size_t)i * N + j] = dot * scale;
}

// Step 2: row i of S becomes its softmax, in place: maximum, then exponentials and their sum, then
// the division.
__global__ void softmax_rows(float* S, int M, int N) {
    int i = blockIdx.x * ROW_BLOCK + threadIdx.x;
    if (i >= M) return;
    float* row = S + (size_t)i * N;
    float top = -INFINITY;
    for (int j = 0; j < N; ++j) top = fmaxf(top, row[j]);
    float total = 0.0f;
    for (int j = 0; j < N; ++j) {
        float e = expf(row[j] - top);  // at most exp(0) = 1: no overflow
        row[j] = e;
        total += e;  // at least 1: the maximum's own term
    }
    for (int j = 0; j < N; ++j) row[j] /= total;
}

// Step 3: output[i][c] = sum over j of P[i][j] · V[j][c]. x runs over columns, so the threads of a
// half-warp read 16 neighbouring values of V's row j, and all read the same P[i][j].
__global__ void weighted_sum(const float* P, const float* V, float* out, int M, int N, int d) {
    int c = blockIdx.x * TILE + threadIdx.x;
    int i = blockIdx.y * TILE + threadIdx.y;
    if (i >= M || c >= d) return;
    const float* p = P + (size_t)i * N;
    float acc = 0.0f;
    for (int j = 0; j < N; ++j) acc += p[j] * V[(size_t)j * d + c];
    out[(size_t)i * d + c] = acc;
}

// The M×N scratch matrix: allocated by the first call that needs it and grown when a larger M·N needs
// more, never freed. The process ends with it; freeing it in every call would cost a cudaMalloc (and
// cudaFree's device synchronization) in every call.
static float* scratch = nullptr;
static size_t scratch_floats = 0;

static float* scratch_of(size_t floats) {
    if (floats > scratch_floats) {
        cudaFree(scratch);  // waits for kernels still using the old buffer; nullptr is a no-op
        scratch = nullptr;
        scratch_floats = 0;
        if (cudaMalloc(&scratch, floats * sizeof(float)) != cudaSuccess) return nullptr;
        scratch_floats = floats;
    }
    return scratch;
}

static int blocks_for(int count, int per_block) { return (count + per_block - 1) / per_block; }

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    float* S = scratch_of((size_t)M * N);
    if (S == nullptr) return;  // out of memory: output stays unwritten, and the check says so
    float scale = 1.0f / sqrtf((float)d);
    dim3 block(TILE, TILE);
    // y is the slow grid axis, limited to 65,535 blocks: 16 rows each cover M up to 1,048,560.
    scores<<<dim3(blocks_for(N, TILE), blocks_for(M, TILE)), block>>>(Q, K, S, M, N, d, scale);
    softmax_rows<<<blocks_for(M, ROW_BLOCK), ROW_BLOCK>>>(S, M, N);
    weighted_sum<<<dim3(blocks_for(d, TILE), blocks_for(M, TILE)), block>>>(S, V, output, M, N, d);
}
