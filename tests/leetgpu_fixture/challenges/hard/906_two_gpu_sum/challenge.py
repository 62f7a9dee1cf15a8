"""The sum of a float vector, meant to be split across two GPUs.

The problem itself is simple; what matters for the fixture is `num_gpus = 2`, which a single-device grader
has to refuse rather than run on one card.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, OutTensor, RandTensor


class Challenge(ChallengeBase):
    name = "Two-GPU Sum"
    atol = 1e-03
    rtol = 1e-03
    num_gpus = 2
    access_tier = "free"

    def reference_impl(self, x: torch.Tensor, total: torch.Tensor, N: int):
        assert x.shape == (N,) and total.shape == (1,)
        total.fill_(x.double().sum().item())

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "x": (ctypes.POINTER(ctypes.c_float), "in"),
            "total": (ctypes.POINTER(ctypes.c_float), "out"),
            "N": (ctypes.c_int, "in"),
        }

    def _case(self, x: torch.Tensor) -> Dict[str, Any]:
        return {"x": x, "total": torch.zeros(1, device=self.device), "N": x.numel()}

    def generate_example_test(self) -> Dict[str, Any]:
        return self._case(torch.tensor([1.5, 2.0, -0.5, 4.0], device=self.device))

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [
            self._case(torch.tensor([3.0], device=self.device)),
            self._case(torch.tensor([1.5, 2.0, -0.5, 4.0], device=self.device)),
            self._case(torch.empty(2049, device=self.device).uniform_(-1.0, 1.0)),
        ]

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return {"x": RandTensor((n,), -1.0, 1.0), "total": OutTensor((1,)), "N": n}
