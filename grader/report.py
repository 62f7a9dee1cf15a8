"""The report stage: a grading run for people (rich terminal output) and for machines (JSON)."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Sequence

from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Column, Table
from rich.text import Text

from grader.libraries import LibraryPolicy
from grader.build import BuildStatus
from grader.inert import visible
from grader.leaderboard import Board, Standing, Status
from grader.ladder import RungStatus
from grader.results import CaseKind, GradeReport, Mode, public, shape_text, shown_json, to_json
from grader.timing import TimedBy
from grader.verdict import HELP, Verdict

VERDICT_STYLE = {Verdict.ACCEPTED: "bold green", Verdict.SKIPPED: "dim"}
DIAGNOSTICS_SHOWN = 8
OUTPUT_SHOWN_CHARS = 2000
MESSAGE_SHOWN_CHARS = 8000
SECRET_NOTE = ("graded with a secret seed of its own: the randomized cases are shown by number and verdict only, "
               "and nothing that grows with their shapes (times, what the submission printed) is shown")
REVEALED_NOTE = "graded with a secret seed, shown in full (instructor view: not for students)"


def as_json(report: GradeReport, reveal: bool = False) -> str:
    """The report as JSON; a secret run's as a student may see it (its public fields only), unless `reveal`
    (the instructor)."""
    return json.dumps(to_json(report) if reveal else shown_json(report), indent=2)


def render(report: GradeReport, console: Console, reveal: bool = False) -> None:
    """The report for a person; a secret run's as a student may see it, unless `reveal` (the instructor)."""
    report = report if reveal else public(report)
    console.print(_header(report))
    if report.build is not None:
        console.print(_build_line(report))
        for note in report.build.notes:
            console.print(Text(f"note: {visible(note, MESSAGE_SHOWN_CHARS)}", style="yellow"))
    if report.build and report.build.diagnostics and not report.cases:
        console.print(_diagnostics(report))
    if report.cases:
        console.print(_cases_table(report, console))
    if report.performance:
        console.print(_performance_table(report, console))
        for note in _timing_notes(report):
            console.print(Text(note, style="yellow"))
    if report.placement is not None:
        console.print(_placement_panel(report.placement))
    if report.sanitizer is not None:
        console.print(_sanitizer_panel(report.sanitizer))
    console.print(_verdict_panel(report))
    if report.worker_output.strip() and not report.accepted:
        console.print(Panel(Text(visible(report.worker_output, OUTPUT_SHOWN_CHARS)),
                            title="the submission's output (last lines)",
                            border_style="dim"))


def _header(r: GradeReport) -> Text:
    env = r.environment
    gpu = f"{env.gpu} (compute {env.compute_capability}, driver {env.driver})" if env.gpu else "CPU emulator"
    text = Text()
    text.append(f"{r.challenge} v{r.challenge_version}", style="bold")
    text.append(f" · {visible(r.submission)} · {r.mode.value} · {_seed_text(r)}\n")
    text.append(f"{gpu} · nvcc {_short_version(env.nvcc)}", style="dim")
    return text


def _seed_text(r: GradeReport) -> str:
    if r.seed is None:
        return "secret seed"
    return f"secret seed {r.seed}" if r.secret else f"seed {r.seed}"


def _short_version(nvcc: str | None) -> str:
    found = re.search(r"V(\d+\.\d+\.\d+)", nvcc or "")
    return found.group(1) if found else (nvcc or "none")


def _build_line(r: GradeReport) -> Text:
    b = r.build
    cached = " (cached)" if b.cached else ""
    style = "green" if b.status is BuildStatus.OK else "red"
    return Text(f"build: {b.status.value}{cached}, {b.seconds:.1f} s", style=style)


def _diagnostics(r: GradeReport) -> Text:
    shown = [str(d) for d in r.build.diagnostics if d.severity == "error"] or [str(d) for d in r.build.diagnostics]
    lines = shown[:DIAGNOSTICS_SHOWN]
    if len(shown) > DIAGNOSTICS_SHOWN:
        lines.append(f"… {len(shown) - DIAGNOSTICS_SHOWN} more")
    return Text(visible("\n".join(lines), MESSAGE_SHOWN_CHARS), style="yellow")


def _verdict_text(verdict: Verdict) -> Text:
    return Text(verdict.label, style=VERDICT_STYLE.get(verdict, "bold red"))


