"""The emulator's headers declare CUDA's API and nothing more in the global namespace (issue 19).

A file nvcc compiles may define a function of a name CUDA uses, for a type CUDA has none for: LeetGPU
softmax answers define `__device__ float atomicMax(float*, float)` with atomicCAS. An overload or a
template the emulator declares and CUDA does not turns such a file into a redefinition, or its calls
into ambiguous ones, and an UNSUPPORTED verdict for a file a GPU grades. These tests compile such
definitions through the emulator's headers (g++), check that nvcc accepts them too, and ask nvcc
whether CUDA declares every global function (with its parameters), type and enumerator the headers
declare (a redeclaration of each that only a declaration of CUDA's own can make an error).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.emulator import INCLUDE
from grader.emulator.translate import translate

HEADERS = ("cuda_emu.h", "cooperative_groups.h", "cuda_fp16.h", "mma.h")

USER_DEFINITIONS = r"""#include <cuda_runtime.h>
#include <cuda_fp16.h>
// float and double atomics of LeetGPU answers: CUDA has atomicMax/atomicMin for integers only
__device__ float atomicMax(float* address, float val) {
    int* bits = (int*)address;
    int old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}
__device__ float atomicMin(float* address, float val) {
    int* bits = (int*)address;
    int old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __float_as_int(fminf(val, __int_as_float(assumed))));
    } while (assumed != old);
    return __int_as_float(old);
}
__device__ double atomicMax(double* address, double val) {
    unsigned long long* bits = (unsigned long long*)address;
    unsigned long long old = *bits, assumed;
    do {
        assumed = old;
        old = atomicCAS(bits, assumed, __double_as_longlong(fmax(val, __longlong_as_double(assumed))));
    } while (assumed != old);
    return __longlong_as_double(old);
}
// CUDA has __saturatef, not saturatef
__device__ float saturatef(float x) { return fminf(fmaxf(x, 0.0f), 1.0f); }
// a fallback for architectures without __ldg: CUDA's are overloads, not a template
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 350
template <typename T> __host__ __device__ T __ldg(const T* p) { return *p; }
#endif
// a max of two types: CUDA's are overloads, so this template is the only exact match for (int, float)
template <class A, class B> __host__ __device__ auto max(A a, B b) -> decltype(a + b) { return a < b ? b : a; }

