// expect: RUNTIME_ERROR
// expect-message: seccomp filter
// backends: emulator
// The emulator runtime refuses, with a seccomp filter, the changes that would let a submission lie
// about its run: a SIGSEGV handler of its own would hide a wild write (hides_segv_handler.cu). Were
// that filter installed after the submission's static constructors, a constructor could install a
// filter of its own first, one that answers "success" to prctl(PR_SET_SECCOMP) and seccomp() without
// doing anything: the runtime's filter would then never be installed. This file does just that
// (classic BPF, SECCOMP_RET_ERRNO with errno 0), then solve swaps the SIGSEGV handler around a wild
// write 256 GiB below C and puts the runtime's handler back. The runtime confines itself before any
// constructor runs, so the constructor's filter is refused, and the worker stopped, as an attempt
// to install a seccomp filter of its own: RUNTIME_ERROR. (Where the pre-emption works, the wild
// write passes unseen: ACCEPTED.)
#include <cuda_runtime.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

// A filter answering 0 ("done") to every later attempt to install a filter, and allowing the rest.
static void preempt_the_runtimes_filter() {
    constexpr uint32_t kFakeSuccess = SECCOMP_RET_ERRNO | 0;
    sock_filter program[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_seccomp, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kFakeSuccess),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args)),  // the option: args[0]'s low word
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_SECCOMP, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, kFakeSuccess),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog filter{sizeof program / sizeof program[0], program};
    int nnp = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    int installed = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0);
    std::printf("constructor: no_new_privs %s, filter %s\n", nnp == 0 ? "set" : std::strerror(errno),
                installed == 0 ? "installed" : std::strerror(errno));
    std::fflush(stdout);
}

__attribute__((constructor)) static void before_main() { preempt_the_runtimes_filter(); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    struct sigaction action {}, runtime {};
    action.sa_sigaction = map_the_faulting_page;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, &runtime);
    launch(A, B, C, M, N, K);
    wild_write<<<1, 1>>>(C);
    sigaction(SIGSEGV, &runtime, nullptr);
}
