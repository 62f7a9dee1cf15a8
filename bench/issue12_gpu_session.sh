#!/usr/bin/env bash
# GPU checks of issue 12 (catalogue), in stages that each fit one device call:
#   STAGE=probe    bench/probe/memory_bound_session.sh: the L2 flush modes, copy bandwidth, the
#                  reduction and transpose candidates and levels (plain nvcc + dlopen, no grader)
#   STAGE=levels   `grader levels SLUG --remeasure` for SLUGS (default: the memory-bound challenges)
#   STAGE=tests    python3 -m pytest -m gpu (not the hostile corpus), narrowed by TESTS (a -k expression)
# bubblewrap comes from .debs/ (carried) where the machine lacks it; wheels in .whl/ fill in
# Python packages the machine lacks. Logs under $OUT.
set -u
export PYTHONUNBUFFERED=1 COLUMNS=200
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
if ! command -v bwrap >/dev/null 2>&1 && ls .debs/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg-deb -x .debs/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
if ! python3 -c "import click, rich" 2>/dev/null && ls .whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install -e . failed"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +"%Y-%m-%d %H:%M UTC"; } | tee "$OUT/env.txt"

case "${STAGE:-probe}" in
probe)
  OUT=$OUT bash bench/probe/memory_bound_session.sh > "$OUT/probe.log" 2>&1; tail -3 "$OUT/probe.log";;
levels)
  for slug in ${SLUGS:-vector_add matrix_transpose reduction}; do
    grader levels $slug --remeasure --cache-dir /tmp/cat 2>&1 | tee "$OUT/levels_$slug.txt"
    grader levels $slug --json --cache-dir /tmp/cat > "$OUT/levels_$slug.json" 2>/dev/null
  done;;
tests)
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests \
    -k "${TESTS:-not nothing}" 2>&1 | tail -40 | tee "$OUT/gpu_tests.txt";;
esac
