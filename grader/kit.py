"""The challenge kit's check: a challenge validated end to end before students see it (`grader check`).

Four parts, each a list of findings:
- edges: the functional cases hold the sizes kernels trip on (1, a non-multiple of 4, one either side of
  a warp above it, a non-multiple of a 256-thread block above it);
- tolerance: the limit is measured, not guessed. reference.py's (or variants.py's) `variants(inputs, rng)`
  recomputes the answer by correct methods (other summation orders, the precisions a kernel uses) and by
  wrong ones (a lower precision, a dropped term); with the levels' own errors, every correct method must
  stay MARGIN times under the limit and every wrong one must pass it MARGIN times on some case;
- levels: every level ACCEPTED; on a GPU each one faster than the one below (the geometric mean of its
  performance cases' medians);
- wrong files: each gets the verdict its `// expect:` header promises (tests read the same header).

The parts run the grader's own code (spec, case preparation, check, the pipeline) so what passes here
is what the grader will do with a submission.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np

from grader import case as cases, check, ladder, pipeline, source as sources, spec
from grader.errors import SpecError
from grader.results import GradeReport, Mode
from grader.spec import Challenge, Check, Param
from grader.verdict import Verdict

MARGIN = 3.0
"""Correct methods at least this far under the tolerance, wrong ones at least this far over it."""
VARIANT_SEEDS = 3
"""Inputs drawn per functional case for the variants."""
VARIANT_MAX_ELEMENTS = 1 << 22
"""Functional cases with more output elements than this are left out of the variants (host numpy, one core)."""
VARIANTS_FILE = "variants.py"
EDGE_BLOCK = 256


class Status(enum.Enum):
    PASS = "pass"
    FAIL = "fail"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Finding:
    part: str
    """edges, tolerance, levels or wrong."""
    subject: str
    status: Status
    detail: str


@dataclass(frozen=True)
class Margin:
    """One method's worst error over the cases, as a multiple of the limit (the larger of its scaled and
    relative Frobenius errors, each over its own limit)."""

    method: str
    must: str
    """pass or fail."""
    worst: float
    """For a pass: the largest ratio over the cases (1 = at the limit). For a fail: the largest too (a wrong
    method must fail clearly somewhere, not everywhere)."""
    failed_cases: int
    cases: int

    @property
    def ok(self) -> bool:
        return self.worst * MARGIN <= 1.0 if self.must == "pass" else self.worst >= MARGIN


@dataclass(frozen=True)
class KitReport:
    challenge: str
    backend: str
    findings: tuple[Finding, ...]
    margins: tuple[Margin, ...] = ()
    timings_ms: dict[int, dict[str, float]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return all(f.status is not Status.FAIL for f in self.findings)


# --------------------------------------------------------------------------- the check


def check_challenge(challenge: Challenge, backend, cache_dir: Path, seed: int = ladder.SEED,
                    progress=None) -> KitReport:
    progress = progress or pipeline.NoProgress()
    findings = list(edge_findings(challenge))
    progress.stage("measuring the tolerance: the variants on the functional cases")
    margins = list(variant_margins(challenge, seed))
    level_findings, level_margins, timings = _levels(challenge, backend, cache_dir, seed, progress)
    margins += level_margins
    findings += tolerance_findings(challenge, margins) + level_findings
    findings += _wrong_files(challenge, backend, cache_dir, seed, progress)
    return KitReport(challenge.slug, backend.name, tuple(findings), tuple(margins), timings)


# --------------------------------------------------------------------------- edges


def edge_findings(challenge: Challenge) -> list[Finding]:
    """Which of the sizes kernels trip on the functional cases hold, over every dimension and extent."""
    sizes = set()
    for shape in challenge.functional:
        sizes |= set(shape.dims.values())
        for p in challenge.params:
            if p.ctype.pointer:
                sizes |= set(p.extent(shape.dims))
    wanted = {
        "a size of 1": lambda n: n == 1,
        "a size that is not a multiple of 4 (a vector's tail)": lambda n: n % 4 != 0 and n > 4,
        "one either side of a warp above it (n % 32 in 1 or 31)": lambda n: n > 32 and n % 32 in (1, 31),
        f"a size above {EDGE_BLOCK} that no {EDGE_BLOCK}-thread block divides": lambda n: n > EDGE_BLOCK and n % EDGE_BLOCK,
    }
    missing = [name for name, test in wanted.items() if not any(test(n) for n in sizes)]
    if missing:
        return [Finding("edges", "functional cases", Status.FAIL, "no case has " + "; no case has ".join(missing) +
                        ": add such cases to functional (a size is any dimension or buffer extent)")]
    return [Finding("edges", "functional cases", Status.PASS, "1, a vector tail, a warp ± 1 and a partial block "
                    f"are all among the sizes of the {len(challenge.functional)} cases")]


# --------------------------------------------------------------------------- tolerance


def tolerance_outputs(challenge: Challenge) -> tuple[Param, ...]:
    return tuple(p for p in challenge.outputs if p.check is Check.TOLERANCE)


def load_variants(challenge: Challenge) -> Callable[[dict, np.random.Generator], dict] | None:
    """`variants` from reference.py, else from variants.py beside it, else None; imported and wrapped as
    reference.py's functions are, so what it raises is the challenge's fault, named."""
    if challenge.reference.variants is not None:
        return challenge.reference.variants
    path = challenge.root / VARIANTS_FILE
    if not path.is_file():
        return None
    loaded = spec.import_file(path)
    if not callable(getattr(loaded, "variants", None)):
        raise SpecError(path, "variants", "function not defined", hint="define variants(inputs, rng)")
    return spec.ReferenceFunction(path, "variants", loaded.variants)


def ratio(c: check.Comparison, challenge: Challenge) -> float:
    """How far an output is from failing: its errors over their limits, the larger (> 1 fails)."""
    t = challenge.tolerance
    if not math.isfinite(c.scaled_error) or not math.isfinite(c.relative_frobenius):
        return math.inf
    return max(c.scaled_error / t.max_scaled_error, c.relative_frobenius / t.max_relative_frobenius)


def variant_margins(challenge: Challenge, seed: int) -> list[Margin]:
    outputs = tolerance_outputs(challenge)
    variants = load_variants(challenge)
    if not outputs or variants is None:
        return []
    worst: dict[str, list] = {}
    for index, shape in enumerate(challenge.functional):
        if sum(math.prod(p.extent(shape.dims)) for p in outputs) > VARIANT_MAX_ELEMENTS:
            continue
        for draw in range(VARIANT_SEEDS):
            for name, must, r in _variant_ratios(challenge, variants, outputs, shape, [seed, index, draw]):
                worst.setdefault(name, [must, []])[1].append(r)
    return [Margin(name, must, max(rs), sum(r > 1 for r in rs), len(rs)) for name, (must, rs) in worst.items()]


def _variant_ratios(challenge, variants, outputs, shape, key):
    rng = np.random.default_rng([*key, 71])
    given = _inputs(challenge, shape, rng)
    expected = challenge.reference.reference(given, np)
    scale = challenge.reference.error_scale(given, np)
    for name, (got, must) in variants(given, rng).items():
        if must not in ("pass", "fail"):
            raise SpecError(challenge.root / "reference.py", "variants", f"{name!r} says {must!r}",
                            hint='each variant is (outputs, "pass") or (outputs, "fail")')
        with np.errstate(all="ignore"):
            r = max(ratio(check.compare(p.name, np.asarray(got[p.name]), np.asarray(expected[p.name], np.float64),
                                        np.asarray(scale[p.name], np.float64), challenge.tolerance), challenge)
                    for p in outputs if p.name in got)
        yield name, must, r


def _inputs(challenge: Challenge, shape, rng) -> dict[str, Any]:
    values = cases.arguments(challenge, shape, rng)
    generated = challenge.reference.generate(dict(values), rng)
    arrays = {p.name: np.ascontiguousarray(generated[p.name], dtype=p.ctype.element.dtype) for p in challenge.generated}
    return {**values, **arrays}


def tolerance_findings(challenge: Challenge, margins: list[Margin]) -> list[Finding]:
    if not tolerance_outputs(challenge):
        return [Finding("tolerance", "every output exact", Status.PASS, "no tolerance to measure")]
    if not any(m.must == "fail" for m in margins) or not any(m.must == "pass" and not m.method.startswith("level ")
                                                            for m in margins):
        return [Finding("tolerance", "variants", Status.FAIL, "the tolerance is not measured: define variants(inputs, "
                        "rng) in reference.py (or variants.py) returning {name: (outputs, 'pass' or 'fail')}: correct "
                        "methods in other orders and precisions, and wrong ones")]
    findings = []
    for m in margins:
        if m.ok:
            continue
        if m.must == "pass":
            detail = (f"a correct method reaches {m.worst:.3g}× the limit (failed {m.failed_cases} of {m.cases} cases); "
                      f"it must stay {MARGIN:g}× under it: loosen the tolerance or fix the method")
        else:
            detail = (f"a wrong method reaches only {m.worst:.3g}× the limit at worst; it must pass it {MARGIN:g}× "
                      "somewhere: tighten the tolerance or add a case that exposes it")
        findings.append(Finding("tolerance", m.method, Status.FAIL, detail))
    passing = [m for m in margins if m.must == "pass"]
    failing = [m for m in margins if m.must == "fail"]
    low = max(m.worst for m in passing)
    high = min(m.worst for m in failing)
    findings.append(Finding("tolerance", "margins", Status.PASS if not findings else Status.FAIL,
                            f"correct methods at most {low:.3g}× the limit (margin {1 / low if low else math.inf:.3g}×), "
                            f"wrong ones at least {high:.3g}× it at their worst case"))
    return findings


# --------------------------------------------------------------------------- graded files


@dataclass(frozen=True)
class Expectation:
    """What a level or wrong file's header promises (`// expect: VERDICT` and the lines beside it)."""

    verdict: str
    message: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)
    backends: frozenset[str] = frozenset({"cuda", "emulator"})
    mode: Mode = Mode.RUN
    requires: frozenset[str] = frozenset()

    def verdict_on(self, backend: str) -> str:
        return self.overrides.get(backend, self.verdict)

    def message_on(self, backend: str) -> str | None:
        return None if backend in self.overrides else self.message


