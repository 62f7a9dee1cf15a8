// expect: ACCEPTED
// requires: sandbox
// A host service listening on a unix socket (a database, a container engine, the session bus) trusts
// whoever connects as root. From solve, this file connects to every unix socket it can find: the
// socket files under /run, /var/run, /tmp and /dev (walked a few levels deep), every name listed in
// /proc/net/unix (abstract names included) and a few well-known abstract names. It prints the errno
// of each. The box hides /run and /var/run, and gives /tmp and /dev of its own and a network
// namespace of its own (abstract names live there): no connect succeeds and C is computed correctly,
// ACCEPTED. Any connect that succeeds writes NaN into C[0]: WRONG_ANSWER. (The harness listens on a
// socket in the host's /run, and on an abstract name, while this runs.)
#include <cuda_runtime.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
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

// `name` is a path, or "@name" for an abstract one. Tries a stream, a datagram and a seqpacket socket.
static void try_connect(const std::string& name) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    size_t length = std::min(name.size(), sizeof address.sun_path - 1);
    std::memcpy(address.sun_path, name.data(), length);
    if (name[0] == '@') address.sun_path[0] = 0;
    socklen_t size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + length + (name[0] == '@' ? 0 : 1));
    int error = 0;
    for (int type : {SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET}) {
        int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
        if (fd < 0) { error = errno; continue; }
        int result = connect(fd, reinterpret_cast<sockaddr*>(&address), size);
        error = errno;
        close(fd);
        if (result == 0) {
            std::printf("connect %s: CONNECTED\n", name.c_str());
            g_harm = true;
            return;
        }
        if (error != EPROTOTYPE) break;  // the socket is there, of another type: try the next
    }
    std::printf("connect %s: %s\n", name.c_str(), std::strerror(error));
}

static void walk(const std::string& folder, int depth, std::set<std::string>& found) {
    DIR* dir = opendir(folder.c_str());
    if (!dir) return;
    while (dirent* entry = readdir(dir)) {
        std::string name = entry->d_name;
        if (name == "." || name == "..") continue;
        std::string path = folder + "/" + name;
        struct stat info {};
        if (lstat(path.c_str(), &info) != 0) continue;
        if (S_ISSOCK(info.st_mode)) found.insert(path);
        else if (S_ISDIR(info.st_mode) && depth > 0) walk(path, depth - 1, found);
    }
    closedir(dir);
}

static void attack() {
    std::set<std::string> found;
    for (const char* root : {"/run", "/var/run", "/tmp", "/dev"}) walk(root, 4, found);
    if (FILE* table = std::fopen("/proc/net/unix", "r")) {  // Num RefCount Protocol Flags Type St Inode Path
        char line[512];
        while (std::fgets(line, sizeof line, table)) {
            char path[256] = {0};
            if (std::sscanf(line, "%*s %*s %*s %*s %*s %*s %*s %255s", path) == 1 && (path[0] == '/' || path[0] == '@'))
                found.insert(path);
        }
        std::fclose(table);
    }
    for (const char* name : {"@/tmp/.X11-unix/X0", "@/org/freedesktop/systemd1/notify", "@/containerd-shim"})
        found.insert(name);
    std::printf("%zu unix socket names found\n", found.size());
    int tried = 0;
    for (const std::string& name : found)
        if (tried++ < 200) try_connect(name);
    std::fflush(stdout);
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack(), true);
    (void)once;
    launch(A, B, C, M, N, K);
    if (g_harm) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
