// Approach: the two row-major N × N matrices are one flat array of N² floats each, so the sum is a
// vector addition: one float4 per thread, a thread for every four elements, the last N² % 4 elements and
// misaligned pointers on a scalar path (as 1_vector_add.cu).
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

// Thread i adds float4 number i; thread t < count % 4 also adds element 4·(count / 4) + t.
__global__ void add_float4(const float* A, const float* B, float* C, unsigned count) {
    unsigned whole = count / 4;
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < whole) {
        float4 a = reinterpret_cast<const float4*>(A)[i], b = reinterpret_cast<const float4*>(B)[i];
        reinterpret_cast<float4*>(C)[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    unsigned tail = 4 * whole + i;
    if (tail < count) C[tail] = A[tail] + B[tail];
}

// For pointers a float4 cannot be read through (the signature does not promise alignment).
__global__ void add_scalar(const float* A, const float* B, float* C, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) C[i] = A[i] + B[i];
}

static unsigned blocks_for(unsigned threads) { return threads > 0 ? (threads - 1) / BLOCK + 1 : 1; }

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    if (N <= 0) return;
    unsigned count = (unsigned)N * (unsigned)N;  // at most 4096² = 2^24
    if (aligned16(A) && aligned16(B) && aligned16(C)) {
        unsigned threads = count / 4 > count % 4 ? count / 4 : count % 4;
        add_float4<<<blocks_for(threads), BLOCK>>>(A, B, C, count);
    } else {
        add_scalar<<<blocks_for(count), BLOCK>>>(A, B, C, count);
    }
}
