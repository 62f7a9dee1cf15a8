#!/usr/bin/env bash
# GPU checks of issue 13 (class server) on the nvidia-h200-x2 kind, in stages that each fit one call:
#   STAGE=raypart  keep .raypart/ (one half of Ray's wheel: the wheel is larger than one call may carry)
#                  in /tmp/raycache, which later calls on the same warm machine still have (an ignored folder of
#                  the repository copy did not survive to the next call)
#   STAGE=scaling  bench/issue13_scaling.py: 40 submissions through the local engine on 1 and 2 GPUs and
#                  Ray on 2 GPUs (CONFIGS to choose), after the GPU tests named by TESTS (none by default)
# Wheels: .whl2/ (starlette, uvicorn, python-multipart, Ray's jsonschema) and Ray from /tmp/raycache + .raypart/ (split -b 40m).
set -u
export PYTHONUNBUFFERED=1 COLUMNS=200
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
case "${STAGE:-scaling}" in
raypart)
  mkdir -p /tmp/raycache && cp .raypart/* /tmp/raycache/ && ls -la /tmp/raycache; exit 0;;
esac
if ! command -v bwrap >/dev/null 2>&1 && ls .debs/bubblewrap_*.deb >/dev/null 2>&1; then
  dpkg-deb -x .debs/bubblewrap_*.deb /tmp/bw && export PATH=/tmp/bw/usr/bin:$PATH
fi
RAY=/tmp/ray-2.60.0-cp312-cp312-manylinux2014_x86_64.whl
cat /tmp/raycache/ray.part.* .raypart/ray.part.* 2>/dev/null > $RAY; ls -la /tmp/raycache .raypart $RAY
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site \
  .whl2/*.whl 2>&1 | tail -2
# pip --target failed on Ray's wheel there (Errno 22); a wheel is a zip whose root is what site-packages gets
python3 - $RAY <<'PY' || echo "ray wheel unreadable"
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:  # extractall drops the executable bits raylet needs
    for info in wheel.infolist():
        path = wheel.extract(info, "/tmp/site")
        mode = info.external_attr >> 16
        if mode & 0o111:
            os.chmod(path, mode & 0o777)
PY
export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
python3 -m pip install -q --no-deps --no-build-isolation -e . >/dev/null 2>&1 || echo "pip install -e . failed"
python3 -c "import ray, starlette, uvicorn; print('ray', ray.__version__, 'starlette', starlette.__version__)"
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; nproc; date -u +"%Y-%m-%d %H:%M UTC"; } | tee "$OUT/env.txt"
if [ -n "${TESTS:-}" ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider -rs --ignore tests/test_hostile.py tests -k "$TESTS" 2>&1 \
    | tail -30 | tee "$OUT/gpu_tests.txt"
fi
W=/tmp/scaling; mkdir -p $W
BASE=bench/results/2026-11-23-h200x2-issue13/local-1.json  # the 1-GPU run, when CONFIGS leaves it out
[ -f $W/local-1.json ] || [ ! -f $BASE ] || case " ${CONFIGS:-local:1} " in *" local:1 "*) ;; *) cp $BASE $W/;; esac
python3 bench/issue13_scaling.py $W ${CONFIGS:-local:1 local:2 ray:2} 2>&1 | tee "$OUT/scaling.txt"
cp $W/*.json "$OUT/" 2>/dev/null
for d in $W/*-*/; do tail -25 $d/grade.log > "$OUT/$(basename $d).log"; done
