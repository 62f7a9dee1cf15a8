// expect: RUNTIME_ERROR
// expect-message: illegal
// One thread stores through a wild pointer 2^40 floats (4 TiB) past C, far outside any
// allocation; the launch fails with cudaErrorIllegalAddress, which the grader must report.
#include <cuda_runtime.h>

constexpr size_t WILD_OFFSET = (size_t)1 << 40;  // elements, i.e. 4 TiB past C

__global__ void write_wild(float* C) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        float* wild = C + WILD_OFFSET;
        *wild = 1.0f;  // BUG: unmapped address
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    (void)A; (void)B; (void)M; (void)N; (void)K;
    write_wild<<<1, 32>>>(C);
}
