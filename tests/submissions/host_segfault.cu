// expect: RUNTIME_ERROR
// expect-message: SIGSEGV
// Dereferences the device pointer C on the host, which segfaults the calling process. The worker
// dies; the grader must report the signal and carry on.
#include <cuda_runtime.h>

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    volatile float* host_view = C;
    host_view[0] = 1.0f;
}
