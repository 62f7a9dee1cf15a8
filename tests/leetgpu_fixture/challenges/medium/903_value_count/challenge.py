"""How many times each value in [0, num_bins) occurs: an exact integer output built with atomics.

The tests hand `counts` over already zeroed and the reference clears it again before counting, so a
submission that adds into `counts` without clearing it passes these tests but relies on the caller; a
grader that fills outputs with something else first tells the two apart.
"""

import ctypes
from typing import Any, Dict, List

import torch
from core.challenge_base import ChallengeBase, FullTensor, RandIntTensor


class Challenge(ChallengeBase):
    name = "Value Count"
    atol = 0
    rtol = 0
    num_gpus = 1
    access_tier = "free"

    def reference_impl(self, input: torch.Tensor, counts: torch.Tensor, N: int, num_bins: int):
        assert input.shape == (N,) and counts.shape == (num_bins,)
        assert input.dtype == counts.dtype == torch.int32
        counts.zero_()
        counts.index_add_(0, input.long(), torch.ones_like(input))

    def get_solve_signature(self) -> Dict[str, tuple]:
        return {
            "input": (ctypes.POINTER(ctypes.c_int), "in"),
            "counts": (ctypes.POINTER(ctypes.c_int), "out"),
            "N": (ctypes.c_int, "in"),
            "num_bins": (ctypes.c_int, "in"),
        }

    def _case(self, values: torch.Tensor, num_bins: int) -> Dict[str, Any]:
        counts = torch.zeros(num_bins, device=self.device, dtype=torch.int32)
        return {"input": values, "counts": counts, "N": values.numel(), "num_bins": num_bins}

    def _listed(self, values: List[int], num_bins: int) -> Dict[str, Any]:
        return self._case(torch.tensor(values, device=self.device, dtype=torch.int32), num_bins)

    def _random(self, n: int, num_bins: int) -> Dict[str, Any]:
        values = torch.randint(0, num_bins, (n,), device=self.device, dtype=torch.int32)
        return self._case(values, num_bins)

    def generate_example_test(self) -> Dict[str, Any]:
        return self._listed([2, 0, 2, 3, 2, 0], 5)

    def generate_functional_test(self) -> List[Dict[str, Any]]:
        return [
            self._listed([0], 1),
            self._listed([2, 0, 2, 3, 2, 0], 5),
            self._listed([1] * 33, 3),
            self._random(100, 10),
            self._random(1000, 256),
            self._random(5000, 2),
            self._random(3001, 1024),
        ]

    def generate_performance_test(self) -> Dict[str, Any]:
        n, num_bins = 1_000_000, 1024
        return {
            "input": RandIntTensor((n,), 0, num_bins, dtype="int32"),
            "counts": FullTensor((num_bins,), 0, dtype="int32"),
            "N": n,
            "num_bins": num_bins,
        }
