// expect: INTERFACE_ERROR
// expect-message: library
// expect-emulator: ACCEPTED
// backends: cuda, emulator
// Loads cuBLAS at run time with dlopen/dlsym (nothing to link, so -z,defs cannot see it) and lets
// cublasSgemm do the work; where no cuBLAS exists (the emulator's machine) it falls back to a kernel.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

constexpr int BLOCK = 16;

__global__ void matmul_naive(const float* A, const float* B, float* C, int M, int N, int K) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= K) return;

    float acc = 0.0f;
    for (int n = 0; n < N; ++n) {
        acc += A[(size_t)row * N + n] * B[(size_t)n * K + col];
    }
    C[(size_t)row * K + col] = acc;
}

// The few cuBLAS declarations needed, written out by hand (no cublas_v2.h).
typedef void* cublasHandle_t;
typedef int cublasStatus_t;  // 0 is CUBLAS_STATUS_SUCCESS
constexpr int CUBLAS_OP_N = 0;
typedef cublasStatus_t (*CreateFn)(cublasHandle_t*);
typedef cublasStatus_t (*SgemmFn)(cublasHandle_t, int transa, int transb, int m, int n, int k, const float* alpha,
                                  const float* A, int lda, const float* B, int ldb, const float* beta, float* C,
                                  int ldc);

static SgemmFn g_sgemm = nullptr;
static cublasHandle_t g_handle = nullptr;

// Where cuBLAS may be: the loader's search path, the CUDA toolkit, and pip's NVIDIA wheels beside
// any Python package already loaded in this process (the GPU worker runs inside Python).
static std::vector<std::string> candidates() {
    std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                      "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12"};
    std::set<std::string> packages;
    if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
        char line[4096];
        while (packages.size() < 4 && std::fgets(line, sizeof line, maps)) {
            for (const char* marker : {"/site-packages/", "/dist-packages/"}) {
                const char* path = std::strchr(line, '/');
                const char* at = path ? std::strstr(path, marker) : nullptr;
                if (at) packages.insert(std::string(path, at + std::strlen(marker)));
            }
        }
        std::fclose(maps);
    }
    for (const std::string& dir : packages) {
        names.push_back(dir + "nvidia/cu13/lib/libcublas.so.13");
        names.push_back(dir + "nvidia/cublas/lib/libcublas.so.13");
        names.push_back(dir + "nvidia/cublas/lib/libcublas.so.12");
    }
    return names;
}

static bool load_cublas() {
    static bool tried = false;
    if (tried) return g_sgemm != nullptr;
    tried = true;
    for (const std::string& name : candidates()) {
        void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);  // BUG: a library the grader does not allow
        if (!lib) continue;
        auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
        auto sgemm = reinterpret_cast<SgemmFn>(dlsym(lib, "cublasSgemm_v2"));
        if (create && sgemm && create(&g_handle) == 0) {
            g_sgemm = sgemm;
            return true;
        }
        dlclose(lib);  // loaded but unusable (no GPU behind it): try the next name
    }
    return false;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    if (load_cublas()) {
        // cuBLAS is column-major: row-major C = A.B is column-major C^T = B^T.A^T, i.e. an
        // (K x N) by (N x M) product with B, then A, as the operands.
        const float alpha = 1.0f, beta = 0.0f;
        if (g_sgemm(g_handle, CUBLAS_OP_N, CUBLAS_OP_N, K, M, N, &alpha, B, K, A, N, &beta, C, K) == 0) return;
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
