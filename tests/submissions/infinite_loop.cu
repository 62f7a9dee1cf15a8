// expect: TIMEOUT
// expect-message: endless loop
// The kernel spins on a volatile device flag that nothing ever sets, so it never finishes.
// The volatile read keeps the compiler from deleting the loop; the grader must time it out.
#include <cuda_runtime.h>

__device__ int g_release = 0;  // never set to nonzero by anyone

__global__ void spin_forever(float* C) {
    volatile int* flag = &g_release;
    while (*flag == 0) {
        // BUG: waits for a signal that never comes
    }
    C[0] = 0.0f;  // unreachable in practice
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    (void)A; (void)B; (void)M; (void)N; (void)K;
    spin_forever<<<1, 32>>>(C);
}
