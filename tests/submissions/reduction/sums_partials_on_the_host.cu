// expect: ACCEPTED
// A correct reduction that adds within blocks on the GPU, copies the per-block partial sums to the host,
// adds them there with Kahan's compensated sum, and copies the total back. The host's share is real time
// a call of solve costs: timed, it is counted end to end (not IMPOSSIBLE_TIMING).
#include <cuda_runtime.h>
#include <vector>

constexpr int THREADS = 256;
constexpr int MAX_BLOCKS = 1024;

__global__ void block_sums(const float* input, float* partial, int N) {
    __shared__ float sums[THREADS];
    float s = 0.0f;
    for (int i = blockIdx.x * THREADS + threadIdx.x; i < N; i += gridDim.x * THREADS) s += input[i];
    sums[threadIdx.x] = s;
    __syncthreads();
    for (int stride = THREADS / 2; stride > 0; stride /= 2) {
        if (threadIdx.x < stride) sums[threadIdx.x] += sums[threadIdx.x + stride];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[blockIdx.x] = sums[0];
}

extern "C" void solve(const float* input, float* output, int N) {
    int blocks = (N + THREADS - 1) / THREADS;
    if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
    static float* partial = nullptr;
    if (partial == nullptr) cudaMalloc(&partial, MAX_BLOCKS * sizeof(float));
    block_sums<<<blocks, THREADS>>>(input, partial, N);
    std::vector<float> host(blocks);
    cudaMemcpy(host.data(), partial, blocks * sizeof(float), cudaMemcpyDeviceToHost);
    float total = 0.0f, carry = 0.0f;  // Kahan: the compensation keeps what each addition drops
    for (float v : host) {
        float y = v - carry;
        float t = total + y;
        carry = (t - total) - y;
        total = t;
    }
    cudaMemcpy(output, &total, sizeof(float), cudaMemcpyHostToDevice);
}
