"""Copies a vector of 16-bit integers: its buffers are POINTER(c_int16), a type this project's grader has no
buffer for, so it must name the parameter and refuse the challenge instead of guessing a layout.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, OutTensor, RandIntTensor


class Challenge(ChallengeBase):
    name = "Short Copy"
    atol = 0
    rtol = 0
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, x: torch.Tensor, y: torch.Tensor, N: int):
        assert x.shape == y.shape == (N,)
        assert x.dtype == y.dtype == torch.int16
        y.copy_(x)

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "x": (ctypes.POINTER(ctypes.c_int16), "in"),
            "y": (ctypes.POINTER(ctypes.c_int16), "out"),
            "N": (ctypes.c_int, "in"),
        }

    def _case(self, values: List[int]) -> Dict[str, Any]:
        x = torch.tensor(values, device=self.device, dtype=torch.int16)
        return {"x": x, "y": torch.zeros_like(x), "N": x.numel()}

    def generate_example_test(self) -> Dict[str, Any]:
        return self._case([5, -300, 32767])

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [self._case([-1]), self._case([5, -300, 32767]), self._case(list(range(-500, 500, 7)))]

    def generate_performance_test(self) -> Dict[str, Any]:
        n = 1_000_000
        return {"x": RandIntTensor((n,), -32768, 32768, dtype="int16"), "y": OutTensor((n,), dtype="int16"), "N": n}
