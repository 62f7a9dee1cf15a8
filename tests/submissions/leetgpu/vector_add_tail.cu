// expect: WRONG_ANSWER
// strict: WRONG_ANSWER
// Processes the elements in pairs and rounds N down to even, so when N is odd the last element of C is
// never written: it keeps the zero the tests put there (wrong, since A + B is not zero there) or the
// grader's fill. The fixture's N = 1, 3 and 10007 cases catch it.
#include <cuda_runtime.h>

__global__ void add_pairs(const float* A, const float* B, float* C, int pairs) {
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    C[2 * p] = A[2 * p] + B[2 * p];
    C[2 * p + 1] = A[2 * p + 1] + B[2 * p + 1];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    int pairs = N / 2;  // the bug: an odd N's last element belongs to no pair
    if (pairs == 0) return;
    add_pairs<<<(pairs + 255) / 256, 256>>>(A, B, C, pairs);
    cudaDeviceSynchronize();
}
