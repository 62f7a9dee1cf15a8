// expect: ACCEPTED
// Sends SIGKILL to its parent and its parent's parent (on a GPU, the worker shares the grader's PID
// namespace, so that is the grader itself), then SIGSTOP, then computes C correctly. A worker may
// signal only itself: the grader and the rest of the machine are out of its reach.
#include <cuda_runtime.h>
#include <signal.h>
#include <cstdio>
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

static int parent_of(int pid) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE* f = std::fopen(path, "r");
    if (!f) return 0;
    int self = 0, parent = 0;
    char state = 0;
    int got = std::fscanf(f, "%d %*s %c %d", &self, &state, &parent);
    std::fclose(f);
    return got == 3 ? parent : 0;
}

static void attack() {
    int parent = getppid();
    int grandparent = parent_of(parent);
    for (int target : {parent, grandparent}) {
        if (target <= 1) continue;
        kill(target, SIGSTOP);
        kill(target, SIGKILL);
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
