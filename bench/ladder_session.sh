#!/usr/bin/env bash
# Issue 4 on the GPU machine: level 7 tuned (TUNE=1), GPU tests (TESTS=1), the ladder measured from
# scratch, and every level submitted as a user file (it must land on its own rung). Logs under $OUT.
set -u
export PYTHONUNBUFFERED=1 COLUMNS=220
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
CACHE=$(mktemp -d)
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install failed"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/gpu.txt"
if [ "${TUNE:-0}" = 1 ]; then  # rewrites level 7's tuned table for this GPU; the file is copied to $OUT
  python3 bench/tune_level7.py --write --json "$OUT/tune_level7.json" 2>&1 | tee "$OUT/tune_level7.log"
  cp challenges/matmul/levels/7_autotuned_wgmma.cu "$OUT/"
fi
if [ "${TESTS:-1}" = 1 ]; then
  python3 -m pytest -m gpu -v -p no:cacheprovider 2>&1 | tee "$OUT/pytest_gpu.log" | grep -E "FAIL|passed|failed|selfcheck"
fi
grader levels matmul --remeasure --cache-dir "$CACHE" > "$OUT/ladder.txt" 2>&1; echo "levels exit=$?"
grader levels matmul --json --cache-dir "$CACHE" > "$OUT/ladder.json"
cat "$OUT/ladder.txt"
for f in challenges/matmul/levels/*.cu; do
  grader submit "$f" --cache-dir "$CACHE" --timing-budget 1 --json --seed 5 > "$CACHE/submit.json" 2>/dev/null
  python3 - "$f" "$CACHE/submit.json" <<'PY' | tee -a "$OUT/placement.log"
import json, sys
d = json.load(open(sys.argv[2])); p = d.get("placement") or {}
print(f"{sys.argv[1]}: {d['verdict']} placed at level {p.get('level')} ratios {p.get('ratios')}")
PY
done
