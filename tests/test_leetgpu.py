"""An official LeetGPU checkout read at run time (issue 27, first part): listed beside the grader's own
challenges by folder name, shown as text, its starter written by `grader init`, all without importing a
challenge (no PyTorch needed). The checkout here is made up by the test in LeetGPU's layout: nothing of the
official repository is copied into this project."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader import cli, leetgpu, spec
from grader.errors import UsageError
from grader.exitcodes import ExitCode

CHALLENGE = '''
import ctypes
import torch  # never imported by the grader's listing
from core.challenge_base import ChallengeBase


class Challenge(ChallengeBase):
    name = "{title}"
    atol = 1e-04
    rtol = 2e-05
    num_gpus = 1

    def reference_impl(self, x, y, n):
        y.copy_(x * 2)

    def get_solve_signature(self):
        return {{
            "x": (ctypes.POINTER(ctypes.c_float), "in"),
            "y": (ctypes.POINTER(ctypes.c_float), "out"),
            "n": (ctypes.c_int, "in"),
        }}
'''
STATEMENT = """<p>Double every element of <code>x</code> &amp; store it in <code>y</code>.</p>
<script>alert(1)</script>
<h2>Example</h2>
<pre>
Input:  x = [1, 2]
        n = 2
Output: y = [2, 4]
</pre>
<ul>
  <li>1 &le; <code>n</code></li>
  <li>no libraries</li>
