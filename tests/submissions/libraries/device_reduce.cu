// A sum by CUB's DeviceReduce: a device-wide algorithm doing the whole problem (allowed only under cccl).
#include <cub/cub.cuh>
extern "C" void solve(const float* input, float* output, int N) {
    void* tmp = nullptr; size_t bytes = 0;
    cub::DeviceReduce::Sum(tmp, bytes, input, output, N);
    cudaMalloc(&tmp, bytes);
    cub::DeviceReduce::Sum(tmp, bytes, input, output, N);
    cudaFree(tmp);
}
