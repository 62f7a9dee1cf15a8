# Sourced by the bench/issue*_gpu_session.sh scripts on a lent GPU machine (bare, no network): bubblewrap
# from .debs/ (carried) where the machine lacks it, the wheels in .whl/ (carried) for what its Python lacks,
# the project installed from this tree, and what the machine is written to $OUT/env.txt.
export PYTHONUNBUFFERED=1 COLUMNS=200
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
if ! command -v bwrap >/dev/null 2>&1 && ls .debs/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg-deb -x .debs/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  >/dev/null 2>&1 || echo "wheels not installed"
export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install -e . failed"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r; id -u; bwrap --version;
  date -u +"%Y-%m-%d %H:%M UTC"; git log --oneline -1 2>/dev/null; } | tee "$OUT/env.txt"