def _metric(value: float | None) -> str:
    if value is None:
        return "—"
    return "inf" if math.isinf(value) else f"{value:.2g}"


def _fitting(console: Console, tables: list[Table]) -> Table:
    """The first of `tables` (widest first) that fits the console unsqueezed, else the last. A table
    wider than the terminal squeezes every cell, a verdict into "WRONG_ANSW…" among them; a table that
    fits cuts nothing."""
    wide = console.options.update_width(10_000)
    return next((t for t in tables if Measurement.get(console, wide, t).maximum <= console.width), tables[-1])


def _table(title: str, columns: list[tuple], rows, narrow: bool = False) -> Table:
    """A table of (header, justification, cell of a row) columns. Only the shape column may wrap (it
    folds, so a shape is never cut); `narrow`: no outer border, for the last resort."""
    table = Table(title=title, title_justify="left", expand=False,
                  box=box.SIMPLE_HEAD if narrow else box.HEAVY_HEAD, pad_edge=not narrow)
    for header, justify, _ in columns:
        table.add_column(header, justify=justify, no_wrap=header != "shape", overflow="fold")
    for row in rows:
        table.add_row(*[cell(row) for _, _, cell in columns])
    return table


def _cases_table(r: GradeReport, console: Console) -> Table:
    """The figures shown are the most that fit: full headers, then short ones, then fewer figures; the
    case, its shape and its verdict always."""
    def first(c):
        return c.comparisons[0] if c.comparisons else None

    head = [("case", "left", lambda c: c.kind.value), ("shape", "left", lambda c: shape_text(c.dims) or c.label),
            ("verdict", "left", lambda c: _verdict_text(c.verdict))]
    scaled = lambda c: _metric(first(c).scaled_error if first(c) else None)
    frobenius = lambda c: _metric(first(c).relative_frobenius if first(c) else None)
    call = lambda c: f"{c.call_s * 1e3:.2f}" if c.call_s is not None else "—"
    full = [("max scaled err", "right", scaled), ("rel. Frobenius", "right", frobenius), ("call ms", "right", call)]
    short = [("scaled err", "right", scaled), ("rel. Frob.", "right", frobenius), ("ms", "right", call)]
    plans = [full, short, short[:2], short[:1], []]
    tables = [_table("correctness", head + shown, r.cases) for shown in plans]
    return _fitting(console, tables + [_table("correctness", head, r.cases, narrow=True)])


def _performance_table(r: GradeReport, console: Console) -> Table:
    """The columns follow the challenge's work: GFLOP/s and % of the FP32 peak where it counts flops,
    GB/s and % of the measured bandwidth where it counts bytes. The figures shown are the most that
    fit, the spread and repetitions dropped first; a case not timed shows its verdict, never cut."""
    base = r.baseline_label or "baseline"
    by_flops = any(p.flops for p in r.performance)
    by_bytes = any(p.bytes for p in r.performance)
    timed = lambda cell: (lambda p: cell(p) if p.stats is not None else "")
    head = [("case", "left", lambda p: p.label.split(" ")[0] if " " in p.label else ""),
            ("shape", "left", lambda p: shape_text(p.dims)),
            ("median ms", "right", lambda p: f"{p.stats.median_ms:.3f}" if p.stats else _verdict_text(p.verdict))]
    spread = [("IQR", "right", timed(lambda p: f"{p.stats.spread_pct:.1f}%"))]
    rates = (([("GFLOP/s", "right", timed(lambda p: _rate(p.gflops)))] if by_flops else []) +
             ([("GB/s", "right", timed(lambda p: _rate(p.gbps)))] if by_bytes else []))
    base_ms = [(f"{base} ms", "right", timed(lambda p: f"{p.baseline.median_ms:.3f}" if p.baseline else "—"))]
    percent = [(f"% of {base}", "right", timed(lambda p: _percent(p.percent_of_baseline)))]
    ceilings = (([("% FP32 peak", "right", timed(lambda p: _percent(p.percent_of_peak)))] if by_flops else []) +
                ([("% bandwidth", "right", timed(lambda p: _percent(p.percent_of_bandwidth)))] if by_bytes else []))
    reps = [("reps", "right", timed(lambda p: str(p.stats.reps)))]
    plans = [spread + rates + base_ms + percent + ceilings + reps, rates + base_ms + percent + ceilings,
             rates + percent, percent, []]
    title = "performance (median over reps, L2 flushed before each call)"
    tables = [_table(title, head + shown, r.performance) for shown in plans]
    return _fitting(console, tables + [_table(title, head, r.performance, narrow=True)])


