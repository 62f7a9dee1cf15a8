"""The place stage: where a submission stands on the reference ladder, measured on the same GPU.

Speed against a reference is the geometric mean, over the performance cases, of reference time
over submission time (above 1: faster). A submission reaches level L when it is at least as fast
as the level-L reference, within REACH (timings repeat to a fraction of a percent, but a reference
re-measured must still land on its own rung; rungs are 1.15× or more apart); it is "below level
1" when slower than all of them.

The headline level stays the geometric mean over the shapes, for three reasons: it orders
submissions exactly as the leaderboard does (by the geometric mean of the median times), so against
one measured ladder nobody higher on the board sits on a lower level; each shape counts the same
however long it runs; and a kernel tuned for one shape only cannot claim a level it shows nowhere
else. The alternatives are worse as a headline: the slowest shape's level lets one cliff erase
everything else the kernel does, the fastest shape's rewards specialising.

The mean hides a kernel that is fast on most shapes and falls off a cliff on one (a float4 kernel
that drops to a scalar fallback when a size is not a multiple of 4 is the classic case), and then
the next rung's technique is the wrong advice: the kernel already has it. So every shape is also
placed alone, by the same REACH rule, and a shape LAG_RUNGS or more rungs below the best one is
reported as a `Lag` with its likely cause; the report's advice then addresses that shape.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

from grader.spec import Level, Shape

REACH = 0.97
LAG_RUNGS = 2
"""How many measured rungs a shape must fall below the submission's best shape to be called out.
One rung is not enough: a submission between two rungs lands on either side of the line shape by
shape, and the steps themselves differ between shapes (on the H200, level 6 is 1.28× level 5 on
8192×6144×4096 but 1.12× on 4095×4097×4093, where its cp.async copies are 4 bytes). Two rungs means
the shape loses at least one whole step against the others, usually two (1.6× or more), which a
kernel that treats every shape alike does not show."""
ALIGNMENTS = (4, 8, 16, 32, 64, 128)
"""Multiples a kernel's fast path may need: 4 for float4 rows (16 bytes), the rest for tile widths."""
SKEW_MIN = 4.0
"""A shape is thin (tall and skinny, or short and wide) when its longest side is this many times its
shortest and twice as lopsided as the fast shapes: too few blocks along the short side, or a deep
serial loop along the long one."""


class LagCause(enum.Enum):
    """Why one shape is far slower than the others, as far as its dimensions tell."""

    UNALIGNED = "unaligned"
    """The slow shape has sizes that are not multiples of 4 (8, 16…) and the fast shapes have none."""
    THIN = "thin"
    """The slow shape is much more lopsided than the fast ones."""
    CLIFF = "cliff"
    """Neither: a tile-size or occupancy cliff, or a size-dependent branch in solve."""


@dataclass(frozen=True)
class Lag:
    """A performance shape far below the submission's best shape: where its next level is."""

    case: str
    """The slow shape's label (as in the performance table), e.g. "irregular 4095×4097×4093"."""
    level: int
    best_level: int
    best_cases: tuple[str, ...]
    """The labels of the shapes at `best_level`."""
    cause: LagCause
    multiple: int | None
    """UNALIGNED: the smallest multiple the fast shapes share and the slow one breaks."""
    detail: str
    """What in the slow shape's dimensions points at the cause, e.g. "N = 4097 is not a multiple of 4"
    (it completes "…level 1 on irregular (4095×4097×4093), where ___")."""
    level_if_matched: int
    """The overall level the submission would get at the level-`best_level` reference's speed on this shape."""

    def summary(self) -> str:
        fast = " and ".join(_short(label) for label in self.best_cases)
        return (f"your kernel reaches level {self.best_level} on {fast} but {_level_words(self.level)} on "
                f"{_long(self.case)}, where {self.detail}")

    def advice(self) -> str:
        text = _cause_advice(self.cause, self.multiple)
        if self.level_if_matched > self.level:
            text += (f" At level-{self.best_level} speed on that shape the overall level would be "
                     f"{self.level_if_matched}.")
        return text


def _cause_advice(cause: LagCause, multiple: int | None) -> str:
    if cause is LagCause.UNALIGNED and multiple == 4:
        return ("likely a fallback path for sizes that are not multiples of 4 (vector loads need aligned rows). "
                "Keep the fast tiled kernel for every size and change only its loads: float4 where a row allows "
                "it, element by element with zero fill elsewhere (the ladder's register-tiled levels do this and "
                "lose little), instead of switching to a slower kernel.")
    if cause is LagCause.UNALIGNED:
        return (f"likely a tile-size cliff: tiles of {multiple} do not divide this shape, and the partial tiles "
                "take a slow path. Handle the edges inside the fast kernel (guarded loads, zero-filled shared "
                "memory) instead of in a separate one.")
    if cause is LagCause.THIN:
        return ("the kernel handles thin shapes badly. Check the grid it launches for this shape: too few blocks "
                "along the short side leave multiprocessors idle (use smaller tiles, or split the inner dimension "
                "across blocks), and a thread walking the long side alone serialises the work.")
    return ("look for a tile-size or occupancy cliff: tiles that do not divide it and are finished by a slow "
            "path, a last partial wave of blocks, or a branch in solve that picks another kernel at this size.")


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
    shape_levels: dict[str, int] = field(default_factory=dict)
    """The level reached on each performance case alone (same REACH rule), by case label."""
    lag: Lag | None = None
    """The shape LAG_RUNGS or more rungs below the best shape, when there is one."""

    def headline(self) -> str:
        if self.level == 0:
            first = f"{1 / self.ratio_to_next:.1f}× slower than" if self.ratio_to_next else "slower than"
            return f"below level 1 — {first} the level-1 reference"
        text = f"level {self.level} of {self.levels} ({self.name}) — {self.ratio_to_level:.2f}× the level-{self.level} reference"
        if self.next_level and self.ratio_to_next is not None:
            text += f", {self.ratio_to_next:.2f}× level {self.next_level}"
        return text

    def per_shape(self) -> str:
        """"leetgpu 5 · square 5 · irregular 2": the level on each shape alone."""
        return " · ".join(f"{_short(label)} {level}" for label, level in self.shape_levels.items())


