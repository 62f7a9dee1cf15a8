// expect: WRONG_ANSWER
// Level 2's tiling without the halo. Each thread stages one input, its own input[i + base], as an
// element-wise kernel would, so a step's window holds the block's 256 inputs and nothing after them. But
// output i needs input[i + base .. i + base + 255]: the block's last outputs read past the staged part
// of the window, into shared memory that no thread wrote (the emulator fills it with NaN; a GPU leaves
// whatever an earlier block put there). Only thread 0's window lies wholly inside; the rest go wrong
// from kernel_size = 2 on, most of all at the end of every block.
#include <cuda_runtime.h>

constexpr int BLOCK = 256;
constexpr int TAPS = 256;
constexpr int WINDOW = BLOCK + TAPS - 1;

__global__ void correlate_no_halo(const float* input, const float* kernel, float* output, int input_size,
                                  int kernel_size) {
    __shared__ float taps[TAPS];
    __shared__ float window[WINDOW];
    int first = blockIdx.x * BLOCK;
    int t = threadIdx.x;
    float sum = 0.0f;
    for (int base = 0; base < kernel_size; base += TAPS) {
        int count = min(TAPS, kernel_size - base);
        if (t < count) taps[t] = kernel[base + t];
        int at = first + base + t;
        window[t] = at < input_size ? input[at] : 0.0f;  // BUG: window[256 .. 510], the halo, never staged
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
    correlate_no_halo<<<blocks, BLOCK>>>(input, kernel, output, input_size, kernel_size);
}
