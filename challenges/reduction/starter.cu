// Reduction: output[0] = input[0] + input[1] + ... + input[N - 1], in FP32.
//   input is a device pointer to N floats, output a device pointer to one float; N is any size from 1 up.
// output arrives filled with NaN: write it, and zero it first if you add into it with atomicAdd.
// `grader show reduction` prints the full statement.
#include <cuda_runtime.h>

__global__ void reduce(const float* input, float* output, int N) {
    // Your kernel here: add up a part of input, and combine the parts into output[0].
}

extern "C" void solve(const float* input, float* output, int N) {
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    reduce<<<blocks, threads>>>(input, output, N);
}