__global__ void uses_them(const float* in, float* out, double* wide) {
    atomicMax(out, in[threadIdx.x]);
    atomicMin(out + 1, __ldg(in + threadIdx.x));
    atomicMax(wide, (double)in[0]);
    out[2] = saturatef(max((int)threadIdx.x, in[1]));
    out[3] = __shfl_xor_sync(0xffffffffu, in[0], 1) + atomicMax((int*)out + 4, 1);
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
def test_definitions_nvcc_accepts_compile_through_the_emulators_headers(tmp_path):
    unit = tmp_path / "unit.cpp"
    unit.write_text(translate(USER_DEFINITIONS).text)
    proc = subprocess.run(["g++", "-std=c++17", "-fsyntax-only", "-I", str(INCLUDE), "-include", "cuda_emu.h",
                           str(unit)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.nvcc
@pytest.mark.slow
def test_nvcc_accepts_those_definitions(tmp_path):
    (tmp_path / "defs.cu").write_text(USER_DEFINITIONS)
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", "defs.cu", "-o", "defs.o"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- what the headers declare


def _own_text() -> str:
    """The emulator's headers preprocessed (their macros expanded), without the standard headers."""
    proc = subprocess.run(["g++", "-std=c++17", "-E", "-I", str(INCLUDE), "-x", "c++", "-"],
                          input="".join(f'#include "{h}"\n' for h in HEADERS),
                          capture_output=True, text=True, check=True, timeout=120)
    kept, ours = [], False
    for line in proc.stdout.splitlines():
        marker = re.match(r'# \d+ "([^"]*)"', line)
        if marker:
            ours = Path(marker.group(1)).parent == INCLUDE
        elif ours:
            kept.append(line)
    text = "\n".join(kept)
    return re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'', '""', text)  # no braces hide in literals


def _global_declarations(text: str) -> list[tuple[str, str]]:
    """(head, body) of each declaration at global scope: a function's or a type's head with its braced
    body ('' for none), each namespace skipped whole."""
    found, head, depth, body_start = [], "", 0, 0
    paren = 0
    for k, c in enumerate(text):
        if depth:
            depth += {"{": 1, "}": -1}.get(c, 0)
            if not depth:
                if not re.match(r"(?:inline\s+)?namespace\b", head):
                    found.append((head, text[body_start:k]))
                head = ""
            continue
        paren += {"(": 1, ")": -1}.get(c, 0)
        if c == "{" and not paren:
            head, depth, body_start = " ".join(head.split()), 1, k + 1
        elif c == ";" and not paren:
            if head.strip():
                found.append((" ".join(head.split()), ""))
            head = ""
        else:
            head += c
    return found


def _probes(declarations: list[tuple[str, str]]) -> list[str]:
    """One line per global name the headers declare, that nvcc rejects only if CUDA declares the same:
    a function redeclared with another return type, a type defined again, a variable of an
    enumerator's or a variable's name. Templates (the host API's, CUDA's own) are left out. The
    functions come first: a type nvcc has defined again stands for the new one in later lines."""
    functions, probes = [], []
    for head, body in declarations:
        head = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\[\[\w+\]\]|\b(?:constexpr|inline|static)\b", "",
                      head).strip()
        kind = re.match(r"(?:typedef\s+)?(struct|union|class|enum)\b", head)
        if head.startswith(("template", "using", "static_assert")) or head.startswith("typedef struct CU"):
            continue
        if kind or head.startswith("typedef"):
            name = re.findall(r"\w+", re.sub(r"alignas\s*\((?:[^()]|\([^()]*\))*\)", "", head))[-1]
            probes.append(f"struct {name} {{ int probe; }};")
            if kind and kind.group(1) == "enum":
                probes += [f"double {e};" for e in re.findall(r"(\w+)\s*(?:=[^,]*)?(?:,|$)", body.strip())]
        elif "(" in head:
            name, params = re.match(r".*?\b(\w+)\s*\((.*)\)\s*$", head).groups()
            params = re.sub(r"\s*=\s*[^,]+", "", params)  # default arguments
            space = "" if name.startswith("cuda") else "__device__ "
            functions.append(f"{space}Probe {name}({params});")
        else:
            variable = re.findall(r"(\w+)\s*(?:=|$)", head)[0]
            probes.append(f"double {variable};")
    return functions + probes


CUDA_TEMPLATES = {
    "cudaMalloc", "cudaMallocManaged", "cudaMallocHost", "cudaMallocAsync", "cudaMallocPitch", "cudaMemcpyToSymbol",
    "cudaMemcpyFromSymbol", "cudaGetSymbolAddress", "cudaFuncSetAttribute", "cudaFuncSetCacheConfig",
    "cudaFuncSetSharedMemConfig", "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyMaxPotentialBlockSize",
}
"""The global function templates CUDA's cuda_runtime.h declares (and the emulator does too): a template of
any other name would take calls, or clash with a file's own template, that nvcc leaves alone."""


@pytest.mark.skipif(shutil.which("g++") is None, reason="g++ is not on PATH")
def test_the_emulators_global_templates_are_cudas():
    templates = {re.match(r".*?(\w+)\s*\(", re.sub(r"template\s*<[^>]*>", "", head)).group(1)
                 for head, _ in _global_declarations(_own_text()) if head.startswith("template")}
    assert templates and templates <= CUDA_TEMPLATES


@pytest.mark.nvcc
def test_cuda_declares_those_templates(tmp_path):
    (tmp_path / "runtime.cu").write_text("#include <cuda_runtime.h>\n")
    proc = subprocess.run(["nvcc", "-M", "runtime.cu"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    path = next(p for p in proc.stdout.replace("\\", " ").split() if p.endswith("/cuda_runtime.h"))
    header = Path(path).read_text()
    declared = set(re.findall(r"template\s*<\s*class T\s*>[^;{(]*?\b(cuda\w+)\s*\(", header))
    assert CUDA_TEMPLATES <= declared


REDECLARED = re.compile(r"already been (?:declared|defined)|redeclaration|cannot overload|cannot be overloaded"
                        r"|incompatible with")


@pytest.mark.nvcc
@pytest.mark.slow
def test_every_global_function_type_and_enumerator_the_emulator_declares_is_cudas(tmp_path):
    probes = _probes(_global_declarations(_own_text()))
    assert len(probes) > 300  # the parse found the headers' declarations
    assert "__device__ Probe atomicAdd(float* a, float v);" in probes and "struct float4 { int probe; };" in probes
    prelude = ["#include <cuda_fp16.h>", "#include <cooperative_groups.h>", "#include <mma.h>", "struct Probe {};"]
    (tmp_path / "probes.cu").write_text("\n".join(prelude + probes) + "\n")
    proc = subprocess.run(["nvcc", "-arch=sm_90", "-c", "probes.cu", "-o", "probes.o", "-Xcudafe",
                           "--error_limit=100000"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    rejected = {int(line) for line, message in re.findall(r"^probes\.cu\((\d+)\): error: (.*)$", proc.stderr, re.M)
                if REDECLARED.search(message)}
    not_cudas = [probe for n, probe in enumerate(probes, len(prelude) + 1) if n not in rejected]
    assert not_cudas == [], "declared by the emulator, not by CUDA 13"
