// A sum by CUB's BlockReduce in one block: block-level collectives only (allowed under --libraries block).
#include <cub/cub.cuh>
__global__ void k(const float* in, float* out, int n) {
    typedef cub::BlockReduce<float, 256> R; __shared__ typename R::TempStorage t;
    float v = 0.f; for (int i = threadIdx.x; i < n; i += 256) v += in[i];
    float s = R(t).Sum(v); if (threadIdx.x == 0) *out = s;
}
extern "C" void solve(const float* input, float* output, int N) { k<<<1,256>>>(input, output, N); }
