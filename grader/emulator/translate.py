"""Source rewrites that let a CUDA file compile as plain C++ for the CPU emulator.

The emulator compiles a submission with g++ and a compatibility header whose macros turn
`__global__`, `__shared__`, `threadIdx`, ... into ordinary C++. What is out of a macro's reach is
rewritten here:
- `kernel<<<cfg>>>(args)` is not C++ at all; it becomes
  `::emu::launch(kernel, "kernel", LINE, cfg)(args)`. The chevrons are read as nvcc reads them (see
  _chevrons): clang-format's `kernel << <cfg >> > (args)` is a launch too.
- `extern __shared__ T name[];` must point at the running block's dynamic buffer, not declare an
  array, so it becomes a pointer initialised from `::emu::dynamic_shared()`.
- the emulator must know every static `__shared__` array by name (a macro sees only the keyword),
  so each such declaration is followed by `__emu_track_shared(name);` (and a `static` beside
  `__shared__`, valid CUDA, is dropped: the macro already says it).
- `cudaLaunchCooperativeKernel((void*)kernel, grid, block, args, ...)` passes the kernel as a void
  pointer, which says nothing of its parameters' types, and the emulator must know them to read `args`:
  it becomes `::emu::launch_cooperative("kernel", LINE, kernel, grid, block, args, ...)`, the cast dropped.
- a file-scope `main(...)`, the file's own test program, is renamed: the worker has the program's
  `main`, and the grader calls only the entry point, as the GPU build does.
Every name a rewrite brings into the user's code is reserved (`__emu_...`) or in namespace `emu`, so it
cannot clash with one of the file's own. The scan works on tokens, so comments and literals are never
touched, and every rewrite keeps the user's code on its original line (moved line breaks go to the end
of the rewrite), so g++ diagnostics point at the user's own file and line. It also reports what the
emulator cannot run (the caller refuses the file) and what may behave differently on a CPU than on a GPU.

The text is a student's, so every pass is linear in its length: the lexer's every alternative consumes
what it scans, and a question asked of many tokens (where does the launch opened here close?) is
answered for all of them in one pass, never by a fresh scan from each.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass

ASM_MESSAGE = "inline PTX assembly (asm) is not supported in emulation; run on a GPU"
DEVICE_LAUNCH_MESSAGE = (
    "launching a kernel from device code (dynamic parallelism) is not supported in emulation")
LAUNCH_SYNTAX_MESSAGE = ("kernel launch the emulator cannot parse: write it as "
                         "kernel<<<config>>>(args) with a plain or templated kernel name")
EXTERN_SHARED_MESSAGE = ("extern __shared__ declaration the emulator cannot rewrite: write it as "
                         "`extern __shared__ T name[];`")
MAIN_RENAMED = "__emu_submission_main"
VOLATILE_MESSAGE = ("legacy warp-synchronous code (`volatile` shared memory stepped by a warp without "
                    "__syncwarp) relies on the lanes of a warp running in lockstep, which no GPU since Volta "
                    "promises: it often passes on a GPU and fails in emulation, where lanes run one at a "
                    "time. Make each step read, __syncwarp(), write, __syncwarp(), or use __shfl_down_sync")


@dataclass(frozen=True)
class Finding:
    line: int  # 1-based line in the original source
    message: str


@dataclass(frozen=True)
class Translation:
    text: str  # the rewritten C++ source (no #line directive added; the caller adds it)
    unsupported: tuple[Finding, ...]  # what the emulator cannot run (the caller refuses the file)
    warnings: tuple[Finding, ...]  # things that may behave differently in emulation


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str  # "id", "num", "lit" (string or character literal) or "punct"
    text: str
    start: int
    end: int
    line: int
    pp: int  # 0 in ordinary code, else the number of the preprocessor directive holding it


_PREFIX = r"(?:u8|u|U|L)?"
_LEX = re.compile("|".join([
    r"(?P<ws>\s+)",
    r"(?P<comment>//(?:\\\n|[^\n])*|/\*.*?(?:\*/|\Z))",
    # A raw string's body may hold quotes and newlines; it ends only at `)delim"`, or, unclosed, at the
    # end of the input, as a compiler reads it (were it not matched at all, every later `R"(` would scan
    # to the end again: quadratic). An unclosed block comment likewise.
    rf'(?P<lit>{_PREFIX}R"(?P<delim>[^()\\\s"]{{0,16}})\(.*?(?:\)(?P=delim)"|\Z)'
    rf'|{_PREFIX}"(?:\\.|[^"\\\n])*"?|{_PREFIX}\'(?:\\.|[^\'\\\n])*\'?)',
    r"(?P<num>\.?\d(?:[\w.]|[eEpP][+-]|'(?=\w))*)",  # ' is a C++14 digit separator here
    r"(?P<id>[A-Za-z_$]\w*)",
    r"(?P<punct>::|->|.)",
]), re.DOTALL)

_OPEN, _CLOSE = {"(", "[", "{"}, {")", "]", "}"}
_DEVICE = {"__global__", "__device__"}
_ASM = {"asm", "__asm__", "__asm"}
_ASM_QUALIFIERS = {"volatile", "__volatile__", "__volatile", "goto", "inline"}
_NOT_NAMESPACES = {"return", "else", "do", "case", "throw", "co_await", "co_return"}
_Edit = tuple[int, int, str | Callable[[], str]]
"""Replace source[start:end] with the text, or with what the function makes: a launch's text is made
only if the launch is kept (see _launches)."""


def _lex(src: str) -> list[_Tok]:
    toks: list[_Tok] = []
    directive, directives, line_start = 0, 0, True
    line, counted = 1, 0  # the line of src[counted]
    for m in _LEX.finditer(src):
        kind, text, start = m.lastgroup, m.group(), m.start()
        if kind in ("ws", "comment"):
            # A directive ends at a line break not escaped by a backslash (a comment inside it
            # stands for a space, so only whitespace can end it, and only its first character
            # can follow a backslash).
            breaks = text.count("\n")
            if kind == "ws" and directive and breaks > (text[0] == "\n" and src[start - 1] == "\\"):
                directive = 0
            line_start = line_start or (breaks > 0 and not directive)
            continue
        if text == "\\":  # a line continuation, not code
            continue
        if text == "#" and line_start:
            directives += 1
            directive = directives
        line_start = False
        line += src.count("\n", counted, start)
        counted = start
        toks.append(_Tok(kind, text, start, m.end(), line, directive))
    return toks


def _structure(toks: list[_Tok]) -> tuple[list[bool], list[str]]:
    """Per token: is it in the body of a `__global__`/`__device__` function, and which bracket
    is innermost around it ("" at file scope). Directives are left out of the structure."""
    device, opener = [], []
    stack: list[tuple[str, bool]] = []  # open brackets, each with "inside device code"
    statement = 0  # first token of the current statement or declaration head
    for i, t in enumerate(toks):
        device.append(bool(stack) and stack[-1][1])
        opener.append(stack[-1][0] if stack else "")
        if t.pp or t.kind != "punct":
            continue
        if t.text in _OPEN:
            inside = device[-1] or (t.text == "{" and any(
                x.text in _DEVICE for x in toks[statement:i] if not x.pp))
            stack.append((t.text, inside))
        elif t.text in _CLOSE and stack:
            stack.pop()
        if t.text in (";", "{", "}"):
            statement = i + 1
    return device, opener


_CONTINUATIONS = re.compile(r"(?:\\\r?\n)*")


def _touching(src: str, a: _Tok, b: _Tok) -> bool:
    """Nothing between two tokens but line continuations: one token to a compiler, were it one."""
    return _CONTINUATIONS.fullmatch(src, a.end, b.start) is not None


def _pieces(src: str, toks: list[_Tok], ch: str) -> list[int]:
    """For each token: how many characters of the `ch`-run starting there a C++ lexer takes as one
    operator (2 for `<<` or `>>`, 1 for `<` or `>`), else 0 (another token, a later character of
    one, or `<=`, `<<=`, `>=`, `>>=`). A run pairs from its left: `>>>` is `>>` then `>`."""
    size = [0] * len(toks)
    k = 0
    while k < len(toks):
        run = 0
        while k + run < len(toks) and toks[k + run].text == ch and (
                run == 0 or _touching(src, toks[k + run - 1], toks[k + run])):
            run += 1
        for j in range(k, k + run - 1, 2):
            size[j] = 2
        if run % 2:
            size[k + run - 1] = 1
        after = k + run
        if run and after < len(toks) and toks[after].text == "=" and _touching(src, toks[after - 1], toks[after]):
            size[after - (1 if run % 2 else 2)] = 0  # the last operator takes the `=`
        k += max(run, 1)
    return size


def _chevrons(src: str, toks: list[_Tok]) -> tuple[list[bool], list[bool]]:
    """Per token: does a launch's `<<<` start there, does a launch's `>>>` start there. nvcc reads
    both as two operators: `<<` then `<`, `>>` then `>`, so `<< <` opens a launch and `>> >` closes
    one (clang-format writes them so), but not `< <<`, `< < <`, `> >>` or `> > >`. Between `>>` and
    `>` may come any space, line break or comment; between `<<` and `<`, none that ends a line (nvcc
    rejects it). `operator<<<T>` and `operator<< <T>` name a specialization of operator<<."""
    lt, gt = _pieces(src, toks, "<"), _pieces(src, toks, ">")
    opens, closes = [False] * len(toks), [False] * len(toks)
    for k in range(len(toks) - 2):
        same = toks[k].pp == toks[k + 2].pp
        if lt[k] == 2 and lt[k + 2] == 1 and same and (k == 0 or toks[k - 1].text != "operator"):
            gap = _CONTINUATIONS.sub("", src[toks[k + 1].end:toks[k + 2].start])
            opens[k] = "\n" not in gap
        closes[k] = gt[k] == 2 and gt[k + 2] == 1 and same
    return opens, closes


# --------------------------------------------------------------------------- where scans stop
# The rewrites ask, of many tokens, where a scan from there stops: the `>>>` closing a launch's
# configuration, the `;` ending a declaration, the `<` opening a template argument list. A fresh scan
# from each token makes a pass quadratic (a file of unclosed `<<<`, each scanning to the end), so each
# question is answered for every token at once, in one pass over them.


def _partners(toks: list[_Tok]) -> list[int | None]:
    """For each opening bracket, the index of the bracket closing it in the same code or directive (any
    closing bracket closes, as the scans count them); None for every other token."""
    partner: list[int | None] = [None] * len(toks)
    stack: list[int] = []
    for k, t in enumerate(toks):
        if k and t.pp != toks[k - 1].pp:
            stack.clear()  # a scan stops where the code or directive holding it ends
        if t.text in _OPEN:
            stack.append(k)
        elif t.text in _CLOSE and stack:
            partner[stack.pop()] = k
    return partner


def _forward(toks: list[_Tok], partner: list[int | None],
             found: Callable[[int], bool]) -> list[int | None]:
    """For every index j: the first index from j, outside brackets opened from j on, where found(index)
    holds; None at a `;`, an unbalanced closing bracket or the end of the code or directive holding
    toks[j]. Right to left, each answer is the next token's, or that of the token after a bracketed
    group."""
    reach: list[int | None] = [None] * len(toks)
    for k in range(len(toks) - 1, -1, -1):
        text, after = toks[k].text, k + 1
        if found(k):
            reach[k] = k
            continue
        if text in _OPEN:
            if partner[k] is None:
                continue  # never closed: nothing beyond it is outside it
            after = partner[k] + 1
        elif text in _CLOSE or text == ";":
            continue
        if after < len(toks) and toks[after].pp == toks[k].pp:
            reach[k] = reach[after]
    return reach


def _closings(toks: list[_Tok], partner: list[int | None]) -> list[int | None]:
    """_forward to the first closing bracket (see _closer)."""
    return _forward(toks, partner, lambda k: toks[k].text in _CLOSE)


def _closer(closings: list[int | None], i: int) -> int | None:
    """Index of the bracket closing the one at toks[i]: the first closing bracket after it outside brackets."""
    return closings[i + 1] if i + 1 < len(closings) else None


def _template_opens(toks: list[_Tok]) -> list[int | None]:
    """For each `>` closing a template argument list: the index of its `<`, counting `<` and `>` back
    over bracketed groups; None where a `;` or an unbalanced opening bracket comes first. Right to left,
    with the `>` still waiting for their `<` kept per bracket level."""
    opens: list[int | None] = [None] * len(toks)
    waiting: list[list[int]] = [[]]  # innermost bracket level last
    for k in range(len(toks) - 1, -1, -1):
        text = toks[k].text
        if text in _CLOSE:
            waiting.append([])
        elif text in _OPEN:
            waiting.pop()  # the `>` still waiting there reach an unbalanced bracket: None
            if not waiting:  # nothing was open after it: what comes before is a level of its own
                waiting.append([])
        elif text == ">":
            waiting[-1].append(k)
        elif text == "<" and waiting[-1]:
            opens[waiting[-1].pop()] = k
        elif text == ";":
            waiting[-1].clear()
    return opens


def _callee_starts(toks: list[_Tok]) -> list[int | None]:
    """For each token that may end the expression before a `<<<`: the index of the first token of
    `ns::kernel<T...>`, or None. Left to right, so that `a::b<T>::c` starts where `a::b<T>` does (a
    chain walked afresh from each launch is quadratic on `f<<<a<b>>>()>::g<<<a<b>>>()>::h<<<...`)."""
    opens = _template_opens(toks)
    starts: list[int | None] = []
    for j in range(len(toks)):
        starts.append(_callee_step(toks, opens, starts, j))
    return starts


def _callee_step(toks: list[_Tok], opens: list[int | None], starts: list[int | None], j: int) -> int | None:
    if toks[j].text == ">":
        k = opens[j]
        if not k:
            return None
        j = k - 1
    if toks[j].kind != "id":
        return None
    if j < 1 or toks[j - 1].text != "::":
        return None if j and toks[j - 1].text in (".", "->") else j  # no member launches
    if j >= 2 and toks[j - 2].text not in _NOT_NAMESPACES and (
            toks[j - 2].kind == "id" or toks[j - 2].text == ">"):
        return starts[j - 2]  # `ns::` before: the name starts where ns does
    return j - 1  # a leading `::`


def _externs_before(toks: list[_Tok]) -> list[int | None]:
    """For every token: the index of an `extern` earlier in the declaration holding it, or None."""
    found: list[int | None] = []
    nearest = None
    for k, t in enumerate(toks):
        if k and t.pp != toks[k - 1].pp:
            nearest = None
        found.append(nearest)
        if t.text in (";", "{", "}"):
            nearest = None
        elif t.text == "extern":
            nearest = k
    return found


@dataclass(frozen=True)
class _Reach:
    """Where the scans the rewrites need stop, for every token of the file."""
    closings: list[int | None]
    """The first closing bracket outside brackets."""
    launch_open: list[bool]
    """Whether a launch's `<<<` starts at the token."""
    launch_close: list[int | None]
    """The first launch's `>>>` outside brackets."""
    statement_end: list[int | None]
    """The first `;` outside brackets."""
    callee_start: list[int | None]
    extern_before: list[int | None]

    @staticmethod
    def of(src: str, toks: list[_Tok]) -> _Reach:
        partner = _partners(toks)
        opens, closes = _chevrons(src, toks)
        return _Reach(closings=_closings(toks, partner), launch_open=opens,
                      launch_close=_forward(toks, partner, closes.__getitem__),
                      statement_end=_forward(toks, partner, lambda k: toks[k].text == ";"),
                      callee_start=_callee_starts(toks), extern_before=_externs_before(toks))

    def match(self, i: int) -> int | None:
        """Index of the bracket closing the one at toks[i]."""
        return _closer(self.closings, i)


