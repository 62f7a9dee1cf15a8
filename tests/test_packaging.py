"""The package as users install it: a wheel carries the challenges, so an installed grader lists and
grades them from any folder (before, `grader list` was empty outside the repository)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NAIVE, ROOT


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The wheel built from this tree, installed into a folder of its own (dependencies: this
    environment's)."""
    work = tmp_path_factory.mktemp("wheel")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(work / "dist"),
                            str(ROOT)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    wheel = next((work / "dist").glob("cuda_grader-*.whl"))
    site = work / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site),
                                str(wheel)], capture_output=True, text=True, timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return site


def grader(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(site))
    return subprocess.run([sys.executable, "-m", "grader", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=600)


def test_the_installed_package_is_the_wheel_not_this_tree(installed, tmp_path):
    out = subprocess.run([sys.executable, "-c", "import grader; print(grader.__file__)"], capture_output=True,
                         text=True, cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(installed)), timeout=60)
    assert Path(out.stdout.strip()).is_relative_to(installed), out.stdout + out.stderr


def test_an_installed_wheel_lists_its_challenges_from_any_folder(installed, tmp_path):
    listed = grader(installed, tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert "matmul" in [c["slug"] for c in json.loads(listed.stdout)]
    shown = grader(installed, tmp_path, "show", "matmul", "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["slug"] == "matmul", shown.stderr


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_an_installed_wheel_grades_from_any_folder(installed, tmp_path):
    mine = tmp_path / "mine.cu"
    mine.write_text(NAIVE.read_text())
    graded = grader(installed, tmp_path, "run", "mine.cu", "--backend", "emulator", "--seed", "1", "--cache-dir",
                    str(tmp_path / "cache"), "--json")
    assert graded.returncode == 0, graded.stderr[-2000:]
    assert json.loads(graded.stdout)["verdict"] == "ACCEPTED"


@pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")
def test_an_installed_wheel_makes_and_checks_a_new_challenge_in_an_empty_folder(installed, tmp_path):
    made = grader(installed, tmp_path, "new", "demo")
    assert made.returncode == 0, made.stderr
    checked = grader(installed, tmp_path, "check", "demo", "--backend", "emulator", "--cache-dir",
                     str(tmp_path / "cache"), "--json")
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    assert json.loads(checked.stdout)["passed"]
    graded = grader(installed, tmp_path, "run", "challenges/demo/levels/1_naive.cu", "--challenges-dir", "challenges",
                    "--backend", "emulator", "--cache-dir", str(tmp_path / "cache"), "--json")
    assert graded.returncode == 0 and json.loads(graded.stdout)["verdict"] == "ACCEPTED", graded.stderr[-2000:]
