"""A stand-in for the base module of LeetGPU's challenge repository, written for this project's tests.

Challenge files import these names (`from core.challenge_base import ChallengeBase, RandTensor, ...`), so the
class names, constructor arguments and attribute names follow LeetGPU's published format; everything else here
is our own. The tensor specs are plain descriptions: whoever runs a challenge decides how to turn one into a
tensor (on which device, from which random stream), which is why they hold no torch objects.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any


@dataclass
class _Spec:
    """What every spec has: a shape, kept as a tuple so that specs compare equal whether a challenge wrote
    the shape as a list or a tuple."""

    shape: tuple

    def __post_init__(self):
        self.shape = tuple(self.shape)


@dataclass
class RandTensor(_Spec):
    """An input drawn uniformly from [low, high): lets a performance case name a large input without
    building it."""

    low: float = 0.0
    high: float = 1.0
    dtype: str = "float32"


@dataclass
class RandnTensor(_Spec):
    """An input drawn from a normal distribution, for data whose extremes matter (reductions)."""

    mean: float = 0.0
    std: float = 1.0
    dtype: str = "float32"


@dataclass
class RandIntTensor(_Spec):
    """An integer input drawn uniformly from [low, high); the bounds have no default because an index or
    bin number is only meaningful against the size it indexes."""

    low: int
    high: int
    dtype: str = "int32"


@dataclass
class FullTensor(_Spec):
    """A buffer holding one value everywhere: zeros for an output the problem says starts cleared, or a
    constant input."""

    value: float = 0.0
    dtype: str = "float32"


@dataclass
class OutTensor(_Spec):
    """An output buffer whose starting contents the problem does not define; only its size is given."""

    dtype: str = "float32"


class ChallengeBase(ABC):
    """One problem: its tolerances, the C signature of `solve`, test generators and a PyTorch reference.

    Tests are dictionaries from each `solve` parameter's name to a tensor, a spec above, or a Python number.
    The example test is one dictionary, the functional tests a list of them, the performance test one.
    """

    name: str
    atol: float
    rtol: float
    num_gpus: int
    access_tier: str

    def __init__(self, device: str = "cuda"):
        self.device = device

    @abstractmethod
    def reference_impl(self, *args, **kwargs) -> None:
        """Computes the expected outputs in place, in the tensors it is given (keyword names as in the
        signature)."""

    @abstractmethod
    def get_solve_signature(self) -> dict[str, tuple[Any, str]]:
        """Each parameter of `solve`, in order: its ctypes type and whether it is "in", "out" or "inout"."""

    @abstractmethod
    def generate_example_test(self) -> dict[str, Any]:
        """The small case the statement shows."""

    @abstractmethod
    def generate_functional_test(self) -> list[dict[str, Any]]:
        """The cases a submission must pass: edge sizes first, then a few random ones."""

    @abstractmethod
    def generate_performance_test(self) -> dict[str, Any]:
        """The one large case a submission is timed on."""
