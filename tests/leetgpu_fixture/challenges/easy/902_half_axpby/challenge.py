"""y = alpha * x + beta * y in half precision: an inout buffer, 16-bit floats and float scalars.

The 16-bit buffers are passed as POINTER(c_uint16) holding float16 tensors, LeetGPU's way of passing half.
The functional tests build their tensors eagerly; the performance test names them with specs, so that a
grader has to materialize both kinds.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, RandTensor


class Challenge(ChallengeBase):
    name = "Half-Precision AXPBY"
    atol = 1e-02
    rtol = 1e-02
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, x: torch.Tensor, y: torch.Tensor, alpha: float, beta: float, N: int):
        assert x.shape == y.shape == (N,)
        assert x.dtype == y.dtype == torch.float16
        y.copy_(alpha * x.float() + beta * y.float())

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "x": (ctypes.POINTER(ctypes.c_uint16), "in"),
            "y": (ctypes.POINTER(ctypes.c_uint16), "inout"),
            "alpha": (ctypes.c_float, "in"),
            "beta": (ctypes.c_float, "in"),
            "N": (ctypes.c_int, "in"),
        }

    def _half(self, values) -> torch.Tensor:
        return torch.tensor(values, device=self.device, dtype=torch.float16)

    def _uniform(self, n: int, low: float, high: float) -> torch.Tensor:
        return torch.empty(n, device=self.device, dtype=torch.float16).uniform_(low, high)

    def _case(self, x: torch.Tensor, y: torch.Tensor, alpha: float, beta: float) -> Dict[str, Any]:
        return {"x": x, "y": y, "alpha": alpha, "beta": beta, "N": x.numel()}

    def generate_example_test(self) -> Dict[str, Any]:
        return self._case(self._half([1.0, 2.0, -4.0]), self._half([0.5, 0.5, 1.0]), 2.0, -1.0)

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [
            self._case(self._half([3.0]), self._half([-1.0]), 0.5, 2.0),
            self._case(self._half([1.0, 2.0, -4.0]), self._half([0.5, 0.5, 1.0]), 2.0, -1.0),
            self._case(self._half([0.25, -0.25, 8.0, 0.0, 1.5]), self._half([1.0, 1.0, -2.0, 3.0, 0.0]), 0.0, 1.0),
            self._case(self._uniform(100, -2.0, 2.0), self._uniform(100, -2.0, 2.0), 1.5, 0.25),
            self._case(self._uniform(4099, -1.0, 1.0), self._uniform(4099, -1.0, 1.0), -0.75, 1.25),
        ]

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return {
            "x": RandTensor((n,), -1.0, 1.0, dtype="float16"),
            "y": RandTensor((n,), -1.0, 1.0, dtype="float16"),
            "alpha": 0.75,
            "beta": -1.25,
            "N": n,
        }
