// expect: ACCEPTED
// requires: sandbox
// In a user namespace of its own a process holds every capability again, and in a mount namespace
// of its own (or another process's, by setns) the box's mounts are not what they were. From solve,
// each attempt in a forked child (a user namespace needs a single-threaded process): unshare
// CLONE_NEWUSER | CLONE_NEWNS (and, where that works, umount2 of the hidden folders in it and a read
// of the planted files, printed: the harness checks no planted secret reached any output),
// unshare CLONE_NEWNS alone, unshare of each other namespace, and setns into its own namespaces
// (the call itself must be refused), those of /proc/1 and those of its parent. It prints the errno
// of each. The box refuses them all (seccomp): C is computed correctly, ACCEPTED. Any that
// succeeds writes NaN into C[0]: WRONG_ANSWER.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
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

// Children print with write(2) alone: the parent's other threads may hold stdio's locks.
static void say(const std::string& text) {
    std::string line = text + "\n";
    if (write(STDOUT_FILENO, line.data(), line.size()) < 0) {}
}

static std::string outcome(long result) { return result >= 0 ? "SUCCEEDED" : std::strerror(errno); }

static void dump(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char buf[256];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n > 0) say("read " + path + ": " + std::string(buf, n));
}

// Runs `attempt` in a forked child; true when the child says it succeeded (exit status 1).
template <typename Attempt>
static bool in_child(Attempt attempt) {
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(attempt() ? 1 : 0);
    int status = 0;
    return child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 1;
}

static bool new_user_and_mount_namespace() {
    long result = unshare(CLONE_NEWUSER | CLONE_NEWNS);
    say("unshare(CLONE_NEWUSER | CLONE_NEWNS): " + outcome(result));
    if (result < 0) return false;
    for (const char* path : {"@PLANTED@", "/tmp", "/root", "/home", "/work"})
        say(std::string("  in it, umount2 MNT_DETACH ") + path + ": " + outcome(umount2(path, MNT_DETACH)));
    for (const char* name : {"/secret.h", "/home/.ssh/id_rsa", "/class/results.sqlite3.secret-seed"})
        dump(std::string("@PLANTED@") + name);
    return true;
}

static bool unshare_one(int flag, const char* name) {
    long result = unshare(flag);
    say(std::string("unshare(") + name + "): " + outcome(result));
    return result >= 0;
}

static bool enter(const std::string& path, int type) {
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        say("open " + path + ": " + outcome(-1));
        return false;
    }
    long result = setns(fd, type);
    say("setns " + path + ": " + outcome(result));
    close(fd);
    return result >= 0;
}

static void attack() {
    bool harm = in_child(new_user_and_mount_namespace);
    const std::pair<int, const char*> flags[] = {
        {CLONE_NEWNS, "CLONE_NEWNS"}, {CLONE_NEWUSER, "CLONE_NEWUSER"}, {CLONE_NEWPID, "CLONE_NEWPID"},
        {CLONE_NEWNET, "CLONE_NEWNET"}, {CLONE_NEWIPC, "CLONE_NEWIPC"}, {CLONE_NEWUTS, "CLONE_NEWUTS"},
        {CLONE_NEWCGROUP, "CLONE_NEWCGROUP"}};
    for (auto [flag, name] : flags) harm |= in_child([&] { return unshare_one(flag, name); });
    const std::pair<const char*, int> kinds[] = {{"mnt", CLONE_NEWNS}, {"user", CLONE_NEWUSER}, {"net", CLONE_NEWNET},
                                                 {"pid", CLONE_NEWPID}, {"cgroup", CLONE_NEWCGROUP}};
    std::vector<std::string> owners = {"self", "1"};  // its own (setns itself refused), the box's init, its parent
    std::string parent = std::to_string(getppid());
    if (parent != "1") owners.push_back(parent);
    for (const std::string& owner : owners)
        for (auto [kind, type] : kinds)
            harm |= in_child([&] { return enter("/proc/" + owner + "/ns/" + kind, type); });
    if (harm) g_harm = true;
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
