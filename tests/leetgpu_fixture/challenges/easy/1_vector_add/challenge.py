"""Element-wise sum of two float vectors: the fixture's plainest problem.

N is passed as a size_t while the starter declares `int N`, as LeetGPU's own vector addition does, so a
grader must take the starter's word for what the student writes. C starts as zeros in every test.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase


class Challenge(ChallengeBase):
    name = "Vector Addition"
    atol = 1e-05
    rtol = 1e-05
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, N: int):
        assert A.shape == B.shape == C.shape == (N,)
        torch.add(A, B, out=C)

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "A": (ctypes.POINTER(ctypes.c_float), "in"),
            "B": (ctypes.POINTER(ctypes.c_float), "in"),
            "C": (ctypes.POINTER(ctypes.c_float), "out"),
            "N": (ctypes.c_size_t, "in"),
        }

    def _case(self, a: torch.Tensor, b: torch.Tensor) -> Dict[str, Any]:
        """A test from its two inputs; C is zeroed, never left empty."""
        return {"A": a, "B": b, "C": torch.zeros_like(a), "N": a.numel()}

    def _values(self, values: List[float]) -> torch.Tensor:
        return torch.tensor(values, device=self.device, dtype=torch.float32)

    def _uniform(self, n: int, low: float, high: float) -> torch.Tensor:
        return torch.empty(n, device=self.device, dtype=torch.float32).uniform_(low, high)

    def generate_example_test(self) -> Dict[str, Any]:
        return self._case(self._values([0.5, -1.0, 2.0]), self._values([1.5, 4.0, -2.0]))

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        pairs = [
            ([7.0], [-3.0]),
            ([1.25, -8.0], [0.75, 8.0]),
            ([0.5, -1.0, 2.0], [1.5, 4.0, -2.0]),
            ([1.0, 2.0, 3.0, 4.0], [10.0, 20.0, 30.0, 40.0]),
            ([-6.5, 0.0, 1e-7, 3e6], [6.5, -0.0, 1e-7, -1e6]),
        ]
        tests = [self._case(self._values(a), self._values(b)) for a, b in pairs]
        tests.append(self._case(torch.zeros(16, device=self.device), torch.zeros(16, device=self.device)))
        tests.append(self._case(self._uniform(1000, -10.0, 10.0), self._uniform(1000, -10.0, 10.0)))
        tests.append(self._case(self._uniform(10007, 0.0, 1.0), self._uniform(10007, -1.0, 0.0)))
        return tests

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return self._case(self._uniform(n, -100.0, 100.0), self._uniform(n, -100.0, 100.0))
