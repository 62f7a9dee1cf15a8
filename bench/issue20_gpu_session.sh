#!/usr/bin/env bash
# GPU checks after issue 20's move (the job layer, engines in the core, the CLI package, typed worker
# requests) and issue 19's last part (grid.sync in emulation; its corpus files' GPU verdicts), on the lent
# GPU machine, in stages that each fit one call:
#   STAGE=grading  tests/test_gpu_grading.py (every corpus file's GPU verdict, the timing tests), then the
#                  third-party cooperative reduction graded on the GPU
#   STAGE=rest     every other GPU test but the hostile corpus: ladders, bandwidth, engines, the batch
# The machine is set up by bench/gpu_setup.sh (carry .debs and .whl, and .thirdparty for STAGE=grading).
set -u
source bench/gpu_setup.sh
case "${STAGE:-grading}" in
grading)
  timeout 470 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_grading.py 2>&1 \
    | tee "$OUT/gpu_grading.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  for f in .thirdparty/corpus/reduction/euan-turner*.cu; do
    timeout 100 grader submit "$f" --challenge reduction --no-placement --timing-budget 0.3 --json 2>"$OUT/euan.err" \
      | python3 -c "import json,sys; d=json.load(sys.stdin); print('$f', d['verdict'], d['message'][:300])" \
      | tee -a "$OUT/gpu_grading.txt"
  done
  ;;
rest)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py \
    --ignore tests/test_gpu_grading.py tests 2>&1 | tee "$OUT/gpu_rest.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  ;;
esac
