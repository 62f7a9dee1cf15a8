"""Submission text is untrusted: the grader's own process reads it in time linear in its length.

Signature detection reads an upload in the class server's request handler, the emulator's translator
rewrites the file, and the diagnostics and compute-sanitizer parsers read logs that quote it (an
`#error` line, what the program printed). A pattern that rescans the rest of the text from each of
many starting points (every unclosed `/*`, every unclosed raw string) is quadratic: seconds at 64 KB,
hours at 1 MiB (issue 25).

Issue 25's two measured inputs must take under a second. Every other crafted input must take about
four times as long on four times the text, where a quadratic reader takes sixteen: a ratio, not an
absolute time, which a slow or busy machine would make flaky. Each reader is measured up to the most
text it reads (a 1 MiB submission, a 256 KiB compiler log, 1 MiB of sanitizer output) or less, where
that would be slow and quadratic growth already shows at the smaller size.
"""

from __future__ import annotations

import functools
import gc
import time
from collections.abc import Callable

import pytest

from grader import build, sanitize, signature, spec
from grader.emulator import translate

from conftest import CHALLENGES

PROTOTYPE = "void solve(const float* A, const float* B, float* C, int M, int N, int K)"
GROWTH_LIMIT = 8
"""Time at 4n over time at n: 4 when linear, 16 when quadratic."""
NOISE_S = 0.005
"""Times below this are timer and scheduler noise: a ratio is taken over at least this."""
SIGNATURE_BYTES = 256 << 10
"""Signature detection reads up to a 1 MiB upload, linearly (about 0.2 s there); measured up to a
quarter of that, where a quadratic pass takes minutes, to keep this file fast."""
TRANSLATOR_BYTES = 32 << 10
"""The translator's tokens cost microseconds each, so 1 MiB of one-character tokens takes seconds
(linearly); measured up to 32 KiB, where a quadratic pass already takes seconds."""


@functools.cache
def _challenges() -> list[spec.Challenge]:
    return [spec.load(CHALLENGES, slug) for slug in spec.list_challenges(CHALLENGES)]


def _seconds(read: Callable[[str], object], text: str) -> float:
    """CPU time of this thread, not the wall clock: on a 2-core machine busy with other work (CI runs the
    emulator beside this) a wall-clock ratio failed once at 8× for text that reads linearly."""
    gc.disable()  # a collection now and then is noise, and the readers make no garbage cycles
    try:
        start = time.thread_time()
        read(text)
        return time.thread_time() - start
    finally:
        gc.enable()


# --------------------------------------------------------------------------- issue 25's inputs


@pytest.mark.parametrize("fragment", ["/* ", "/*\n"], ids=["space", "newline"])
def test_signature_detection_of_63_kb_of_unclosed_comments_takes_under_a_second(fragment):
    text = fragment * 21_000  # each `/*` left open scanned to the end: 25 s before the fix
    assert _seconds(lambda t: signature.choose(t, _challenges()), text) < 1.0


@pytest.mark.parametrize("before", ["// \\\n", "// \\\r\n", "// \\ \n", ""],
                         ids=["continued-comment", "continued-comment-crlf", "continued-comment-space", "code"])
def test_translating_129_kb_of_unclosed_raw_strings_takes_under_a_second(before):
    """g++ continues the comment in all three shapes; the lexer, in the first only, so in the others
    (and in plain code) every `R"(` used to open a raw string that scanned to the end: 15 s."""
    text = before + 'R"(' * 43_000
    assert _seconds(translate.translate, text) < 1.0


# --------------------------------------------------------------------------- growth on crafted inputs


