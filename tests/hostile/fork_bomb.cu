// expect: WRONG_ANSWER
// requires: sandbox
// A bounded fork bomb: forks sleeping children until fork() fails or 4096 exist, then returns
// without writing C. The grader must survive, say WRONG_ANSWER, and leave no process behind.
#include <cuda_runtime.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

constexpr int MAX_CHILDREN = 4096;  // in all, over every call: never more, whatever the limits

static int g_children = 0;
static bool g_refused = false;

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    while (!g_refused && g_children < MAX_CHILDREN) {
        pid_t pid = fork();
        if (pid < 0) {
            g_refused = true;  // the process cap holds: stop for good
        } else if (pid == 0) {
            // The child only sleeps until the grader kills it. Fail-safe: if nobody ever does,
            // SIGALRM (default action: terminate) ends it after 10 minutes.
            alarm(600);
            for (;;) pause();
        } else {
            ++g_children;
        }
    }
    // BUG: C is never written
}
