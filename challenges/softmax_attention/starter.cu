// Softmax attention: output = softmax(Q K^T / sqrt(d)) V in FP32, the softmax taken along each row.
//   Q is M×d (one query per row), K and V are N×d (one key, one value per row), output is M×d; all
//   row-major device pointers. 1 <= M, N <= 100,000 and 1 <= d <= 128, multiples of nothing.
// output arrives filled with NaN: write every element. `grader show softmax_attention` prints the full
// statement.
#include <cuda_runtime.h>

__global__ void attention(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    // Your kernels here: for each query row, the scores q · k_j / sqrt(d) over the N keys, their
    // softmax (subtract the row's maximum before exp), then the weighted sum of V's rows.
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    int threads = 128;
    int blocks = (M + threads - 1) / threads;
    attention<<<blocks, threads>>>(Q, K, V, output, M, N, d);
}
