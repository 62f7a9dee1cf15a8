// expect: RUNTIME_ERROR
// expect-message: SIGSEGV
// Finds the maximum on the host, in solve itself, as if input were a host array: a loop over
// input[0..N) before the kernel that does the rest. input is a device pointer; host code cannot read
// through it. Beside a GPU the first read, input[0], is a segmentation fault (the address is device
// memory the CPU has no page for), and the worker dies at the first case. The CPU emulator keeps device
// memory shut to host code in the same way, and names what happened. The fix: cudaMemcpy what the host
// needs into a host array first, or find the maximum in a kernel.
#include <cuda_runtime.h>
#include <math.h>

constexpr unsigned BLOCK = 256;

__global__ void exp_and_sum(const float* in, float* out, float top, float* sum, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) {
        out[i] = expf(in[i] - top);
        atomicAdd(sum, out[i]);
    }
}

__global__ void divide(float* out, const float* sum, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) out[i] /= *sum;
}

extern "C" void solve(const float* input, float* output, int N) {
    float top = -INFINITY;
    for (int i = 0; i < N; ++i) top = fmaxf(top, input[i]);  // BUG: input is device memory
    float* sum = nullptr;
    cudaMalloc(&sum, sizeof(float));
    cudaMemset(sum, 0, sizeof(float));
    unsigned blocks = ((unsigned)N + BLOCK - 1) / BLOCK;
    exp_and_sum<<<blocks, BLOCK>>>(input, output, top, sum, (unsigned)N);
    divide<<<blocks, BLOCK>>>(output, sum, (unsigned)N);
    cudaFree(sum);
}
