// Beside include_own_folder.cu: a header the grader must never read.
#define HELPER 1
