"""The leaderboard as one static, self-contained HTML page: `render(board)` for a `grader.leaderboard.Board`
(the instructor's gradebook, every student with their report) or a `PublicBoard` (what anyone may see: the
ranked students' rank, name, level and times, with no report, attempt or other student behind them).

Everything in the board is data, never markup. The template is rendered with autoescape; the two
charts are computed here as plain geometry and drawn as SVG by the template, so their text is
escaped like the rest; each entry's report reaches the page's script as JSON inside
`<script type="application/json">` with `<`, `>`, `&` and `'` written as \\u escapes, and the script
shows it with textContent only. The page loads nothing: all CSS and JS are inline, and its
Content-Security-Policy allows no fetch of any kind and no script but its own (by hash).

`render(board, live=True)` is the same page for a server to serve: every few seconds it fetches its
own address and, when the board's stamp has changed, swaps in the new table, charts and reports.
Its policy allows that one kind of fetch (connect-src 'self'); the new nodes come from DOMParser over
the server's own autoescaped page, moved in with importNode, never written as HTML by the script.
"""

from __future__ import annotations

import base64
import datetime
import functools
import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jinja2
from markupsafe import Markup

from grader.leaderboard import Attempt, Board, PublicBoard, Ranked, Standing, Status

TEMPLATES = Path(__file__).resolve().parent / "templates"
TEMPLATE = "leaderboard.html.j2"
DASH = "—"

HISTORY_SERIES_MAX = 12
"""At most this many users in the attempts chart (the best-ranked ones): more is unreadable."""
SERIES_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#e8710a", "#0f8b9c",
                  "#8c564b", "#d0399e", "#5f6368", "#8a8a00", "#393b79", "#3d6b1f")
LEVEL_CLASSES = 7
"""Levels 1..7 have a colour of their own (CSS classes lvl-1..lvl-7); higher ones share lvl-x."""


LIVE_POLL_S = 3
"""How often a live page asks its server whether the board changed."""


def render(board: Board | PublicBoard, live: bool = False) -> str:
    """The complete HTML document for a leaderboard (`grader.leaderboard.board` makes it, and
    `Board.public` what anyone may see of it). A gradebook's reports are shown as the board carries them:
    the board has already hidden a secret run's seed and randomized shapes, unless it was made with
    `reveal` (then the page says it is the instructor's); a public board has none to show.
    `live`: a page served by the class server, which refreshes itself (see the module docstring)."""
    view = _public_view(board) if isinstance(board, PublicBoard) else _view(board)
    view.update(live=live, stamp=stamp(board) if live else "", poll_ms=LIVE_POLL_S * 1000)
    return _env().get_template(TEMPLATE).render(**view)


