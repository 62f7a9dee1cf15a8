"""Choosing the challenge from a file's solve signature."""

from __future__ import annotations

from grader import signature

from conftest import NAIVE


def test_parameter_types_are_normalised():
    text = '''
    // extern "C" void solve(int nothing) { }   a comment is not a definition
    extern "C" void solve(const float * __restrict__ input, float *output,
                          int N) {
        kernel<<<1, 1>>>(input, output, N);
    }'''
    assert signature.parameter_types(text, "solve") == [("const float*", "float*", "int")]


def test_the_matmul_level_matches_matmul_only(matmul):
    other = _vector_add_like(matmul)
    choice = signature.choose(NAIVE.read_text(), [matmul, other])
    assert choice.challenge == "matmul" and "no other" in choice.why


def test_no_match_and_several_matches_choose_nothing(matmul):
    assert signature.choose('extern "C" void solve(double* x) {}', [matmul]).challenge is None
    twin = _vector_add_like(matmul, slug="matmul_twin", same_params=True)
    choice = signature.choose(NAIVE.read_text(), [matmul, twin])
    assert choice.challenge is None and choice.matches == ("matmul", "matmul_twin")


def _vector_add_like(matmul, slug="vector_add", same_params=False):
    import dataclasses
    params = matmul.params if same_params else tuple(p for p in matmul.params if p.name in ("A", "B", "C", "N"))
    return dataclasses.replace(matmul, slug=slug, params=params)