def _timing_notes(r: GradeReport) -> list[str]:
    """Where a case's time is not its events' (timing.attribute): which clock counted, and why."""
    notes = []
    for p in r.performance:
        t = p.timing
        if t is None or t.timed_by is TimedBy.EVENTS or p.stats is None:
            continue
        if t.timed_by is TimedBy.END_TO_END:
            notes.append(f"note: {p.label} is timed end to end: solve took {t.end_to_end_ms:.3g} ms a call, of which its "
                         f"GPU work took {t.events_ms:.3g} ms; the other {t.host_ms:.3g} ms (host work in solve: "
                         "allocations, copies, waits, work on streams the events miss) is part of its time")
        else:
            notes.append(f"note: {p.label} is timed by the grader's own clock ({t.grader_ms:.3g} ms a call): the "
                         f"worker reported less ({t.end_to_end_ms:.3g} ms end to end, {t.events_ms:.3g} ms of GPU "
                         "work), and no time is taken below what the grader saw, less 10%")
    return notes


def _rate(value: float | None) -> str:
    return f"{value:,.0f}" if value else "—"


def _verdict_panel(r: GradeReport) -> Panel:
    parts = [Text.assemble(_verdict_text(r.verdict), "  ", HELP[r.verdict])]
    if r.message:
        parts.append(Text(visible(r.message, MESSAGE_SHOWN_CHARS)))
    if r.build and r.build.diagnostics and not r.cases and r.verdict is Verdict.COMPILE_ERROR:
        parts.append(Text("fix the first error above and run again", style="dim"))
    timing = "graded" if r.wall_s is None else f"graded in {r.wall_s:.1f} s"  # None: a secret run's public view
    if r.kernel_s is not None:
        timing += f", {r.kernel_s:.2f} s of it inside {escape('solve')}"
    if r.environment.backend == "emulator":
        timing += (" · emulated on the CPU: correctness only (every case run with threads in forward and "
                   f"reversed order){_untimed_text(r)}; no timings, no level placement")
    elif r.mode is Mode.RUN and r.accepted:
        timing += " · correctness only: `grader submit` also times it"
    parts.append(Text(timing, style="dim"))
    if r.libraries is not None:
        parts.append(Text(f"library policy: {LibraryPolicy(r.libraries).describe}", style="dim"))
    if r.parity is not None:
        parts.extend(_parity_lines(r.parity))
    if r.job_limit is not None:
        parts.append(Text(job_limit_text(r.job_limit.seconds, r.job_limit.why), style="dim"))
    if r.isolation is not None:
        i = r.isolation
        parts.append(Text(isolation_text(i.boxed, i.description, i.worker_uid, i.seccomp_filters, i.memory_bytes),
                          style="dim" if i.boxed else "yellow"))
    if r.secret:
        parts.append(Text(SECRET_NOTE if r.seed is None else REVEALED_NOTE, style="dim"))
    return Panel(Group(*parts), border_style="green" if r.accepted else "red", title="verdict", title_align="left")


def _parity_lines(p) -> list[Text]:
    """An official challenge: the rule the verdict used, and the checks beyond LeetGPU's judge."""
    lines = [Text(f"official LeetGPU challenge: its own cases, compared by its rule |got − expected| ≤ atol + "
                  f"rtol·|expected| (atol {p.atol:g}, rtol {p.rtol:g}) against its PyTorch reference: the verdict "
                  "LeetGPU's judge would give" + (", and the strict checks below count in it" if p.strict else ""),
                  style="dim")]
    if p.extras_run:
        beyond = (f"beyond LeetGPU's tests (values drawn again, outputs filled with NaN instead of zeros, inputs "
                  f"checked unmodified, thread orders): {p.extras_run - p.extras_failed} of {p.extras_run} passed")
        if p.extras_failed:
            counted = "counted in the verdict" if p.strict else "not counted in the verdict (--strict counts them)"
            beyond += f", {counted}; first: {visible(p.first_failure, MESSAGE_SHOWN_CHARS)}"
        lines.append(Text(beyond, style="yellow" if p.extras_failed else "dim"))
    if p.widened:
        lines.append(Text(f"the file's own FP32 reference misses its rule against the exact answer at "
                          f"{len(p.widened)} case{'s' if len(p.widened) > 1 else ''} ({', '.join(p.widened[:4])}"
                          f"{', …' if len(p.widened) > 4 else ''}): compared there with the exact (FP64) answer, the rule "
                          "widened to twice what PyTorch's FP32 needs", style="dim"))
    lines += [Text(f"note: {visible(note, MESSAGE_SHOWN_CHARS)}", style="dim") for note in p.notes]
    return lines


