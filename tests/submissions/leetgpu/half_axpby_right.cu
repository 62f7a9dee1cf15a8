// expect: ACCEPTED
// strict: ACCEPTED
// y = alpha * x + beta * y for the fixture's 902_half_axpby: each element converted to float, combined
// with one fused multiply-add and rounded back to half once.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void axpby(const half* x, half* y, float alpha, float beta, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) y[i] = __float2half(fmaf(alpha, __half2float(x[i]), beta * __half2float(y[i])));
}

extern "C" void solve(const half* x, half* y, float alpha, float beta, int N) {
    axpby<<<(N + 255) / 256, 256>>>(x, y, alpha, beta, N);
    cudaDeviceSynchronize();
}
