#!/usr/bin/env bash
# GPU checks for issue 21 (the challenge kit and six new challenges). In stages that each fit one call:
#   STAGE=check    `grader check SLUG --backend cuda --json` for every challenge (SLUGS to choose; levels timed,
#                  the ladder cached), then `grader levels SLUG --json` (the cached ladder: GFLOP/s, GB/s, baseline)
#   STAGE=tests    the GPU tests of the new types (emulator against GPU, bit for bit) and the GPU corpus of the
#                  new challenges (every level and wrong file's GPU verdict)
#   STAGE=third    the third-party corpus (.thirdparty/corpus, carried) graded on the GPU
# The machine is set up by bench/gpu_setup.sh (carry .debs and .whl).
set -u
source bench/gpu_setup.sh
NEW="convolution_1d convolution_2d prefix_sum histogramming gemm_fp16 softmax_attention"
case "${STAGE:-check}" in
check)
  # DEADLINE: seconds from now after which no further challenge is started (one call's limit is 600 s)
  stop=$(( $(date +%s) + ${DEADLINE:-480} ))
  for slug in ${SLUGS:-$NEW vector_add matrix_transpose reduction softmax matmul}; do
    [ "$(date +%s)" -lt "$stop" ] || { echo "$slug: not started (deadline)"; continue; }
    start=$(date +%s)
    timeout 400 python3 -m grader check "$slug" --backend cuda --json > "$OUT/check-$slug.json" 2> "$OUT/check-$slug.err"
    echo "$slug: rc=$? $(( $(date +%s) - start )) s"
    python3 -m grader levels "$slug" --json > "$OUT/levels-$slug.json" 2>/dev/null
  done
  # One file back (the device returns few files): every challenge's check and ladder, and the errors' tails
  python3 - "$OUT" <<'PY'
import json, pathlib, sys
out = pathlib.Path(sys.argv[1]); summary = {}
for check in sorted(out.glob("check-*.json")):
    slug = check.stem.removeprefix("check-")
    entry = summary[slug] = {}
    for kind in ("check", "levels"):
        path = out / f"{kind}-{slug}.json"
        try:
            entry[kind] = json.loads(path.read_text())
        except (OSError, ValueError):
            entry[kind] = None
        path.unlink(missing_ok=True)
    err = out / f"check-{slug}.err"
    entry["stderr_tail"] = err.read_text()[-3000:] if err.exists() else ""
    err.unlink(missing_ok=True)
(out / f"summary-{'-'.join(sorted(summary))[:80]}.json").write_text(json.dumps(summary, indent=1))
PY
  ;;
tests)
  timeout 300 python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_gpu_types.py tests/test_kit_types.py 2>&1 \
    | tee "$OUT/gpu_tests.txt" | grep -E "passed|failed|FAIL|Error" | tail -30
  ;;
third)
  timeout 560 python3 bench/thirdparty_verdicts.py .thirdparty/corpus --backend cuda --out "$OUT/thirdparty-cuda.json" \
    --grader-arg=--timing-budget=0.2 2>&1 | tail -40
  ;;
esac
