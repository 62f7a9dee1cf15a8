// expect: ACCEPTED
// strict: ACCEPTED
// Clears counts itself (cudaMemset, in stream order before the kernel), then one atomicAdd per element.
// Right whatever counts held when solve was called.
#include <cuda_runtime.h>

__global__ void count(const int* input, int* counts, int N) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += gridDim.x * blockDim.x)
        atomicAdd(&counts[input[i]], 1);
}

extern "C" void solve(const int* input, int* counts, int N, int num_bins) {
    if (cudaMemset(counts, 0, num_bins * sizeof(int)) != cudaSuccess) return;
    int blocks = (N + 255) / 256;
    if (blocks > 512) blocks = 512;
    count<<<blocks, 256>>>(input, counts, N);
    cudaDeviceSynchronize();
}
