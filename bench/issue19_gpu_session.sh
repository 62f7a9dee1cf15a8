#!/usr/bin/env bash
# GPU checks of issue 19 (verdict trust) on the lent GPU machine, in stages that each fit one call:
#   STAGE=smoke       the timing path end to end: submit the naive matmul, the two host-work files, the
#                     side-stream file and the worker-rewriting forger; the calibration's figures
#   STAGE=clocks      every reduction, vector_add and softmax level submitted: the three clocks of each case
#   STAGE=final       two third-party files again, then the changed GPU tests
#   STAGE=tests       the GPU tests (hostile corpus aside)
#   STAGE=agreement   after the emulator checks the timed shapes and the GPU build warns of warp-synchronous
#                     code: the GPU grading tests, then the third-party softmax and reduction files
#   STAGE=thirdparty  the third-party corpus (.thirdparty/corpus, carried; never committed) through
#                     bench/thirdparty_verdicts.py on the GPU, written to $OUT/cuda.json
# The machine is set up by bench/gpu_setup.sh (carry .debs and .whl).
set -u
source bench/gpu_setup.sh
C=$(mktemp -d)

submit() {  # FILE CHALLENGE: one submit, its verdict, message and each case's clocks
  timeout 200 grader submit "$1" --challenge "$2" --cache-dir "$C" --no-placement --json > "$OUT/one.json" 2>"$OUT/one.err"
  python3 - "$1" <<'PY' | tee -a "$OUT/smoke.txt"
import json, os, sys
out = os.environ["OUT"]
try:
    d = json.load(open(f"{out}/one.json"))
except Exception as e:
    print(sys.argv[1], "no JSON:", e, open(f"{out}/one.err").read()[-800:]); sys.exit()
print(sys.argv[1], d["verdict"], d["message"][:300])
for p in d["performance"]:
    t = p.get("timing") or {}
    print(f"   {p['label']:<28} median {p['stats']['median_ms'] if p['stats'] else None} by {t.get('timed_by')} "
          f"events {t.get('events_ms')} end-to-end {t.get('end_to_end_ms')} grader {t.get('grader_ms')} reps "
          f"{len(p['stats']['samples_ms']) if p['stats'] else 0}")
PY
}

case "${STAGE:-smoke}" in
smoke)
  export OUT
  submit challenges/matmul/levels/1_naive.cu matmul
  submit tests/submissions/softmax/allocates_in_every_call.cu softmax
  submit tests/submissions/reduction/sums_partials_on_the_host.cu reduction
  submit tests/hostile/side_stream_left_running.cu matmul
  submit tests/hostile/forges_timing_in_the_worker.cu matmul
  sed 's/FORGED_SHARE = 0.3;/FORGED_SHARE = 0.8;/' tests/hostile/forges_timing_in_the_worker.cu > /tmp/forger08.cu
  submit /tmp/forger08.cu matmul
  for f in challenges/reduction/levels/*.cu; do submit "$f" reduction; done
  for f in challenges/vector_add/levels/*.cu; do submit "$f" vector_add; done
  python3 - <<'PY' | tee -a "$OUT/smoke.txt"
from pathlib import Path
from grader import run
from grader.backends.cuda import CudaBackend
b = CudaBackend()
for i in range(4):
    w = run.python_worker(Path("/nonexistent.so"), "solve", None, flush_bytes=b.flush_bytes)
    with w:
        r = w.start(60)
        print("calibration", i, w.calibration, r.outcome)
PY
  ;;
clocks)
  export OUT
  for f in challenges/reduction/levels/*.cu; do submit "$f" reduction; done
  for f in challenges/vector_add/levels/*.cu; do submit "$f" vector_add; done
  for f in challenges/softmax/levels/*.cu; do submit "$f" softmax; done
  timeout 300 python3 -m pytest -q -p no:cacheprovider tests/test_gpu_grading.py -k "side_stream or forg or submit_times" 2>&1 \
    | tail -15 | tee -a "$OUT/smoke.txt"
  ;;
final)
  timeout 120 python3 bench/thirdparty_verdicts.py .thirdparty/corpus --backend cuda --only euan-turner --only code-harsh \
    --grader-arg=--timing-budget --grader-arg=0.3 --out "$OUT/cuda-rerun.json" 2>&1 | grep -E "^\[" | tee "$OUT/final.txt"
  timeout 330 python3 -m pytest -m gpu -v -p no:cacheprovider -rs tests/test_gpu_grading.py tests/test_no_runtime_compile.py \
    -k "not corpus or allocates or sums_partials or forges_timing or side_stream or host_reads or unguarded_single or dynamic_shared or own_float or clang_formatted" \
    2>&1 | grep -E "PASSED|FAILED|ERROR|passed|failed|SKIPPED" | tee -a "$OUT/final.txt" | tail -40
  ;;
tests)
  timeout 560 python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py \
    --ignore tests/test_engine.py tests 2>&1 | tee "$OUT/gpu_tests.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  ;;
agreement)
  timeout 400 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_grading.py 2>&1 \
    | tee "$OUT/gpu_grading.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  timeout 170 python3 bench/thirdparty_verdicts.py .thirdparty/corpus --backend cuda --jobs 2 --timeout 120 \
    --only softmax/ --only reduction/ --grader-arg=--timing-budget --grader-arg=0.3 --out "$OUT/cuda-sums.json" 2>&1 \
    | grep -E "^\[" | tee "$OUT/agreement.txt"
  ;;
thirdparty)
  timeout 570 python3 bench/thirdparty_verdicts.py .thirdparty/corpus --backend cuda --jobs 4 --timeout 200 \
    --grader-arg=--timing-budget --grader-arg=0.3 --out "$OUT/cuda.json" 2>&1 | tail -40 | tee "$OUT/thirdparty.txt"
  ;;
esac
