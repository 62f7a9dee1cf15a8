#!/usr/bin/env bash
# GPU checks after issue 26 (the class server's secrets and faults): the box's seccomp policy now ends a
# process that sends SIGKILL (so a kill from outside can be told from the submission's own), seeds are
# derived per submission, the ladder is measured with a fixed public seed. In stages that each fit one call:
#   STAGE=grading  tests/test_gpu_grading.py (every corpus file's GPU verdict, the timing tests)
#   STAGE=rest     every other GPU test, the hostile corpus on the GPU and the box probes included
# The machine is set up by bench/gpu_setup.sh (carry .debs and .whl).
set -u
source bench/gpu_setup.sh
case "${STAGE:-grading}" in
grading)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_grading.py 2>&1 \
    | tee "$OUT/gpu_grading.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  ;;
rest)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_gpu_grading.py tests 2>&1 \
    | tee "$OUT/gpu_rest.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  ;;
esac
