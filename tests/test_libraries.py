"""The library policy (grader.libraries): none hides CCCL's headers, block refuses a library holding CUB's or
Thrust's own kernels, cccl allows all; every report states the policy; the emulator runs none of CCCL."""

from __future__ import annotations

import shutil

import pytest

from grader import pipeline, spec
from grader.libraries import LibraryPolicy, includes_library
from grader.results import Mode
from grader.verdict import Verdict

from conftest import CHALLENGES, ROOT, read

FILES = ROOT / "tests" / "submissions" / "libraries"


def test_what_each_policy_hides_and_says():
    assert LibraryPolicy.NONE.hidden == ("cub", "thrust")
    assert LibraryPolicy.BLOCK.hidden == LibraryPolicy.CCCL.hidden == ()  # CUB's headers include Thrust's
    assert all(policy.describe.startswith(policy.value + ":") for policy in LibraryPolicy)


def test_which_include_names_a_library():
    assert includes_library('#include <cub/cub.cuh>\n') == "cub"
    assert includes_library('  #  include "thrust/sort.h"\n') == "thrust"
    assert includes_library('#include <cuda_runtime.h>\n// cub/cub.cuh in a comment\n') is None


@pytest.mark.nvcc
@pytest.mark.slow
@pytest.mark.parametrize("policy, name, verdict, words", [
    (LibraryPolicy.NONE, "block_reduce", Verdict.COMPILE_ERROR, "the library policy does not allow"),
    (LibraryPolicy.BLOCK, "device_reduce", Verdict.COMPILE_ERROR, "DeviceReduceSingleTileKernel"),
    (LibraryPolicy.BLOCK, "block_reduce", Verdict.UNSUPPORTED, "emulator runs none of CCCL"),
    (LibraryPolicy.CCCL, "device_reduce", Verdict.UNSUPPORTED, "emulator runs none of CCCL"),
])
def test_each_policy_in_emulation(policy, name, verdict, words, tmp_path):
    if shutil.which("g++") is None:
        pytest.skip("the emulator needs g++")
    from grader.backends.emulator import EmulatorBackend

    path = FILES / f"{name}.cu"
    report = pipeline.grade(read(path, path.name), spec.load(CHALLENGES, "reduction"), EmulatorBackend(),
                            pipeline.Options(Mode.RUN, 1, tmp_path, libraries=policy))
    assert report.verdict is verdict and words in report.message, report.message
    assert report.libraries == policy.value


@pytest.mark.gpu
@pytest.mark.parametrize("policy, name, verdict", [
    (LibraryPolicy.BLOCK, "block_reduce", Verdict.ACCEPTED), (LibraryPolicy.CCCL, "device_reduce", Verdict.ACCEPTED),
    (LibraryPolicy.BLOCK, "device_reduce", Verdict.COMPILE_ERROR), (LibraryPolicy.NONE, "block_reduce", Verdict.COMPILE_ERROR),
])
def test_each_policy_on_a_gpu(policy, name, verdict, cuda_backend, tmp_path):
    path = FILES / f"{name}.cu"
    report = pipeline.grade(read(path, path.name), spec.load(CHALLENGES, "reduction"), cuda_backend,
                            pipeline.Options(Mode.RUN, 1, tmp_path, libraries=policy))
    assert report.verdict is verdict, report.message
