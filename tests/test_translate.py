"""The emulator's source rewriter: kernel launches, dynamic and static shared memory, findings,
and that every user line keeps its line number (no GPU, no nvcc; g++ only for the compile check)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from grader.emulator.translate import Finding, Translation, translate

ASM = "inline PTX assembly (asm) is not supported in emulation; run on a GPU"
DEVICE_LAUNCH = "launching a kernel from device code (dynamic parallelism) is not supported in emulation"


def lines(text: str) -> list[str]:
    return text.split("\n")


def rewritten(source: str) -> str:
    result = translate(source)
    assert isinstance(result, Translation)
    assert result.text.count("\n") == source.count("\n")
    return result.text


# --- kernel launches ---------------------------------------------------------------------------

def test_simple_launch():
    assert rewritten("add<<<grid, block>>>(a, b, n);") == \
        '::emu::launch(add, "add", 1, grid, block)(a, b, n);'


def test_launch_with_three_and_four_config_arguments():
    src = "\nk<<<g, b, smem>>>(x);\nk<<<g, b, 0, stream>>>();"
    assert lines(rewritten(src)) == [
        "",
        '::emu::launch(k, "k", 2, g, b, smem)(x);',
        '::emu::launch(k, "k", 3, g, b, 0, stream)();',
    ]


def test_template_callee_with_commas_and_nested_angles():
    src = "matmul<BM, BN, std::pair<int, int>, (N > 4)><<<g, b>>>(A, B);"
    assert rewritten(src) == ('::emu::launch(matmul<BM, BN, std::pair<int, int>, (N > 4)>, '
                              '"matmul<BM, BN, std::pair<int, int>, (N > 4)>", 1, g, b)(A, B);')


def test_qualified_callee():
    assert rewritten("ns::inner::k<T><<<1, 32>>>(p);") == \
        '::emu::launch(ns::inner::k<T>, "ns::inner::k<T>", 1, 1, 32)(p);'
    assert rewritten("::k<<<1, 32>>>(p);") == '::emu::launch(::k, "::k", 1, 1, 32)(p);'


def test_config_with_dim3_template_call_and_shift():
    src = "k<<<dim3(a, b), std::min<int>(x, y), n >> 1>>>(p);"
    assert rewritten(src) == \
        '::emu::launch(k, "k", 1, dim3(a, b), std::min<int>(x, y), n >> 1)(p);'


def test_arguments_over_several_lines_keep_every_line_in_place():
    src = "void f() {\n    k<<<g, b>>>(a,\n        b,\n        c);\n    after();\n}\n"
    out = lines(rewritten(src))
    assert out[1] == '    ::emu::launch(k, "k", 2, g, b)(a,'
    assert out[2:4] == ["        b,", "        c);"]
    assert out[4] == "    after();"


def test_line_breaks_around_config_move_after_the_arguments():
    src = "k<float, 2>\n  <<<g, b>>>\n  (x);  after();\nlast();"
    out = lines(rewritten(src))
    assert out[0] == '::emu::launch(k<float, 2>, "k<float, 2>", 2, g, b)(x)'
    assert out[1] == ""
    assert out[2] == ";  after();"
    assert out[3] == "last();"


def test_two_launches_on_one_line():
    assert rewritten("a<<<1, 2>>>(x); b<<<3, 4>>>(y);") == \
        '::emu::launch(a, "a", 1, 1, 2)(x); ::emu::launch(b, "b", 1, 3, 4)(y);'


def test_launch_inside_define():
    src = "#include <x.h>\n#define RUN(n) kern<<<(n + 255) / 256, 256>>>(n)\nint x;"
    assert lines(rewritten(src))[1] == \
        '#define RUN(n) ::emu::launch(kern, "kern", 2, (n + 255) / 256, 256)(n)'


def test_launch_inside_continued_define_keeps_the_continuation():
    src = "#define RUN(n) kern \\\n  <<<1, 1>>>(n)\nint x;"
    out = lines(rewritten(src))
    assert out[0] == '#define RUN(n) ::emu::launch(kern, "kern", 2, 1, 1)(n)\\'
    assert out[2] == "int x;"


def test_launch_syntax_in_strings_and_comments_is_untouched():
    src = ('const char* s = "k<<<1, 1>>>()"; // k<<<1, 1>>>()\n'
           "/* k<<<1, 1>>>() */ char c = '<'; auto r = R\"(k<<<1, 1>>>())\";\n")
    result = translate(src)
    assert result.text == src
    assert result.unsupported == () and result.warnings == ()


def test_unparsable_launch_is_reported_not_mangled():
    src = "(*fp)<<<1, 1>>>();\nobj.run<<<1, 1>>>();\nk<<<1, 1>>>"
    result = translate(src)
    assert result.text == src
    assert [f.line for f in result.unsupported] == [1, 2, 3]


# --- launch spellings nvcc accepts (nvcc 13, checked by test_launch_spellings_match_nvcc) ---------
# nvcc reads `<<<` as `<<` then `<`, and `>>>` as `>>` then `>`: clang-format's `k << <g, b >> > (x)`
# is a launch, so are a comment or spaces between the two, and a line break between `>>` and `>` (not
# between `<<` and `<`). `< < <`, `< <<`, `> >>` and `> > >` are not.

LAUNCHES = [  # (source, config as the rewrite passes it on)
    ("k<<<1, 32>>>(p);", "1, 32"),
    ("k << <1, 32 >> > (p);", "1, 32 "),
    ("k << <g, b, smem >> > (p);", "g, b, smem "),
    ("k<< <1, 32>>>(p);", "1, 32"),
    ("k<<<1, 32>> >(p);", "1, 32"),
    ("k<</*c*/<1, 32>>/*c*/>(p);", "1, 32"),
    ("k<<\t<1, 32>>>(p);", "1, 32"),
    ("k<<<1, 32>> //c\n>(p);", "1, 32"),
    ("k<<<1, 32 >>\n\n>(p);", "1, 32 "),
    ("k\n<<<\n1,\n32\n>>>\n(p);", "\n1,\n32\n"),
    ("k <<< 1 , 32 >>> (p) ;", " 1 , 32 "),
    ("k<<\\\n<1, 32>>>(p);", "1, 32"),
    ("k << <n > 2 ? 1 : 2, 32 >> > (p);", "n > 2 ? 1 : 2, 32 "),
    ("k << <1, n >> 1 >> > (p);", "1, n >> 1 "),
    ("k<<<1, n>> >(p);", "1, n"),
    ("k<<<1, n>>=1>>>(p);", "1, n>>=1"),
    ("k<<<1, n>= 1 >> >(p);", "1, n>= 1 "),
    ("k<<<1, threads_v<float> >>>(p);", "1, threads_v<float> "),
    ("k<<<1, threads_v<float> >> >(p);", "1, threads_v<float> "),
    ("k<<<1, threads_v<Block<3>> >>>(p);", "1, threads_v<Block<3>> "),
    ("k<<<1, threads_v<Block<3>>>>>(p);", "1, threads_v<Block<3>>"),
    ("k<<<1, threads_for<Block<3>>()>>>(p);", "1, threads_for<Block<3>>()"),
    ("k<<<1, Block<32>::value>>>(p);", "1, Block<32>::value"),
]
NOT_LAUNCHES = [  # nvcc rejects each (a compile error there, left to g++ here) or reads no launch in it
    "k<<\n<1, 32>>>(p);",
    "k<< //c\n<1, 32>>>(p);",
    "k<</*a\nb*/<1, 32>>>(p);",
    "k < < < 1, 32 > > > (p);",
    "k</*c*/<<1, 32>>>(p);",
    "int r = operator<<<float>(S{}, 1.0f);",
    "int r = operator<< <float>(S{}, 1.0f);",
]
UNPARSABLE = [  # an opener without a closer nvcc would take: nvcc rejects each too
    "k<<<1, 32> >>(p);",
    "k<<<1, 32>/*c*/>>(p);",
    "k<<<1, 32> > >(p);",
    "k<<<1, 32>>>>(p);",
    "k<<<1, threads_v<float>>>>(p);",
    "k<<<1, threads_v<float>>> >(p);",
    "k<<<1, threads_v<Block<3>> > >>(p);",
]


@pytest.mark.parametrize("source, config", LAUNCHES, ids=[s for s, _ in LAUNCHES])
def test_launch_spellings_nvcc_accepts(source, config):
    line = source[:source.index("<")].count("\n") + 1  # the line of the `<<`
    assert rewritten(source).startswith(f'::emu::launch(k, "k", {line}, {config})(p)')


@pytest.mark.parametrize("source", NOT_LAUNCHES)
def test_spellings_nvcc_reads_no_launch_in_are_left_alone(source):
    assert translate(source) == Translation(source, (), ())


@pytest.mark.parametrize("source", UNPARSABLE)
def test_spellings_nvcc_rejects_are_reported(source):
    result = translate(source)
    assert result.text == source and [f.line for f in result.unsupported] == [1]


NVCC_PRELUDE = r"""#include <cuda_runtime.h>
template <int N> struct Block { static constexpr int value = N; };
template <class T> constexpr int threads_for() { return 128; }
template <class T> constexpr int threads_v = 128;
struct S {};
template <class T> int operator<<(S, T) { return 1; }
__global__ void k(float* p) {}
"""


@pytest.mark.nvcc
@pytest.mark.slow
def test_launch_spellings_match_nvcc(tmp_path):
    """nvcc compiles every spelling read as a launch, and none reported as unparsable; of those read
    as no launch, only the operator<< calls (one function each; an error names its line)."""
    spellings = [s for s, _ in LAUNCHES] + NOT_LAUNCHES + UNPARSABLE
    text, first_lines = NVCC_PRELUDE, []
    for n, spelling in enumerate(spellings):
        first_lines.append(text.count("\n") + 1)
        text += f"void f{n}(float* p, int n, int g, int b, int smem) {{\n{spelling}\n}}\n"
    (tmp_path / "spellings.cu").write_text(text)
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", "spellings.cu", "-o", "spellings.o",
                           "-Xcudafe", "--error_limit=1000"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    failed = {int(line) for line in re.findall(r"^spellings\.cu\((\d+)\): error", proc.stderr, re.M)}
    rejected = {spelling for spelling, first, end in zip(spellings, first_lines, first_lines[1:] + [10**9])
                if any(first <= line < end for line in failed)}
    assert rejected == set(UNPARSABLE + NOT_LAUNCHES[:5]), proc.stderr


def test_clang_formatted_templated_launches():
    assert rewritten("tk<float, 4> << <1, 32 >> > (p);") == \
        '::emu::launch(tk<float, 4>, "tk<float, 4>", 1, 1, 32 )(p);'
    assert rewritten("anyk<Block<3>> << <1, 32 >> > (p);") == \
        '::emu::launch(anyk<Block<3>>, "anyk<Block<3>>", 1, 1, 32 )(p);'
    assert rewritten("ns::k3<float><< <g, b>>\n>(p);") == \
        '::emu::launch(ns::k3<float>, "ns::k3<float>", 1, g, b)(p)\n;'


def test_a_launch_over_several_lines_keeps_every_line_in_place():
    src = ("void f() {\n"
           "    softmax<float, 4>\n"
           "        << <blocks, // one per row\n"
           "            threads, smem >>\n"
           "        > (in, out,\n"
           "           n);\n"
           "    after();\n"
           "}\n")
    assert lines(rewritten(src)) == [
        "void f() {",
        '    ::emu::launch(softmax<float, 4>, "softmax<float, 4>", 3, blocks, // one per row',
        "            threads, smem )(in, out,",
        "           n)",
        "",  # the line breaks between the chevrons and the kernel's name, moved after the launch
        ";",
        "    after();",
        "}",
        "",
    ]


def test_right_shifts_and_nested_templates_outside_a_launch_stay_as_they_are():
    src = ("k << <1, 32 >> > (p);\n"
           "std::vector<std::vector<std::vector<int>>> v; std::vector<std::vector<int>> > w;\n"
           "int x = a >> 1 > b; bool y = (a >> 2) > 1; int z = a >> b;\n")
    result = translate(src)
    assert result.unsupported == ()
    assert lines(result.text)[1:] == lines(src)[1:]


# --- shared memory -----------------------------------------------------------------------------

def test_extern_shared_in_function():
    src = "__global__ void k() {\n    extern __shared__ float smem[ ];\n}"
    assert lines(rewritten(src))[1] == \
        "    thread_local float* const smem = reinterpret_cast<float*>(::emu::dynamic_shared());"


def test_extern_shared_at_file_scope_with_align_and_multi_token_type():
    src = "extern __shared__ __align__(16) unsigned char buf[];\nint x;"
    assert lines(rewritten(src)) == [
        "thread_local unsigned char* const buf = "
        "reinterpret_cast<unsigned char*>(::emu::dynamic_shared());",
        "int x;",
    ]
    assert "typename T::value* const s =" in rewritten(
        "extern   __shared__ alignas(8) typename T::value   s[];")


def test_static_shared_with_two_declarators():
    src = "    __shared__ float As[BM][BK], Bs[BK][BN];"
    assert rewritten(src) == src + " __emu_track_shared(As); __emu_track_shared(Bs);"


def test_static_shared_with_align_and_template_type():
    assert rewritten("__shared__ __align__(16) float s[N];") == \
        "__shared__ __align__(16) float s[N]; __emu_track_shared(s);"
    assert rewritten("static __shared__ Pair<int, float> p, q;") == \
        " __shared__ Pair<int, float> p, q; __emu_track_shared(p); __emu_track_shared(q);"  # `static` is implied


def test_shared_in_define_or_parameter_list_is_not_tracked():
    src = ("#define SMEM(n) __shared__ float tile[n];\n"
           "__device__ void f(__shared__ float* p);\n")
    assert translate(src).text == src


# --- findings ----------------------------------------------------------------------------------

def test_inline_asm_is_unsupported_on_its_line():
    src = "__device__ int lane() {\n    int r;\n    asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r));\n"
    src += "    __asm__(\"nop\");\n    return r;\n}\n"
    assert translate(src).unsupported == (Finding(3, ASM), Finding(4, ASM))


def test_launch_from_device_code_is_unsupported():
    src = ("__global__ void child(int* p) {}\n"
           "__global__ void parent(int* p) {\n"
           "    if (p) {\n"
           "        child<<<1, 1>>>(p);\n"
           "    }\n"
           "}\n"
           "void host(int* p) { parent<<<1, 1>>>(p); }\n")
    result = translate(src)
    assert result.unsupported == (Finding(4, DEVICE_LAUNCH),)
    assert '::emu::launch(parent, "parent", 7, 1, 1)(p);' in result.text


def test_grid_sync_is_supported():
    src = "cg::grid_group grid = cooperative_groups::this_grid();\ngrid.sync();\n"
    result = translate(src)
    assert result.unsupported == () and result.text == src


# A cooperative launch passes the kernel as a void pointer; the runtime must see its type to read args.
@pytest.mark.parametrize("call, kernel", [
    ("cudaLaunchCooperativeKernel((void*)reduce, grid, block, args, 0, 0);", "reduce"),
    ("cudaLaunchCooperativeKernel((const void *)reduce, grid, block, args);", "reduce"),
    ("cudaLaunchCooperativeKernel(reinterpret_cast<void*>(reduce), grid, block, args);", "reduce"),
    ("cudaLaunchCooperativeKernel((void*)&reduce, grid, block, args);", "&reduce"),
    ("cudaLaunchCooperativeKernel(reduce, grid, block, args);", "reduce"),
    ("cudaLaunchCooperativeKernel((void*)sum<256, float>, grid, block, args);", "sum<256, float>"),
    ("::cudaLaunchCooperativeKernel((void*)ns::reduce, grid, block, args);", "ns::reduce"),
])
def test_cooperative_launch_becomes_a_typed_call(call, kernel):
    rest = call[call.index(", grid"):]
    assert rewritten(call) == f'::emu::launch_cooperative("{kernel}", 1, {kernel}{rest}'


def test_cooperative_launch_over_lines_keeps_them():
    src = "err = cudaLaunchCooperativeKernel(\n    (void*)k,\n    g, b, args);\nnext();"
    assert lines(rewritten(src)) == ['err = ::emu::launch_cooperative("k", 1, ', "    k,", "    g, b, args);", "next();"]


def test_not_a_cooperative_launch_is_left_alone():
    for src in ("obj.cudaLaunchCooperativeKernel((void*)k, g);", "cudaLaunchCooperativeKernel();",
                "auto f = cudaLaunchCooperativeKernel;"):
        assert rewritten(src) == src


def test_volatile_warns_once_at_its_first_line():
    src = ("__global__ void reduce(float* out) {\n"
           "    __shared__ float sdata[256];\n"
           "    volatile float* s = sdata;\n"
           "    volatile __shared__ float w[32]; // volatile\n"
           "    volatile int unrelated = 0;\n"
           "}\n")
    assert [f.line for f in translate(src).warnings] == [3]


def test_plain_cpp_is_returned_unchanged():
    src = ("#include <vector>\n// a << b >> c\nint helper() {\n"
           "    std::vector<std::vector<int>> v; int x = 1 << 3 >> 1;\n    return x < 2;\n}\n")
    result = translate(src)
    assert result == Translation(src, (), ())


# --- realistic kernels -------------------------------------------------------------------------

NAIVE = r"""#include <cuda_runtime.h>

