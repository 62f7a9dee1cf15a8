// expect: ACCEPTED
// requires: sandbox
// Creates POSIX shared memory (shm_open) and a file in /dev/shm, lists what /dev/shm holds, and
// computes C correctly: ACCEPTED, since nothing here changes its result. The point is elsewhere:
// tests/test_hostile.py asserts that the host's /dev/shm is unchanged after grading, i.e. the box
// gives the worker a /dev/shm of its own, and the grader's buffers are in no file anyone could open
// by name there (the emulator's are anonymous memory the worker inherits by descriptor).
#include <cuda_runtime.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cstdio>

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

static void launch(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}

static void leave_files_in_dev_shm() {
    int fd = shm_open("/grader-hostile-probe", O_CREAT | O_RDWR, 0600);
    if (fd >= 0) {
        if (write(fd, "left behind\n", 12) < 0) perror("write");
        close(fd);
    }
    if (FILE* file = std::fopen("/dev/shm/grader-hostile-probe-file", "w")) {
        std::fputs("left behind\n", file);
        std::fclose(file);
    }
}

static void list_dev_shm() {
    if (DIR* dir = opendir("/dev/shm")) {
        while (dirent* entry = readdir(dir)) std::printf("/dev/shm holds: %s\n", entry->d_name);
        closedir(dir);
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    leave_files_in_dev_shm();
    list_dev_shm();
    launch(A, B, C, M, N, K);
}
