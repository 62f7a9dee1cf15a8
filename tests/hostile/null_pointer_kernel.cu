// expect: RUNTIME_ERROR
// expect-message: illegal
// Every thread stores through a null pointer; the pointer is computed from M at run time so the
// compiler cannot drop the store. The launch fails with an illegal address the grader must report.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__global__ void write_null(int M) {
    // (M < 0) is 0 for every real shape, so p is the null pointer.
    float* p = reinterpret_cast<float*>(static_cast<uintptr_t>(M < 0));
    p[threadIdx.x] = 1.0f;  // BUG: store through null
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    write_null<<<1, BLOCK>>>(M);
}