# --------------------------------------------------------------------------- launches


def _line_breaks(dropped: str) -> str:
    """The line breaks of dropped text, keeping a backslash continuation (a #define goes on)."""
    return "".join("\\\n" if line.rstrip(" \t").endswith("\\") else "\n" for line in dropped.split("\n")[:-1])


@dataclass(frozen=True)
class _LaunchSite:
    """Token indices of `callee<<<config>>>(args)`."""
    first: int
    open: int
    close: int
    paren: int
    end: int


def _launch_site(toks: list[_Tok], reach: _Reach, i: int) -> _LaunchSite | None:
    """The launch whose `<<<` is toks[i], if the emulator can parse it."""
    first = reach.callee_start[i - 1] if i else None
    close = reach.launch_close[i + 3] if i + 3 < len(toks) else None
    if first is None or close is None or close + 3 >= len(toks) or toks[close + 3].text != "(":
        return None
    end = reach.match(close + 3)
    return None if end is None else _LaunchSite(first, i, close, close + 3, end)


def _launch_text(src: str, toks: list[_Tok], site: _LaunchSite) -> str:
    i, close, paren = site.open, site.close, site.paren
    callee = src[toks[site.first].start:toks[i - 1].end]
    config = src[toks[i + 2].end:toks[close].start]
    args = src[toks[paren].start:toks[site.end].end]
    dropped = src[toks[i - 1].end:toks[i + 2].end] + src[toks[close].start:toks[paren].start]
    name = re.sub(r"\s+", " ", callee).replace("\\", "\\\\").replace('"', '\\"')
    return f'::emu::launch({callee}, "{name}", {toks[i].line}, {config}){args}{_line_breaks(dropped)}'