def stamp(board: Board | PublicBoard) -> str:
    """A short fingerprint of what the board shows, `generated_at` aside (each render has a new one):
    a live page swaps in the new board when the stamp changes, and only then."""
    shown = {key: value for key, value in board.to_json().items() if key != "generated_at"}
    text = json.dumps(_plain(shown), sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


# -- formatting filters: None, NaN and non-numbers show as a dash ------------------------------------------

def number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def fmt_ms(value: Any) -> str:
    v = number(value)
    return DASH if v is None else f"{v:,.3f}"


def fmt_gflops(value: Any) -> str:
    v = number(value)
    return DASH if v is None else f"{v:,.0f}"


def fmt_pct(value: Any) -> str:
    v = number(value)
    if v is None:
        return DASH
    return f"{v:.0f}%" if abs(v) >= 10 else f"{v:.1f}%"


def fmt_int(value: Any) -> str:
    v = number(value)
    return DASH if v is None else f"{v:,.0f}"


def parse_time(value: Any) -> datetime.datetime | None:
    """An aware UTC datetime from an ISO-8601 string (naive means UTC), a datetime or epoch seconds."""
    if isinstance(value, datetime.datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    elif number(value) is not None:
        try:
            moment = datetime.datetime.fromtimestamp(float(value), datetime.timezone.utc)
        except (OverflowError, OSError, ValueError):
            return None
    else:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return moment.astimezone(datetime.timezone.utc)


def fmt_date(value: Any) -> str:
    moment = parse_time(value)
    if moment is not None:
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return DASH if value is None or value == "" else str(value)


def fmt_day_time(value: Any) -> str:
    """fmt_date without the zone, for table cells under a "UTC" heading."""
    moment = parse_time(value)
    return moment.strftime("%Y-%m-%d %H:%M") if moment is not None else fmt_date(value)


def timestamp(value: Any) -> float | None:
    moment = parse_time(value)
    return moment.timestamp() if moment is not None else None


def sort_key(value: Any) -> str:
    """A `data-sort` value: the number as text, or "" (sorted last) for a missing one."""
    v = number(value)
    if v is None:
        return ""
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(v)


def level_class(level: Any) -> str:
    v = number(level)
    if v is None:
        return "lvl-none"
    return f"lvl-{int(v)}" if 0 <= v <= LEVEL_CLASSES else "lvl-x"


def script_json(value: Any) -> Markup:
    """JSON for a `<script type="application/json">` block: ASCII only, and no `<`, `>`, `&` or `'`
    characters at all, so nothing inside can close the block or open a tag; non-finite floats become
    null (JSON.parse rejects NaN) and anything not JSON-like becomes its str()."""
    text = json.dumps(_plain(value), ensure_ascii=True, allow_nan=False, separators=(",", ":"), default=str)
    for char, escape in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"), ("'", "\\u0027")):
        text = text.replace(char, escape)
    return Markup(text)


def csp_hash(script: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline script."""
    digest = hashlib.sha256(str(script).encode("utf-8")).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float)):
        return value
    return str(value)


@functools.lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        # select_autoescape matches by suffix: "leaderboard.html.j2" ends with ".j2", so it is escaped.
        autoescape=jinja2.select_autoescape(["html", "htm", "xml", "j2"], default_for_string=True, default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(ms=fmt_ms, gflops=fmt_gflops, pct=fmt_pct, whole=fmt_int, date=fmt_date,
                       day_time=fmt_day_time, sort_key=sort_key, level_class=level_class,
                       script_json=script_json, csp_hash=csp_hash)
    env.globals.update(timestamp=timestamp)
    return env


# -- the view: the board as the template shows it, plus the charts' geometry --------------------------------

def _view(board: Board) -> dict:
    cases = list(board.cases)
    entries = [_row(index, e, cases) for index, e in enumerate(board.entries)]
    others = [_row(len(entries) + i, s, cases) for i, s in enumerate(_unranked(board))]
    reports = [row.pop("item") for row in entries + others]  # aligned with the rows' data-index
    untimed = sum(1 for e in entries if e["level"] is None)
    return {
        "public": False,
        "challenge": board.challenge,
        "title": board.title or board.challenge,
        "gpu": board.gpu,
        "generated_at": board.generated_at,
        "baseline_label": board.baseline_label or "baseline",
        "rate_label": board.rate_label,
        "rate_field": "gbps" if board.rate_label == "GB/s" else "gflops",
        "has_baseline": bool(board.baseline_label),
        "revealed": board.revealed,
        "cases": [_case_header(c) for c in cases],
        "levels": [{"level": number, "name": name} for number, name in board.levels.items()],
        "entries": entries,
        "others": others,
        "failing": sum(1 for o in others if o["status"] is not Status.NO_SUBMISSION),
        "reports": reports,
        "untimed": untimed,
        "attempts_total": sum(map(len, board.history.values())),
        "users_total": len(board.history),
        "distribution": _distribution_chart(board.distribution, board.levels),
        "history": _history_chart(board.history, entries, cases[0] if cases else None),
    }


def _public_view(board: PublicBoard) -> dict:
    """The view of a public board: the ranking's columns (rank, user, level, each case's time) and the
    levels chart, which the ranked levels alone make; no report, attempt, date or other student to show."""
    cases = list(board.cases)
    entries = [_ranked_row(index, e, cases) for index, e in enumerate(board.entries)]
    return {
        "public": True, "challenge": board.challenge, "title": board.title or board.challenge, "gpu": board.gpu,
        "generated_at": board.generated_at, "baseline_label": "", "rate_label": "", "rate_field": "",
        "has_baseline": False, "revealed": False, "cases": [_case_header(c) for c in cases],
        "levels": [{"level": number, "name": name} for number, name in board.levels.items()],
        "entries": entries, "others": [], "failing": 0, "reports": [],
        "untimed": sum(1 for e in entries if e["level"] is None), "attempts_total": 0, "users_total": 0,
        "distribution": _distribution_chart(board.distribution, board.levels),
        "history": {"series": [], "skipped": 0, "case": None},
    }


def _ranked_row(index: int, e: Ranked, cases: list[str]) -> dict:
    """A public board's row: what the table shows of a ranked student, nothing to click."""
    return {"index": index, "rank": e.rank, "user": e.user, "level": e.level, "level_name": e.level_name or "",
            "medians": [e.median_ms.get(case) for case in cases], "backend": "", "late": False, "practice": False,
            "status": Status.ACCEPTED, "status_order": STATUS_ORDER[Status.ACCEPTED], "status_text": "accepted",
            "clickable": False}


STATUS_ORDER = {Status.ACCEPTED: 0, Status.NOT_ACCEPTED: 1, Status.NO_SUBMISSION: 2}


def _unranked(board: Board) -> list[Standing]:
    """The gradebook's rows below the ranking: students with nothing accepted, then those with no
    submission, in the board's order."""
    return [s for s in board.students if s.status is not Status.ACCEPTED]


def _row(index: int, e: Standing, cases: list[str]) -> dict:
    """A table row, with `item`: what the page's script shows when the row is clicked (None: nothing
    to show, a student with no submission)."""
    ranked = e.status is Status.ACCEPTED
    status_text = e.verdict.name if e.status is Status.NOT_ACCEPTED else e.status.value
    row = {
        "index": index,
        "rank": e.rank,
        "user": e.user,
        "level": e.level,
        "level_name": e.level_name or "",
        "medians": [e.median_ms.get(case) for case in cases],
        "gflops": e.rate,  # the board's rate: GFLOP/s, or GB/s (rate_label)
        "percent_of_baseline": e.percent_of_baseline,
        "attempts": e.attempts,
        "submitted_at": e.submitted_at,
        "run_id": e.run_id,
        "backend": e.backend or "",
        "late": e.late, "practice": e.practice,
        "status": e.status, "status_order": STATUS_ORDER[e.status], "status_text": status_text,
        "clickable": ranked or e.report is not None,
    }
    item = {"rank": e.rank, "user": e.user, "run_id": e.run_id, "submission_id": e.submission_id,
            "backend": e.backend, "level": e.level, "level_name": row["level_name"], "report": e.report}
    if not ranked:
        item["status"] = status_text
    row["item"] = item if row["clickable"] else None
    return row


def _case_header(label: str) -> dict:
    name, _, dims = label.partition(" ")
    return {"label": label, "name": name if dims else label, "dims": dims}


def _nice_step(span: float, count: int) -> float:
    """A 1-2-5 step that cuts `span` into about `count` intervals."""
    raw = span / max(count, 1)
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def _distribution_chart(counts: Mapping[int, int], names: Mapping[int, str]) -> dict:
    """Users by level (`counts`), a bar for every level of the challenge and for level 0 (below level 1)."""
    shown = sorted({0} | set(names) | set(counts))
    width, height, left, right, top, bottom = 560, 260, 44, 12, 24, 46
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max(counts.values(), default=0)
    step = max(1, int(_nice_step(max(peak, 1), 4)))
    y_max = max(step, math.ceil(max(peak, 1) / step) * step)
    band = plot_w / len(shown)
    bar_w = min(band * 0.64, 56)
    bars = []
    for i, level in enumerate(shown):
        count = counts.get(level, 0)
        h = plot_h * count / y_max
        x = left + band * i + (band - bar_w) / 2
        name = "below level 1" if level == 0 else names.get(level, "")
        bars.append({"level": level, "count": count, "name": name, "css": level_class(level),
                     "x": round(x, 2), "y": round(top + plot_h - h, 2), "w": round(bar_w, 2), "h": round(h, 2),
                     "cx": round(x + bar_w / 2, 2), "label_y": round(top + plot_h - h - 6, 2)})
    ticks = [{"value": v, "y": round(top + plot_h - plot_h * v / y_max, 2)} for v in range(0, y_max + 1, step)]
    return {"width": width, "height": height, "left": left, "right": width - right, "top": top,
            "bottom": top + plot_h, "bars": bars, "ticks": ticks, "total": sum(counts.values())}


def _history_chart(history: Mapping[str, tuple[Attempt, ...]], entries: list[dict], first_case: str | None) -> dict:
    """Each user's best accepted median time (first performance case) after each attempt, as a step line."""
    ranked = [e["user"] for e in entries]
    order = [u for u in ranked if u in history] + sorted(u for u in history if u not in ranked)
    series, skipped = [], 0
    for user in order:
        attempts = history[user]
        best, points, marks = None, [], []
        for n, attempt in enumerate(attempts, 1):
            ms = number(attempt.median_ms)
            counted = ms is not None and ms > 0 and attempt.verdict.passed
            if counted:
                improved = best is None or ms < best
                if best is not None and improved:
                    points.append((n, best))
                if improved:
                    best = ms
                points.append((n, best))
                marks.append({"n": n, "ms": ms, "best": improved, "when": attempt.submitted_at})
            elif best is not None:
                points.append((n, best))
        if not marks:
            continue
        if len(series) >= HISTORY_SERIES_MAX:
            skipped += 1
            continue
        series.append({"user": user, "points": points, "marks": marks, "best": best, "attempts": len(attempts),
                       "colour": SERIES_COLOURS[len(series) % len(SERIES_COLOURS)]})
    if not series:
        return {"series": [], "skipped": 0, "case": first_case}

    width, height, left, right, top, bottom = 560, 280, 62, 16, 16, 44
    plot_w, plot_h = width - left - right, height - top - bottom
    n_max = max(max(p[0] for p in s["points"]) for s in series)
    x_hi = max(n_max, 2)
    x_step = max(1, int(_nice_step(x_hi - 1, 8)))

    def x_of(n: float) -> float:
        return round(left + plot_w * (n - 1) / (x_hi - 1), 2)

    values = [p[1] for s in series for p in s["points"]] + [m["ms"] for s in series for m in s["marks"]]
    lo, hi = min(values), max(values)
    log = hi / lo >= 8
    if log:
        y_lo, y_hi, tick_values = _log_ticks(lo, hi)

        def y_of(v: float) -> float:
            return round(top + plot_h * (1 - math.log10(v / y_lo) / math.log10(y_hi / y_lo)), 2)
    else:
        step = _nice_step(hi, 5)
        y_lo, y_hi = 0.0, max(step, math.ceil(hi * 1.05 / step) * step)
        tick_values = [i * step for i in range(int(round(y_hi / step)) + 1)]

        def y_of(v: float) -> float:
            return round(top + plot_h * (1 - v / y_hi), 2)

    for s in series:
        s["polyline"] = " ".join(f"{x_of(n)},{y_of(v)}" for n, v in s["points"])
        for m in s["marks"]:
            m["x"], m["y"] = x_of(m["n"]), y_of(m["ms"])
    return {
        "series": series, "skipped": skipped, "case": first_case, "log": log,
        "width": width, "height": height, "left": left, "right": width - right, "top": top, "bottom": top + plot_h,
        "x_ticks": [{"n": n, "x": x_of(n)} for n in range(1, x_hi + 1, x_step)],
        "y_ticks": [{"label": _tick_label(v), "y": y_of(v)} for v in tick_values],
    }


def _log_ticks(lo: float, hi: float, most: int = 8) -> tuple[float, float, list[float]]:
    """A log axis from lo to hi: its ends and ticks on 1-2-5 steps per decade, or 1-3, or decades only,
    the finest that gives at most `most` ticks; the ends are ticks themselves."""
    for factors in ((1, 2, 5), (1, 3), (1,)):
        grid = [f * 10.0 ** e for e in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2)
                for f in factors]
        below = max(v for v in grid if v <= lo * (1 + 1e-9))
        above = min(v for v in grid if v >= hi * (1 - 1e-9))
        ticks = [v for v in grid if below <= v <= above]
        if len(ticks) <= most or factors == (1,):
            return below, above, ticks
    raise AssertionError("unreachable")


def _tick_label(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 1:
        return f"{value:g}"
    return f"{value:.3g}"
