// Softmax: output[i] = exp(input[i] - M) / (exp(input[0] - M) + ... + exp(input[N - 1] - M)) in FP32,
// M the largest input: one softmax over the whole vector.
//   input and output are device pointers to N floats each; N is any size from 1 up.
// output arrives filled with NaN: write every element. `grader show softmax` prints the full statement.
#include <cuda_runtime.h>

__global__ void softmax(const float* input, float* output, int N) {
    // Your kernels here: find the maximum and the sum of exponentials, then write every quotient.
}

extern "C" void solve(const float* input, float* output, int N) {
    int threads = 256;
    int blocks = (N + threads - 1) / threads;
    softmax<<<blocks, threads>>>(input, output, N);
}