def _launches(src: str, toks: list[_Tok], device: list[bool],
              reach: _Reach) -> tuple[list[_Edit], set[Finding]]:
    """Edits for the launches, and failures. A launch's text is made only when _apply keeps it: a
    launch in the callee of a later one is dropped there, and making each one's text would copy the
    nested text once per level."""
    edits, findings = [], set()
    i = 0
    while i < len(toks):
        if not reach.launch_open[i]:
            i += 1
            continue
        if device[i] and not toks[i].pp:
            findings.add(Finding(toks[i].line, DEVICE_LAUNCH_MESSAGE))
        site = _launch_site(toks, reach, i)
        if site is None:
            findings.add(Finding(toks[i].line, LAUNCH_SYNTAX_MESSAGE))
            i += 3
            continue
        end = toks[site.end].end
        edits.append((toks[site.first].start, end, functools.partial(_launch_text, src, toks, site)))
        while i < len(toks) and toks[i].start < end:
            i += 1
    return edits, findings


# --------------------------------------------------------------------------- cooperative launches

COOPERATIVE_LAUNCH = "cudaLaunchCooperativeKernel"
_VOID_POINTER = {"void", "const", "*"}
_CASTS = {"reinterpret_cast", "static_cast", "const_cast"}


def _first_argument_end(toks: list[_Tok], reach: _Reach, first: int, close: int) -> int | None:
    """Index of the `,` ending the call argument that starts at toks[first] (None: it is the only one).
    Brackets are skipped whole, and so is a template argument list: `kernel<64, float>` is one argument."""
    k, angle = first, 0
    while k < close:
        text = toks[k].text
        if text in _OPEN:
            k = reach.match(k) or close
        elif text == "<":
            angle += 1
        elif text == ">" and angle:
            angle -= 1
        elif text == "," and not angle:
            return k
        k += 1
    return None


