// expect: ACCEPTED
// requires: sandbox
// The box hides private folders (the grader's cache and database, home folders, the planted folder
// named below) behind empty file systems mounted over them, and shows the system read-only. A
// process that may unmount sees what is under a hidden folder; one that may remount makes the system
// writable. From a static constructor and from solve, this file tries umount2 (plain, then
// MNT_DETACH) on /tmp, /root, /home, /work, the planted folder and /dev/shm, and
// mount(MS_REMOUNT | MS_BIND) to make / writable, printing the errno of each; then it reads the
// planted files and prints them (the harness checks no planted secret reached any output). The box
// refuses every (un)mount, so C is computed correctly: ACCEPTED. Any that succeeds writes NaN into
// C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <sys/mount.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
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

static bool g_harm = false;  // an attack worked: solve writes NaN into C[0]

static void report(const char* when, const char* what, const char* path, int result) {
    std::printf("%s: %s %s: %s\n", when, what, path, result == 0 ? "SUCCEEDED" : std::strerror(errno));
    if (result == 0) g_harm = true;
}

static void dump(const std::string& path) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return;
    char buf[512];
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    buf[n] = 0;
    std::printf("read %s: %s\n", path.c_str(), buf);
}

static void attack(const char* when) {
    const char* hidden[] = {"@PLANTED@", "/tmp", "/root", "/home", "/work", "/dev/shm"};
    for (const char* path : hidden) report(when, "umount2", path, umount2(path, 0));
    for (const char* path : hidden) report(when, "umount2 MNT_DETACH", path, umount2(path, MNT_DETACH));
    report(when, "remount read-write", "/", mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr));
    for (const char* name : {"/secret.h", "/home/.ssh/id_rsa", "/class/results.sqlite3.secret-seed"})
        dump(std::string("@PLANTED@") + name);
    std::fflush(stdout);
}

__attribute__((constructor)) static void before_main() { attack("constructor"); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack("solve"), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