def _untimed_text(r: GradeReport) -> str:
    """What an emulated submit did with the timed shapes: checked their answers, or not (too much work)."""
    if r.mode is not Mode.SUBMIT:
        return ""
    checked = sum(1 for case in r.cases if case.kind is CaseKind.TIMED)
    if not checked:
        return ", the timed shapes not checked (too much work to emulate)"
    return f", {checked} timed shape{'s' if checked > 1 else ''} checked for correctness (once each)"


def job_limit_text(seconds: float | None, why: str) -> str:
    """The bound the whole job ran under (results.JobLimit): the compile and every call together. Plain
    values, so the class server's page, which reads a report's JSON, says it in the same words."""
    if seconds is None:
        return f"whole-job bound: {why}"
    return f"whole-job bound: {seconds:.3g} s ({why})"


def isolation_text(boxed: bool, description: str, worker_uid: int | None = None,
                   seccomp_filters: int | None = None, memory_bytes: float | None = None) -> str:
    """What confined the submission (results.Isolation's fields): the worker as the grader read it from
    outside its box, or, unboxed, that nothing but the limits did."""
    if not boxed:
        return f"isolation: UNBOXED ({description}): the submission ran with the grader's own rights"
    seen = []
    if worker_uid is not None:
        seen.append(f"worker uid {worker_uid}, no capabilities, {seccomp_filters} seccomp "
                    "filter(s), read from outside the box")
    if memory_bytes:
        seen.append(f"memory bound {memory_bytes / (1 << 30):.3g} GiB")
    return "isolation: boxed" + (f" ({'; '.join(seen)})" if seen else "")


def _placement_panel(p) -> Panel:
    parts = [Text(p.headline(), style="bold")]
    if len(p.shape_levels) > 1:
        parts.append(Text(f"level per shape: {p.per_shape()}", style="dim"))
    if p.lag is not None:
        # the next rung's technique is the wrong advice here: the kernel shows it has it on the fast shapes
        parts.append(Text(f"{p.lag.summary()}.", style="yellow"))
        parts.append(Text(f"next: {p.lag.advice()}"))
    elif p.next_level:
        parts.append(Text(f"next: level {p.next_level}, {p.next_name}. {p.next_technique}"))
    elif p.level:
        parts.append(Text("the top of the ladder: faster than every reference solution"))
    return Panel(Group(*parts), title="level", title_align="left", border_style="cyan")


def render_ladder_definition(challenge, console: Console) -> None:
    table = Table(title=f"{challenge.slug}: the reference ladder", title_justify="left")
    for column in ("level", "name", "needs", "what it adds"):
        table.add_column(column)
    for level in challenge.levels:
        table.add_row(str(level.number), level.name, level.needs, level.technique)
    console.print(table)


def render_ladder(challenge, ladder, console: Console) -> None:
    cases = [s.label() for s in challenge.performance]
    base = ladder.baseline_label or "baseline"
    table = Table(title=f"{challenge.slug} ladder on {ladder.gpu} (driver {ladder.driver}, grader "
                        f"{ladder.grader_version}, measured {ladder.measured_at})", title_justify="left")
    table.add_column("level")
    table.add_column("name")
    by_bytes = ladder.bandwidth_gbps is not None
    rate = "GB/s · % bandwidth" if by_bytes else "GFLOP/s"
    for case in cases:
        table.add_column(f"{case}\nms · {rate} · % {base}", justify="right")
    table.add_column("max scaled err", justify="right")
    for rung in ladder.rungs:
        if rung.status is not RungStatus.MEASURED:
            table.add_row(str(rung.level), rung.name, *[Text(rung.status.value, style="yellow")] * len(cases),
                          Text(rung.detail[:60], style="dim"))
            continue
        cells = []
        for case in cases:
            ms = rung.median_ms.get(case)
            pct = 100 * ladder.baseline_ms[case] / ms if ms and case in ladder.baseline_ms else None
            cells.append(f"{ms:.3f} · {_ladder_rate(rung, case, ladder.bandwidth_gbps)} · {_percent(pct)}"
                         if ms else "—")
        table.add_row(str(rung.level), rung.name, *cells, _metric(rung.max_scaled_error))
    table.add_row("", base, *[f"{ladder.baseline_ms.get(c, float('nan')):.3f}" for c in cases], "")
    console.print(table)


