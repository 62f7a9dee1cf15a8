// expect: ACCEPTED
// requires: sandbox
// Command lines carry secrets (tokens passed as arguments, database paths, other students' file
// names), and /proc/PID/cmdline is readable by anyone who can see the process. From solve, this file
// walks /proc and prints every command line it can read. The box gives every worker a PID namespace
// of its own, so it sees its own few processes only (the box's init and itself): C is computed
// correctly, ACCEPTED. If it sees more than a handful of processes, or one whose command line runs
// pytest (an argument that is pytest: the box's own command lines may name pytest's temporary
// folders) or carries a planted token (the harness runs a host process with one in its command line
// while this runs), it writes NaN into C[0]: WRONG_ANSWER; the harness also checks that the planted
// token reached no output.
#include <cuda_runtime.h>
#include <dirent.h>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

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
constexpr int HANDFUL = 8;

static void attack() {
    DIR* proc = opendir("/proc");
    if (!proc) return;
    std::vector<std::string> plain, telling;  // telling: runs pytest or carries a planted token
    int processes = 0;
    while (dirent* entry = readdir(proc)) {
        if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
        ++processes;
        std::string path = std::string("/proc/") + entry->d_name + "/cmdline";
        FILE* f = std::fopen(path.c_str(), "rb");
        if (!f) continue;
        char buf[1024];
        size_t n = std::fread(buf, 1, sizeof buf - 1, f);
        std::fclose(f);
        if (n == 0) continue;  // a kernel thread
        buf[n] = 0;
        bool tells = false;  // an argument that is pytest (the program: its temporary paths don't count)
        for (const char* arg = buf; arg < buf + n; arg += std::strlen(arg) + 1) {
            const char* base = std::strrchr(arg, '/');
            tells |= std::strstr(arg, "PLANTED") != nullptr || std::strcmp(base ? base + 1 : arg, "pytest") == 0;
        }
        for (size_t i = 0; i < n; ++i) if (buf[i] == 0) buf[i] = ' ';
        std::string line = std::string(entry->d_name) + ": " + buf;
        if (tells) telling.push_back(line);
        else plain.push_back(line.substr(0, 100));
    }
    closedir(proc);
    std::printf("%d processes visible\n", processes);
    for (size_t i = 0; i < plain.size() && i < 20; ++i) std::printf("%s\n", plain[i].c_str());
    for (const std::string& line : telling) std::printf("%s\n", line.substr(0, 300).c_str());  // last: the tail is kept
    if (processes > HANDFUL || !telling.empty()) g_harm = true;
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
