"""LeetGPU's official challenges, read from the user's own checkout of its repository (issue 27).

The repository (AlphaGPU/leetgpu-challenges, CC BY-NC-ND) is never copied into this project: the grader reads
the checkout its user has, at run time, the way a tool reads a data set. Three stages:

- `checkout`: the catalogue, statements and signatures, read without importing anything (no PyTorch);
- `loader`: a challenge's own code imported with PyTorch in the grader's process (never in the box), its test
  cases generated as the file generates them, its reference run;
- `official`: the challenge as the grading pipeline takes it (grader.spec.Challenge): the file's cases as
  parity cases, the checks LeetGPU's judge does not make as extras, LeetGPU's atol/rtol rule.
"""

from grader.leetgpu.checkout import (Mapped, Official, OfficialParam, catalogue, checkout_root, find, mapped,
                                     statement_text)

__all__ = ["Mapped", "Official", "OfficialParam", "catalogue", "checkout_root", "find", "mapped", "statement_text"]
