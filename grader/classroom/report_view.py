"""A grading report as the class server's submission page shows it, built from the report's data: the
report dict as it may be shown (grader.leaderboard.shown_report: a practice run's whole GradeReport JSON,
a secret run's public view, grader.results.public_json) and the source the student sent.

The terminal report (grader.report) is text cut to fit 80 columns; a page has room for what a student
needs to act on: every verdict whole, cases failing alike grouped under one message, the diagnostics
linked to the line of the source they are about. Every value is read from the dict with `.get`, so a
public view (which holds fewer fields) and an older report (which had fewer) give a smaller view, never
an error; nothing is shown that the dict does not hold, and a hidden case keeps its hidden label.

Pure: dataclasses of text and numbers, no markup and no web framework. The templates
(report.html.j2, source.html.j2) render them, autoescaped. Text a person or a submission controls
(messages, labels, file names, the source, compiler output) goes through grader.inert.visible, as in
the terminal, so a control character or a reordering mark (U+202E) shows as an escape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from grader.inert import visible
from grader.libraries import LibraryPolicy
from grader.place import Lag, LagCause
from grader.report import (MESSAGE_SHOWN_CHARS, OUTPUT_SHOWN_CHARS, REVEALED_NOTE, SECRET_NOTE, isolation_text,
                           job_limit_text)
from grader.verdict import HELP, Verdict

DIAGNOSTICS_SHOWN = 50
"""More than the terminal's (grader.report.DIAGNOSTICS_SHOWN): each is marked on its line of the source."""
FINDINGS_SHOWN = 20
CASES_LISTED = 6
"""A failing row lists this many of its cases; the rest fold into a <details>."""
_LOCATION = re.compile(r"^(?P<path>.+):(?P<line>\d+)(?::\d+)?$")


# -- the records the templates render ------------------------------------------------------------------------

@dataclass(frozen=True)
class Note:
    text: str
    warn: bool = False
    """Worth the student's attention (an unboxed run, a strict check that failed), not a plain fact."""


@dataclass(frozen=True)
class Headline:
    verdict: str
    """The verdict's name as the report has it (WRONG_ANSWER), never cut."""
    accepted: bool
    help: str
    """What the verdict means (grader.verdict.HELP); empty for a name this grader does not know."""
    message: str
    challenge: str
    mode: str | None
    backend: str | None
    gpu: str | None
    """"NVIDIA H100 (compute 9.0, driver 550.54)"; None on the emulator or where the view holds none."""
    nvcc: str | None
    libraries: str | None
    """The library policy in words (grader.libraries.LibraryPolicy.describe)."""
    seed: str | None
    notes: tuple[Note, ...]


@dataclass(frozen=True)
class CaseRef:
    """One case as the page names it: the figures are those the report holds (a hidden case has none)."""

    kind: str
    label: str
    dims: str
    """"M=64 N=33", or "" where the view holds no dimensions (a hidden case)."""
    verdict: str
    scaled_error: float | None
    relative_frobenius: float | None
    call_ms: float | None


@dataclass(frozen=True)
class CaseGroup:
    """Cases of one verdict and one message: the message shown once, above the cases it is about."""

    verdict: str
    failed: bool
    message: str
    cases: tuple[CaseRef, ...]

    @property
    def listed(self) -> tuple[CaseRef, ...]:
        return self.cases if not self.failed else self.cases[:CASES_LISTED]

    @property
    def folded(self) -> tuple[CaseRef, ...]:
        return () if not self.failed else self.cases[CASES_LISTED:]


@dataclass(frozen=True)
class PerfRow:
    label: str
    """The shape's label, its dimensions in it ("leetgpu 8192×6144×4096")."""
    verdict: str
    message: str
    median_ms: float | None
    """None where the case was not timed (its verdict says why)."""
    baseline_ms: float | None
    speedup: float | None
    """The baseline's time over this one's: above 1 is faster than the baseline."""
    gflops: float | None
    gbps: float | None
    percent_of_peak: float | None
    percent_of_bandwidth: float | None
    spread_pct: float | None
    reps: int | None
    level: int | None
    """The level this shape alone reaches (placement.shape_levels)."""
    timing_note: str | None


@dataclass(frozen=True)
class Performance:
    rows: tuple[PerfRow, ...]
    baseline: str
    by_flops: bool
    by_bytes: bool
    has_levels: bool


