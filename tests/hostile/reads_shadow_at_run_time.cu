// expect: ACCEPTED
// requires: sandbox
// Opens the host's password hashes (/etc/shadow, /etc/gshadow) at run time, from solve. Only root
// can read them, and a boxed process is never root on the host: the opens fail and C is computed
// correctly (ACCEPTED). Where an open succeeds it prints the first line (the harness checks that
// root's hash reaches no output) and writes NaN into C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

static bool g_harm = false;  // an attack worked: solve writes NaN into C[0]

static void attack() {
    for (const char* path : {"/etc/shadow", "/etc/gshadow", "/proc/self/root/etc/shadow", "/proc/1/root/etc/shadow"}) {
        FILE* f = std::fopen(path, "r");
        if (!f) {
            std::printf("open %s: %s\n", path, std::strerror(errno));
            continue;
        }
        char line[512] = {0};
        if (!std::fgets(line, sizeof line, f)) line[0] = 0;
        std::fclose(f);
        std::printf("open %s: READ, first line: %s\n", path, line);
        g_harm = true;
    }
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
