// expect: ACCEPTED
// requires: sandbox
// Reads what the box gave it, from a static constructor and again from solve: /proc/self/status
// must show no effective, permitted or ambient capability, a uid that is not 0 in its namespace and
// does not own / (the host's root does), no_new_privs set and a seccomp filter in force (mode 2).
// A boxed root, or a process that still holds capabilities, can take the box apart (unmount the
// folders that hide private files, remount the system read-write): then it writes NaN into C[0],
// so the verdict is WRONG_ANSWER instead of ACCEPTED. It prints what it read.
#include <cuda_runtime.h>
#include <sys/stat.h>
#include <cstdio>
#include <cstdlib>
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

static void fail(const char* when, const char* what) {
    std::printf("%s: %s\n", when, what);
    g_harm = true;
}

// The value after "Name:" in /proc/self/status, or "" when the line is missing.
static std::string field(const char* text, const char* name) {
    const char* at = std::strstr(text, name);
    if (!at) return "";
    at += std::strlen(name);
    while (*at == ' ' || *at == '\t') ++at;
    return std::string(at, std::strcspn(at, "\n"));
}

static void inspect(const char* when) {
    char status[8192] = {0};
    if (FILE* f = std::fopen("/proc/self/status", "r")) {
        status[std::fread(status, 1, sizeof status - 1, f)] = 0;
        std::fclose(f);
    }
    std::string uid = field(status, "\nUid:"), eff = field(status, "\nCapEff:"), prm = field(status, "\nCapPrm:"),
                amb = field(status, "\nCapAmb:"), nnp = field(status, "\nNoNewPrivs:"),
                sec = field(status, "\nSeccomp:");
    std::printf("%s: Uid %s, CapEff %s, CapPrm %s, CapAmb %s, NoNewPrivs %s, Seccomp %s\n", when, uid.c_str(),
                eff.c_str(), prm.c_str(), amb.c_str(), nnp.c_str(), sec.c_str());
    if (uid.empty() || std::atol(uid.c_str()) == 0) fail(when, "runs as uid 0 in its namespace");
    for (const std::string* caps : {&eff, &prm, &amb})
        if (caps->empty() || std::strtoull(caps->c_str(), nullptr, 16) != 0) fail(when, "holds capabilities");
    if (nnp != "1") fail(when, "no_new_privs is not set");
    if (sec != "2") fail(when, "no seccomp filter is in force");
    // The host's root owns /: a process that is that owner, whatever its uid reads as in its own
    // namespace, is root on the host (in a nested user namespace, root appears as the overflow uid).
    struct stat root {};
    if (stat("/", &root) == 0) {
        std::printf("%s: / is owned by uid %u\n", when, static_cast<unsigned>(root.st_uid));
        if (!uid.empty() && static_cast<unsigned>(std::atol(uid.c_str())) == root.st_uid)
            fail(when, "owns / (root on the host)");
    }
    if (FILE* f = std::fopen("/proc/self/uid_map", "r")) {  // for the record: "inside outside count"
        char map[256] = {0};
        size_t n = std::fread(map, 1, sizeof map - 1, f);
        std::fclose(f);
        for (size_t i = 0; i < n; ++i) if (map[i] == '\n') map[i] = ';';
        std::printf("%s: uid_map %s\n", when, map);
    }
    std::fflush(stdout);
}

__attribute__((constructor)) static void before_main() { inspect("constructor"); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (inspect("solve"), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
