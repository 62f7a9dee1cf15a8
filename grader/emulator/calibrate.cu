// The emulator's speed on this machine, measured with two trusted kernels (no submission code is
// linked in). The grader derives each emulated call's time limit from these figures, so a slow
// but correct kernel is never cut off by a limit meant for a GPU.
//
// Mode 0: one warp per output element, a shuffle reduction of five steps: what one fiber with
//         five warp operations costs (the most expensive per-thread pattern common in matmul
//         submissions).
// Mode 1: dependent multiply-adds in a loop: what one floating-point operation costs.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void warp_reduction(float* out, int warps) {
    int warp = blockIdx.x * (THREADS / 32) + threadIdx.x / 32;
    float value = static_cast<float>(threadIdx.x % 32) * 0.5f;
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    if (threadIdx.x % 32 == 0 && warp < warps) out[warp] = value;
}

__global__ void multiply_adds(float* out, int iterations) {
    float a = 1.0f + threadIdx.x * 1e-7f, b = 0.999999f, c = 1e-7f;
    for (int i = 0; i < iterations; ++i) a = a * b + c;
    out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}

extern "C" void emu_invoke_entry(const ::emu::Arg* args) {
    long long mode = args[0].i, count = args[1].i;
    if (mode == 0) {
        int warps = static_cast<int>(count);
        float* out = nullptr;
        cudaMalloc(&out, sizeof(float) * warps);
        warp_reduction<<<(warps + THREADS / 32 - 1) / (THREADS / 32), THREADS>>>(out, warps);
        cudaFree(out);
    } else {
        const int blocks = 64;
        float* out = nullptr;
        cudaMalloc(&out, sizeof(float) * blocks * THREADS);
        multiply_adds<<<blocks, THREADS>>>(out, static_cast<int>(count / (blocks * THREADS)));
        cudaFree(out);
    }
}
