// expect: ACCEPTED
// requires: sandbox
// System calls a box has no use for, each of which has served an escape or a look at other
// processes: ptrace (PTRACE_TRACEME, and PTRACE_ATTACH to its parent), bpf, perf_event_open, keyctl,
// add_key, request_key, userfaultfd, io_uring_setup, kexec_load, init_module, finit_module,
// delete_module, name_to_handle_at and open_by_handle_at, syslog(READ_ALL), iopl, ioperm,
// settimeofday and clock_settime (to the time it is now), acct, swapon, clone3 with CLONE_NEWUSER,
// and seccomp with SECCOMP_FILTER_FLAG_NEW_LISTENER (a filter whose calls a supervisor answers). Each
// is tried in a forked child (its side effects end with the child; a trap of the emulator's own
// filter ends only the child), from a static constructor and from solve, with valid arguments, and
// its result printed ("ok" or the errno's name). The box refuses them all: C is computed correctly,
// ACCEPTED. Any that succeeds writes NaN into C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
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
static pid_t g_parent = 0;   // the worker's parent, read before any fork

// ---- each attempt returns the system call's result (>= 0: it succeeded), errno set otherwise

static long trace_me() { return ptrace(PTRACE_TRACEME, 0, nullptr, nullptr); }

static long attach_to_parent() {
    long result = ptrace(PTRACE_ATTACH, g_parent, nullptr, nullptr);
    if (result == 0) {  // let it go again: wait for its stop, then detach
        int status = 0;
        waitpid(g_parent, &status, __WALL);
        ptrace(PTRACE_DETACH, g_parent, nullptr, nullptr);
    }
    return result;
}

static long bpf_map() {
    union bpf_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.map_type = BPF_MAP_TYPE_ARRAY;
    attr.key_size = 4;
    attr.value_size = 4;
    attr.max_entries = 1;
    return syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof attr);
}

static long perf_counter() {  // its own task clock, user space only: what the least privilege allows
    perf_event_attr attr;
    std::memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    return syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
}

static long session_keyring() { return syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0); }
static long new_key() { return syscall(SYS_add_key, "user", "grader-probe", "x", 1, -2 /* process keyring */); }
static long find_key() { return syscall(SYS_request_key, "user", "grader-probe-absent", nullptr, 0); }
static long fault_handler() { return syscall(SYS_userfaultfd, O_CLOEXEC | 1 /* UFFD_USER_MODE_ONLY */); }

static long ring() {
    io_uring_params params;
    std::memset(&params, 0, sizeof params);
    return syscall(SYS_io_uring_setup, 4, &params);
}

static long load_kernel() { return syscall(SYS_kexec_load, 0, 0, nullptr, 0); }
static long load_module() { return syscall(SYS_init_module, nullptr, 0, ""); }
static long load_module_file() {
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    return syscall(SYS_finit_module, fd, "", 0);
}
static long unload_module() { return syscall(SYS_delete_module, "grader_probe_absent", O_NONBLOCK); }

struct Handle {
    unsigned int bytes;
    int type;
    unsigned char data[128];
};

static long file_handle() {
    Handle handle{};
    handle.bytes = sizeof handle.data;
    int mount_id = 0;
    return syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc/passwd", &handle, &mount_id, 0);
}

static long open_by_handle() {
    Handle handle{};
    handle.bytes = sizeof handle.data;
    int mount_id = 0;
    if (syscall(SYS_name_to_handle_at, AT_FDCWD, "/etc/passwd", &handle, &mount_id, 0) != 0) return -1;
    int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return syscall(SYS_open_by_handle_at, root, &handle, O_RDONLY);
}

static long kernel_log() {
    static char buf[1 << 14];
    return syscall(SYS_syslog, 3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);  // the count only is shown
}

static long port_privilege() { return syscall(SYS_iopl, 3); }
static long port_access() { return syscall(SYS_ioperm, 0x80, 1, 1); }

static long set_time_of_day() {
    timeval now{};
    gettimeofday(&now, nullptr);
    return syscall(SYS_settimeofday, &now, nullptr);
}

static long set_clock() {
    timespec now{};
    clock_gettime(CLOCK_REALTIME, &now);
    return syscall(SYS_clock_settime, CLOCK_REALTIME, &now);
}

static long accounting() { return syscall(SYS_acct, nullptr); }
static long swap() { return syscall(SYS_swapon, "/grader-probe-absent", 0); }

struct CloneArgs {  // struct clone_args, version 0 (64 bytes)
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

static long clone3_new_user() {
    CloneArgs args{};
    args.flags = CLONE_NEWUSER;
    args.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid == 0) _exit(0);
    if (pid > 0) waitpid(static_cast<pid_t>(pid), nullptr, 0);
    return pid;
}

static long filter_listener() {  // a filter that allows everything, asking for a supervisor's descriptor
    sock_filter allow[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    sock_fprog program{1, allow};
    return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &program);
}

// ---- running them

// The child prints with write(2) alone: the parent's other threads may hold stdio's locks.
static void say(const std::string& text) {
    std::string line = text + "\n";
    if (write(STDOUT_FILENO, line.data(), line.size()) < 0) {}
}

// Runs `attempt` in a forked child, which prints its result; true when it succeeded.
static bool tried(const char* when, const char* name, long (*attempt)()) {
    pid_t child = fork();
    if (child == 0) {
        errno = 0;
        long result = attempt();
        const char* error = strerrorname_np(errno);
        say(std::string(when) + " " + name + ": " + (result >= 0 ? "ok (" + std::to_string(result) + ")"
                                                                   : std::string(error ? error : "?")));
        _exit(result >= 0 ? 1 : 0);
    }
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static void attack(const char* when) {
    std::fflush(stdout);
    g_parent = getppid();
    const std::pair<const char*, long (*)()> attempts[] = {
        {"ptrace(TRACEME)", trace_me},       {"ptrace(ATTACH parent)", attach_to_parent},
        {"bpf(MAP_CREATE)", bpf_map},        {"perf_event_open", perf_counter},
        {"keyctl", session_keyring},         {"add_key", new_key},
        {"request_key", find_key},           {"userfaultfd", fault_handler},
        {"io_uring_setup", ring},            {"kexec_load", load_kernel},
        {"init_module", load_module},        {"finit_module", load_module_file},
        {"delete_module", unload_module},    {"name_to_handle_at", file_handle},
        {"open_by_handle_at", open_by_handle}, {"syslog(READ_ALL)", kernel_log},
        {"iopl(3)", port_privilege},         {"ioperm", port_access},
        {"settimeofday", set_time_of_day},   {"clock_settime", set_clock},
        {"acct", accounting},                {"swapon", swap},
        {"clone3(CLONE_NEWUSER)", clone3_new_user}, {"seccomp(NEW_LISTENER)", filter_listener}};
    for (auto [name, attempt] : attempts)
        if (tried(when, name, attempt)) g_harm = true;
}

__attribute__((constructor)) static void before_main() { attack("constructor"); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack("solve"), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
