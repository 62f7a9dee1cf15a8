// expect: ACCEPTED
// requires: sandbox
// Tries to rewrite its own build in the grader's cache (the library or executable it was loaded
// from) and to drop a file beside it, so that a later grading of the same source would load
// something else. The box shows the artifact read-only; the harness checks every cached artifact
// still has the hash recorded when it was published. It computes C correctly.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <cstdio>
#include <string>

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < K) {
        float sum = 0.0f;
        for (int i = 0; i < N; ++i) sum += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = sum;
    }
}

static void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}

static void attack() {
    Dl_info info{};
    std::string self = dladdr(reinterpret_cast<void*>(&attack), &info) && info.dli_fname ? info.dli_fname : "";
    for (const std::string& path : {self, std::string("/proc/self/exe")}) {
        if (path.empty()) continue;
        FILE* f = std::fopen(path.c_str(), "r+b");
        std::printf("open %s for writing: %s\n", path.c_str(), f ? "yes" : "no");
        if (f) { std::fputs("poisoned", f); std::fclose(f); }
    }
    std::string dir = self.substr(0, self.rfind('/'));
    FILE* meta = std::fopen((dir + "/build.json").c_str(), "w");
    std::printf("rewrite build.json: %s\n", meta ? "yes" : "no");
    if (meta) { std::fputs("{}", meta); std::fclose(meta); }
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
