// expect: ACCEPTED
// requires: sandbox
// Hunts for files it must never see: other submissions' *.cu sources in the grader's cache, /work,
// /home, /root, $HOME, "..", $PYTHONPATH and beside its own build folder. If it reads one it prints
// the path and leaves C unwritten (WRONG_ANSWER, as without the sandbox); sandboxed, all are hidden.
// The grader's own package (its emulator holds a trusted calibrate.cu) is shown on purpose, as is
// the submission's own build: neither counts.
#include <cuda_runtime.h>
#include <dirent.h>
#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <sys/stat.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

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

static std::set<std::string> g_own;  // the folder this code was loaded from: its own build is shown on purpose
static long g_budget = 20000;        // directory entries examined, in all: the search is bounded in time

static std::string canonical(const std::string& path) {
    char resolved[PATH_MAX];
    return realpath(path.c_str(), resolved) ? std::string(resolved) : std::string();
}

static std::string parent_of(const std::string& path) {
    std::string copy = path;
    return copy.empty() ? copy : std::string(dirname(&copy[0]));
}

static bool ends_with_cu(const std::string& name) {
    return name.size() > 3 && name.compare(name.size() - 3, 3, ".cu") == 0;
}

// Trees where *.cu files legitimately live (libraries, packages, toolkits): not other submissions.
static bool pruned(const std::string& name) {
    return name.compare(0, 3, "lib") == 0 || name == "include" || name == "site-packages" ||
           name == "dist-packages" || name == "node_modules" || name == ".git" || name == "__pycache__";
}

// Depth-first search of `dir`, at most `depth` folder levels down, for a *.cu file it can read.
static bool find_source(const std::string& dir, int depth, std::string& found) {
    if (g_budget <= 0 || g_own.count(canonical(dir))) return false;
    DIR* d = opendir(dir.c_str());
    if (!d) return false;
    bool hit = false;
    for (dirent* e; !hit && g_budget-- > 0 && (e = readdir(d)) != nullptr;) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        std::string path = dir + "/" + name;
        struct stat st;
        if (lstat(path.c_str(), &st) != 0) continue;  // lstat: symbolic links are never followed
        if (S_ISREG(st.st_mode) && ends_with_cu(name)) {
            if (FILE* f = std::fopen(path.c_str(), "rb")) {
                std::fgetc(f);  // one byte is proof enough
                std::fclose(f);
                found = path;
                hit = true;
            }
        } else if (S_ISDIR(st.st_mode) && depth > 0 && !pruned(name)) {
            hit = find_source(path, depth - 1, found);
        }
    }
    closedir(d);
    return hit;
}

// The first forbidden file found, or "" when everything private is hidden.
static std::string forbidden_file() {
    Dl_info info{};  // where this code lives: the .so on a GPU, the executable in the emulator
    std::string self = dladdr(reinterpret_cast<void*>(&forbidden_file), &info) && info.dli_fname
                           ? canonical(info.dli_fname) : "";
    if (self.empty()) self = canonical("/proc/self/exe");
    std::string build = parent_of(self);
    if (!build.empty()) g_own.insert(build);
    if (const char* paths = std::getenv("PYTHONPATH")) {  // the grader package, shown read-only on purpose
        std::string first = paths;
        first = first.substr(0, first.find(':'));
        if (!first.empty()) g_own.insert(canonical(first + "/grader"));
    }

    std::string found;
    for (const char* root : {"/root/.cache/cuda-grader", "/work", "/home", "/root"})
        if (find_source(root, 5, found)) return found;
    if (const char* paths = std::getenv("PYTHONPATH")) {  // the CUDA worker's, which names the repository
        std::string all = paths;
        for (size_t start = 0, end; start <= all.size(); start = end + 1) {
            end = all.find(':', start);
            if (end == std::string::npos) end = all.size();
            if (end > start && find_source(all.substr(start, end - start), 5, found)) return found;
        }
    }
    const char* home = std::getenv("HOME");
    // "..", the home folder, and the folder holding this build's siblings (other submissions' builds)
    for (const std::string& dir : {std::string(".."), std::string(home ? home : ""), parent_of(build)})
        if (!dir.empty() && find_source(dir, 1, found)) return found;
    return "";
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    static const std::string leak = forbidden_file();  // searched once per worker
    if (!leak.empty()) {
        std::printf("reads_outside_directory: could read %s; leaving C unwritten\n", leak.c_str());
        std::fflush(stdout);
        return;  // sabotage: a visible private file turns into a failed case
    }
    dim3 block(BLOCK, BLOCK);
    dim3 grid((K + BLOCK - 1) / BLOCK, (M + BLOCK - 1) / BLOCK);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
