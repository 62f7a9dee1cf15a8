"""The checkout as files: its catalogue, statements and signatures, read without importing anything.

Its layout is
`challenges/<difficulty>/<number>_<name>/` holding `challenge.py` (a `Challenge(ChallengeBase)` class: `name`,
`atol`, `rtol`, `num_gpus`, `get_solve_signature()`, test generators and a PyTorch reference),
`challenge.html` (the statement) and `starter/starter.cu`.

Listing must be fast and must not need PyTorch, so nothing here imports a challenge: each `challenge.py` is
parsed (Python's own parser) for the class's constant attributes and the literal dictionary its
`get_solve_signature` returns, and the C types a student writes come from the starter's `solve`. A file this
cannot read is listed with the reason, not dropped.
"""

from __future__ import annotations

import ast
import dataclasses
import html.parser
import re
from dataclasses import dataclass
from pathlib import Path

from grader import signature
from grader.errors import UsageError

DIFFICULTIES = ("easy", "medium", "hard")
FOLDER = re.compile(r"(\d+)_[a-z0-9_]+")
"""A challenge folder's name: its number, then its name (`13_histogramming`). The name is its slug here."""
CHALLENGE_FILE = "challenge.py"
STATEMENT_FILE = "challenge.html"
STARTER_FILE = Path("starter") / "starter.cu"
ROLES = {"in": "input", "out": "output", "inout": "inout"}


@dataclass(frozen=True)
class OfficialParam:
    name: str
    ctype: str
    """As challenge.py writes it, e.g. `ctypes.POINTER(ctypes.c_float)`."""
    role: str
    """input, output or inout (LeetGPU's in, out, inout)."""


@dataclass(frozen=True)
class Official:
    """One official challenge, as read (never imported) from the checkout."""

    slug: str
    number: int
    difficulty: str
    folder: Path
    title: str | None = None
    atol: float | None = None
    rtol: float | None = None
    num_gpus: int | None = None
    params: tuple[OfficialParam, ...] = ()
    starter_types: tuple[str, ...] | None = None
    """The parameter types of the starter's `solve` (`const float*`, `int`), what a student writes."""
    problem: str | None = None
    """Why the folder could not be read fully, or None."""

    @property
    def statement_path(self) -> Path:
        return self.folder / STATEMENT_FILE

    @property
    def starter_path(self) -> Path:
        return self.folder / STARTER_FILE

    def prototype(self) -> str | None:
        """The starter's `solve` declaration with its parameters' names, where both are known."""
        if self.starter_types is None or len(self.starter_types) != len(self.params):
            return None
        args = ", ".join(f"{t} {p.name}" for t, p in zip(self.starter_types, self.params))
        return f"void solve({args})"


def checkout_root(path: Path) -> Path:
    """`path` if it is a checkout of LeetGPU's challenges (it has challenges/<difficulty>/), else a UsageError
    saying what was expected. The checkout's root or its challenges/ folder are both accepted."""
    path = path.expanduser()
    for root in (path, path.parent):
        if any((root / "challenges" / d).is_dir() for d in DIFFICULTIES) and (path == root or path.name == "challenges"):
            return root
    raise UsageError(f"{path} is not a checkout of LeetGPU's challenges: no challenges/easy, challenges/medium or "
                     "challenges/hard in it",
                     hint="git clone https://github.com/AlphaGPU/leetgpu-challenges and pass its folder as --leetgpu "
                          "(or set LEETGPU_CHALLENGES)")


def catalogue(path: Path) -> tuple[Official, ...]:
    """Every official challenge of the checkout at `path`, by number."""
    root = checkout_root(path)
    found = []
    for difficulty in DIFFICULTIES:
        folder = root / "challenges" / difficulty
        if not folder.is_dir():
            continue
        for entry in sorted(folder.iterdir()):
            match = FOLDER.fullmatch(entry.name)
            if match and entry.is_dir() and (entry / CHALLENGE_FILE).is_file():
                found.append(read(entry, difficulty, int(match[1])))
    return tuple(sorted(found, key=lambda o: (o.number, o.slug)))


