// expect: ACCEPTED
// expect-emulator: UNSUPPORTED
// Level 6 — tensor cores at FP32 accuracy (3xTF32), fed by an asynchronous copy pipeline.
//
// Over level 5, two changes:
// - Tensor cores. mma.sync.m16n8k8 multiplies a 16×8 by an 8×8 tile per warp instruction, many
//   times faster than FMA, but in TF32: inputs keep 10 mantissa bits, which alone fails the
//   challenge's accuracy rule. The 3xTF32 split keeps FP32 accuracy: write x = big + small with
//   big = tf32(x) and small = tf32(x − big), then a·b ≈ big_a·big_b + big_a·small_b + small_a·big_b
//   (the dropped small_a·small_b is below FP32 rounding). Three tensor-core products per step.
// - cp.async. Tiles go from global to shared memory without passing through registers, in a
//   3-stage ring: while the warps multiply stage t, the copies for stages t+1 and t+2 are in
//   flight, so the tensor cores rarely wait for memory.
// Block tile 128×128×32, eight warps of 64×32 each. Shared-memory rows are padded (A by 4, B by 8
// floats) so that every fragment load of a warp touches 32 different banks. Needs sm_80 or newer.
// Accuracy detail: the tensor core's own FP32 accumulation is not correctly rounded, and over
// thousands of steps that error outgrows FP32's (measured: scaled error 2e-6 at an inner dimension
// of 4096). So each 32-deep k-tile is accumulated from zero on the tensor core and then added to
// the running sum with an ordinary, correctly rounded FP32 add.
#include <cuda_runtime.h>
#include <cstdint>

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3;
constexpr int WM = 64, WN = 32, WARPS_N = BN / WN;   // 2×4 warps
constexpr int THREADS = (BM / WM) * WARPS_N * 32;    // 256
constexpr int MI = WM / 16, NI = WN / 8;             // mma tiles per warp: 4×4
constexpr int A_STRIDE = BK + 4, B_STRIDE = BN + 8;  // padded row lengths, in floats
constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;
constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);

__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void split(float x, uint32_t& big, uint32_t& small) {
    big = to_tf32(x);
    small = to_tf32(x - __uint_as_float(big));
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Copies `bytes` (4 or 16) from global to shared memory asynchronously; src_bytes = 0 zero-fills.
template <int BYTES>
__device__ __forceinline__ void copy_async(float* dst, const float* src, bool valid) {
    uint32_t d = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
    int src_bytes = valid ? BYTES : 0;
    if (BYTES == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(src_bytes));
    }
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ __forceinline__ void wait_for() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING)); }

// One k-tile of A (BM×BK) and B (BK×BN) into a stage. 16-byte copies where rows allow (VEC),
// 4-byte ones otherwise; out-of-range elements are zero-filled, their address clamped to A/B.
template <bool VEC>
__device__ __forceinline__ void load_stage(float* As, float* Bs, const float* A, const float* B, int M, int N, int K,
                                           int row0, int col0, int k0) {
    constexpr int A_CHUNKS = BM * BK / 4 / THREADS, B_CHUNKS = BK * BN / 4 / THREADS;  // 4 and 4
#pragma unroll
    for (int i = 0; i < A_CHUNKS; ++i) {
        int idx = threadIdx.x + i * THREADS;
        int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
        int gr = row0 + r, gc = k0 + c;
        float* dst = As + r * A_STRIDE + c;
        if (VEC) {
            bool ok = gr < M && gc < N;
            copy_async<16>(dst, ok ? A + (size_t)gr * N + gc : A, ok);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                bool ok = gr < M && gc + j < N;
                copy_async<4>(dst + j, ok ? A + (size_t)gr * N + gc + j : A, ok);
            }
        }
    }
#pragma unroll
    for (int i = 0; i < B_CHUNKS; ++i) {
        int idx = threadIdx.x + i * THREADS;
        int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
        int gr = k0 + r, gc = col0 + c;
        float* dst = Bs + r * B_STRIDE + c;
        if (VEC) {
            bool ok = gr < N && gc < K;
            copy_async<16>(dst, ok ? B + (size_t)gr * K + gc : B, ok);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                bool ok = gr < N && gc + j < K;
                copy_async<4>(dst + j, ok ? B + (size_t)gr * K + gc + j : B, ok);
            }
        }
    }
}