def expectation(path: Path, default: str | None = None) -> Expectation:
    """The header of a file (its first 8 lines). `default`: the verdict of a file without `// expect:`."""
    verdict, message, overrides, backends, mode, requires = default, None, {}, None, Mode.RUN, frozenset()
    for line in path.read_text(errors="replace").splitlines()[:8]:
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "// expect":
            verdict = value
        elif key == "// expect-message":
            message = value
        elif key in ("// expect-emulator", "// expect-cuda"):
            overrides[key.removeprefix("// expect-")] = value
        elif key == "// backends":
            backends = frozenset(b.strip() for b in value.split(","))
        elif key == "// graded-with":
            mode = Mode(value)
        elif key == "// requires":
            requires = frozenset(r.strip() for r in value.split(","))
    if verdict is None:
        raise SpecError(path, None, "has no '// expect: VERDICT' line among its first 8",
                        hint="start the file with e.g. // expect: WRONG_ANSWER")
    return Expectation(verdict, message, overrides, backends or frozenset({"cuda", "emulator"}), mode, requires)


def grade_file(challenge: Challenge, backend, cache_dir: Path, seed: int, path: Path, mode: Mode) -> GradeReport:
    return pipeline.grade(sources.read(path, f"{challenge.slug}/{path.parent.name}/{path.name}"), challenge,
                          backend, pipeline.Options(mode, seed, cache_dir))