def find(path: Path, slug: str) -> Official | None:
    """The official challenge `slug` (its folder's name), reading that folder only: a grading command looks its
    challenge up several times, and the whole catalogue is every challenge.py of the checkout parsed."""
    match = FOLDER.fullmatch(slug)
    if match is None:
        return None
    root = checkout_root(path)
    for difficulty in DIFFICULTIES:
        entry = root / "challenges" / difficulty / slug
        if entry.is_dir() and (entry / CHALLENGE_FILE).is_file():
            return read(entry, difficulty, int(match[1]))
    return None


def read(folder: Path, difficulty: str, number: int) -> Official:
    base = Official(folder.name, number, difficulty, folder)
    try:
        tree = ast.parse((folder / CHALLENGE_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError) as exc:
        return dataclasses.replace(base, problem=f"{CHALLENGE_FILE} cannot be read: {exc}")
    cls = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Challenge"), None)
    if cls is None:
        return dataclasses.replace(base, problem=f"{CHALLENGE_FILE} defines no class Challenge")
    constants = _class_constants(cls)
    params, problem = _signature(cls)
    return dataclasses.replace(base, title=_typed(constants.get("name"), str), atol=_number(constants.get("atol")),
                 rtol=_number(constants.get("rtol")), num_gpus=_typed(constants.get("num_gpus"), int), params=params,
                 starter_types=_starter_types(folder / STARTER_FILE), problem=problem)


def _class_constants(cls: ast.ClassDef) -> dict[str, object]:
    found = {}
    for node in cls.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                found[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return found


def _typed(value, kind):
    return value if isinstance(value, kind) and not isinstance(value, bool) else None


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _signature(cls: ast.ClassDef) -> tuple[tuple[OfficialParam, ...], str | None]:
    """The parameters `get_solve_signature` returns, read from its `return {...}` literal."""
    method = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "get_solve_signature"), None)
    returned = next((n.value for n in ast.walk(method) if isinstance(n, ast.Return)), None) if method else None
    if not isinstance(returned, ast.Dict):
        return (), "get_solve_signature does not return a literal dictionary"
    params = []
    for key, value in zip(returned.keys, returned.values):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(value, ast.Tuple)
                and len(value.elts) == 2 and isinstance(value.elts[1], ast.Constant)
                and value.elts[1].value in ROLES):
            return (), f"get_solve_signature has an entry this reader does not know: {ast.unparse(value)[:80]}"
        params.append(OfficialParam(key.value, ast.unparse(value.elts[0]), ROLES[value.elts[1].value]))
    return tuple(params), None


def _starter_types(path: Path) -> tuple[str, ...] | None:
    try:
        found = signature.parameter_types(path.read_text(encoding="utf-8", errors="replace"), "solve")
    except OSError:
        return None
    return found[0] if found else None


# --------------------------------------------------------------------------- the statement


KEEP = "\x00"
BLOCKS = {"p", "div", "pre", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4", "br", "li"}


class _Text(html.parser.HTMLParser):
    """challenge.html as terminal text: paragraphs and headings on lines of their own, list items as
    bullets, <pre> kept as it is, <code> in backticks, tags and scripts dropped, entities decoded."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.pre = 0
        self.skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1
        elif tag == "pre":
            self.pre += 1
            self.parts.append("\n\n")
        elif tag in ("h1", "h2", "h3", "h4"):
            self.parts.append("\n\n## ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag == "code" and not self.pre:
            self.parts.append("`")
        elif tag in BLOCKS:
            self.parts.append("\n\n" if tag in ("p", "ul", "ol", "table") else "\n")
        elif tag in ("td", "th"):
            self.parts.append(" | ")

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.parts.append("\n\n")
        elif tag == "code" and not self.pre:
            self.parts.append("`")
        elif tag in BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data):
        if self.skip:
            return
        # A <pre> line is marked so that text() keeps its indentation; other text flows.
        self.parts.append(data.replace("\n", "\n" + KEEP) if self.pre else re.sub(r"\s+", " ", data))

    def text(self) -> str:
        lines = [line[1:].rstrip() if line.startswith(KEEP) else line.strip()
                 for line in "".join(self.parts).split("\n")]
        text = re.sub(r"\n\s*\n- ", "\n- ", "\n".join(lines))  # a list's items on consecutive lines
        return re.sub(r"\n{3,}", "\n\n", text).strip() + "\n"


def statement_text(official: Official) -> str:
    """The statement as plain text (challenge.html rendered; nothing in it runs or is fetched)."""
    return html_text(official.statement_path)


def html_text(path: Path) -> str:
    """A statement's challenge.html as plain text: see `statement_text`."""
    try:
        source = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"{path} cannot be read: {exc.strerror}",
                         hint="check the checkout (git status in it)") from exc
    parser = _Text()
    parser.feed(source)
    parser.close()
    return parser.text()


