// expect: WRONG_ANSWER
// expect-message: memory solve allocated
// backends: emulator
// The blocks add their sums into a scratch value that solve allocates with cudaMalloc and never sets, then
// copy it to the output. cudaMalloc's memory is not zeroed: on a GPU it holds whatever lay there (often
// zeros on a fresh context, hence a verdict of luck there); the emulator fills it with a NaN of its own,
// and the report says the NaN came from memory solve allocated. cudaMemsetAsync(scratch, 0, 4) first.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void add_blocks(const float* input, float* scratch, int n) {
    __shared__ float partial[THREADS];
    int i = blockIdx.x * THREADS + threadIdx.x;
    partial[threadIdx.x] = i < n ? input[i] : 0.0f;
    __syncthreads();
    for (int half = THREADS / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(scratch, partial[0]);
}

extern "C" void solve(const float* input, float* output, int N) {
    float* scratch = nullptr;
    cudaMalloc(&scratch, sizeof(float));
    add_blocks<<<(N + THREADS - 1) / THREADS, THREADS>>>(input, scratch, N);
    cudaMemcpyAsync(output, scratch, sizeof(float), cudaMemcpyDeviceToDevice);
    cudaFree(scratch);
}
