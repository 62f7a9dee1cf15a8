#!/usr/bin/env bash
# One call on the GPU machine: install, GPU tests, acceptance figures. Logs under $OUT.
# Usage (device tool): bash bench/gpu_session.sh [pytest-args...]
set -u
export PYTHONUNBUFFERED=1 COLUMNS=160
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || echo "pip install failed: see install.log"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
python3 -m pytest -m gpu -v -p no:cacheprovider "$@" 2>&1 | tee "$OUT/pytest_gpu.log" | tail -40
python3 bench/issue2_acceptance.py "$OUT" 2>&1 | tee "$OUT/acceptance.log" | tail -40
if [ "${TOLERANCE:-1}" = 1 ]; then
  python3 bench/tolerance_margins.py --json "$OUT/tolerance.json" >"$OUT/tolerance.log" 2>&1; echo "tolerance rc=$?"
  tail -45 "$OUT/tolerance.log"
fi
