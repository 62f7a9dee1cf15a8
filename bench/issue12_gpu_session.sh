#!/usr/bin/env bash
# GPU checks of issue 12 (catalogue), in stages that each fit one device call:
#   STAGE=probe    bench/probe/memory_bound_session.sh: the L2 flush modes, copy bandwidth, the
#                  reduction and transpose candidates and levels (plain nvcc + dlopen, no grader)
#   STAGE=softmaxprobe  softmax's levels and level-4 variants (bench/probe/candidates/softmax_variants.cu)
#                  timed by the probe at N = 500,000, 2^23 and 2^25
#   STAGE=levels   `grader levels SLUG --remeasure` for SLUGS (default: the memory-bound challenges)
#   STAGE=thirdparty  `grader run` on the GPU for every .cu under $THIRDPARTY/<slug>/ (real LeetGPU
#                  solutions kept outside the repository; their licences are unknown)
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
softmaxprobe)
  B=$(mktemp -d); nvcc -O3 -arch=sm_90 -o $B/probe bench/probe/memory_bound_probe.cu -ldl || exit 1
  LIBS=""
  for f in challenges/softmax/levels/*.cu; do n=$(basename $f .cu); nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -o $B/$n.so $f && LIBS="$LIBS $B/$n.so"; done
  V=bench/probe/candidates/softmax_variants.cu
  for v in "expf 1 1 8" "__expf 1 1 8" "expf 2 1 8" "expf 4 1 8" "__expf 4 1 8" "expf 1 0 8" "__expf 4 0 8" "__expf 2 1 4" "__expf 4 1 4"; do
    set -- $v; n="v_${1}_f$2_h$3_b$4"
    nvcc -O3 -arch=sm_90 -shared -Xcompiler -fPIC -DEXP=$1 -DIN_FLIGHT=$2 -DHINTS=$3 -DBLOCKS_PER_SM_V=$4 -o $B/$n.so $V && LIBS="$LIBS $B/$n.so"
  done
  for n in 500000 8388608 33554432; do $B/probe softmax $n $LIBS | sed "s#$B/##" | tee -a "$OUT/softmax_probe.txt"; done;;
thirdparty)
  for f in $(find "${THIRDPARTY:-.thirdparty}" -name '*.cu' | sort); do
    slug=$(basename "$(dirname "$f")"); [ -d "challenges/$slug" ] || slug=$(basename "$(dirname "$(dirname "$f")")")
    verdict=$(grader run "$f" --challenge "$slug" --json --cache-dir /tmp/tp 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["verdict"], "|", d["message"][:160].replace(chr(10), " "))' 2>&1)
    echo "$f | $verdict" | tee -a "$OUT/thirdparty.txt"
  done;;
levels)
  for slug in ${SLUGS:-vector_add matrix_transpose reduction}; do
    grader levels $slug --remeasure --cache-dir /tmp/cat 2>&1 | tee "$OUT/levels_$slug.txt"
    grader levels $slug --json --cache-dir /tmp/cat > "$OUT/levels_$slug.json" 2>/dev/null
  done;;
tests)
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests \
    -k "${TESTS:-not nothing}" 2>&1 | tail -40 | tee "$OUT/gpu_tests.txt";;
esac
