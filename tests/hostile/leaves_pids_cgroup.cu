// expect: ACCEPTED
// requires: sandbox
// The grader caps the number of processes a worker may start with a pids cgroup (RLIMIT_NPROC does
// not bind root); a process that moves itself out of it may fork without bound and escapes the
// grader's kill of the group. From solve, a forked child tries to make the cgroup file systems
// writable (mount MS_REMOUNT | MS_BIND on /sys/fs/cgroup and its hierarchies, which the box shows
// read-only), then writes its pid into the root group's cgroup.procs (cgroup v2 at /sys/fs/cgroup or
// /sys/fs/cgroup/unified, v1's pids hierarchy at /sys/fs/cgroup/pids), and prints /proc/self/cgroup
// before and after. The box refuses all of it: C is computed correctly, ACCEPTED. Any remount or
// write that succeeds writes NaN into C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
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

// The child prints with write(2) alone: the parent's other threads may hold stdio's locks.
static void say(const std::string& text) {
    std::string line = text + "\n";
    if (write(STDOUT_FILENO, line.data(), line.size()) < 0) {}
}

static std::string groups() {
    int fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    char buf[2048] = {0};
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : 0;
    if (fd >= 0) close(fd);
    std::string text(buf, n > 0 ? n : 0);
    for (char& c : text) if (c == '\n') c = ' ';
    return text;
}

// In the child: true when any step succeeded.
static bool escape() {
    bool succeeded = false;
    say("cgroups before: " + groups());
    for (const char* mount_point : {"/sys/fs/cgroup", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/unified"}) {
        int result = mount(nullptr, mount_point, nullptr, MS_REMOUNT | MS_BIND, nullptr);
        say(std::string("remount read-write ") + mount_point + ": " +
            (result == 0 ? "SUCCEEDED" : std::strerror(errno)));
        succeeded |= result == 0;
    }
    std::string pid = std::to_string(getpid());
    for (const char* procs : {"/sys/fs/cgroup/cgroup.procs", "/sys/fs/cgroup/pids/cgroup.procs",
                              "/sys/fs/cgroup/unified/cgroup.procs"}) {
        int fd = open(procs, O_WRONLY | O_CLOEXEC);
        bool moved = fd >= 0 && write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
        int error = errno;
        if (fd >= 0) close(fd);
        say(std::string("write pid into ") + procs + ": " + (moved ? "MOVED" : std::strerror(error)));
        succeeded |= moved;
    }
    say("cgroups after: " + groups());
    return succeeded;
}

static void attack() {
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(escape() ? 1 : 0);
    int status = 0;
    if (child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 1)
        g_harm = true;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
