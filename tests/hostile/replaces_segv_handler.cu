// expect: RUNTIME_ERROR
// expect-message: handler of SIGSEGV
// backends: emulator
// Installs a SIGSEGV handler of its own that maps whatever page faulted, then computes C correctly
// but also writes one value 256 GiB below C. On a GPU that write is an illegal address; in the
// emulator the submission shares the runtime's process, and its handler would hide the wild write
// (the verdict would be ACCEPTED). The runtime refuses the new handler, or finds it after the call.
#include <cuda_runtime.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>

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

__global__ void wild_write(float* C) {
    if (blockIdx.x == 0 && threadIdx.x == 0) C[-(1LL << 36)] = 1.0f;  // far outside every allocation
}

static void map_the_faulting_page(int, siginfo_t* info, void*) {
    uintptr_t page = reinterpret_cast<uintptr_t>(info->si_addr) & ~uintptr_t(4095);
    mmap(reinterpret_cast<void*>(page), 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
         -1, 0);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    struct sigaction action {};
    action.sa_sigaction = map_the_faulting_page;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, nullptr);
    launch(A, B, C, M, N, K);
    wild_write<<<1, 1>>>(C);
}
