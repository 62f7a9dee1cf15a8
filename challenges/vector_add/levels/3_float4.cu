// expect: ACCEPTED
// Level 3 — float4 loads and stores (16-byte transactions), scalar tail.
//
// Over level 2: each step of the grid-stride loop moves four elements, with one 16-byte load from A,
// one from B and one 16-byte store to C, where level 2 needed four of each. The bytes are the same;
// the instructions that request them are a quarter, so each thread keeps more bytes in flight for
// the same issue slots.
//
// A float4 access must be 16-byte aligned. cudaMalloc returns pointers aligned far beyond that, and
// so do LeetGPU and this grader, but solve may be handed any float pointer (A + 1, say): when one of
// the three is misaligned the whole call takes the scalar loop instead. The float4 loop covers the
// first 4·(N / 4) elements; the last N % 4 (up to 3) are done one each by the first threads.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int BLOCK = 256;
constexpr int BLOCKS_PER_SM = 8;

__global__ void vector_add_float4(const float* A, const float* B, float* C, int N) {
    const float4* A4 = reinterpret_cast<const float4*>(A);
    const float4* B4 = reinterpret_cast<const float4*>(B);
    float4* C4 = reinterpret_cast<float4*>(C);
    unsigned whole = (unsigned)N / 4;  // float4s that fit entirely inside the arrays
    unsigned first = blockIdx.x * blockDim.x + threadIdx.x, stride = gridDim.x * blockDim.x;
    for (unsigned i = first; i < whole; i += stride) {
        float4 a = A4[i], b = B4[i];
        C4[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    unsigned tail = 4 * whole + first;  // thread t < N % 4 takes element 4·(N / 4) + t
    if (tail < (unsigned)N) C[tail] = A[tail] + B[tail];
}

__global__ void vector_add_scalar(const float* A, const float* B, float* C, int N) {
    unsigned stride = gridDim.x * blockDim.x;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < (unsigned)N; i += stride) C[i] = A[i] + B[i];
}

static int multiprocessors() {
    static int count = 0;  // 0: not asked yet
    if (count == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
        if (count <= 0) count = 1;
    }
    return count;
}

static int grid_for(int items) {  // enough blocks for one item per thread, at most a full GPU
    int needed = items > 0 ? (items - 1) / BLOCK + 1 : 1;
    int full = multiprocessors() * BLOCKS_PER_SM;
    return needed < full ? needed : full;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    bool aligned = ((reinterpret_cast<uintptr_t>(A) | reinterpret_cast<uintptr_t>(B) |
                     reinterpret_cast<uintptr_t>(C)) % 16) == 0;
    if (aligned) vector_add_float4<<<grid_for(N / 4), BLOCK>>>(A, B, C, N);
    else vector_add_scalar<<<grid_for(N), BLOCK>>>(A, B, C, N);
}