def _levels(challenge: Challenge, backend, cache_dir: Path, seed: int, progress):
    if not challenge.levels:
        return [Finding("levels", "ladder", Status.FAIL, "no levels: add at least one reference solution")], [], {}
    if backend.name == "cuda":
        return _timed_levels(challenge, backend, cache_dir, progress)
    findings, margins = [], []
    for level in challenge.levels:
        progress.stage(f"level {level.number} of {len(challenge.levels)}: grading in emulation")
        report = grade_file(challenge, backend, cache_dir, seed, level.path, Mode.RUN)
        findings.append(_level_finding(level.number, level.name, report,
                                       expectation(level.path, "ACCEPTED").verdict_on(backend.name)))
        errors = [ratio(c, challenge) for case in report.cases for c in case.comparisons if not c.exact]
        if report.accepted and errors:
            margins.append(Margin(f"level {level.number} ({level.name}), graded", "pass", max(errors),
                                  sum(r > 1 for r in errors), len(errors)))
    return findings, margins, {}


def _level_finding(number: int, name: str, report: GradeReport, expected: str) -> Finding:
    """A level must be ACCEPTED; one whose header says the emulator cannot run it (`// expect-emulator:
    UNSUPPORTED`: PTX, wgmma) is skipped there when it is indeed UNSUPPORTED."""
    if report.verdict is Verdict.UNSUPPORTED and expected == "UNSUPPORTED":
        return Finding("levels", f"level {number} ({name})", Status.SKIPPED, report.message.splitlines()[0][:300])
    if report.verdict is Verdict.UNSUPPORTED:
        return Finding("levels", f"level {number} ({name})", Status.FAIL, f"UNSUPPORTED here: {report.message[:300]} "
                       f"(if it cannot run on this backend, say so in its header: // expect-{report.environment.backend}: "
                       "UNSUPPORTED)")
    if report.accepted:
        return Finding("levels", f"level {number} ({name})", Status.PASS, "ACCEPTED")
    return Finding("levels", f"level {number} ({name})", Status.FAIL, f"{report.verdict.label}: {report.message[:400]}")