__global__ void matmul_naive(const float* __restrict__ A, const float* __restrict__ B,
                             float* __restrict__ C, int M, int N, int K) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < K) {
        float acc = 0.0f;
        for (int i = 0; i < N; ++i) acc += A[(size_t)row * N + i] * B[(size_t)i * K + col];
        C[(size_t)row * K + col] = acc;
    }
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(16, 16);
    dim3 grid((K + 15) / 16, (M + 15) / 16);
    matmul_naive<<<grid, block>>>(A, B, C, M, N, K);
}
"""

TILED = r"""#include <cuda_runtime.h>

template <int TILE>
__global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < N; t += TILE) {
        As[ty][tx] = (row < M && t + tx < N) ? A[(size_t)row * N + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < N && col < K) ? B[(size_t)(t + ty) * K + col] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += As[ty][i] * Bs[i][tx];  // "<<<" in a comment
        __syncthreads();
    }
    if (row < M && col < K) C[(size_t)row * K + col] = acc;
}

extern "C" void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    constexpr int TILE = 16;
    dim3 grid((K + TILE - 1) / TILE,
              (M + TILE - 1) / TILE);
    matmul_tiled<TILE><<<grid, dim3(TILE, TILE)>>>(
        A, B, C,
        M, N, K);
}
"""

REDUCTION = r"""#include <cuda_runtime.h>

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

