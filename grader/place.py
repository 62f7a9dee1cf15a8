"""The place stage: where a submission stands on the reference ladder, measured on the same GPU.

Speed against a reference is the geometric mean, over the performance cases, of reference time
over submission time (above 1: faster). A submission reaches level L when it is at least as fast
as the level-L reference, within REACH (timings repeat to a fraction of a percent, but a reference
re-measured must still land on its own rung; rungs are 1.15× or more apart); it is "below level
1" when slower than all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from grader.spec import Level

REACH = 0.97


@dataclass(frozen=True)
class Placement:
    level: int
    """0 when slower than every reference."""
    levels: int
    name: str
    ratio_to_level: float | None
    next_level: int | None
    next_name: str | None
    ratio_to_next: float | None
    next_technique: str | None
    ratios: dict[int, float]
    """Speed relative to each measured level."""

    def headline(self) -> str:
        if self.level == 0:
            first = f"{1 / self.ratio_to_next:.1f}× slower than" if self.ratio_to_next else "slower than"
            return f"below level 1 — {first} the level-1 reference"
        text = f"level {self.level} of {self.levels} ({self.name}) — {self.ratio_to_level:.2f}× the level-{self.level} reference"
        if self.next_level and self.ratio_to_next is not None:
            text += f", {self.ratio_to_next:.2f}× level {self.next_level}"
        return text


def speed_ratio(submission_ms: dict[str, float], reference_ms: dict[str, float]) -> float | None:
    shared = [case for case in submission_ms if case in reference_ms and submission_ms[case] > 0]
    if not shared:
        return None
    logs = [math.log(reference_ms[c] / submission_ms[c]) for c in shared]
    return math.exp(sum(logs) / len(logs))


def place(submission_ms: dict[str, float], measured: dict[int, dict[str, float]], levels: tuple[Level, ...]) -> Placement:
    """`measured` maps level number to its median time per performance case (measured levels only)."""
    ratios = {n: r for n, ms in measured.items() if (r := speed_ratio(submission_ms, ms)) is not None}
    reached = max((n for n, r in ratios.items() if r >= REACH), default=0)
    by_number = {level.number: level for level in levels}
    following = [n for n in sorted(ratios) if n > reached]
    next_level = following[0] if following else None
    return Placement(
        level=reached,
        levels=len(levels),
        name=by_number[reached].name if reached else "",
        ratio_to_level=ratios.get(reached),
        next_level=next_level,
        next_name=by_number[next_level].name if next_level else None,
        ratio_to_next=ratios.get(next_level) if next_level else None,
        next_technique=by_number[next_level].technique if next_level else None,
        ratios=ratios,
    )