def _ladder_rate(rung, case: str, bandwidth_gbps: float | None) -> str:
    """GB/s and % of the measured bandwidth for a memory-bound challenge, GFLOP/s otherwise."""
    if bandwidth_gbps is not None:
        gbps = rung.gbps.get(case)
        return f"{gbps:,.0f} · {100 * gbps / bandwidth_gbps:.0f}%" if gbps else "—"
    gflops = rung.gflops.get(case)
    return f"{gflops:,.0f}" if gflops else "—"


def _percent(value: float | None) -> str:
    return f"{value:.0f}%" if value is not None else "—"


def _sanitizer_panel(findings) -> Panel:
    if not findings:
        return Panel(Text("memcheck and racecheck found nothing on the functional cases", style="green"),
                     title="compute-sanitizer", title_align="left", border_style="green")
    lines = [Text(visible(str(f), MESSAGE_SHOWN_CHARS)) for f in findings[:20]]
    if len(findings) > 20:
        lines.append(Text(f"… {len(findings) - 20} more", style="dim"))
    return Panel(Group(*lines), title="compute-sanitizer", title_align="left", border_style="yellow")


NAMES_SHOWN = 20
"""At most this many names per verdict in a batch's summary; the gradebook (`grader leaderboard`) has them all."""


def render_batch_summary(summary, plan, commands: list[str], console: Console) -> None:
    """The verdict counts, then who was not accepted, by verdict: the students an instructor has to
    talk to, named here so nobody has to dig them out of the gradebook; then who was not graded, and
    last the commands that show the leaderboards of what was graded, exactly as they run."""
    total = len(plan.jobs) + len(plan.undecided)
    by_challenge = Counter(challenge.slug for _, challenge in plan.jobs)
    counts = ", ".join(f"{slug} {n}" for slug, n in by_challenge.items())
    not_graded = f", {len(plan.undecided)} not graded" if plan.undecided else ""
    console.print(Text(f"batch: {total} submissions ({summary.graded} graded now, {summary.skipped} graded before"
                       f"{not_graded})" + (f": {counts}" if counts else ""), style="bold"))
    if summary.verdicts:
        table = Table("verdict", Column("count", justify="right"), box=box.SIMPLE_HEAD)
        for verdict, count in summary.verdicts.most_common():
            table.add_row(_verdict_text(Verdict[verdict]), str(count))
        console.print(table)
    for verdict, users in sorted(summary.not_accepted.items(), key=lambda item: (-len(item[1]), item[0])):
        console.print(_names_line(_verdict_text(Verdict[verdict]), users))
    if plan.undecided:
        console.print(_names_line(Text("not graded", style="bold red"), [u.user for u in plan.undecided]))
        console.print(Text("their challenge could not be told from their solve signature (said above for each, with "
                           "the --challenge that grades it)", style="dim"))
    for slug, (user, mean_ms) in summary.fastest.items():
        console.print(Text(f"fastest accepted on {slug}: {visible(user)} ({mean_ms:.3f} ms, geometric mean)"))
    if commands:
        console.print(Text("the leaderboard" + ("s" if len(commands) > 1 else "") + ":", style="dim"))
    for command in commands:  # one line each, never wrapped by rich, so a copy runs as printed
        console.print(Text(command), soft_wrap=True)


def _names_line(label: Text, users: list[str]) -> Text:
    """"WRONG_ANSWER (5): bob, carol and 3 more". Plain Text, never markup, and control characters
    made visible: a student's folder name is theirs to choose, "[red]" or an escape sequence alike."""
    shown = ", ".join(visible(user) for user in users[:NAMES_SHOWN])
    more = f" and {len(users) - NAMES_SHOWN} more" if len(users) > NAMES_SHOWN else ""
    return Text.assemble(label, f" ({len(users)}): ", shown, more)


