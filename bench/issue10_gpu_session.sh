#!/usr/bin/env bash
# GPU checks of issue 10 (verdict fidelity, first-run cost), in stages that each fit one device call:
#   STAGE=firstrun  first-run and warm-run cost of `grader run` and `grader submit` on a fresh CuPy
#                   kernel cache, this tree and (when .oldtree/ holds the previous release) the old one
#   STAGE=oldfirstrun  the same for the previous release unpacked in .oldtree/
#   STAGE=race      which functional shape shows a missing-barrier race on the GPU (many small blocks)
#   STAGE=tests     python3 -m pytest -m gpu (GPU corpus, hostile corpus, ladder, classroom)
# Logs and JSON under $OUT. Wheels in .whl/ (carried) fill in Python packages the machine lacks.
set -u
export PYTHONUNBUFFERED=1 COLUMNS=200
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
if ! python3 -c "import click, rich" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install -e . failed"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$OUT/env.txt"
date -u +"%Y-%m-%d %H:%M UTC" >> "$OUT/env.txt"

timed() {  # timed LABEL LOG COMMAND...: wall seconds of one command, appended to LOG
  local label=$1 log=$2; shift 2
  local start end
  start=$(date +%s%N); "$@" > "$OUT/$label.out" 2>&1; local rc=$?; end=$(date +%s%N)
  local ms=$(( (end - start) / 1000000 ))
  printf "%-34s exit %3d  %4d.%01d s\n" "$label" "$rc" $((ms / 1000)) $((ms % 1000 / 100)) | tee -a "$log"
}

case "${STAGE:-firstrun}" in
firstrun)
  python3 bench/first_run.py --json "$OUT/first_run.json" > "$OUT/first_run.txt" 2>&1; tail -12 "$OUT/first_run.txt"
  # The first submit with placement: the ladder is measured (and cached) on the way.
  export CUPY_CACHE_DIR=$(mktemp -d); C=$(mktemp -d)
  timed new_run_cold "$OUT/times.txt" grader run challenges/matmul/levels/1_naive.cu --seed 1 --cache-dir "$C"
  timed new_submit_ladder_cold "$OUT/times.txt" grader submit challenges/matmul/levels/4_register_tiles.cu --seed 1 --cache-dir "$C"
  timed new_submit_ladder_warm "$OUT/times.txt" grader submit challenges/matmul/levels/4_register_tiles.cu --seed 1 --cache-dir "$C"
  echo "kernel cache files after the new tree: $(find "$CUPY_CACHE_DIR" -type f | wc -l)" | tee -a "$OUT/times.txt"
  grep -E "level|ladder" "$OUT/new_submit_ladder_cold.out" | head -12
  cat "$OUT/times.txt";;
oldfirstrun)  # the same on the previous release, unpacked in .oldtree/ (carried)
  export CUPY_CACHE_DIR=$(mktemp -d); C=$(mktemp -d)
  cd .oldtree
  timed old_run_cold "$OUT/times.txt" python3 -m grader run challenges/matmul/levels/1_naive.cu --seed 1 --cache-dir "$C"
  timed old_run_warm "$OUT/times.txt" python3 -m grader run challenges/matmul/levels/1_naive.cu --seed 1 --cache-dir "$C"
  timed old_submit_ladder_cold "$OUT/times.txt" python3 -m grader submit challenges/matmul/levels/4_register_tiles.cu --seed 1 --cache-dir "$C"
  timed old_submit_ladder_warm "$OUT/times.txt" python3 -m grader submit challenges/matmul/levels/4_register_tiles.cu --seed 1 --cache-dir "$C"
  echo "kernel cache files after the old tree: $(find "$CUPY_CACHE_DIR" -type f | wc -l)" | tee -a "$OUT/times.txt"
  cd ..;;
race)
  python3 bench/probe/many_blocks_race.py --calls "${CALLS:-30}" --json "$OUT/many_blocks_race.json" 2>&1 | tee "$OUT/race.txt";;
tests)
  python3 -m pytest -m gpu -p no:cacheprovider -q ${TESTS:-tests} 2>&1 | tee "$OUT/pytest_gpu.log" | tail -25;;
esac