@dataclass(frozen=True)
class Placement:
    level: int
    levels: int | None
    name: str
    ratio_to_level: float | None
    next_level: int | None
    next_name: str | None
    ratio_to_next: float | None
    next_technique: str | None
    """What the next rung adds: the hint for getting there."""
    shape_levels: tuple[tuple[str, int], ...]
    lag: str | None
    """One shape far below the rest, in words (grader.place.Lag.summary); the advice then replaces the
    next rung's technique, which the kernel shows it has on its fast shapes."""
    lag_advice: str | None

    @property
    def top(self) -> bool:
        return self.level > 0 and self.next_level is None


@dataclass(frozen=True)
class Parity:
    atol: float | None
    rtol: float | None
    strict: bool
    extras_run: int
    extras_failed: int
    first_failure: str
    notes: tuple[str, ...]
    widened: tuple[str, ...]


@dataclass(frozen=True)
class Diagnostic:
    severity: str
    message: str
    path: str
    line: int | None
    column: int | None
    anchor: str | None
    """"L12" where it is about a line of the submission the page shows; None otherwise (another file,
    the grader's epilogue, the linker)."""


@dataclass(frozen=True)
class Build:
    status: str
    seconds: float | None
    notes: tuple[str, ...]
    diagnostics: tuple[Diagnostic, ...]
    more: int
    """Diagnostics left out past DIAGNOSTICS_SHOWN."""


@dataclass(frozen=True)
class Finding:
    text: str
    anchors: tuple[str, ...]


@dataclass(frozen=True)
class SourceLine:
    number: int
    text: str
    marks: tuple[Diagnostic, ...] = ()

    @property
    def anchor(self) -> str:
        return f"L{self.number}"

    @property
    def severity(self) -> str:
        """"error" if any mark is one, else "warning" (any other severity), else ""."""
        if not self.marks:
            return ""
        return "error" if any(m.severity.endswith("error") for m in self.marks) else "warning"


@dataclass(frozen=True)
class SourceView:
    filename: str
    lines: tuple[SourceLine, ...]

    @property
    def digits(self) -> int:
        """The width of the line-number column, in digits."""
        return len(str(len(self.lines)))

    @property
    def marked(self) -> int:
        return sum(1 for line in self.lines if line.marks)


@dataclass(frozen=True)
class ReportView:
    headline: Headline
    build: Build | None
    groups: tuple[CaseGroup, ...]
    """Failing groups first (in the order their first case ran), then the rest."""
    cases: tuple[CaseRef, ...]
    """Every case in the order it ran, one row each, for the full table."""
    performance: Performance | None
    placement: Placement | None
    parity: Parity | None
    sanitizer: tuple[Finding, ...] | None
    sanitizer_more: int
    output: str
    """What the submission printed (a whole report of a run not accepted); empty otherwise."""
    secret: bool
    source: SourceView | None
    """The submitted source, its lines marked with the diagnostics anchored to them; None where not given."""


# -- building them ---------------------------------------------------------------------------------------------

def page_views(report: dict | None, source: str | None, filename: str) -> tuple[ReportView | None, SourceView | None]:
    """What a submission's page shows: the report's view once there is a report, and the source either
    way (marked with the report's diagnostics when there are some)."""
    if report is not None:
        view = report_view(report, source, filename)
        return view, view.source
    return None, source_view(source, filename) if source is not None else None


def report_view(report: dict, source: str | None = None, filename: str | None = None) -> ReportView:
    """The page's view of `report` (as shown_report gives it). `source`, the text the student sent, lets
    diagnostics link to its lines; `filename`, the name it was sent under, is the submission's as well
    as the report's `submission`."""
    own = {name for name in (report.get("submission"), filename) if isinstance(name, str) and name}
    lines = len(_lines(source)) if source is not None else 0
    build = _build(report.get("build"), own, lines)
    cases = tuple(_case(c) for c in _records(report.get("cases")))
    findings = _findings(report.get("sanitizer"), own, lines)
    shown_name = filename or _text(report.get("submission"), None)
    return ReportView(
        headline=_headline(report), build=build, groups=_groups(report.get("cases")), cases=cases,
        performance=_performance(report), placement=_placement(report.get("placement")),
        parity=_parity(report.get("parity")), sanitizer=findings,
        sanitizer_more=max(len(_records(report.get("sanitizer"))) - FINDINGS_SHOWN, 0),
        output=_output(report), secret=bool(report.get("secret")),
        source=source_view(source, shown_name, build.diagnostics if build else ()) if source is not None else None)


