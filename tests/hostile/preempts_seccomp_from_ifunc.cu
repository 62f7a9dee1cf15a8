// expect: ACCEPTED
// expect-emulator: UNSUPPORTED
// Like preempts_seccomp_from_constructor.cu, but earlier still: a GNU ifunc resolver runs while the
// dynamic loader relocates the program, before .preinit_array and every constructor. The resolver
// installs a seccomp filter answering "success" to prctl(PR_SET_SECCOMP) and seccomp() without
// doing anything, so a filter the program installs after it never is. Then solve swaps the SIGSEGV
// handler around a wild write (from host code, 256 GiB below one of its own variables) and puts the
// old handler back, and checks whether the grader's filters are in force: ptrace(PTRACE_TRACEME),
// which every box refuses, is tried in a forked child.
// - The emulator refuses a file with an ifunc outright (a resolver runs before any of its
//   defences): UNSUPPORTED. (Where it runs the file, the handler swap and the wild write pass
//   unseen; the result is ACCEPTED, or WRONG_ANSWER where ptrace is not refused either.)
// - On a GPU the worker's filters are installed before the library is loaded, so the resolver's
//   filter changes nothing: the handler swap is the worker's own business (its host memory), the
//   ptrace is refused, and C is computed correctly: ACCEPTED. If the ptrace succeeds (the grader's
//   filters were pre-empted), it writes NaN into C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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

static void map_the_faulting_page(int, siginfo_t* info, void*) {
    uintptr_t page = reinterpret_cast<uintptr_t>(info->si_addr) & ~uintptr_t(4095);
    void* mapped = mmap(reinterpret_cast<void*>(page), 4096, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (mapped == MAP_FAILED) signal(SIGSEGV, SIG_DFL);  // cannot hide it: the fault repeats and kills
}

static int g_installed = -1;  // what the resolver's prctl returned (read in solve: stdio is not set up yet)

extern "C" {
static void nothing() {}

// The resolver: runs during relocation. It installs the filter, then names the function to bind.
static void (*preempt_the_runtimes_filter())() {
    constexpr uint32_t kFakeSuccess = SECCOMP_RET_ERRNO | 0;
    static sock_filter program[] = {
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
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    g_installed = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter, 0, 0);
    return nothing;
}
}

extern "C" void bound_at_load() __attribute__((ifunc("preempt_the_runtimes_filter")));

static bool grader_filters_pre_empted() {
    pid_t child = fork();
    if (child == 0) _exit(ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) == 0 ? 1 : 0);
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static char g_anchor;  // host memory of the submission's own, on every backend

static volatile float* far_below_anchor() { return reinterpret_cast<volatile float*>(&g_anchor - (1LL << 38)); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    bound_at_load();  // the reference that makes the loader run the resolver
    static bool pre_empted = grader_filters_pre_empted();
    static bool once = (std::printf("resolver's filter: %s; ptrace(PTRACE_TRACEME) %s\n",
                                    g_installed == 0 ? "installed" : "refused", pre_empted ? "SUCCEEDED" : "refused"),
                        std::fflush(stdout), true);
    (void)once;
    struct sigaction action {}, previous {};
    action.sa_sigaction = map_the_faulting_page;
    action.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &action, &previous);
    *far_below_anchor() = 1.0f;  // host code: a wild write, hidden by the handler
    sigaction(SIGSEGV, &previous, nullptr);
    launch(A, B, C, M, N, K);
    if (pre_empted) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