__global__ void reduce_sum(const float* in, float* out, int n) {
    extern __shared__ float partial[];
    float v = 0.0f;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        v += in[i];
    v = warp_sum(v);
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        v = threadIdx.x < blockDim.x / 32 ? partial[threadIdx.x] : 0.0f;
        v = warp_sum(v);
        if (threadIdx.x == 0) atomicAdd(out, v);
    }
}

extern "C" void solve(const float* in, float* out, int n) {
    int threads = 256, blocks = (n + threads - 1) / threads;
    reduce_sum<<<blocks, threads, (threads / 32) * sizeof(float)>>>(in, out, n);
}
"""

KERNELS = {"naive": NAIVE, "tiled": TILED, "reduction": REDUCTION}

STUB_HEADER = r"""
#pragma once
#include <cstddef>
namespace emu {
template <class F, class... C> auto launch(F, const char*, int, C...) { return [](auto&&...) {}; }
inline void* dynamic_shared() { static char buffer[1 << 16]; return buffer; }
}
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __syncthreads() ((void)0)
#define __emu_track_shared(x) static_assert(sizeof(x) > 0, "")
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
struct uint3 { unsigned x, y, z; };
static thread_local uint3 threadIdx, blockIdx;
static thread_local dim3 blockDim, gridDim;
inline float __shfl_down_sync(unsigned, float v, int) { return v; }
inline float atomicAdd(float* p, float v) { float old = *p; *p += v; return old; }
"""


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_realistic_kernels_keep_lines(name):
    src = KERNELS[name]
    result = translate(src)
    assert result.unsupported == () and result.warnings == ()
    assert result.text.count("\n") == src.count("\n")
    changed = {i for i, (a, b) in enumerate(zip(lines(src), lines(result.text))) if a != b}
    expected = {i for i, line in enumerate(lines(src)) if "<<<" in line and "//" not in line
                or "__shared__" in line}
    assert changed == expected


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_realistic_kernels_compile_as_cpp(name, tmp_path):
    (tmp_path / "cuda_runtime.h").write_text(STUB_HEADER)
    proc = subprocess.run(
        ["g++", "-std=c++17", "-fsyntax-only", "-include", "cuda_runtime.h", "-I", str(tmp_path),
         "-x", "c++", "-"],
        input=translate(KERNELS[name]).text, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


# --- a file's own test program, and `static __shared__` -----------------------------------------

def test_file_scope_main_is_renamed_and_nothing_else_called_main():
    src = ("int main(int argc, char** argv) {\n  run.main(1); ns::main(2); p->main(3);\n  return 0;\n}\n"
           "struct S { int main(); };\n")
    out = rewritten(src)
    assert out.startswith("int __emu_submission_main(int argc, char** argv) {")
    assert "run.main(1); ns::main(2); p->main(3);" in out
    assert "struct S { int main(); };" in out  # a member function is not the program's main


def test_static_beside_shared_is_dropped_once():
    out = rewritten("__global__ void k() {\n  static __shared__ float a[4];\n  __shared__ static int b;\n}\n")
    assert "static" not in out.replace("__shared__", "")
    assert out.count("__shared__") == 2 and "__emu_track_shared(a)" in out and "__emu_track_shared(b)" in out


def test_a_volatile_warp_helper_is_named_as_legacy_warp_synchronous_code():
    """The classic last-warp reduction: a `volatile float*` parameter, no shared memory on its line.
    Common in real LeetGPU files; it passes on a GPU and races in emulation, so the emulator says why,
    and a RACE verdict carries that note (pipeline.WARP_SYNCHRONOUS)."""
    from grader import pipeline
    from grader.emulator.translate import VOLATILE_MESSAGE
    source = ("__device__ void warp_reduce(volatile float* s, int t) {\n"
              "    s[t] += s[t + 32]; s[t] += s[t + 16];\n}\n"
              "__global__ void k(float* out) { __shared__ float s[64]; warp_reduce(s, threadIdx.x); }\n")
    warnings = translate(source).warnings
    assert warnings == (Finding(1, VOLATILE_MESSAGE),)
    assert VOLATILE_MESSAGE.startswith(pipeline.WARP_SYNCHRONOUS) and "__syncwarp(), write" in VOLATILE_MESSAGE
    assert translate(source.replace("volatile ", "")).warnings == ()


def test_lint_warns_where_translate_does_and_not_for_host_code_or_integer_flags():
    """`lint` is the GPU build's copy of the warning: the same findings, none for a volatile outside
    device code, an integer flag a kernel spins on, or `asm volatile`."""
    from grader.emulator.translate import lint
    helper = "__device__ void warp_reduce(volatile float* s, int t) { s[t] += s[t + 32]; }\n"
    shared = "__global__ void k() {\n  __shared__ volatile double s[64];\n  s[threadIdx.x] += 1.0;\n}\n"
    for source in (helper, shared):
        assert lint(source) == translate(source).warnings and len(lint(source)) == 1
    assert lint(shared)[0].line == 2
    quiet = ('__device__ int flag;\n__global__ void k() { volatile int* f = &flag; while (!*f) {} }\n'
             '__global__ void j() { unsigned l; asm volatile("mov.u32 %0, %%laneid;" : "=r"(l)); }\n'
             'extern "C" void solve(float* p) { volatile float* wild = p; (void)wild; }\n')
    assert lint(quiet) == () == translate(quiet).warnings


def test_host_variables_named_like_built_ins_are_renamed_out_of_the_macros_way():
    """SGEMM tutorials launch with `dim3 gridDim(...), blockDim(...)` in host code; the emulator's
    built-ins are macros, so those declarations did not compile. Host uses are renamed, device uses
    stay the built-ins, lines stay where they were."""
    src = ("__global__ void k(float* c) { c[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x; }\n"
           'extern "C" void solve(float* c, int n) {\n'
           "    dim3 gridDim((n + 31) / 32), blockDim(32);\n"
           "    k<<<gridDim, blockDim>>>(c);\n"
           "}\n")
    lines = translate(src).text.splitlines()
    assert lines[0] == src.splitlines()[0]
    assert "dim3 __emu_host_gridDim((n + 31) / 32), __emu_host_blockDim(32);" in lines[2]
    assert "__emu_host_gridDim, __emu_host_blockDim" in lines[3] and len(lines) == 5
