"""The smallest and largest element of a float vector: a reduction with two one-element outputs.

Some listed cases keep their extremes at even positions, so a reduction that loses the even-numbered
threads' partial results (a missing barrier, when threads run in an unlucky order) gets them wrong.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, OutTensor, RandnTensor


class Challenge(ChallengeBase):
    name = "Minimum and Maximum"
    atol = 1e-06
    rtol = 1e-06
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, x: torch.Tensor, lo: torch.Tensor, hi: torch.Tensor, N: int):
        assert x.shape == (N,) and lo.shape == hi.shape == (1,)
        lo.fill_(x.min().item())
        hi.fill_(x.max().item())

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "x": (ctypes.POINTER(ctypes.c_float), "in"),
            "lo": (ctypes.POINTER(ctypes.c_float), "out"),
            "hi": (ctypes.POINTER(ctypes.c_float), "out"),
            "N": (ctypes.c_int, "in"),
        }

    def _case(self, x: torch.Tensor) -> Dict[str, Any]:
        lo, hi = torch.zeros(1, device=self.device), torch.zeros(1, device=self.device)
        return {"x": x, "lo": lo, "hi": hi, "N": x.numel()}

    def _listed(self, values: List[float]) -> Dict[str, Any]:
        return self._case(torch.tensor(values, device=self.device, dtype=torch.float32))

    def _normal(self, n: int, std: float) -> Dict[str, Any]:
        return self._case(torch.randn(n, device=self.device, dtype=torch.float32) * std)

    def generate_example_test(self) -> Dict[str, Any]:
        return self._listed([2.0, 7.0, -4.0])

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [
            self._listed([-2.5]),
            self._listed([2.0, 7.0, -4.0]),
            self._listed([9.0, -1.0, 3.0, 5.0]),
            self._listed([4.0] * 40),
            self._listed([float(v) for v in range(300, 0, -1)]),
            self._normal(1000, 3.0),
            self._normal(6007, 100.0),
        ]

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return {"x": RandnTensor((n,), 0.0, 10.0), "lo": OutTensor((1,)), "hi": OutTensor((1,)), "N": n}