def _is_void_pointer(toks: list[_Tok]) -> bool:
    texts = [t.text for t in toks]
    return "void" in texts and texts.count("*") == 1 and set(texts) <= _VOID_POINTER


def _without_void_cast(toks: list[_Tok], reach: _Reach, first: int, last: int) -> tuple[int, int, list[_Edit]]:
    """The tokens [first, last] of a kernel argument less a cast to a void pointer, `(void*)k` or
    `reinterpret_cast<void*>(k)`: (first, last) of what is left, and the edits that drop the cast."""
    if toks[first].text == "(":
        end = reach.match(first)
        if end is not None and end < last and _is_void_pointer(toks[first + 1:end]):
            return end + 1, last, [(toks[first].start, toks[end].end, "")]
    if toks[first].text in _CASTS and first + 1 < last and toks[first + 1].text == "<":
        close = next((k for k in range(first + 2, last) if toks[k].text == ">"), None)
        if (close is not None and _is_void_pointer(toks[first + 2:close]) and toks[close + 1].text == "("
                and reach.match(close + 1) == last and close + 2 < last):
            return close + 2, last - 1, [(toks[first].start, toks[close + 1].end, ""),
                                         (toks[last].start, toks[last].end, "")]
    return first, last, []


def _cooperative_launches(src: str, toks: list[_Tok], reach: _Reach) -> list[_Edit]:
    """Edits that make each `cudaLaunchCooperativeKernel(kernel, ...)` call `::emu::launch_cooperative(name,
    line, kernel, ...)`, the kernel's cast to a void pointer dropped so that its type reaches the runtime."""
    edits: list[_Edit] = []
    for k, t in enumerate(toks):
        if t.text != COOPERATIVE_LAUNCH or t.kind != "id" or k + 1 >= len(toks) or toks[k + 1].text != "(":
            continue
        if k and toks[k - 1].text in (".", "->"):
            continue
        close = reach.match(k + 1)
        comma = None if close is None else _first_argument_end(toks, reach, k + 2, close)
        if comma is None or comma == k + 2:
            continue  # not CUDA's call: g++ says what is wrong with it
        start = toks[k - 1].start if k and toks[k - 1].text == "::" and (
            k < 2 or toks[k - 2].kind != "id") else t.start
        first, last, casts = _without_void_cast(toks, reach, k + 2, comma - 1)
        name = re.sub(r"\s+", " ", src[toks[first].start:toks[last].end]).replace("\\", "\\\\").replace('"', '\\"')
        head = src[start:toks[k + 1].end]
        edits.append((start, toks[k + 1].end,
                      f'::emu::launch_cooperative("{name}", {t.line}, ' + _line_breaks(head)))
        edits += [(a, b, _line_breaks(src[a:b])) for a, b, _ in casts]
    return edits


