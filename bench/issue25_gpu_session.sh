#!/usr/bin/env bash
# GPU checks of issue 25 (the box holds, as root) on the lent GPU machine, in stages that each fit one call:
#   STAGE=tests     the GPU tests (hostile corpus aside), the box as the GPU worker sees it, --sanitize once
#   STAGE=hostile   the hostile corpus and the box probes on the GPU
#   STAGE=overhead  the reference levels' grading time, this tree against the one before issue 25
#                   (.thirdparty/base, carried: `git archive c360d2b | tar -x -C .thirdparty/base`)
# The machine is set up by bench/gpu_setup.sh (carry .debs and .whl).
set -u
source bench/gpu_setup.sh
python3 -c "from grader import sandbox; print(sandbox.make(sandbox.SandboxMode.REQUIRED, []).describe())" | tee -a "$OUT/env.txt"

case "${STAGE:-tests}" in
tests)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py \
    --ignore tests/test_engine.py tests 2>&1 | tee "$OUT/gpu_tests.txt" | grep -E "passed|failed|FAIL|Error" | tail -25
  ;;
hostile)
  timeout 470 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_hostile.py tests/test_box_probes.py 2>&1 \
    | tee "$OUT/gpu_hostile.txt" | grep -E "passed|failed|FAIL|Error" | tail -25
  ;;
overhead)
  C=$(mktemp -d)
  grader run tests/submissions/illegal_address.cu --sanitize --cache-dir "$C" > "$OUT/sanitize.txt" 2>&1
  echo "sanitize exit $?" | tee -a "$OUT/sanitize.txt"; grep -iE "sanitizer|invalid|isolation" "$OUT/sanitize.txt" | head -8
  for round in 1 2; do
    for tree in base new; do
      if [ "$tree" = base ]; then T=.thirdparty/base; else T=.; fi
      PYTHONPATH=$T:/tmp/site timeout 240 python3 bench/issue25_overhead.py --backend cuda --repeats 2 \
        --challenges "$T/challenges" 2>&1 | sed "s/^/$tree round $round: /" | tee -a "$OUT/overhead.txt"
    done
  done
  ;;
esac
