"""The emulator's half, bfloat16 and atomics against a GPU's, bit for bit.

tests/test_emulator_types.py's probe (every cuda_fp16.h and cuda_bf16.h intrinsic, the unary ones on all
65,536 bit patterns, and the atomics under contention) is built twice from the same source: by nvcc for
sm_90 and run on the GPU, and through the emulator. Every result must have the same bits (a NaN too),
except htanh_approx's, which CUDA computes with the tanh.approx hardware approximation and the emulator
rounds from the exact tanh: those may be one unit in the last place apart. The atomics' outcomes
depend on the order, so each run's are checked against what every order gives.

About a minute on an H100 or H200, most of it g++ building the emulated probe.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import test_emulator_types as probe

NVCC = ("nvcc", "-arch=sm_90")


@pytest.mark.nvcc
@pytest.mark.slow
def test_the_probe_compiles_with_nvcc_without_a_warning(tmp_path):
    (tmp_path / "probe.cu").write_text(probe.probe_source())
    proc = subprocess.run([*NVCC, "-c", "probe.cu", "-o", "probe.o"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr.lower(), proc.stderr


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """(inputs, the GPU's outputs, the emulator's outputs) of one run of the probe on each."""
    work = tmp_path_factory.mktemp("types-gpu")
    inputs = probe.probe_inputs()
    probe.write_inputs(work / "input.bin", inputs)
    source = probe.probe_source()
    (work / "probe.cu").write_text(source)
    built = subprocess.run([*NVCC, "-o", "probe", "probe.cu"], cwd=work, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run([str(work / "probe"), "input.bin", "gpu.bin"], cwd=work, capture_output=True, text=True,
                         timeout=300)
    assert ran.returncode == 0, ran.stderr
    emulated = probe.build_emulated(source, work / "emulator")
    probe.run_emulated(emulated, work / "input.bin", work / "emulator.bin")
    return inputs, probe.read_outputs(work / "gpu.bin"), probe.read_outputs(work / "emulator.bin")


def _ordinal(lane: np.ndarray) -> np.ndarray:
    """A 16-bit pattern's place among the format's values (neighbours differ by one; both zeros are 0)."""
    lane = lane.astype(np.int64)
    return np.where(lane & 0x8000, -(lane & 0x7FFF), lane)


def _within_one_unit(gpu: np.ndarray, emulated: np.ndarray) -> np.ndarray:
    """Per element: every 16-bit lane of the two results is the same value or its neighbour."""
    close = np.ones(len(gpu), dtype=bool)
    for shift in (0, 16):
        g, e = (gpu >> shift) & 0xFFFF, (emulated >> shift) & 0xFFFF
        close &= (g == e) | (np.abs(_ordinal(g) - _ordinal(e)) <= 1)
    return close


def _report(op, inputs, gpu, emulated, wrong) -> str:
    I = probe.family_inputs(inputs, op)
    expected = np.asarray(op.expect(I), dtype=np.uint64)
    lines = [f"{op.name}: {len(wrong)} of {len(gpu)} differ (reference: the exact result rounded once)"]
    for k in wrong[:8]:
        shown = {key: (hex(int(v[k])) if v.dtype.kind in "ui" and v.dtype.itemsize == 2 else repr(v[k]))
                 for key, v in I.items()}
        lines.append(f"  [{k}] {shown}: GPU {int(gpu[k]):#x}, emulator {int(emulated[k]):#x}, "
                     f"reference {int(expected[k]):#x}")
    return "\n".join(lines)


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("op", probe.ALL_OPS, ids=[op.name for op in probe.ALL_OPS])
def test_the_emulator_gives_the_gpus_bits(runs, op):
    inputs, gpu, emulated = runs
    g, e = gpu[op.name], emulated[op.name]
    if op.name.split(":", 1)[1] in probe.APPROXIMATE:
        wrong = np.flatnonzero(~_within_one_unit(g, e))
    else:
        wrong = np.flatnonzero(g != e)
    assert not len(wrong), _report(op, inputs, g, e, wrong)


@pytest.mark.gpu
@pytest.mark.nvcc
@pytest.mark.parametrize("atomic", probe.ATOMICS, ids=[a.name for a in probe.ATOMICS])
def test_the_gpus_atomics_give_the_outcome_every_order_gives(runs, atomic):
    _, gpu, _ = runs
    assert not (problem := probe.atomic_problem(atomic, *gpu["atomic:" + atomic.name])), problem
