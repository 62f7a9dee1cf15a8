// expect: ACCEPTED
// Level 1 — one thread per output, everything read from global memory.
//
// Output i is the dot product of the K-long window input[i .. i + K - 1] with the kernel. Thread i
// walks the taps j = 0 .. K - 1 and adds input[i + j] * kernel[j] into a register, then writes it: the
// definition, with no reuse of its own. (It gets some from the cache: the 32 threads of a warp read 32
// neighbouring inputs at every tap, the window of tap j + 1 is the window of tap j moved by one, and
// all of them read the same kernel[j]; the L1 cache serves most of those reads.)
//
// Correct, simple, and limited by loads: every multiply-add needs two load instructions (the input,
// and the kernel value every lane of the warp asks for), and a warp's 32 inputs starting at i + j
// usually straddle two 128-byte cache lines. The next level stages both in shared memory.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;  // threads per block, one output each

__global__ void correlate_naive(const float* input, const float* kernel, float* output, int outputs,
                                int kernel_size) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= outputs) return;  // the last block's spare threads: their windows run past the input
    float sum = 0.0f;
    for (int j = 0; j < kernel_size; ++j) sum += input[i + j] * kernel[j];
    output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size + 1;  // "valid": only windows that lie inside the input
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    correlate_naive<<<blocks, BLOCK>>>(input, kernel, output, outputs, kernel_size);
}
