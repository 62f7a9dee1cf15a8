// expect: ACCEPTED
// strict: ACCEPTED
// out = x * s for the fixture's 905_bf16_scale: each element widened to float, scaled and rounded back to
// bfloat16 once.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void scale(const __nv_bfloat16* x, __nv_bfloat16* out, float s, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) out[i] = __float2bfloat16(__bfloat162float(x[i]) * s);
}

extern "C" void solve(const __nv_bfloat16* x, __nv_bfloat16* out, float s, int N) {
    scale<<<(N + 255) / 256, 256>>>(x, out, s, N);
    cudaDeviceSynchronize();
}
