// expect: ACCEPTED
// Level 4 — one float4 per thread, one thread for every float4: a full grid, no loop.
//
// Over level 3: no grid-stride loop. Level 3 sizes its grid to the GPU (8 blocks of 256 threads per
// multiprocessor) and loops; here the grid has a thread for every four elements, so every thread
// issues its two 16-byte loads at once and there is no loop counter, no loop-carried dependence
// and no tail of iterations in which a few blocks run alone. Measured on an H200 with the grader's
// rules (L2 flushed, events, bench/probe/vector_add_variants.cu): 97.6% of the device-to-device copy
// bandwidth at 2^25 elements against 94.6% for the grid-stride loop. Several float4 per thread
// (96.5–97.0%) and the streaming hints __ldcs/__stcs (91.4%) were slower there, so this level uses
// neither. The last N % 4 elements and misaligned pointers take the scalar paths of level 3.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void vector_add_float4(const float* A, const float* B, float* C, int N) {
    unsigned whole = (unsigned)N / 4;  // float4s that fit entirely inside the arrays
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < whole) {
        float4 a = reinterpret_cast<const float4*>(A)[i], b = reinterpret_cast<const float4*>(B)[i];
        reinterpret_cast<float4*>(C)[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    unsigned tail = 4 * whole + i;  // thread t < N % 4 takes element 4·(N / 4) + t
    if (tail < (unsigned)N) C[tail] = A[tail] + B[tail];
}

__global__ void vector_add_scalar(const float* A, const float* B, float* C, int N) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (unsigned)N) C[i] = A[i] + B[i];
}

static unsigned blocks_for(unsigned items) {
    return items > 0 ? (items - 1) / BLOCK + 1 : 1;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    bool aligned = ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B) |
                     reinterpret_cast<uintptr_t>(C)) % 16) == 0;
    if (aligned) {
        unsigned threads = (unsigned)N / 4 > (unsigned)N % 4 ? (unsigned)N / 4 : (unsigned)N % 4;
        vector_add_float4<<<blocks_for(threads), BLOCK>>>(A, B, C, N);
    } else {
        vector_add_scalar<<<blocks_for((unsigned)N), BLOCK>>>(A, B, C, N);
    }
}