def source_view(source: str, filename: str, diagnostics: tuple[Diagnostic, ...] = ()) -> SourceView:
    """The source numbered as the compiler numbers it (`_lines`), each line carrying the diagnostics anchored
    to it."""
    marks: dict[str, list[Diagnostic]] = {}
    for d in diagnostics:
        if d.anchor:
            marks.setdefault(d.anchor, []).append(d)
    lines = (SourceLine(n, visible(t), tuple(marks.get(f"L{n}", ()))) for n, t in enumerate(_lines(source), 1))
    return SourceView(visible(filename), tuple(lines))


def _lines(source: str) -> list[str]:
    """The source's lines as the compiler counts them: one per newline, a CRLF file's CR dropped."""
    texts = [line.removesuffix("\r") for line in source.split("\n")]
    if len(texts) > 1 and texts[-1] == "":
        texts.pop()  # the newline that ends the last line starts none
    return texts


def _records(value: Any) -> list[dict]:
    """The dicts of a list the report holds (a record an older grader wrote otherwise is passed over)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _text(value: Any, limit: int | None = MESSAGE_SHOWN_CHARS) -> str:
    return "" if value is None else visible(str(value), limit)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _verdict(name: Any) -> Verdict | None:
    try:
        return Verdict[name]
    except (KeyError, TypeError):
        return None


def _failed(name: str) -> bool:
    """Neither accepted nor skipped; a name this grader does not know counts as failed (it is not ACCEPTED)."""
    verdict = _verdict(name)
    return verdict is None or verdict.failed


# -- the headline

def _headline(r: dict) -> Headline:
    verdict = _text(r.get("verdict"), None) or "—"
    known = _verdict(r.get("verdict"))
    env = r.get("environment") if isinstance(r.get("environment"), dict) else {}
    return Headline(
        verdict=verdict, accepted=known is Verdict.ACCEPTED, help=HELP.get(known, "") if known else "",
        message=_text(r.get("message")), challenge=_challenge(r),
        mode=_text(r.get("mode"), 40) or None, backend=_text(env.get("backend"), 80) or None, gpu=_gpu(env),
        nvcc=_text(env.get("nvcc"), 200) or None, libraries=_libraries(r.get("libraries")), seed=_seed(r),
        notes=_notes(r, env))


def _challenge(r: dict) -> str:
    name, version = _text(r.get("challenge"), 200), _integer(r.get("challenge_version"))
    return f"{name} v{version}" if version is not None else name


def _gpu(env: dict) -> str | None:
    if not env.get("gpu"):
        return None
    details = [f"compute {env['compute_capability']}" if env.get("compute_capability") else "",
               f"driver {env['driver']}" if env.get("driver") else ""]
    details = [d for d in details if d]
    return _text(env["gpu"], 200) + (f" ({', '.join(details)})" if details else "")


def _libraries(value: Any) -> str | None:
    if value is None:
        return None
    try:
        return LibraryPolicy(value).describe
    except ValueError:
        return _text(value, 80)


def _seed(r: dict) -> str | None:
    """The seed as the page's "seed" fact says it: a secret run's view holds none, and says so."""
    seed = _integer(r.get("seed"))
    if seed is None:
        return "secret (not shown)" if r.get("secret") else None
    return f"{seed} (secret)" if r.get("secret") else str(seed)


def _notes(r: dict, env: dict) -> tuple[Note, ...]:
    """What the terminal's verdict panel says below the verdict: the time, what the backend could do, the
    job's bound, the isolation, and what a secret run's view leaves out."""
    notes = [Note(_timing(r, env))]
    limit = r.get("job_limit")
    if isinstance(limit, dict):
        notes.append(Note(job_limit_text(_number(limit.get("seconds")), _text(limit.get("why"), 500))))
    isolation = r.get("isolation")
    if isinstance(isolation, dict):
        notes.append(_isolation(isolation))
    if r.get("secret"):
        notes.append(Note(SECRET_NOTE if r.get("seed") is None else REVEALED_NOTE))
    return tuple(notes)


def _timing(r: dict, env: dict) -> str:
    wall, inside = _number(r.get("wall_s")), _number(r.get("kernel_s"))
    text = "graded" if wall is None else f"graded in {wall:.1f} s"
    if inside is not None:
        text += f", {inside:.2f} s of it inside solve"
    if env.get("backend") == "emulator":
        text += (" · emulated on the CPU: correctness only (every case run with threads in forward and reversed "
                 "order); no timings, no level placement")
    elif r.get("mode") == "run" and r.get("verdict") == Verdict.ACCEPTED.name:
        text += " · correctness only: a submit also times it"
    return text


def _isolation(isolation: dict) -> Note:
    boxed = bool(isolation.get("boxed"))
    return Note(isolation_text(boxed, _text(isolation.get("description"), 500), _integer(isolation.get("worker_uid")),
                               isolation.get("seccomp_filters"), _number(isolation.get("memory_bytes"))), not boxed)


# -- the cases

def _case(c: dict) -> CaseRef:
    first = next(iter(_records(c.get("comparisons"))), {})
    dims = c.get("dims") if isinstance(c.get("dims"), dict) else {}
    call_s = _number(c.get("call_s"))
    return CaseRef(
        kind=_text(c.get("kind"), 40), label=_text(c.get("label"), 500),
        dims=_text(" ".join(f"{k}={v}" for k, v in dims.items()), 500), verdict=_text(c.get("verdict"), None),
        scaled_error=_number(first.get("scaled_error")), relative_frobenius=_number(first.get("relative_frobenius")),
        call_ms=call_s * 1e3 if call_s is not None else None)


def _groups(cases: Any) -> tuple[CaseGroup, ...]:
    """Cases of the same verdict and message as one group, in the order its first case ran; failing groups
    first. A hidden case has no message: all hidden cases of a verdict make one group."""
    grouped: dict[tuple[str, str], list[CaseRef]] = {}
    for c in _records(cases):
        key = (_text(c.get("verdict"), None), _text(c.get("message")))
        grouped.setdefault(key, []).append(_case(c))
    groups = [CaseGroup(verdict, _failed(verdict), message, tuple(refs))
              for (verdict, message), refs in grouped.items()]
    return tuple(g for g in groups if g.failed) + tuple(g for g in groups if not g.failed)


# -- performance and placement

def _performance(r: dict) -> Performance | None:
    rows = _records(r.get("performance"))
    if not rows:
        return None
    placement = r.get("placement") if isinstance(r.get("placement"), dict) else {}
    levels = placement.get("shape_levels") if isinstance(placement.get("shape_levels"), dict) else {}
    shown = tuple(_perf_row(p, levels) for p in rows)
    return Performance(shown, _text(r.get("baseline_label"), 100) or "baseline",
                       by_flops=any(p.get("flops") for p in rows), by_bytes=any(p.get("bytes") for p in rows),
                       has_levels=any(row.level is not None for row in shown))


def _perf_row(p: dict, levels: dict) -> PerfRow:
    stats = p.get("stats") if isinstance(p.get("stats"), dict) else {}
    baseline = p.get("baseline") if isinstance(p.get("baseline"), dict) else {}
    percent = _number(p.get("percent_of_baseline"))
    samples = stats.get("samples_ms")
    return PerfRow(
        label=_text(p.get("label"), 500), verdict=_text(p.get("verdict"), None),
        message=_text(p.get("message")), median_ms=_number(stats.get("median_ms")),
        baseline_ms=_number(baseline.get("median_ms")), speedup=percent / 100 if percent is not None else None,
        gflops=_number(p.get("gflops")), gbps=_number(p.get("gbps")),
        percent_of_peak=_number(p.get("percent_of_peak")), percent_of_bandwidth=_number(p.get("percent_of_bandwidth")),
        spread_pct=_number(stats.get("spread_pct")),
        reps=_integer(stats.get("reps")) or (len(samples) if isinstance(samples, list) and samples else None),
        level=_integer(levels.get(p.get("label"))), timing_note=_timing_note(p, stats))


def _timing_note(p: dict, stats: dict) -> str | None:
    """Where a case's time is not its events' (grader.timing.attribute): which clock counted, and why."""
    t = p.get("timing") if isinstance(p.get("timing"), dict) else {}
    events, whole, grader = (_number(t.get(k)) for k in ("events_ms", "end_to_end_ms", "grader_ms"))
    if not stats or t.get("timed_by") in (None, "events") or None in (events, whole, grader):
        return None
    if t.get("timed_by") == "end to end":
        return (f"timed end to end: solve took {whole:.3g} ms a call, of which its GPU work took {events:.3g} ms; "
                f"the other {max(whole - events, 0.0):.3g} ms (host work in solve: allocations, copies, waits, work "
                "on streams the events miss) is part of its time")
    return (f"timed by the grader's own clock ({grader:.3g} ms a call): the worker reported less ({whole:.3g} ms end "
            f"to end, {events:.3g} ms of GPU work), and no time is taken below what the grader saw, less 10%")


def _placement(p: Any) -> Placement | None:
    if not isinstance(p, dict) or _integer(p.get("level")) is None:
        return None
    levels = p.get("shape_levels") if isinstance(p.get("shape_levels"), dict) else {}
    lag = _lag(p.get("lag"))
    return Placement(
        level=p["level"], levels=_integer(p.get("levels")), name=_text(p.get("name"), 200),
        ratio_to_level=_number(p.get("ratio_to_level")), next_level=_integer(p.get("next_level")),
        next_name=_text(p.get("next_name"), 200) or None, ratio_to_next=_number(p.get("ratio_to_next")),
        next_technique=_text(p.get("next_technique"), 2000) or None,
        shape_levels=tuple((_text(label, 500), level) for label, level in levels.items()
                           if _integer(level) is not None),
        lag=_text(lag.summary() + ".", 2000) if lag else None, lag_advice=_text(lag.advice(), 2000) if lag else None)


def _lag(data: Any) -> Lag | None:
    """The report's lag as grader.place.Lag, whose words the terminal uses too; None where it holds none
    (or one this grader cannot read)."""
    if not isinstance(data, dict):
        return None
    try:
        return Lag(str(data["case"]), int(data["level"]), int(data["best_level"]),
                   tuple(str(c) for c in data["best_cases"]), LagCause(data["cause"]), _integer(data.get("multiple")),
                   str(data["detail"]), int(data["level_if_matched"]))
    except (KeyError, TypeError, ValueError):
        return None


def _parity(p: Any) -> Parity | None:
    if not isinstance(p, dict):
        return None
    strings = lambda value: tuple(_text(v, 2000) for v in value) if isinstance(value, list) else ()
    return Parity(atol=_number(p.get("atol")), rtol=_number(p.get("rtol")), strict=bool(p.get("strict")),
                  extras_run=_integer(p.get("extras_run")) or 0, extras_failed=_integer(p.get("extras_failed")) or 0,
                  first_failure=_text(p.get("first_failure")), notes=strings(p.get("notes")),
                  widened=strings(p.get("widened")))


# -- the build, the sanitizer, the output

def _build(b: Any, own: set[str], lines: int) -> Build | None:
    if not isinstance(b, dict):
        return None
    found = [_diagnostic(d, own, lines) for d in _records(b.get("diagnostics"))]
    notes = tuple(_text(n) for n in b.get("notes") or () if isinstance(n, str))
    return Build(status=_text(b.get("status"), 80), seconds=_number(b.get("seconds")), notes=notes,
                 diagnostics=tuple(found[:DIAGNOSTICS_SHOWN]), more=max(len(found) - DIAGNOSTICS_SHOWN, 0))


def _diagnostic(d: dict, own: set[str], lines: int) -> Diagnostic:
    path, line = d.get("path"), _integer(d.get("line"))
    anchored = path in own and line is not None and 1 <= line <= lines
    return Diagnostic(severity=_text(d.get("severity"), 40), message=_text(d.get("message")),
                      path=_text(path, 500), line=line, column=_integer(d.get("column")),
                      anchor=f"L{line}" if anchored else None)


def _findings(findings: Any, own: set[str], lines: int) -> tuple[Finding, ...] | None:
    if not isinstance(findings, list):
        return None
    shown = []
    for f in _records(findings)[:FINDINGS_SHOWN]:
        where = [w for w in f.get("where") or () if isinstance(w, str)]
        text = f"{f.get('tool')}: {f.get('what')}" + (f" at {', '.join(where)}" if where else "")
        shown.append(Finding(_text(text), tuple(a for w in where if (a := _anchor(w, own, lines)))))
    return tuple(shown)


def _anchor(location: str, own: set[str], lines: int) -> str | None:
    """"L12" for "k.cu:12" (or "k.cu:12:5") where k.cu is the submission and has that line."""
    found = _LOCATION.match(location)
    if not found or found["path"] not in own or not 1 <= int(found["line"]) <= lines:
        return None
    return f"L{int(found['line'])}"


def _output(r: dict) -> str:
    output = r.get("worker_output")
    if not isinstance(output, str) or not output.strip() or r.get("verdict") == Verdict.ACCEPTED.name:
        return ""
    return visible(output, OUTPUT_SHOWN_CHARS)