# --------------------------------------------------------------------------- shared memory


def _without_attributes(toks: list[_Tok]) -> list[_Tok]:
    """Drop `__align__(16)`, `alignas(16)`, `__attribute__((...))` and `[[...]]`."""
    closings = _closings(toks, _partners(toks))
    kept, k = [], 0
    while k < len(toks):
        is_call = toks[k].kind == "id" and k + 1 < len(toks) and toks[k + 1].text == "("
        is_std = toks[k].text == "[" and k + 1 < len(toks) and toks[k + 1].text == "["
        if is_call or is_std:
            end = _closer(closings, k + 1 if is_call else k)
            k = len(toks) if end is None else end + 1
        else:
            kept.append(toks[k])
            k += 1
    return kept


def _join(toks: list[_Tok]) -> str:
    """Token texts with one space wherever the source had a gap (so `T::value` stays whole)."""
    return toks[0].text + "".join((" " if b.start > a.end else "") + b.text for a, b in zip(toks, toks[1:]))


def _dynamic_shared(src: str, toks: list[_Tok], ext: int, end: int) -> str | None:
    """Replacement for `extern __shared__ [ATTRS] TYPE NAME[];` held by toks[ext..end]."""
    body = toks[ext + 1:end]
    if len(body) < 4 or [t.text for t in body[-2:]] != ["[", "]"] or body[-3].kind != "id":
        return None
    type_toks = _without_attributes([t for t in body[:-3] if t.text != "__shared__"])
    if not type_toks:
        return None
    ty, name = _join(type_toks), body[-3].text
    return (f"thread_local {ty}* const {name} = reinterpret_cast<{ty}*>(::emu::dynamic_shared());"
            + _line_breaks(src[toks[ext].start:toks[end].end]))


