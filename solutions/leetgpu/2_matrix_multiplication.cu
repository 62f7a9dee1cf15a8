// Approach: FP32 on the CUDA cores (TF32 tensor cores would miss the 1e-4 tolerance at an inner dimension of
// 6,144): 128×128 block tiles 16 deep, staged in shared memory with two buffers (the next tile's global
// loads in flight during the math), a 64×32 tile per warp and 8×8 outputs per thread in registers, float4
// loads where the rows and pointers allow, a scalar path at the edges. A is M×N, B is N×K (N inner).
// From this project's challenges/matmul/levels/5_warp_tiles.cu, which runs in the CPU emulator as well.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int BM = 128, BN = 128, BK = 16;
constexpr int WM = 64, WN = 32;                      // warp tile
constexpr int WARPS_N = BN / WN;                     // 4 (and BM / WM = 2 along m)
constexpr int THREADS = (BM / WM) * WARPS_N * 32;    // 256
constexpr int PAD = 4;
constexpr int A_LOADS = BM * BK / 4 / THREADS;       // float4 loads per thread per k-tile: 2
constexpr int B_LOADS = BK * BN / 4 / THREADS;       // 2

struct Staged {
    float a[A_LOADS][4];
    float b[B_LOADS][4];
};

template <bool VEC>
__device__ __forceinline__ void fetch(Staged& s, const float* A, const float* B, int M, int N, int K,
                                      int row0, int col0, int k0) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        int idx = threadIdx.x + l * THREADS;
        int r = row0 + idx / (BK / 4), c = k0 + (idx % (BK / 4)) * 4;
        if (VEC && r < M && c + 3 < N) {
            float4 v = *reinterpret_cast<const float4*>(&A[(size_t)r * N + c]);
            s.a[l][0] = v.x, s.a[l][1] = v.y, s.a[l][2] = v.z, s.a[l][3] = v.w;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) s.a[l][j] = (r < M && c + j < N) ? A[(size_t)r * N + c + j] : 0.0f;
        }
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        int idx = threadIdx.x + l * THREADS;
        int r = k0 + idx / (BN / 4), c = col0 + (idx % (BN / 4)) * 4;
        if (VEC && r < N && c + 3 < K) {
            float4 v = *reinterpret_cast<const float4*>(&B[(size_t)r * K + c]);
            s.b[l][0] = v.x, s.b[l][1] = v.y, s.b[l][2] = v.z, s.b[l][3] = v.w;
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) s.b[l][j] = (r < N && c + j < K) ? B[(size_t)r * K + c + j] : 0.0f;
        }
    }
}

__device__ __forceinline__ void stash(const Staged& s, float (*As)[BM + PAD], float (*Bs)[BN]) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        int idx = threadIdx.x + l * THREADS;
        int m = idx / (BK / 4), k = (idx % (BK / 4)) * 4;
#pragma unroll
        for (int j = 0; j < 4; ++j) As[k + j][m] = s.a[l][j];  // transposed: As[k][m]
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        int idx = threadIdx.x + l * THREADS;
        int k = idx / (BN / 4), n = (idx % (BN / 4)) * 4;
        *reinterpret_cast<float4*>(&Bs[k][n]) = make_float4(s.b[l][0], s.b[l][1], s.b[l][2], s.b[l][3]);
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 2) matmul_warp_tiles(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(16) float As[2][BK][BM + PAD];
    __shared__ __align__(16) float Bs[2][BK][BN];
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;  // the warp's tile in the block tile
    int lm = (lane / 4) * 4, ln = (lane % 4) * 4;                  // the lane's first row and column in it

    Staged staged;
    fetch<VEC>(staged, A, B, M, N, K, row0, col0, 0);
    stash(staged, As[0], Bs[0]);
    __syncthreads();

    float acc[8][8] = {};
    int tiles = (N + BK - 1) / BK;
    for (int t = 0; t < tiles; ++t) {
        int cur = t % 2;
        bool more = t + 1 < tiles;
        if (more) fetch<VEC>(staged, A, B, M, N, K, row0, col0, (t + 1) * BK);  // in flight during the math
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[8], b[8];
            *reinterpret_cast<float4*>(&a[0]) = *reinterpret_cast<const float4*>(&As[cur][k][wm + lm]);
            *reinterpret_cast<float4*>(&a[4]) = *reinterpret_cast<const float4*>(&As[cur][k][wm + lm + WM / 2]);
            *reinterpret_cast<float4*>(&b[0]) = *reinterpret_cast<const float4*>(&Bs[cur][k][wn + ln]);
            *reinterpret_cast<float4*>(&b[4]) = *reinterpret_cast<const float4*>(&Bs[cur][k][wn + ln + WN / 2]);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        if (more) stash(staged, As[cur ^ 1], Bs[cur ^ 1]);
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < 8; ++i) {
        int row = row0 + wm + lm + (i % 4) + (i / 4) * (WM / 2);
        if (row >= M) continue;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            int col = col0 + wn + ln + half * (WN / 2);
            const float* v = &acc[i][half * 4];
            if (VEC && col + 3 < K) {
                *reinterpret_cast<float4*>(&C[(size_t)row * K + col]) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
                for (int j = 0; j < 4; ++j)
                    if (col + j < K) C[(size_t)row * K + col + j] = v[j];
            }
        }
    }
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 grid((K + BN - 1) / BN, (M + BM - 1) / BM);
    // float4 reads of a row need every row to start on a 16-byte boundary: the pointers and the row lengths.
    bool aligned = N % 4 == 0 && K % 4 == 0 && aligned16(A) && aligned16(B) && aligned16(C);
    if (aligned) matmul_warp_tiles<true><<<grid, THREADS>>>(A, B, C, M, N, K);
    else matmul_warp_tiles<false><<<grid, THREADS>>>(A, B, C, M, N, K);
}
