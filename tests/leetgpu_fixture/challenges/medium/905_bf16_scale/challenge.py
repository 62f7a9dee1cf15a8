"""out = x * s in bfloat16: the other 16-bit float LeetGPU passes as POINTER(c_uint16).

Its ctypes entry is the same as half's, so only the starter's `__nv_bfloat16` tells a grader which of the two
formats the bytes are in.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, OutTensor, RandTensor


class Challenge(ChallengeBase):
    name = "BFloat16 Scale"
    atol = 1e-02
    rtol = 1e-02
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, x: torch.Tensor, out: torch.Tensor, s: float, N: int):
        assert x.shape == out.shape == (N,)
        assert x.dtype == out.dtype == torch.bfloat16
        out.copy_(x.float() * s)

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "x": (ctypes.POINTER(ctypes.c_uint16), "in"),
            "out": (ctypes.POINTER(ctypes.c_uint16), "out"),
            "s": (ctypes.c_float, "in"),
            "N": (ctypes.c_int, "in"),
        }

    def _case(self, x: torch.Tensor, s: float) -> Dict[str, Any]:
        return {"x": x, "out": torch.zeros_like(x), "s": s, "N": x.numel()}

    def _listed(self, values: List[float], s: float) -> Dict[str, Any]:
        return self._case(torch.tensor(values, device=self.device, dtype=torch.bfloat16), s)

    def _uniform(self, n: int, s: float) -> Dict[str, Any]:
        return self._case(torch.empty(n, device=self.device, dtype=torch.bfloat16).uniform_(-50.0, 50.0), s)

    def generate_example_test(self) -> Dict[str, Any]:
        return self._listed([1.0, -2.5, 96.0], 0.5)

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [
            self._listed([3.0], -2.0),
            self._listed([1.0, -2.5, 96.0], 0.5),
            self._listed([0.125, 1024.0, -7.0, 0.0], 3.0),
            self._uniform(257, 0.01),
            self._uniform(3000, -1.75),
        ]

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return {
            "x": RandTensor((n,), -50.0, 50.0, dtype="bfloat16"),
            "out": OutTensor((n,), dtype="bfloat16"),
            "s": 1.5,
            "N": n,
        }
