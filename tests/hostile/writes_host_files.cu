// expect: ACCEPTED
// requires: sandbox
// Tries to change the host's files from solve and from a static constructor: first it tries to make
// them writable (mount MS_REMOUNT | MS_BIND on /; umount2 MNT_DETACH of the planted
// folder and /var/tmp, which the box hides behind empty file systems), then to create a file in /,
// /etc, /usr, /var/tmp, the planted folder, the current directory and /proc/self/root/etc, and to
// open root-owned files (/etc/passwd, /etc/hostname) for appending. It prints the errno of each.
// A file it manages to create is removed at once and nothing is appended: the probe only proves.
// The box shows the system read-only and its own stand-ins for the hidden folders, which are
// writable but are not the host's; a write counts only where it reaches the host: in /, /etc, /usr,
// /proc/self/root/etc, in the planted folder while its private files are visible there (the stand-in
// is empty), in /var/tmp once its stand-in was unmounted, and in the current directory unless it is
// the box's private /tmp. The box refuses all of these: ACCEPTED. Any success writes NaN into C[0]:
// WRONG_ANSWER.
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mount.h>
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

static bool succeeded(const char* when, const char* what, const std::string& path, int result) {
    std::printf("%s: %s %s: %s\n", when, what, path.c_str(), result == 0 ? "SUCCEEDED" : std::strerror(errno));
    return result == 0;
}

// Creates a file in `folder` (and removes it at once); true when that worked.
static bool create_in(const char* when, const std::string& folder) {
    std::string path = folder + "/written-by-a-submission-" + std::to_string(getpid());
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
        close(fd);
        unlink(path.c_str());
    }
    return succeeded(when, "create", path, fd >= 0 ? 0 : -1);
}

static void attack(const char* when) {
    if (succeeded(when, "remount read-write", "/", mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr)))
        g_harm = true;
    bool var_tmp_shown = succeeded(when, "umount2 MNT_DETACH", "/var/tmp", umount2("/var/tmp", MNT_DETACH));
    if (succeeded(when, "umount2 MNT_DETACH", "@PLANTED@", umount2("@PLANTED@", MNT_DETACH)) || var_tmp_shown)
        g_harm = true;

    for (const char* folder : {"/", "/etc", "/usr", "/proc/self/root/etc"})
        if (create_in(when, folder)) g_harm = true;
    bool planted_visible = access("@PLANTED@/secret.h", F_OK) == 0;
    std::printf("%s: the planted folder's files are %s\n", when, planted_visible ? "VISIBLE" : "hidden");
    if (create_in(when, "@PLANTED@") && planted_visible) g_harm = true;
    if (create_in(when, "/var/tmp") && var_tmp_shown) g_harm = true;
    char cwd[4096] = {0};
    if (getcwd(cwd, sizeof cwd) && std::strcmp(cwd, "/tmp") != 0 && create_in(when, cwd)) g_harm = true;

    for (const char* path : {"/etc/passwd", "/etc/hostname"}) {
        int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);  // appends nothing: opening is the proof
        if (fd >= 0) close(fd);
        if (succeeded(when, "open for appending", path, fd >= 0 ? 0 : -1)) g_harm = true;
    }
    std::fflush(stdout);
}

__attribute__((constructor)) static void before_main() { attack("constructor"); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack("solve"), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
