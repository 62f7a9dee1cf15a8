#!/usr/bin/env bash
# GPU checks of issue 11 (trust boundary), in stages that each fit one device call:
#   STAGE=smoke   the CUDA worker in its new box (private /dev with the GPU's nodes, private /dev/shm,
#                 seccomp filter, non-dumpable grader): grade the naive level, then the hostile corpus
#   STAGE=tests   python3 -m pytest -m gpu, all but the hostile corpus (GPU corpus, ladder, classroom)
#   STAGE=hostile the hostile corpus on the GPU (tests/test_hostile.py -m gpu)
#   STAGE=compile the wall time a boxed compile adds (bench/boxed_compile.py)
#   STAGE=catalogue (issue 12) the vector_add ladder, a submission's report, then the GPU tests
#   STAGE=catalogue2 (issue 12) the matrix_transpose and reduction ladders, their GPU corpus and ladder tests
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
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u +"%Y-%m-%d %H:%M UTC";
  bwrap --version; uname -r; id -u; } | tee "$OUT/env.txt"

case "${STAGE:-smoke}" in
smoke)
  grader run challenges/matmul/levels/1_naive.cu --seed 1 --sandbox required --cache-dir /tmp/c1 2>&1 | tail -25 | tee "$OUT/naive.txt"
  python3 -m pytest -m gpu -q -x -p no:cacheprovider tests/test_hostile.py 2>&1 | tail -40 | tee "$OUT/hostile.txt";;
tests)  # everything marked gpu but the hostile corpus (STAGE=hostile), which alone fills a device call
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests 2>&1 | tail -60 | tee "$OUT/gpu_tests.txt";;
hostile)
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs tests/test_hostile.py 2>&1 | tail -60 | tee "$OUT/gpu_hostile.txt";;
compile)
  python3 bench/boxed_compile.py 2>&1 | tee "$OUT/boxed_compile.txt";;
catalogue)  # issue 12: the vector_add ladder measured, a top-level submission's report, the GPU tests
  grader levels vector_add --remeasure --cache-dir /tmp/cat 2>&1 | tee "$OUT/levels_vector_add.txt"
  grader levels vector_add --json --cache-dir /tmp/cat > "$OUT/levels_vector_add.json" 2>/dev/null
  grader submit challenges/vector_add/levels/4_float4_full_grid.cu --seed 1 --cache-dir /tmp/cat 2>&1 | tail -30 \
    | tee "$OUT/submit_vector_add.txt"
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests 2>&1 | tail -30 \
    | tee "$OUT/gpu_tests.txt";;
catalogue2)
  for slug in ${SLUGS:-matrix_transpose reduction}; do
    grader levels $slug --remeasure --cache-dir /tmp/cat 2>&1 | tee "$OUT/levels_$slug.txt"
    grader levels $slug --json --cache-dir /tmp/cat > "$OUT/levels_$slug.json" 2>/dev/null
  done
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests \
    -k "${TESTS:-transpose or reduction or bandwidth}" 2>&1 | tail -30 | tee "$OUT/gpu_tests.txt";;
esac
