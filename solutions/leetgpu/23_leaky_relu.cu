// Approach: element-wise, one float4 per thread (a thread for every four elements), the last N % 4
// elements and misaligned pointers on a scalar path; x > 0 ? x : 0.01·x, the reference's own select (a
// NaN takes the second branch and stays NaN).
#include <cstdint>
#include <cuda_runtime.h>

constexpr unsigned BLOCK = 256;

// 0.01 as a float times x, as the reference multiplies a float32 tensor by the scalar 0.01.
__device__ __forceinline__ float leaky(float x) { return x > 0.0f ? x : 0.01f * x; }

// Thread i takes float4 number i; thread t < count % 4 also takes element 4·(count / 4) + t.
__global__ void leaky_float4(const float* in, float* out, unsigned count) {
    unsigned whole = count / 4;
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < whole) {
        float4 v = reinterpret_cast<const float4*>(in)[i];
        reinterpret_cast<float4*>(out)[i] = make_float4(leaky(v.x), leaky(v.y), leaky(v.z), leaky(v.w));
    }
    unsigned tail = 4 * whole + i;
    if (tail < count) out[tail] = leaky(in[tail]);
}

// For pointers a float4 cannot be read through (the signature does not promise alignment).
__global__ void leaky_scalar(const float* in, float* out, unsigned count) {
    unsigned i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < count) out[i] = leaky(in[i]);
}

static unsigned blocks_for(unsigned threads) { return threads > 0 ? (threads - 1) / BLOCK + 1 : 1; }

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, float* output, int N) {
    if (N <= 0) return;
    unsigned count = (unsigned)N;
    if (aligned16(input) && aligned16(output)) {
        unsigned threads = count / 4 > count % 4 ? count / 4 : count % 4;
        leaky_float4<<<blocks_for(threads), BLOCK>>>(input, output, count);
    } else {
        leaky_scalar<<<blocks_for(count), BLOCK>>>(input, output, count);
    }
}
