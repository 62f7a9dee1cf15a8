// Which top level for vector_add? Times kernel variants of C = A + B at LeetGPU's N = 25,000,000 and at
// 2^25 on this GPU, with the grader's rules (L2 flushed by a 2×L2 memset before each call, CUDA events,
// median of 30), beside a device-to-device copy of 1 GiB (the grader's bandwidth ceiling).
//   nvcc -O3 -arch=sm_90 -o /tmp/vav bench/probe/vector_add_variants.cu && /tmp/vav
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <vector>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void grid_stride_f4(const float4* A, const float4* B, float4* C, unsigned n4) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 a = A[i], b = B[i];
        C[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
}

__global__ void one_f4(const float4* A, const float4* B, float4* C, unsigned n4) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = A[i], b = B[i];
        C[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
}

template <int PER>
__global__ void block_f4(const float4* A, const float4* B, float4* C, unsigned n4) {
    // each block takes PER·blockDim consecutive float4s, thread t every blockDim-th: coalesced per step
    unsigned base = blockIdx.x * blockDim.x * PER + threadIdx.x;
    float4 a[PER], b[PER];
#pragma unroll
    for (int k = 0; k < PER; ++k) {
        unsigned i = base + k * blockDim.x;
        if (i < n4) { a[k] = A[i]; b[k] = B[i]; }
    }
#pragma unroll
    for (int k = 0; k < PER; ++k) {
        unsigned i = base + k * blockDim.x;
        if (i < n4) C[i] = make_float4(a[k].x + b[k].x, a[k].y + b[k].y, a[k].z + b[k].z, a[k].w + b[k].w);
    }
}

__global__ void one_f4_hints(const float4* A, const float4* B, float4* C, unsigned n4) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = __ldcs(A + i), b = __ldcs(B + i);
        __stcs(C + i, make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w));
    }
}

__global__ void one_f4_ldg(const float4* A, const float4* B, float4* C, unsigned n4) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 a = __ldg(A + i), b = __ldg(B + i);
        C[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
}

int main() {
    int sms = 0, l2 = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    size_t flush_bytes = 2 * (size_t)l2;
    const size_t copy_bytes = 1ull << 30;
    float *A, *B, *C;
    void *flush, *copy_a, *copy_b;
    size_t most = 1ull << 25;
    CHECK(cudaMalloc(&A, most * 4)); CHECK(cudaMalloc(&B, most * 4)); CHECK(cudaMalloc(&C, most * 4));
    CHECK(cudaMalloc(&flush, flush_bytes)); CHECK(cudaMalloc(&copy_a, copy_bytes)); CHECK(cudaMalloc(&copy_b, copy_bytes));
    CHECK(cudaMemset(A, 0x3f, most * 4)); CHECK(cudaMemset(B, 0x3e, most * 4)); CHECK(cudaMemset(copy_a, 0x5a, copy_bytes));
    cudaEvent_t start, end;
    CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&end));
    auto median = [&](auto launch) {
        std::vector<float> ms;
        for (int r = 0; r < 33; ++r) {
            cudaMemsetAsync(flush, r & 0xff, flush_bytes);
            cudaEventRecord(start);
            launch();
            cudaEventRecord(end);
            cudaEventSynchronize(end);
            float t = 0;
            cudaEventElapsedTime(&t, start, end);
            if (r >= 3) ms.push_back(t);
        }
        std::sort(ms.begin(), ms.end());
        return ms[ms.size() / 2];
    };
    float copy_ms = median([&] { cudaMemcpyAsync(copy_b, copy_a, copy_bytes, cudaMemcpyDeviceToDevice); });
    double copy_gbps = 2.0 * copy_bytes / (copy_ms * 1e6);
    std::printf("copy of 1 GiB: %.3f ms, %.0f GB/s (the ceiling)\n", copy_ms, copy_gbps);
    for (size_t n : {(size_t)25000000, (size_t)1 << 25}) {
        unsigned n4 = (unsigned)(n / 4);
        const float4 *A4 = (const float4*)A, *B4 = (const float4*)B;
        float4* C4 = (float4*)C;
        auto report = [&](const char* name, float ms) {
            double gbps = 12.0 * n / (ms * 1e6);
            std::printf("N=%zu %-34s %.4f ms %6.0f GB/s %5.1f%%\n", n, name, ms, gbps, 100 * gbps / copy_gbps);
        };
        for (int per_sm : {4, 8, 16, 32})
            report(per_sm == 4 ? "grid-stride 256x4/SM" : per_sm == 8 ? "grid-stride 256x8/SM (level 3)"
                   : per_sm == 16 ? "grid-stride 256x16/SM" : "grid-stride 256x32/SM",
                   median([&] { grid_stride_f4<<<sms * per_sm, 256>>>(A4, B4, C4, n4); }));
        for (int block : {128, 256, 512, 1024})
            report(block == 128 ? "one float4/thread, 128" : block == 256 ? "one float4/thread, 256"
                   : block == 512 ? "one float4/thread, 512" : "one float4/thread, 1024",
                   median([&] { one_f4<<<(n4 + block - 1) / block, block>>>(A4, B4, C4, n4); }));
        report("2 float4/thread, 256", median([&] { block_f4<2><<<(n4 + 511) / 512, 256>>>(A4, B4, C4, n4); }));
        report("4 float4/thread, 256", median([&] { block_f4<4><<<(n4 + 1023) / 1024, 256>>>(A4, B4, C4, n4); }));
        report("4 float4/thread, 128", median([&] { block_f4<4><<<(n4 + 511) / 512, 128>>>(A4, B4, C4, n4); }));
        report("one float4/thread + ldcs/stcs", median([&] { one_f4_hints<<<(n4 + 255) / 256, 256>>>(A4, B4, C4, n4); }));
        report("one float4/thread + ldg", median([&] { one_f4_ldg<<<(n4 + 255) / 256, 256>>>(A4, B4, C4, n4); }));
    }
    CHECK(cudaGetLastError());
    return 0;
}