def _top_level(toks: list[_Tok]):
    """Pairs (token, whether it lies outside every bracket and template argument list)."""
    depth = angle = 0
    for t in toks:
        yield t, depth == 0 and angle == 0
        if t.text in _OPEN:
            depth += 1
        elif t.text in _CLOSE:
            depth -= 1
        elif depth == 0 and t.text == "<":
            angle += 1
        elif depth == 0 and t.text == ">" and angle:
            angle -= 1


def _split_declarators(toks: list[_Tok]) -> list[list[_Tok]]:
    parts: list[list[_Tok]] = [[]]
    for t, top in _top_level(toks):
        if top and t.text == ",":
            parts.append([])
        else:
            parts[-1].append(t)
    return parts


def _declared_name(part: list[_Tok]) -> str | None:
    """The last top-level identifier before `[` or `=`, skipping calls such as `__align__(16)`."""
    name = None
    for k, (t, top) in enumerate(_top_level(part)):
        if top and t.text in ("[", "="):
            break
        if top and t.kind == "id" and (k + 1 == len(part) or part[k + 1].text != "("):
            name = t.text
    return name


def _shared(src: str, toks: list[_Tok], opener: list[str],
            reach: _Reach) -> tuple[list[_Edit], dict[str, int], set[Finding]]:
    """Edits for `__shared__` declarations, the declared names (with their line), and failures. Each
    declaration is read once, from its first `__shared__`: one inside a declaration of its kind already
    read (the same keyword again, or one in its braces, which CUDA does not allow) would read the rest
    of the outer declaration again, quadratic in a file that nests them."""
    edits, names, findings = [], {}, set()
    read_up_to = {"extern": -1, "plain": -1}  # the end of the last declaration of each kind read
    for s, t in enumerate(toks):
        if t.text != "__shared__" or opener[s] in ("(", "["):
            continue
        ext, end = reach.extern_before[s], reach.statement_end[s]
        if s < read_up_to["plain" if ext is None else "extern"]:
            continue
        if ext is not None:
            text = None
            if end is not None:
                text, read_up_to["extern"] = _dynamic_shared(src, toks, ext, end), end
            if text is None:
                findings.add(Finding(t.line, EXTERN_SHARED_MESSAGE))
                continue
            edits.append((toks[ext].start, toks[end].end, text))
            names.setdefault(toks[end - 3].text, t.line)
        elif not t.pp and end is not None and (s == 0 or toks[s - 1].text not in ("<", ",")):
            read_up_to["plain"] = end
            declared = [n for n in map(_declared_name, _split_declarators(toks[s + 1:end])) if n]
            for n in declared:
                names.setdefault(n, t.line)
            track = "".join(f" __emu_track_shared({n});" for n in declared)
            if track:
                edits.append((toks[end].end, toks[end].end, track))
            edits += _redundant_static(toks, s)
    return edits, names, findings


