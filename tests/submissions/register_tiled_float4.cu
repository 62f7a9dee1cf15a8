// expect: ACCEPTED
// 2-D register tiling: a 64x64 block tile, each of 256 threads computes a 4x4 patch of C from
// registers. Tiles of A and B are loaded with 128-bit float4 loads where the rows allow it
// (inner dimension a multiple of 4), with a scalar path for every other shape and the edges.
#include <cuda_runtime.h>

constexpr int BM = 64, BN = 64, BK = 16;  // block tile of C, and the inner-dimension step
constexpr int TM = 4, TN = 4;             // each thread's patch of C
constexpr int THREADS = (BM / TM) * (BN / TN);

__device__ void load_a_tile(float (*As)[BM + 4], const float* A, int M, int N, int row0, int k0) {
    // As is stored transposed (As[k][m]) so the inner loop reads consecutive m.
    bool vector_ok = (N % 4 == 0);
    for (int i = threadIdx.x; i < BM * BK / 4; i += THREADS) {
        int m = i / (BK / 4), k = (i % (BK / 4)) * 4;
        int r = row0 + m, c = k0 + k;
        float v[4];
        if (vector_ok && r < M && c + 3 < N) {
            float4 q = *reinterpret_cast<const float4*>(&A[(size_t)r * N + c]);
            v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
        } else {
            for (int j = 0; j < 4; ++j) v[j] = (r < M && c + j < N) ? A[(size_t)r * N + c + j] : 0.0f;
        }
        for (int j = 0; j < 4; ++j) As[k + j][m] = v[j];
    }
}

__device__ void load_b_tile(float (*Bs)[BN + 4], const float* B, int N, int K, int k0, int col0) {
    bool vector_ok = (K % 4 == 0);
    for (int i = threadIdx.x; i < BK * BN / 4; i += THREADS) {
        int k = i / (BN / 4), n = (i % (BN / 4)) * 4;
        int r = k0 + k, c = col0 + n;
        if (vector_ok && r < N && c + 3 < K) {
            float4 q = *reinterpret_cast<const float4*>(&B[(size_t)r * K + c]);
            Bs[k][n] = q.x, Bs[k][n + 1] = q.y, Bs[k][n + 2] = q.z, Bs[k][n + 3] = q.w;
        } else {
            for (int j = 0; j < 4; ++j) Bs[k][n + j] = (r < N && c + j < K) ? B[(size_t)r * K + c + j] : 0.0f;
        }
    }
}

__global__ void __launch_bounds__(THREADS) matmul_register_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) float As[BK][BM + 4];
    __shared__ __align__(16) float Bs[BK][BN + 4];
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int ty = threadIdx.x / (BN / TN), tx = threadIdx.x % (BN / TN);

    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < N; k0 += BK) {
        load_a_tile(As, A, M, N, row0, k0);
        load_b_tile(Bs, B, N, K, k0, col0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < TM; ++i) {
        int r = row0 + ty * TM + i;
        for (int j = 0; j < TN; ++j) {
            int c = col0 + tx * TN + j;
            if (r < M && c < K) C[(size_t)r * K + c] = acc[i][j];
        }
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 grid((K + BN - 1) / BN, (M + BM - 1) / BM);
    matmul_register_tiled<<<grid, THREADS>>>(A, B, C, M, N, K);
}
