// expect: ACCEPTED
// strict: INPUT_MODIFIED
// Right answer, but each thread writes into A after reading it: it marks A[i] as done by setting the lowest
// bit of its float (A is declared const; the kernel casts that away). C comes from the value read before the
// write, so it is exact; a second call on the marked A is off by at most one unit in the last place, within
// the tolerance, and marks nothing new, so reruns on the same buffers stay right. LeetGPU never compares an
// "in" buffer and accepts this; a grader checking that inputs come back unchanged reports A as modified.
#include <cuda_runtime.h>

__global__ void add_and_mark(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    float a = A[i];
    C[i] = a + B[i];
    const_cast<float*>(A)[i] = __uint_as_float(__float_as_uint(a) | 1u);
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    add_and_mark<<<(N + 255) / 256, 256>>>(A, B, C, N);
    if (cudaGetLastError() != cudaSuccess) return;
    cudaDeviceSynchronize();
}
