// expect: WRONG_ANSWER
// expect-message: past its end
// backends: emulator
// Level 2's staging without its bounds check: window[u] = input[first + base + u] for the whole window.
// Every window a real output needs lies inside the input, so the answer is right; but the last block
// stages a full window whatever is left of the input, and reads up to 510 floats past its end (the
// halo of its spare threads, whose outputs are never written). On a GPU those bytes belong to some
// other allocation, or to none: past the end of a page the read faults. The grader's GPU run passes
// this file (its guard NaNs land only in outputs nobody writes); the emulator catches the read itself
// and names kernel, block, thread and byte. Bound the loads by input_size, and fill the rest with 0.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;
constexpr int TAPS = 256;
constexpr int WINDOW = BLOCK + TAPS - 1;

__global__ void correlate_overread(const float* input, const float* kernel, float* output, int input_size,
                                   int kernel_size) {
    __shared__ float taps[TAPS];
    __shared__ float window[WINDOW];
    int first = blockIdx.x * BLOCK;
    int t = threadIdx.x;
    float sum = 0.0f;
    for (int base = 0; base < kernel_size; base += TAPS) {
        int count = min(TAPS, kernel_size - base);
        if (t < count) taps[t] = kernel[base + t];
        for (int u = t; u < WINDOW; u += BLOCK) window[u] = input[first + base + u];  // BUG: no `< input_size`
        __syncthreads();
        for (int j = 0; j < count; ++j) sum += window[t + j] * taps[j];
        __syncthreads();
    }
    int i = first + t;
    if (i <= input_size - kernel_size) output[i] = sum;
}

extern "C" void solve(const float* input, const float* kernel, float* output, int input_size, int kernel_size) {
    int outputs = input_size - kernel_size + 1;
    int blocks = (outputs + BLOCK - 1) / BLOCK;
    correlate_overread<<<blocks, BLOCK>>>(input, kernel, output, input_size, kernel_size);
}
