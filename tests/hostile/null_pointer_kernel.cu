// expect: RUNTIME_ERROR
// expect-message: illegal
// Every thread stores through a null pointer, read from a volatile device variable so no compiler
// can prove it null and drop the store. The launch fails with an illegal address the grader must report.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;

__device__ float* volatile g_output = nullptr;  // never set: the kernel writes through null

__global__ void write_null() {
    float* p = g_output;    // a volatile load: the value is known only at run time
    p[threadIdx.x] = 1.0f;  // BUG: store through null
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    write_null<<<1, BLOCK>>>();
}
