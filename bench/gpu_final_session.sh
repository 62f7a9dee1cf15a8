#!/usr/bin/env bash
# GPU verification of issues 3-5: GPU tests (corpus, hostile corpus in the sandbox, the ladder),
# --sanitize on three files, and CuPy's first-run cost. bubblewrap travels as Debian packages in
# .debs (carried; the GPU machine has no package manager access). Logs under $OUT.
set -u
export PYTHONUNBUFFERED=1 COLUMNS=200
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
if ls .debs/*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/bw && for f in .debs/*.deb; do dpkg -x "$f" /tmp/bw; done
  export PATH=/tmp/bw/usr/bin:$PATH LD_LIBRARY_PATH=/tmp/bw/usr/lib/x86_64-linux-gnu:/tmp/bw/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
fi
{ bwrap --version; bwrap --unshare-user --unshare-net --ro-bind / / --dev-bind /dev /dev --proc /proc --tmpfs /tmp true && echo "bwrap works"; } 2>&1 | tee "$OUT/env.log"
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install failed"
rm -rf ~/.cupy/kernel_cache; C1=$(mktemp -d)
for i in 1 2; do /usr/bin/time -f "grader run, CuPy cache pass $i: %e s" grader run challenges/matmul/levels/1_naive.cu --cache-dir "$C1" >/dev/null 2>>"$OUT/env.log"; done
tail -2 "$OUT/env.log"
python3 -m pytest -m gpu -v -p no:cacheprovider tests/test_hostile.py tests/test_gpu_grading.py tests/test_gpu_ladder.py 2>&1 | tee "$OUT/pytest_gpu.log" | grep -E "FAIL|passed|failed|skipped|Error" | tail -30
for f in challenges/matmul/wrong/missing_sync.cu tests/submissions/illegal_address.cu challenges/matmul/levels/2_shared_tiling.cu; do
  echo "== $f" >> "$OUT/sanitize.txt"
  timeout 300 grader run "$f" --sanitize --cache-dir "$C1" >> "$OUT/sanitize.txt" 2>&1; echo "exit $?" >> "$OUT/sanitize.txt"
done
grep -A8 -E "^== |compute-sanitizer|exit [0-9]" "$OUT/sanitize.txt" | grep -vE "│ (functional|randomized)" | head -60