// A warp's share of one k-tile: for each 8-wide step, split its fragments and issue 3 MMAs per
// tile into a fresh chunk accumulator, then fold the chunk into the FP32 running sum.
__device__ __forceinline__ void multiply_stage(float (&acc)[MI][NI][4], const float* As, const float* Bs, int wm, int wn,
                                               int lane) {
    int g = lane / 4, t = lane % 4;  // the PTX fragment layout's groupID and threadID_in_group
    float chunk[MI][NI][4] = {};
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
        uint32_t a_big[MI][4], a_small[MI][4], b_big[NI][2], b_small[NI][2];
#pragma unroll
        for (int mi = 0; mi < MI; ++mi) {
            const float* p = As + (wm + mi * 16 + g) * A_STRIDE + kk + t;
            split(p[0], a_big[mi][0], a_small[mi][0]);                 // (g,     t)
            split(p[8 * A_STRIDE], a_big[mi][1], a_small[mi][1]);      // (g + 8, t)
            split(p[4], a_big[mi][2], a_small[mi][2]);                 // (g,     t + 4)
            split(p[8 * A_STRIDE + 4], a_big[mi][3], a_small[mi][3]);  // (g + 8, t + 4)
        }
#pragma unroll
        for (int ni = 0; ni < NI; ++ni) {
            const float* p = Bs + (kk + t) * B_STRIDE + wn + ni * 8 + g;
            split(p[0], b_big[ni][0], b_small[ni][0]);             // (k = t,     n = g)
            split(p[4 * B_STRIDE], b_big[ni][1], b_small[ni][1]);  // (k = t + 4, n = g)
        }
#pragma unroll
        for (int mi = 0; mi < MI; ++mi)
#pragma unroll
            for (int ni = 0; ni < NI; ++ni) {
                mma_tf32(chunk[mi][ni], a_small[mi], b_big[ni]);  // small terms first
                mma_tf32(chunk[mi][ni], a_big[mi], b_small[ni]);
                mma_tf32(chunk[mi][ni], a_big[mi], b_big[ni]);
            }
    }
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][ni][e] += chunk[mi][ni][e];
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 1) matmul_3xtf32(const float* A, const float* B, float* C, int M, int N, int K) {
    extern __shared__ __align__(16) float smem[];
    float* As = smem;                       // STAGES × A_STAGE
    float* Bs = smem + STAGES * A_STAGE;    // STAGES × B_STAGE
    int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    int tiles = (N + BK - 1) / BK;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) load_stage<VEC>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, M, N, K, row0, col0, s * BK);
        commit();
    }
    float acc[MI][NI][4] = {};
    for (int t = 0; t < tiles; ++t) {
        wait_for<STAGES - 2>();  // k-tile t has landed
        __syncthreads();         // ...for every thread, and stage t-1 is free to overwrite
        int next = t + STAGES - 1;
        if (next < tiles) {
            int s = next % STAGES;
            load_stage<VEC>(As + s * A_STAGE, Bs + s * B_STAGE, A, B, M, N, K, row0, col0, next * BK);
        }
        commit();  // an empty group keeps the count the waits rely on
        int s = t % STAGES;
        multiply_stage(acc, As + s * A_STAGE, Bs + s * B_STAGE, wm, wn, lane);
    }

    int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int mi = 0; mi < MI; ++mi)
#pragma unroll
        for (int ni = 0; ni < NI; ++ni)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                int row = row0 + wm + mi * 16 + g + half * 8;
                int col = col0 + wn + ni * 8 + 2 * t;
                if (row >= M) continue;
                float* out = C + (size_t)row * K + col;
                if (col < K) out[0] = acc[mi][ni][2 * half];
                if (col + 1 < K) out[1] = acc[mi][ni][2 * half + 1];
            }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 grid((K + BN - 1) / BN, (M + BM - 1) / BM);
    if (N % 4 == 0 && K % 4 == 0) {
        cudaFuncSetAttribute(matmul_3xtf32<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
        matmul_3xtf32<true><<<grid, THREADS, SMEM_BYTES>>>(A, B, C, M, N, K);
    } else {
        cudaFuncSetAttribute(matmul_3xtf32<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
        matmul_3xtf32<false><<<grid, THREADS, SMEM_BYTES>>>(A, B, C, M, N, K);
    }
}