def speed_ratio(submission_ms: dict[str, float], reference_ms: dict[str, float]) -> float | None:
    shared = [case for case in submission_ms if case in reference_ms and submission_ms[case] > 0]
    if not shared:
        return None
    logs = [math.log(reference_ms[c] / submission_ms[c]) for c in shared]
    return math.exp(sum(logs) / len(logs))


def place(submission_ms: dict[str, float], measured: dict[int, dict[str, float]], levels: tuple[Level, ...],
          shapes: tuple[Shape, ...] = ()) -> Placement:
    """`measured` maps level number to its median time per performance case (measured levels only);
    `shapes` are the performance shapes, whose dimensions explain a lagging one."""
    ratios = _ratios(submission_ms, measured)
    reached = _reached(ratios)
    by_number = {level.number: level for level in levels}
    following = [n for n in sorted(ratios) if n > reached]
    next_level = following[0] if following else None
    shape_levels = {case: _reached(_ratios({case: ms}, measured)) for case, ms in submission_ms.items()}
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
        shape_levels=shape_levels,
        lag=find_lag(submission_ms, measured, shape_levels, shapes),
    )


def _ratios(submission_ms: dict[str, float], measured: dict[int, dict[str, float]]) -> dict[int, float]:
    return {n: r for n, ms in measured.items() if (r := speed_ratio(submission_ms, ms)) is not None}


def _reached(ratios: dict[int, float]) -> int:
    return max((n for n, r in ratios.items() if r >= REACH), default=0)


# --------------------------------------------------------------------------- one shape far below the rest


def find_lag(submission_ms: dict[str, float], measured: dict[int, dict[str, float]], shape_levels: dict[str, int],
             shapes: tuple[Shape, ...]) -> Lag | None:
    """The slowest shape, when it is LAG_RUNGS or more measured rungs below the best one."""
    if len(shape_levels) < 2:
        return None
    rungs = [0, *sorted(measured)]  # counted over measured rungs: an unavailable level is no step
    best = max(shape_levels.values())
    slow = min(shape_levels, key=lambda case: (shape_levels[case], _speed(case, submission_ms, measured, best)))
    if rungs.index(best) - rungs.index(shape_levels[slow]) < LAG_RUNGS:
        return None
    fast = tuple(case for case, level in shape_levels.items() if level == best)
    by_label = {shape.label(): shape for shape in shapes}
    cause, multiple, detail = explain(by_label.get(slow), [by_label[c] for c in fast if c in by_label])
    target_ms = measured[best].get(slow)
    matched = {**submission_ms, slow: target_ms} if target_ms else submission_ms
    return Lag(slow, shape_levels[slow], best, fast, cause, multiple, detail, _reached(_ratios(matched, measured)))


def _speed(case: str, submission_ms: dict[str, float], measured: dict[int, dict[str, float]], level: int) -> float:
    """Reference time over submission time on one shape: of two shapes on one rung, the slower lags."""
    reference_ms = measured.get(level, {}).get(case)
    return reference_ms / submission_ms[case] if reference_ms and submission_ms[case] > 0 else math.inf


def explain(slow: Shape | None, fast: list[Shape]) -> tuple[LagCause, int | None, str]:
    """The likely cause of a slow shape, from its dimensions against the fast shapes'."""
    if slow is None or not fast:
        return LagCause.CLIFF, None, "nothing in its dimensions was compared (shapes unknown)"
    for multiple in ALIGNMENTS:
        if all(_divisible(shape, multiple) for shape in fast) and not _divisible(slow, multiple):
            odd = [f"{name} = {size}" for name, size in slow.dims.items() if size % multiple]
            verb = "is not a multiple" if len(odd) == 1 else "are not multiples"
            return LagCause.UNALIGNED, multiple, f"{_join(odd)} {verb} of {multiple}"
    if _aspect(slow) >= max(SKEW_MIN, 2 * max(_aspect(shape) for shape in fast)):
        return LagCause.THIN, None, f"the longest side is {_aspect(slow):.0f} times the shortest"
    return LagCause.CLIFF, None, "the sizes are as aligned and as square as on the fast shapes"


def _divisible(shape: Shape, multiple: int) -> bool:
    return all(size % multiple == 0 for size in shape.dims.values())


def _aspect(shape: Shape) -> float:
    sizes = [size for size in shape.dims.values() if size > 0]
    return max(sizes) / min(sizes) if sizes else 1.0


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _short(label: str) -> str:
    """A case's name without its dimensions ("irregular 4095×4097×4093" -> "irregular")."""
    return label.split(" ")[0]


def _long(label: str) -> str:
    name, _, dims = label.partition(" ")
    return f"{name} ({dims})" if dims else name


def _level_words(level: int) -> str:
    return f"level {level}" if level else "below level 1"