def _repeated(fragment: str) -> Callable[[int], str]:
    return lambda size: fragment * (size // len(fragment))


def _nested(opening: str, closing: str) -> Callable[[int], str]:
    """`opening` n times then `closing` n times: each level holds all the ones inside it."""
    def make(size: int) -> str:
        levels = size // (len(opening) + len(closing))
        return opening * levels + closing * levels
    return make


def _framed(head: str, fragment: str, tail: str) -> Callable[[int], str]:
    """One construct as long as the text: a parameter list, a comment, a line."""
    return lambda size: head + fragment * (size // len(fragment)) + tail


SHAPES: dict[str, Callable[[int], str]] = {
    # comments and literals, closed or not
    "block-comment-openers": _repeated("/*"),
    "spaced-block-comment-openers": _repeated("/* "),
    "continued-line-comments": _repeated("//\\\n"),
    "continued-line-comments-crlf": _repeated("// \\\r\n"),
    "raw-string-openers": _repeated('R"('),
    "delimited-raw-string-openers": _repeated('R"x('),
    "quotes": _repeated('"'),
    "apostrophes": _repeated("'"),
    "digit-separators": _repeated("1'"),
    "backslashes": _repeated("\\"),
    "one-long-line": _repeated("x"),
    "one-long-comment": _framed("/*", "x", "*/"),
    "blank-lines": _repeated("\n"),
    # launches and templates
    "launch-openers": _repeated("<<<"),
    "launch-closers": _repeated(">>>"),
    "kernel-launch-openers": _repeated("k<<<"),
    "angles": _repeated("<"),
    "template-openers": _repeated("template<"),
    "namespace-chain": _repeated("a::"),
    "launches-chained-by-templates": _repeated("f<<<a<b>>>()>::g"),
    "launches-in-callees": _nested("k<(", "<<<1>>>())>"),
    "launches-in-arguments": _nested("k<<<1>>>(", ")"),
    "launches-in-configurations": _nested("k<<<", ">>>()"),
    # nvcc's other launch spellings (issue 19): `<< <` opens, `>> >` closes, a gap in either
    "spaced-launch-openers": _repeated("<< <"),
    "spaced-launch-closers": _repeated(">> >"),
    "kernel-spaced-launch-openers": _repeated("k << <"),
    "closers-across-lines": _repeated(">>\n>"),
    "openers-across-lines": _repeated("k<<\n<"),
    "continued-openers": _repeated("k<<\\\n<"),
    "shift-assignments": _repeated(">>="),
    "operator-shift-specializations": _repeated("operator<< <"),
    "one-long-opener-gap": _framed("k<<", " ", "<1>>>()"),
    "spaced-launches-in-configurations": _nested("k << <", ">> > ()"),
    "spaced-launches-in-callees": _nested("k<(", "<< <1>> >())>"),
    # brackets, declarations, directives
    "parentheses": _repeated("("),
    "braces": _repeated("{"),
    "nested-parentheses": _nested("(", ")"),
    "nested-braces": _nested("{", "}"),
    "defines": _repeated("#define "),
    "continued-define": _framed("#define A ", "x \\\n", "\n"),
    "shared": _repeated("__shared__ "),
    "extern-shared": _repeated("extern __shared__ "),
    "nested-shared": _nested("__shared__ {", "};"),
    "nested-extern-shared": _nested("extern __shared__ x {", "} s[];"),
    # signatures
    "solve-openers": _repeated("solve("),
    "solve-definitions": _repeated("solve(int a) {"),
    "long-parameter-list": _framed('extern "C" void solve(', "const float* a, ", "int n) {}"),
    # logs: the linker, a missing header, the sanitizer
    "undefined-references": _repeated("undefined reference to `"),
    "library-path-in-an-error": _framed("x.cu(1): error: ", "cub/", "\n"),
    "library-path-with-colons-in-an-error": _framed("x.cu:1:2: fatal error: ", "thrust/:", "\n"),
    "diagnostics": _repeated("x.cu(1): error: e\ngrader-epilogue.cu(1): error: e\n"),
    "linker-errors": _repeated("x.o: undefined reference to `f'\n"),
    "races-in-a-report": _framed("========= Error: Race\n", "Race reported between a access ", ""),
    "race-reports": _repeated("========= Error: Race reported between Write access "),
    "sanitizer-errors": _repeated("========= Invalid "),
    "sanitizer-rulers": _repeated("\n="),
    "sanitizer-places": _repeated("in a.cu"),
}


def _signature(text: str) -> None:
    signature.choose(text, _challenges())


def _diagnostics(text: str) -> None:
    build.classify_failure(build.parse_diagnostics(text), text, "solve", PROTOTYPE)


def _sanitizer(text: str) -> None:
    sanitize.parse("racecheck", text, "a.cu")


READERS: dict[str, tuple[Callable[[str], object], int]] = {
    "signature": (_signature, SIGNATURE_BYTES),
    "translate": (translate.translate, TRANSLATOR_BYTES),
    "diagnostics": (_diagnostics, build.MAX_LOG_BYTES),
    "sanitizer": (_sanitizer, sanitize.OUTPUT_BYTES),
}


def _growth(read: Callable[[str], object], small: str, large: str) -> float:
    """Time on `large` over time on `small`, each the least of up to three tries (a try more only
    while the ratio is over the limit: a busy machine slows one run, not every one)."""
    least_small = least_large = float("inf")
    for _ in range(3):
        least_small = min(least_small, _seconds(read, small))
        least_large = min(least_large, _seconds(read, large))
        if least_large < GROWTH_LIMIT * max(least_small, NOISE_S):
            break
    return least_large / max(least_small, NOISE_S)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("shape", SHAPES)
def test_reading_crafted_text_grows_linearly(reader, shape):
    read, size = READERS[reader]
    make = SHAPES[shape]
    growth = _growth(read, make(size // 4), make(size))
    assert growth < GROWTH_LIMIT, f"{reader} on {shape}: {growth:.1f}× the time for 4× the text"


# --------------------------------------------------------------------------- what the linear readings read


def test_signature_detection_reads_comments_and_literals_as_a_compiler_does():
    text = ('const char* s = "/*"; char c = \'"\'; int n = 1\'000;  // a comment \\\n'
            'void solve(int continued_comment) {}\n'
            'extern "C" void solve(float* x, int n) {}\n'
            '/* unclosed: the rest is comment\nvoid solve(double* y) {}\n')
    assert signature.parameter_types(text, "solve") == [("float*", "int")]


def test_an_unclosed_raw_string_runs_to_the_end_of_the_file():
    result = translate.translate('k<<<1, 1>>>(x);\nauto s = R"(never closed\nk<<<1, 1>>>(x);\n')
    assert result.text.count("::emu::launch(") == 1 and result.text.endswith('R"(never closed\nk<<<1, 1>>>(x);\n')


def test_a_declaration_saying_shared_twice_is_tracked_once():
    result = translate.translate("__global__ void k() { __shared__ __shared__ float tile[32]; }")
    assert result.text.count("__emu_track_shared(tile);") == 1


def test_a_launch_in_another_launchs_callee_is_rewritten_with_it():
    text = translate.translate("void f() { k<(k<()><<<1, 1>>>())><<<2, 2>>>(); }").text
    assert text == 'void f() { ::emu::launch(k<(k<()><<<1, 1>>>())>, "k<(k<()><<<1, 1>>>())>", 1, 2, 2)(); }'


def test_undefined_symbol_is_the_text_up_to_its_closing_quote():
    (found,) = build.parse_diagnostics("ld: undefined reference to `' undefined reference to `g(int)' `h'\n")
    assert found.message == "undefined reference to `g(int)'"
    assert build.parse_diagnostics("undefined reference to `never closed\n") == ()


@pytest.mark.parametrize("message, library", [
    ("fatal error: cub/cub.cuh: No such file or directory", True),
    ("fatal error: thrust/a:b.h: No such file or directory", True),
    ("fatal error: x.h: No such file or directory cub/", False),
    ("fatal error: mycub/x.h: No such file or directory", False),
    ("fatal error: a.h: No such file;cub/b.h: No such file or directory", True),
])
def test_a_missing_library_header_is_named_by_the_missing_file(message, library):
    log = f"x.cu:1:10: {message}\n"
    status, text = build.classify_failure(build.parse_diagnostics(log), log, "solve", PROTOTYPE)
    assert ("CUB and Thrust are library code" in text) is library


def test_a_race_is_described_by_the_first_access_and_the_first_second_access_after_it():
    output = ("========= Error: Race reported between Read access and nothing else\n"
              "=========     and Write access at k()+0x10 in a.cu:3\n")
    (finding,) = sanitize.parse("racecheck", output, "a.cu")
    assert finding.what == "race between a read and a write of shared memory"
