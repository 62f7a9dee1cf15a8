// expect: RUNTIME_ERROR
// expect-message: SIGSEGV
// Writes through a wild pointer in host code, which segfaults the calling process. The worker
// dies; the grader must report the signal and carry on.
#include <cstdint>
#include <cuda_runtime.h>

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    // The address is known only at run time, so the compiler cannot drop the store.
    volatile float* wild = reinterpret_cast<volatile float*>(static_cast<uintptr_t>(M < 0) * 64 + 8);
    *wild = 1.0f;
}