</ul>
"""
STARTER = '#include <cuda_runtime.h>\n\nextern "C" void solve(const float* x, float* y, int n) {}\n'


def _challenge(root: Path, difficulty: str, folder: str, title: str, text: str | None = None) -> None:
    where = root / "challenges" / difficulty / folder
    (where / "starter").mkdir(parents=True)
    (where / "challenge.py").write_text(text if text is not None else CHALLENGE.format(title=title))
    (where / "challenge.html").write_text(STATEMENT)
    (where / "starter" / "starter.cu").write_text(STARTER)


@pytest.fixture
def checkout(tmp_path) -> Path:
    root = tmp_path / "leetgpu-challenges"
    _challenge(root, "easy", "3_double_it", "Double It")
    _challenge(root, "medium", "12_double_again", "Double Again")
    _challenge(root, "hard", "40_broken", "", text="class Challenge(:\n")
    (root / "challenges" / "easy" / "not_a_challenge").mkdir()
    return root


def test_the_catalogue_is_read_without_importing_anything(checkout):
    found = leetgpu.catalogue(checkout)
    assert [o.slug for o in found] == ["3_double_it", "12_double_again", "40_broken"]
    first = found[0]
    assert (first.title, first.difficulty, first.atol, first.rtol, first.num_gpus) == ("Double It", "easy", 1e-4, 2e-5, 1)
    assert [(p.name, p.role) for p in first.params] == [("x", "input"), ("y", "output"), ("n", "input")]
    assert first.prototype() == "void solve(const float* x, float* y, int n)"
    assert "cannot be read" in found[2].problem and found[2].title is None


def test_one_challenge_is_found_as_the_catalogue_has_it(checkout):
    for official in leetgpu.catalogue(checkout):
        assert leetgpu.find(checkout, official.slug) == official
    for slug in ("not_a_challenge", "99_absent", "../easy/3_double_it", "3_double_it/..", ""):
        assert leetgpu.find(checkout, slug) is None, slug


def test_a_folder_that_is_no_checkout_is_refused_with_what_to_do(tmp_path):
    with pytest.raises(UsageError) as error:
        leetgpu.catalogue(tmp_path)
    assert "not a checkout" in error.value.message and "git clone" in error.value.hint


def test_the_challenges_folder_itself_is_accepted(checkout):
    assert [o.slug for o in leetgpu.catalogue(checkout / "challenges")][:1] == ["3_double_it"]


def test_a_hundred_challenges_list_well_under_a_second(tmp_path):
    root = tmp_path / "big"
    for number in range(100):
        _challenge(root, "medium", f"{number}_problem_{number}", f"Problem {number}")
    started = time.perf_counter()
    assert len(leetgpu.catalogue(root)) == 100
    assert time.perf_counter() - started < 0.5


def test_the_statement_renders_as_text(checkout):
    text = leetgpu.statement_text(leetgpu.find(checkout, "3_double_it"))
    assert "Double every element of `x` & store it in `y`." in text
    assert "alert" not in text
    assert "Input:  x = [1, 2]\n        n = 2\nOutput: y = [2, 4]" in text  # <pre> kept as it is
    assert "- 1 ≤ `n`\n- no libraries" in text


def _run(*args, env=None):
    return CliRunner().invoke(cli.cli, list(args), env=env or {}, catch_exceptions=False)


def test_list_show_and_init_through_the_cli(checkout, tmp_path):
    listed = _run("list", "--json", "--leetgpu", str(checkout))
    entries = json.loads(listed.stdout)
    assert {"matmul", "3_double_it", "12_double_again"} <= {e["slug"] for e in entries}
    official = next(e for e in entries if e["slug"] == "12_double_again")
    assert (official["source"], official["difficulty"], official["signature"]) == \
        ("leetgpu", "medium", "void solve(const float* x, float* y, int n)")
    by_env = _run("list", "--json", env={"LEETGPU_CHALLENGES": str(checkout)})
    assert "3_double_it" in {e["slug"] for e in json.loads(by_env.stdout)}
    shown = _run("show", "3_double_it", "--leetgpu", str(checkout))
    assert shown.exit_code == 0 and "Double It (LeetGPU, easy)" in shown.stdout and "atol 0.0001" in shown.stdout
    dest = tmp_path / "mine.cu"
    made = _run("init", "12_double_again", str(dest), "--leetgpu", str(checkout))
    assert made.exit_code == 0 and dest.read_text() == STARTER


def test_an_unknown_slug_and_a_bad_checkout_exit_2(checkout, tmp_path):
    assert _run("show", "99_nothing", "--leetgpu", str(checkout)).exit_code == ExitCode.USAGE
    refused = _run("list", "--leetgpu", str(tmp_path / "nowhere"))
    assert refused.exit_code == ExitCode.USAGE and "not a checkout" in refused.output


def _signature_challenge(root: Path, folder: str, entries: str, starter: str) -> leetgpu.Official:
    text = CHALLENGE.format(title="T").replace(
        '''            "x": (ctypes.POINTER(ctypes.c_float), "in"),
            "y": (ctypes.POINTER(ctypes.c_float), "out"),
            "n": (ctypes.c_int, "in"),''', entries)
    where = root / "challenges" / "medium" / folder
    (where / "starter").mkdir(parents=True)
    (where / "challenge.py").write_text(text)
    (where / "starter" / "starter.cu").write_text(f'#include <cuda_fp16.h>\nextern "C" void solve({starter}) {{}}\n')
    return leetgpu.find(root, folder)


@pytest.mark.parametrize("entries, starter, unsupported, notes", [
    ('"A": (ctypes.POINTER(ctypes.c_uint16), "in"), "C": (ctypes.POINTER(ctypes.c_uint16), "inout"), '
     '"N": (ctypes.c_size_t, "in"), "alpha": (ctypes.c_float, "in")',
     "const half* A, half* C, int N, float alpha", None, ()),
    ('"A": (ctypes.POINTER(ctypes.c_int8), "in"), "B": (ctypes.POINTER(ctypes.c_ubyte), "out")',
     "const int8_t* A, unsigned char* B", None, ()),
    ('"A": (ctypes.POINTER(ctypes.c_float), "in"), "B": (ctypes.POINTER(ctypes.c_float), "out")',
     "float* A, float* B", None, ("A is an input the starter declares writable (float*)",)),
    ('"A": (ctypes.POINTER(ctypes.c_float), "in"), "B": (ctypes.POINTER(ctypes.c_float), "out")',
     "const float* A, int* B", "parameter 'B'", ()),
    ('"A": (ctypes.POINTER(ctypes.c_float), "in"), "B": (ctypes.POINTER(ctypes.c_float), "out")',
     "const float* A, const float* B", "parameter 'B': an output buffer the starter declares const", ()),
    ('"model": (torch.Tensor, "in"), "B": (ctypes.POINTER(ctypes.c_float), "out")',
     "const float* model, float* B", "parameter 'model'", ()),
    ('"A": (ctypes.POINTER(ctypes.c_float), "in")', "const float* A, int n",
     "does not declare the parameters", ()),
])
def test_official_signatures_map_onto_the_kit(tmp_path, entries, starter, unsupported, notes):
    found = leetgpu.mapped(_signature_challenge(tmp_path / "co", "5_types", entries, starter))
    if unsupported is None:
        assert found.unsupported is None and found.notes == notes
        assert [written for _, written, _ in found.params] == \
            [spec.canonical_type(p.strip().rsplit(" ", 1)[0]) for p in starter.split(",")]
    else:
        assert unsupported in found.unsupported


def test_our_challenges_answer_to_leetgpu_s_names(checkout):
    """Each of our challenges that is one of LeetGPU's says so (`leetgpu:` in its yaml): that name grades it."""
    from conftest import CHALLENGES
    assert spec.load(CHALLENGES, "13_histogramming").slug == "histogramming"
    assert spec.load(CHALLENGES, "22_gemm").slug == "gemm_fp16"
    with pytest.raises(UsageError):
        spec.load(CHALLENGES, "99_not_ours")
    named = {spec.load(CHALLENGES, slug).leetgpu for slug in spec.list_challenges(CHALLENGES)}
    assert len(named) == len(spec.list_challenges(CHALLENGES)) and None not in named


def test_an_official_challenge_s_limits_are_said_to_be_the_grader_s():
    """LeetGPU's files state no limits: a report names the grader's, never a challenge.yaml the checkout lacks."""
    import dataclasses

    from grader.backends import cuda

    ours = spec.load(cli.DEFAULT_CHALLENGES, "vector_add")
    official = dataclasses.replace(ours, origin=spec.Origin.LEETGPU)
    for limit in ("case_s", "job_s"):
        assert cuda._where(ours, limit) == f"limits.{limit} in its challenge.yaml"
        assert "challenge.yaml" not in cuda._where(official, limit) and "LeetGPU" in cuda._where(official, limit)
