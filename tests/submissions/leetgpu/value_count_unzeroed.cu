// expect: ACCEPTED
// strict: WRONG_ANSWER
// atomicAdd into counts without clearing it first. The fixture's tests hand counts over as zeros, so the
// answer is right there; once the grader fills outputs with anything else first, every count is off.
#include <cuda_runtime.h>

__global__ void count(const int* input, int* counts, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
        atomicAdd(&counts[input[i]], 1);
}

extern "C" void solve(const int* input, int* counts, int N, int num_bins) {
    int blocks = (N + 255) / 256;
    if (blocks > 512) blocks = 512;
    count<<<blocks, 256>>>(input, counts, N);  // counts assumed zero: nothing here clears it
    cudaDeviceSynchronize();
}
