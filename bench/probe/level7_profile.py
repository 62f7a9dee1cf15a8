"""Runs one level 7 family member a few times at one shape, for ncu. Usage: SOURCE MEMBER M N K"""
import sys
from pathlib import Path
import tempfile
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import cupy as cp
import tune_level7 as t

source, member, (M, N, K) = Path(sys.argv[1]), int(sys.argv[2]), map(int, sys.argv[3:6])
with tempfile.TemporaryDirectory() as scratch:
    lib = t.load(t.build_member(source, t.Member(member, ""), Path(scratch), 9, 0))
    A, B = cp.random.uniform(-1, 1, (M, N), dtype=cp.float32), cp.random.uniform(-1, 1, (N, K), dtype=cp.float32)
    C = cp.empty((M, K), dtype=cp.float32)
    for _ in range(3):
        t.call(lib, A, B, C)
