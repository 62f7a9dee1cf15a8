"""An official challenge's own code, run with PyTorch in the grader's process (never in the box): its
`Challenge` class imported from the user's checkout, its test cases generated exactly as the file generates
them, and its `reference_impl` run on them.

The checkout is the user's, like a challenge's reference.py: trusted code. PyTorch is an optional extra
(`pip install "cuda-grader[leetgpu]"`); without it listing and showing work and grading says which extra to
install. The file's tensors become numpy arrays at once: everything after (buffers, guards, comparison) is
the grader's own machinery, the same as for its own challenges.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Callable

import numpy as np

from grader import spec
from grader.errors import GraderError, SpecError, UsageError
from grader.leetgpu.checkout import CHALLENGE_FILE, Official

EXTRA_HINT = ("pip install 'cuda-grader[leetgpu]' (or PyTorch alone; on a machine without a GPU the CPU build is "
              "enough: pip install torch --index-url https://download.pytorch.org/whl/cpu)")
SPEC_CLASSES = ("RandTensor", "RandnTensor", "RandIntTensor", "FullTensor", "OutTensor")
"""The declarative inputs of newer challenge files (the checkout's core/challenge_base.py), known by name so
that two checkouts' copies of the classes are both understood."""


def torch_module():
    """PyTorch, or a UsageError saying which extra to install."""
    try:
        import torch
    except ImportError as exc:
        raise UsageError("grading LeetGPU's official challenges needs PyTorch, which is not installed",
                         hint=EXTRA_HINT) from exc
    return torch


class Which(Enum):
    """The file's three generators."""

    EXAMPLE = "generate_example_test"
    FUNCTIONAL = "generate_functional_test"
    PERFORMANCE = "generate_performance_test"


@dataclass(frozen=True)
class FileCase:
    """One test case as the file made it, on the host: each buffer's starting contents in the file's shape and
    dtype (outputs as the file filled them: zeros, mostly), and every scalar."""

    name: str
    arrays: dict[str, np.ndarray]
    scalars: dict[str, int | float]


@dataclass
class Loaded:
    """An imported official challenge: the instance of its class, on `device` ("cpu" or "cuda")."""

    official: Official
    instance: Any
    device: str
    names: tuple[str, ...] = field(default=())
    """Its parameters in `solve`'s order."""

    def call(self, what: str, function: Callable, *args, **kwargs):
        return call_file(self.official, what, function, *args, **kwargs)

    def cases(self, which: Which, seed: int) -> list[FileCase]:
        """The file's cases from one generator, its random draws seeded with `seed` (PyTorch's generators:
        the file draws through them)."""
        torch = torch_module()
        torch.manual_seed(seed)
        with zeroed_empty(torch):
            made = self.call(which.value, getattr(self.instance, which.value))
        made = [made] if isinstance(made, dict) else made
        if not isinstance(made, list) or not all(isinstance(case, dict) for case in made):
            raise SpecError(self.official.folder / CHALLENGE_FILE, which.value,
                            f"returned {type(made).__name__}, not a dictionary or a list of them",
                            hint="the checkout's format is not one this grader knows: update the grader")
        label = {Which.EXAMPLE: "example", Which.PERFORMANCE: "performance"}.get(which)
        return [self._host_case(label or f"test {i + 1}", case) for i, case in enumerate(made)]

    def _host_case(self, name: str, case: dict) -> FileCase:
        torch = torch_module()
        missing = [n for n in self.names if n not in case]
        if missing:
            raise SpecError(self.official.folder / CHALLENGE_FILE, "test case",
                            f"case {name!r} gives no {', '.join(missing)}",
                            hint="the test case and get_solve_signature disagree in the checkout")
        arrays, scalars = {}, {}
        for key in self.names:
            value = materialize(case[key], self.device)
            if isinstance(value, torch.Tensor):
                arrays[key] = to_numpy(value)
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                scalars[key] = value
            else:
                raise SpecError(self.official.folder / CHALLENGE_FILE, "test case",
                                f"case {name!r} gives {key} as {type(value).__name__}",
                                hint="the grader knows tensors, ints and floats")
        return FileCase(name, arrays, scalars)

    def reference(self, params: tuple[spec.Param, ...], given: dict[str, Any],
                  shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray]:
        """The file's reference_impl on `given` (host arrays and scalars), its outputs and inouts as host
        arrays. Outputs (of `shapes`) start as zeros, as LeetGPU's tests make them."""
        tensors = self.tensors(params, given, shapes)
        with ieee_fp32():
            self.call("reference_impl", self.instance.reference_impl, **tensors)
        return {p.name: to_numpy(tensors[p.name]) for p in params if p.role in (spec.Role.OUTPUT, spec.Role.INOUT)}

    def reference64(self, params: tuple[spec.Param, ...], given: dict[str, Any],
                    shapes: dict[str, tuple[int, ...]]) -> dict[str, np.ndarray] | None:
        """The same reference with every float buffer in float64: the exact answer its FP32 evaluation
        approximates. None where the challenge has 16-bit floats (its rule allows for them) or no float
        buffer, or where the file's code does not run in float64 (a dtype it fixes inside): not a failure."""
        torch = torch_module()
        kinds = {p.ctype.element.name for p in params if p.role is not None}
        if "float" not in kinds or kinds & {"half", "__nv_bfloat16"}:
            return None
        tensors = {name: value.double() if getattr(value, "dtype", None) == torch.float32 else value
                   for name, value in self.tensors(params, given, shapes).items()}
        try:
            self.instance.reference_impl(**tensors)
        except (KeyboardInterrupt, MemoryError):
            raise
        except BaseException:  # noqa: BLE001 - the FP64 answer is a refinement; without it the rule stands
            return None
        return {p.name: to_numpy(tensors[p.name]) for p in params if p.role in (spec.Role.OUTPUT, spec.Role.INOUT)}

    def tensors(self, params: tuple[spec.Param, ...], given: dict[str, Any], shapes: dict[str, tuple[int, ...]],
                device: str | None = None) -> dict[str, Any]:
        """The keyword arguments of reference_impl: every buffer a tensor on the device, outputs zeros."""
        torch = torch_module()
        device = device or self.device
        found = {}
        for p in params:
            if p.role is None:
                found[p.name] = given[p.name]
            elif p.role is spec.Role.OUTPUT:
                found[p.name] = torch.zeros(tuple(shapes[p.name]), dtype=torch_dtype(p.ctype.element), device=device)
            else:
                found[p.name] = to_torch(given[p.name], device)
        return found


@contextlib.contextmanager
def zeroed_empty(torch):
    """torch.empty and torch.empty_like make zeros while the file's generators run. Files make outputs with
    torch.empty as often as with torch.zeros; on LeetGPU's GPU a fresh allocation holds zeros in practice, on a
    CPU it holds whatever the heap had (a histogram adding into its bins then failed the example in emulation
    and passed on the H200). Zeros make the starting contents the same everywhere and every time; a tensor the
    file fills after making it is filled all the same."""
    empty, empty_like = torch.empty, torch.empty_like

    def zeroed(*args, **kwargs):
        return empty(*args, **kwargs).zero_()

    def zeroed_like(*args, **kwargs):
        return empty_like(*args, **kwargs).zero_()

    torch.empty, torch.empty_like = zeroed, zeroed_like
    try:
        yield
    finally:
        torch.empty, torch.empty_like = empty, empty_like


@contextlib.contextmanager
def ieee_fp32():
    """FP32 products and convolutions in FP32, not TF32, while the reference runs: PyTorch lets cuDNN convolve
    in TF32 by default, and a reference rounded to 10 bits fails a correct FP32 kernel (on an H200, 97% of
    10_2d_convolution's timed outputs differed from an exact FP32 kernel's by 4e-4 relative)."""
    torch = torch_module()
    saved = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = saved


def call_file(official: Official, what: str, function: Callable, *args, **kwargs):
    """Call the checkout's code; whatever it raises is the challenge's fault, named as such."""
    try:
        return function(*args, **kwargs)
    except (KeyboardInterrupt, MemoryError, GraderError):
        raise
    except BaseException as exc:  # SystemExit included: a file must not end the grader
        raise SpecError(official.folder / CHALLENGE_FILE, what,
                        f"raised {type(exc).__name__}: {str(exc)[:300]} when the grader called it",
                        hint="the checkout's file failed, not the submission: update the checkout (git pull) "
                             "or report it to its maintainers") from exc


def load(official: Official, device: str = "cpu") -> Loaded:
    """Import the challenge's file from the checkout (its `core` package found beside it) and make its
    `Challenge` on `device`."""
    torch_module()
    path = official.folder / CHALLENGE_FILE
    root = str(official.folder.parent.parent)  # challenges/: where `core` lives
    _forget_other_core(root)
    sys.path.insert(0, root)
    try:
        name = f"_leetgpu_official_{official.slug}"
        loader = importlib.util.spec_from_file_location(name, path)
        if loader is None or loader.loader is None:
            raise SpecError(path, "import", "cannot be imported", hint="check the checkout")
        module = importlib.util.module_from_spec(loader)
        call_file(official, "import", loader.loader.exec_module, module)
        cls = getattr(module, "Challenge", None)
        if cls is None:
            raise SpecError(path, "Challenge", "the file defines no class Challenge", hint="check the checkout")
        instance = call_file(official, "Challenge(device=...)", cls, device=device)
        signature = call_file(official, "get_solve_signature", instance.get_solve_signature)
    finally:
        sys.path.remove(root) if root in sys.path else None
    return Loaded(official, instance, device, tuple(signature))


def _forget_other_core(root: str) -> None:
    """`core` is imported by its bare name: a second checkout's files must see their own, not the first's."""
    core = sys.modules.get("core")
    where = [str(Path(p).parent) for p in getattr(core, "__path__", [])] if core else []
    if core is not None and root not in where:
        for name in [n for n in sys.modules if n == "core" or n.startswith("core.")]:
            del sys.modules[name]


# --------------------------------------------------------------------------- tensors


def materialize(value: Any, device: str):
    """A declarative spec (RandTensor, ...) as the tensor the judge would make; anything else as it is.
    An OutTensor is made of zeros, as the eager files make their outputs."""
    kind = type(value).__name__
    if kind not in SPEC_CLASSES or not hasattr(value, "shape"):
        return value
    torch = torch_module()
    shape, dtype = tuple(value.shape), getattr(torch, str(getattr(value, "dtype", "float32")))
    if kind == "RandTensor":
        return torch.empty(shape, dtype=dtype, device=device).uniform_(value.low, value.high)
    if kind == "RandnTensor":
        return torch.empty(shape, dtype=dtype, device=device).normal_(value.mean, value.std)
    if kind == "RandIntTensor":
        return torch.randint(value.low, value.high, shape, dtype=dtype, device=device)
    if kind == "FullTensor":
        return torch.full(shape, value.value, dtype=dtype, device=device)
    return torch.zeros(shape, dtype=dtype, device=device)


BFLOAT16 = "bfloat16"


def to_numpy(tensor) -> np.ndarray:
    """A tensor's values as a host array (bfloat16 as ml_dtypes' bfloat16, which numpy lacks)."""
    torch = torch_module()
    host = tensor.detach().to("cpu").contiguous()
    if host.dtype == torch.bfloat16:
        return host.view(torch.int16).numpy().view(spec.BFLOAT16).copy()
    if host.dtype == torch.bool:
        return host.numpy().astype(np.uint8)
    return host.numpy().copy()


def to_torch(array: np.ndarray, device: str):
    torch = torch_module()
    if array.dtype == spec.BFLOAT16:
        return torch.from_numpy(array.view(np.int16).copy()).view(torch.bfloat16).to(device)
    return torch.from_numpy(np.ascontiguousarray(array).copy()).to(device)


def torch_dtype(element: spec.Element):
    torch = torch_module()
    return {"float": torch.float32, "double": torch.float64, "half": torch.float16, "__nv_bfloat16": torch.bfloat16,
            "int": torch.int32, "unsigned int": torch.uint32, "int8_t": torch.int8, "uint8_t": torch.uint8,
            "long long": torch.int64}[element.name]


def flops(loaded: Loaded, params: tuple[spec.Param, ...], case: FileCase) -> float | None:
    """The floating-point work PyTorch counts for the reference on this case (matrix products, convolutions,
    attention), on meta tensors so nothing is computed; None where the reference cannot run on them (a
    reference that reads values, loops in Python)."""
    torch_module()
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    shapes = {name: array.shape for name, array in case.arrays.items()}
    try:
        tensors = loaded.tensors(params, {**case.scalars, **case.arrays}, shapes, device="meta")
        with FlopCounterMode(display=False) as counter:
            loaded.instance.reference_impl(**tensors)
        counted = float(counter.get_total_flops())
    except (KeyboardInterrupt, MemoryError):
        raise
    except BaseException:  # noqa: BLE001 - any failure means "not countable", never a verdict
        return None
    return counted if math.isfinite(counted) else None
