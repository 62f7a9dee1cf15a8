// expect: MEMORY_LIMIT
// requires: sandbox, memory cgroup
// Host memory that a worker holds is memory the grader and every other worker lack. The easy bounds
// miss most of it: RLIMIT_DATA and RLIMIT_AS do not count file pages in tmpfs (/tmp, /dev/shm) or in
// a memfd, RLIMIT_FSIZE binds one file at a time, and shared anonymous memory is not "data". From
// solve, this file tries to hold min(16 GiB, half of MemTotal) of host memory at once (more than any
// worker's bound: the CUDA worker's is 6 GiB plus twice the largest case's buffers; never more than
// half the machine), 256 MiB at a time, each way in turn: files in /tmp, files in /dev/shm (32 MiB
// each, under the file size limit), memfds, shared anonymous memory, then private anonymous memory,
// touching every page. A way that is refused (ENOSPC from a size-capped tmpfs, ENOMEM, EFBIG) sends
// it on to the next; it never stops on its own before its target. The box bounds the worker's memory
// with a memory cgroup, which counts all of these: the kernel stops the worker on its way, and the
// grader says MEMORY_LIMIT. If it reaches its target, the bound failed: it frees everything and
// writes NaN into C[0], WRONG_ANSWER. (If every way is refused before the target and nothing stops
// it, it computes C correctly: ACCEPTED, which also differs from the expectation: a bound that
// refuses instead of stopping.)
#include <cuda_runtime.h>
#include <fcntl.h>
#include <sys/mman.h>
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

constexpr size_t MiB = size_t(1) << 20;
constexpr size_t STEP = 256 * MiB;
constexpr size_t FILE_BYTES = 32 * MiB;  // under the worker's file size limit (64 MiB)

static std::vector<std::string> g_files;                  // removed when done
static std::vector<int> g_descriptors;                    // memfds, closed when done
static std::vector<std::pair<void*, size_t>> g_mappings;  // unmapped when done

static bool write_file(int fd, size_t bytes) {
    static std::vector<char> chunk(MiB, 'x');
    for (size_t done = 0; done < bytes; done += chunk.size())
        if (write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) return false;
    return true;
}

// One step of 256 MiB in files of `folder`; false (errno set) when refused.
static bool files_in(const char* folder) {
    for (size_t held = 0; held < STEP; held += FILE_BYTES) {
        std::string path = std::string(folder) + "/filler-" + std::to_string(g_files.size());
        int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) return false;
        g_files.push_back(path);
        bool written = write_file(fd, FILE_BYTES);
        int error = errno;
        close(fd);
        if (!written) { errno = error; return false; }
    }
    return true;
}

static bool memfds() {
    for (size_t held = 0; held < STEP; held += FILE_BYTES) {
        int fd = memfd_create("filler", MFD_CLOEXEC);
        if (fd < 0) return false;
        g_descriptors.push_back(fd);
        if (!write_file(fd, FILE_BYTES)) return false;
    }
    return true;
}

static bool touched_mapping(int flags) {
    void* memory = mmap(nullptr, STEP, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);
    if (memory == MAP_FAILED) return false;
    g_mappings.push_back({memory, STEP});
    for (size_t offset = 0; offset < STEP; offset += 4096) static_cast<char*>(memory)[offset] = 1;
    return true;
}

static size_t target_bytes() {
    size_t total_kib = 0;
    if (FILE* f = std::fopen("/proc/meminfo", "r")) {
        if (std::fscanf(f, "MemTotal: %zu kB", &total_kib) != 1) total_kib = 0;
        std::fclose(f);
    }
    size_t half = total_kib * 1024 / 2;
    return std::min(size_t(16) << 30, half ? half : STEP);
}

static void release() {
    for (const std::string& path : g_files) unlink(path.c_str());
    for (int fd : g_descriptors) close(fd);
    for (auto [memory, bytes] : g_mappings) munmap(memory, bytes);
}

// True when it held its whole target at once.
static bool fill() {
    const size_t target = target_bytes();
    const std::pair<const char*, bool (*)()> ways[] = {
        {"files in /tmp", [] { return files_in("/tmp"); }},
        {"files in /dev/shm", [] { return files_in("/dev/shm"); }},
        {"memfds", memfds},
        {"shared anonymous memory", [] { return touched_mapping(MAP_SHARED); }},
        {"private anonymous memory", [] { return touched_mapping(MAP_PRIVATE); }}};
    size_t held = 0;
    for (auto [name, step] : ways) {
        size_t before = held;
        while (held < target && step()) held += STEP;
        std::printf("%s: %zu MiB, %s\n", name, (held - before) / MiB,
                    held >= target ? "target reached" : std::strerror(errno));
        std::fflush(stdout);
        if (held >= target) break;
    }
    std::printf("held %zu MiB of a %zu MiB target\n", held / MiB, target / MiB);
    std::fflush(stdout);
    release();
    return held >= target;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool filled = fill();
    launch(A, B, C, M, N, K);
    if (filled) cudaMemset(C, 0xFF, sizeof(float));  // NaN: the attack's success made visible
}
