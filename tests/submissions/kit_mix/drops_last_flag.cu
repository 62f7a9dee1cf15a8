// expect: WRONG_ANSWER
// expect-message: elements differ from the reference
// One thread per element for y, one per window for counts.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cstdint>

__global__ void axpby(const half* x, half* y, int n, float alpha, float beta) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = __float2half(fmaf(alpha, __half2float(x[i]), beta * __half2float(y[i])));
}

__global__ void count(const uint8_t* flags, int* counts, int n, int w) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c * w >= n) return;
    int found = 0;
    for (int i = c * w; i < n && i < (c + 1) * w - 1; ++i) found += flags[i] != 0;
    counts[c] = found;
}

extern "C" void solve(const half* x, half* y, const uint8_t* flags, int* counts, int N, int W, float alpha,
                      float beta) {
    axpby<<<(N + 255) / 256, 256>>>(x, y, N, alpha, beta);
    int windows = (N + W - 1) / W;
    count<<<(windows + 255) / 256, 256>>>(flags, counts, N, W);
}