def _redundant_static(toks: list[_Tok], s: int) -> list[_Edit]:
    """`static __shared__` (or `__shared__ static`) is valid CUDA, but `__shared__` already expands
    to `static thread_local` here, and a second `static` is an error: drop it."""
    return [(toks[k].start, toks[k].end, "") for k in (s - 1, s + 1)
            if 0 <= k < len(toks) and toks[k].text == "static" and not toks[k].pp]


def _main_function(toks: list[_Tok], opener: list[str]) -> list[_Edit]:
    """A file-scope `main(` (a LeetGPU file's own test program) renamed: the emulator's worker has
    the program's main, and the grader calls only the entry point, as a GPU build does."""
    return [(t.start, t.end, MAIN_RENAMED) for k, t in enumerate(toks)
            if t.text == "main" and t.kind == "id" and not t.pp and opener[k] == ""
            and k + 1 < len(toks) and toks[k + 1].text == "("
            and (k == 0 or toks[k - 1].text not in (".", "->", "::"))]


def _unsupported_calls(toks: list[_Tok]) -> set[Finding]:
    findings = set()
    for k, t in enumerate(toks):
        after = k + 1
        while t.text in _ASM and after < len(toks) and toks[after].text in _ASM_QUALIFIERS:
            after += 1
        calls = after < len(toks) and toks[after].text == "("
        if t.text in _ASM and calls:
            findings.add(Finding(t.line, ASM_MESSAGE))
    return findings


