// expect: RACE
// expect-message: __syncthreads
// backends: emulator
// Level 2 without its second barrier, the one after the multiply-adds: "the data was loaded before
// anyone read it, what else could go wrong?" The next step's staging. A thread that finishes its 256
// taps goes straight on to stage the next 256, overwriting window[] and taps[] while slower threads of
// its block are still reading the previous step's values. With a kernel of 256 taps or fewer there is
// no next step and the file is right; from 257 taps on, the outputs depend on which threads run first.
// On a GPU they usually come out right (the warps of a block tend to keep pace), which is what makes
// this bug hard to find; the emulator runs every block's threads in forward and in reverse order, and
// the two answers differ.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;
constexpr int TAPS = 256;
constexpr int WINDOW = BLOCK + TAPS - 1;

__global__ void correlate_racy(const float* input, const float* kernel, float* output, int input_size,
                               int kernel_size) {
    __shared__ float taps[TAPS];
    __shared__ float window[WINDOW];
    int first = blockIdx.x * BLOCK;
    int t = threadIdx.x;
    float sum = 0.0f;
    for (int base = 0; base < kernel_size; base += TAPS) {
        int count = min(TAPS, kernel_size - base);
        if (t < count) taps[t] = kernel[base + t];
        for (int u = t; u < WINDOW; u += BLOCK) {
            int at = first + base + u;
            window[u] = at < input_size ? input[at] : 0.0f;
        }
        __syncthreads();
        for (int j = 0; j < count; ++j) sum += window[t + j] * taps[j];
        // BUG: the __syncthreads() that belongs here is missing
    }
    int i = first + t;
    if (i <= input_size - kernel_size) output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size + 1;
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    correlate_racy<<<blocks, BLOCK>>>(input, kernel, output, input_size, kernel_size);
}