# --------------------------------------------------------------------------- onto the kit's spec


CTYPES_ELEMENTS = {
    "c_float": {"float"}, "c_double": {"double"},
    "c_int": {"int"}, "c_int32": {"int"}, "c_uint32": {"unsigned int"}, "c_uint": {"unsigned int"},
    "c_int8": {"int8_t"}, "c_uint8": {"uint8_t"}, "c_ubyte": {"uint8_t"}, "c_byte": {"int8_t"},
    "c_int64": {"long long"}, "c_longlong": {"long long"},
    "c_uint16": {"half", "__nv_bfloat16"},  # LeetGPU passes both 16-bit floats as uint16; the starter says which
}
"""What each ctypes element type may be in C (spec.ELEMENTS names)."""
CTYPES_SCALARS = {"c_int": {"int"}, "c_int32": {"int"}, "c_size_t": {"int"}, "c_float": {"float"}}
"""Scalars: c_size_t is `int` where the starter declares `int N` (vector add's does), which is what students write."""
_POINTER = re.compile(r"(?:ctypes\.)?POINTER\((?:ctypes\.)?(\w+)\)")
_SCALAR = re.compile(r"(?:ctypes\.)?(\w+)")


@dataclass(frozen=True)
class Mapped:
    """An official signature in the kit's terms: each parameter's C type as the starter writes it and its
    role, or why it cannot be graded here (a parameter named)."""

    params: tuple[tuple[str, str, str], ...] = ()
    """(name, C type, role: input/output/inout, or "" for a scalar) per parameter."""
    unsupported: str | None = None
    notes: tuple[str, ...] = ()
    """What differs from the kit's own rules but is LeetGPU's contract, e.g. an input the starter leaves
    writable (LeetGPU never compares an "in" buffer, so a write into it is reported, not failed)."""


def mapped(official: Official) -> Mapped:
    """The official challenge's parameters as the kit's spec would declare them, checked against its ctypes."""
    from grader import spec

    if official.problem:
        return Mapped(unsupported=official.problem)
    if official.starter_types is None or len(official.starter_types) != len(official.params):
        return Mapped(unsupported="the starter's solve does not declare the parameters get_solve_signature names")
    params, notes = [], []
    for param, written in zip(official.params, official.starter_types):
        ctype = spec.c_type(written)
        why = _mismatch(param, written, ctype)
        if why:
            return Mapped(unsupported=f"parameter {param.name!r}: {why}")
        if ctype.pointer and param.role == "input" and not ctype.const:
            notes.append(f"{param.name} is an input the starter declares writable ({written})")
        params.append((param.name, written, param.role if ctype.pointer else ""))
    return Mapped(tuple(params), None, tuple(notes))


def _mismatch(param: OfficialParam, written: str, ctype) -> str | None:
    pointer, scalar = _POINTER.fullmatch(param.ctype), _SCALAR.fullmatch(param.ctype)
    if ctype is None:
        return f"the starter's type {written!r} is not one the grader can pass"
    if pointer:
        allowed = CTYPES_ELEMENTS.get(pointer[1])
        if allowed is None or not ctype.pointer or ctype.element.name not in allowed:
            return f"{param.ctype} and the starter's {written!r} do not agree, or the grader has no such buffer type"
        if param.role != "input" and ctype.const:
            return f"an {param.role} buffer the starter declares const ({written!r})"
        return None
    if scalar and not ctype.pointer and ctype.text in CTYPES_SCALARS.get(scalar[1], set()):
        return None
    return f"{param.ctype} (starter: {written!r}) is not a type the grader can pass"