_FLOATING = {"float", "double", "half", "__half", "half2", "__half2", "__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162",
             "nv_bfloat162", "float2", "float4", "double2"}


def _volatile_warnings(toks: list[_Tok], device: list[bool]) -> set[Finding]:
    """One warning for the first `volatile` floating-point declaration in device code (a pointer
    parameter of a warp-reduction helper, `volatile float* sdata`, or a volatile shared array): in a
    kernel that is nearly always the warp-synchronous idiom, whether or not shared memory is named on
    that line. Left out: `asm volatile`, host code, and integer flags a kernel spins on."""
    def declares_floating(k: int) -> bool:
        return any(t.text in _FLOATING for t in toks[max(k - 2, 0):k + 3] if not t.pp)

    first = min((t.line for k, t in enumerate(toks) if t.kind == "id" and t.text == "volatile" and not t.pp
                 and not (k and toks[k - 1].text in _ASM) and (device[k] or _in_device_signature(toks, k))
                 and declares_floating(k)), default=None)
    return {Finding(first, VOLATILE_MESSAGE)} if first is not None else set()


def _in_device_signature(toks: list[_Tok], k: int) -> bool:
    """Is token k in the head of a `__device__`/`__global__` function (its parameters)?"""
    for t in reversed(toks[:k]):
        if not t.pp and t.text in (";", "{", "}"):
            return False
        if not t.pp and t.text in _DEVICE:
            return True
    return False


def _apply(src: str, edits: list[_Edit]) -> str:
    out, pos = [], 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:  # overlaps an earlier rewrite (a launch inside a launch): keep the first
            continue
        out += [src[pos:start], text if isinstance(text, str) else text()]
        pos = end
    out.append(src[pos:])
    return "".join(out)


BUILT_INS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
"""Names the emulator's header defines as macros for device code. In host code CUDA has no such
names, so there they are the file's own variables (`dim3 gridDim(...)` before a launch, common in
SGEMM tutorials): _host_names renames them first, out of the macros' way."""
HOST_PREFIX = "__emu_host_"


def _host_names(source: str, toks: list[_Tok], device: list[bool]) -> str:
    """The source with every host-code use of a built-in's name renamed (same line, same meaning)."""
    hits = [t for t, inside in zip(toks, device) if t.kind == "id" and t.text in BUILT_INS and not inside and not t.pp]
    return _apply(source, [(t.start, t.end, HOST_PREFIX + t.text) for t in hits]) if hits else source


def lint(source: str) -> tuple[Finding, ...]:
    """What translate warns about, for a build that does not translate (the GPU's): the same source
    deserves the same warning wherever it runs."""
    toks = _lex(source)
    return tuple(sorted(_volatile_warnings(toks, _structure(toks)[0]), key=lambda f: (f.line, f.message)))


def translate(source: str) -> Translation:
    """Rewrite a CUDA source for the emulator; untouched lines and line numbers stay the same."""
    toks = _lex(source)
    device, opener = _structure(toks)
    renamed = _host_names(source, toks, device)
    if renamed != source:  # read again: the rewrites below need the renamed text's tokens
        source, toks = renamed, _lex(renamed)
        device, opener = _structure(toks)
    reach = _Reach.of(source, toks)
    launch_edits, launch_findings = _launches(source, toks, device, reach)
    shared_edits, shared_names, shared_findings = _shared(source, toks, opener, reach)
    unsupported = launch_findings | shared_findings | _unsupported_calls(toks)
    warnings = _volatile_warnings(toks, device)
    order = lambda f: (f.line, f.message)  # noqa: E731
    main_edits = _main_function(toks, opener)
    cooperative_edits = _cooperative_launches(source, toks, reach)
    return Translation(text=_apply(source, launch_edits + shared_edits + main_edits + cooperative_edits),
                       unsupported=tuple(sorted(unsupported, key=order)),
                       warnings=tuple(sorted(warnings, key=order)))
