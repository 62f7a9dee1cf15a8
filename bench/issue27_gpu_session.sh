#!/usr/bin/env bash
# Issue 27 on a lent GPU (bench/gpu_setup.sh): official LeetGPU challenges graded from a checkout carried in the
# git-ignored .thirdparty/leetgpu-checkout (never committed). STAGE=starters: every CUDA starter (does each challenge
# load, compile, run and get a verdict?); STAGE=solutions: our own solutions submitted (timed against the PyTorch
# reference); STAGE=third: third-party solutions of the same problems (.thirdparty/corpus, by our challenges'
# `leetgpu:` names); STAGE=libraries: those of them that include CUB or Thrust, under --libraries block and cccl;
# STAGE=tests: the GPU tests of issue 27. Each stage writes one summary JSON and a log under $OUT.
set -uo pipefail
source bench/gpu_setup.sh
CHECKOUT=.thirdparty/leetgpu-checkout
python3 -c "import torch; print('torch', torch.__version__, torch.cuda.is_available())" | tee -a "$OUT/env.txt"
case "${STAGE:-starters}" in
  starters)
    python3 bench/leetgpu_sweep.py $CHECKOUT "$OUT/starters.json" --starters --jobs "${JOBS:-6}" --timeout 300 \
      ${ONLY:+--only $ONLY} > "$OUT/starters.log" 2>&1 ;;
  solutions)
    mkdir -p /tmp/ours
    # our challenges' top levels, by their official names, beside our own solutions/leetgpu/
    python3 - <<'PY'
import shutil, yaml
from pathlib import Path
for root in sorted(Path("challenges").iterdir()):
    data = yaml.safe_load((root / "challenge.yaml").read_text()) if (root / "challenge.yaml").is_file() else None
    if data and data.get("leetgpu") and data.get("levels"):
        top = sorted(data["levels"], key=lambda level: level["level"])[-1]
        shutil.copy(root / top["file"], Path("/tmp/ours") / f"{data['leetgpu']}.cu")
PY
    cp solutions/leetgpu/*.cu /tmp/ours/ 2>/dev/null
    ls /tmp/ours > "$OUT/solutions-files.txt"
    python3 bench/leetgpu_sweep.py $CHECKOUT "$OUT/solutions.json" --solutions /tmp/ours --mode submit --jobs 1 \
      --timeout 240 ${ONLY:+--only $ONLY} > "$OUT/solutions.log" 2>&1 ;;
  libraries)
    # the third-party files that include CUB or Thrust, graded under the policy that allows what they use
    mkdir -p /tmp/third-cccl
    python3 - <<'PY'
import re, shutil, yaml
from pathlib import Path
include = re.compile(r'^\s*#\s*include\s*[<"](cub|thrust)/', re.M)
for root in sorted(Path("challenges").iterdir()):
    data = yaml.safe_load((root / "challenge.yaml").read_text()) if (root / "challenge.yaml").is_file() else None
    corpus = Path(".thirdparty/corpus") / root.name
    for f in sorted(corpus.glob("*.cu")) if data and data.get("leetgpu") and corpus.is_dir() else ():
        if include.search(f.read_text(errors="replace")):
            (Path("/tmp/third-cccl") / data["leetgpu"]).mkdir(exist_ok=True)
            shutil.copy(f, Path("/tmp/third-cccl") / data["leetgpu"])
PY
    for policy in block cccl; do
      python3 bench/leetgpu_sweep.py $CHECKOUT "$OUT/third-$policy.json" --solutions /tmp/third-cccl --mode run \
        --jobs 4 --timeout 240 --extra "--libraries $policy" > "$OUT/third-$policy.log" 2>&1
    done ;;
  tests)
    timeout "${TESTS_S:-280}" python3 -m pytest -q -m gpu tests/test_leetgpu_grading.py tests/test_libraries.py \
      > "$OUT/tests.log" 2>&1; echo "pytest rc=$?" >> "$OUT/tests.log" ;;
  third)
    mkdir -p /tmp/third
    python3 - <<'PY'
import shutil, yaml
from pathlib import Path
for root in sorted(Path("challenges").iterdir()):
    data = yaml.safe_load((root / "challenge.yaml").read_text()) if (root / "challenge.yaml").is_file() else None
    corpus = Path(".thirdparty/corpus") / root.name
    if data and data.get("leetgpu") and corpus.is_dir():
        shutil.copytree(corpus, Path("/tmp/third") / data["leetgpu"])
PY
    python3 bench/leetgpu_sweep.py $CHECKOUT "$OUT/third.json" --solutions /tmp/third --mode run --jobs "${JOBS:-4}" \
      --timeout 240 ${ONLY:+--only $ONLY} > "$OUT/third.log" 2>&1 ;;
esac
for log in "$OUT"/*.log; do tail -n 25 "$log"; done
