// Prefix sum: output[i] = input[0] + input[1] + ... + input[i] for every i < N (an inclusive scan), in FP32.
//   input and output are device pointers to N floats each; N is any size from 1 up.
// output arrives filled with NaN: write every element. `grader show prefix_sum` prints the full statement.
#include <cuda_runtime.h>

__global__ void scan(const float* input, float* output, int N) {
    // Your kernels here: scan parts of the input, then give each part the sum of the parts before it.
}

extern "C" void solve(const float* input, float* output, int N) {
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    scan<<<blocks, threads>>>(input, output, N);
}