def render_leaderboard(board: Board, console: Console) -> None:
    """The gradebook: every student, one line each (`students`). A table wider than the terminal squeezes
    its cells into columns of fragments, so the figures shown are the most that fit: the per-case times,
    else their geometric mean, then fewer figures, none where no run has timings (the CPU emulator cannot
    time, place or rate a kernel); the last columns are written shorter before a figure is dropped."""
    rows = board.students
    ranked = sum(1 for row in rows if row.rank is not None)
    title = f"{board.title} · {board.gpu} · {ranked} of {len(rows)} students ranked"
    table = _fitting(console, [_board_table(title, plan, rows) for plan in _board_plans(board, rows)])
    if not board.entries:
        console.print(Text("no accepted submissions yet", style="dim"))
    console.print(table)


def _board_table(title: str, columns: list[tuple], rows: Sequence[Standing]) -> Table:
    """Only the user column wraps: where nothing else fits, a long name folds, and every figure stays whole."""
    table = Table(title=Text(title), title_justify="left", box=box.SIMPLE_HEAD)  # text, never markup
    for header, justify, _ in columns:
        table.add_column(header, justify=justify, no_wrap=header != "user", overflow="fold")
    for row in rows:
        table.add_row(*[cell(row) for _, _, cell in columns])
    return table


def _board_plans(board: Board, rows: Sequence[Standing]) -> list[list[tuple]]:
    """The column sets to try, widest first: (header, justification, cell of a row)."""
    head = [("#", "right", lambda r: "" if r.rank is None else str(r.rank)),
            ("user", "left", lambda r: Text(visible(r.user))),
            ("status", "left", _status_cell)]
    tails = [_board_tail(board, short=False), _board_tail(board, short=True)]
    if not any(row.median_ms for row in rows):
        return [head + tail for tail in tails]
    level = [("level", "right", lambda r: str(r.level) if r.level is not None else "—")]
    cases = [(f"{case.split(' ')[0]}\nms", "right", lambda r, case=case: _ms(r.median_ms.get(case)))
             for case in board.cases]  # "leetgpu 8192×6144×4096" -> "leetgpu"
    mean = [("time\nms", "right", lambda r: _ms(r.time_ms))]
    rate = [(board.rate_label, "right", lambda r: f"{r.rate:,.0f}" if r.rate else "—")]
    base = [(f"% {board.baseline_label or 'baseline'}", "right",
             lambda r: f"{r.percent_of_baseline:.0f}%" if r.percent_of_baseline else "—")]
    figures = [level + cases + rate + base, level + mean + rate + base, level + mean + base, level + mean, level]
    return [head + shown + tail for shown in figures for tail in tails]


def _board_tail(board: Board, short: bool) -> list[tuple]:
    """Attempts, late (and practice), submitted; `short`: "tries", one "notes" column, no year."""
    practice = board.practice_included
    attempts = lambda r: str(r.attempts)
    when = lambda r: _when(r.submitted_at, short)
    if short:
        return [("tries", "right", attempts), ("notes" if practice else "late", "left", lambda r: _notes(r, practice)),
                ("submitted", "left", when)]
    flags = [("late", "left", lambda r: _notes(r, False))]
    if practice:
        flags.append(("practice", "left", lambda r: "yes" if r.practice else ""))
    return [("attempts", "right", attempts), *flags, ("submitted", "left", when)]


def _notes(row: Standing, practice: bool) -> Text:
    words = (["late"] if row.late else []) + (["practice"] if practice and row.practice else [])
    return Text(" ".join(words), style="yellow")


def _when(submitted_at: str | None, short: bool) -> str:
    """"2026-11-21 13:00" (UTC), or "11-21 13:00" where the year does not fit."""
    return submitted_at[5 if short else 0:16].replace("T", " ") if submitted_at else "—"


def _status_cell(row: Standing) -> Text:
    """"accepted", the verdict of the latest run where none was accepted, or "no submission"."""
    if row.status is Status.ACCEPTED:
        return Text("accepted", style="green")
    if row.verdict is None:
        return Text(row.status.value, style="dim")
    return Text(visible(row.verdict.name), style="red")


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.3f}"