def _timed_levels(challenge: Challenge, backend, cache_dir: Path, progress):
    measured = ladder.measure(challenge, backend, cache_dir, ladder.SEED, progress)
    findings, margins, timings, previous = [], [], {}, None
    for rung in measured.rungs:
        subject = f"level {rung.level} ({rung.name})"
        if rung.status is ladder.RungStatus.UNAVAILABLE:
            findings.append(Finding("levels", subject, Status.SKIPPED, rung.detail))
            continue
        if rung.status is ladder.RungStatus.FAILED:
            findings.append(Finding("levels", subject, Status.FAIL, rung.detail[:400]))
            continue
        timings[rung.level] = dict(rung.median_ms)
        mean = math.exp(sum(math.log(v) for v in rung.median_ms.values()) / len(rung.median_ms))
        times = ", ".join(f"{k} {v:.4g} ms" for k, v in rung.median_ms.items())
        if previous is not None and mean >= previous[1]:
            findings.append(Finding("levels", subject, Status.FAIL, f"not faster than level {previous[0]}: geometric "
                                    f"mean {mean:.4g} ms against {previous[1]:.4g} ms ({times})"))
        else:
            gain = f", {previous[1] / mean:.2f}× level {previous[0]}" if previous else ""
            findings.append(Finding("levels", subject, Status.PASS, f"ACCEPTED; {times}{gain}"))
        previous = (rung.level, mean)
        if rung.max_scaled_error is not None:
            margins.append(Margin(f"{subject}, graded", "pass", rung.max_scaled_error / challenge.tolerance.max_scaled_error,
                                  0, 1))
    return findings, margins, timings


def _wrong_files(challenge: Challenge, backend, cache_dir: Path, seed: int, progress) -> list[Finding]:
    files = sorted((challenge.root / "wrong").glob("*.cu"))
    if not files:
        return [Finding("wrong", "wrong/", Status.FAIL, "no wrong files: add the mistakes the problem invites, each "
                        "with a '// expect: VERDICT' header")]
    findings = []
    for number, path in enumerate(files, 1):
        progress.stage(f"wrong file {number} of {len(files)}: {path.name}")
        expect = expectation(path)
        if backend.name not in expect.backends:
            findings.append(Finding("wrong", path.name, Status.SKIPPED, f"promises a verdict only on {', '.join(sorted(expect.backends))}"))
            continue
        report = grade_file(challenge, backend, cache_dir, seed, path, expect.mode)
        findings.append(_wrong_finding(path, expect, backend.name, report))
    return findings


def _wrong_finding(path: Path, expect: Expectation, backend: str, report: GradeReport) -> Finding:
    wanted, message = expect.verdict_on(backend), expect.message_on(backend)
    if report.verdict.name != wanted:
        return Finding("wrong", path.name, Status.FAIL, f"expected {wanted}, got {report.verdict.name}: {report.message[:300]}")
    if message and message.lower() not in report.message.lower():
        return Finding("wrong", path.name, Status.FAIL, f"{wanted} as expected, but the message lacks {message!r}: "
                       f"{report.message[:300]}")
    return Finding("wrong", path.name, Status.PASS, wanted)


# --------------------------------------------------------------------------- a new challenge


SKELETON = {
    "challenge.yaml": "challenge.yaml.j2",
    "reference.py": "reference.py.j2",
    "statement.md": "statement.md.j2",
    "starter.cu": "starter.cu.j2",
    "levels/1_naive.cu": "level_1_naive.cu.j2",
    "wrong/skips_last.cu": "wrong_skips_last.cu.j2",
}
"""The files `grader new` writes, and the template each comes from (grader/templates/kit/)."""


def new_challenge(challenges_dir: Path, slug: str, title: str | None = None) -> Path:
    """A complete challenge folder that passes its own check, to edit into a new problem."""
    import jinja2

    from grader.errors import UsageError

    if not re.fullmatch(r"[a-z][a-z0-9_]*", slug):
        raise UsageError(f"{slug!r} cannot name a challenge", hint="use lower-case letters, digits and underscores, "
                                                                   "starting with a letter (e.g. prefix_sum)")
    root = challenges_dir / slug
    if root.exists():
        raise UsageError(f"{root} exists already: nothing written", hint="choose another name, or remove the folder")
    environment = jinja2.Environment(loader=jinja2.PackageLoader("grader", "templates/kit"),
                                     keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
    values = {"slug": slug, "title": title or slug.replace("_", " ").capitalize()}
    for name, template in SKELETON.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(environment.get_template(template).render(values))
    return root
