"""The similarity report (grader.similarity): a planted near-copy flagged and honest solutions not, the
challenge's starter and levels counting for no one, a student never paired with themselves, --every; the
`grader similarity` command; the instructor's pages (grader.classroom.similarity_pages), their access and
every person-made string on them shown as text."""

from __future__ import annotations

import dataclasses
import json
import re
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console
with warnings.catch_warnings():  # starlette suggests httpx2 for its TestClient; httpx is what this project has
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient` is deprecated")
    from starlette.testclient import TestClient

from grader import cli, similarity
from grader.classroom import app, queue, roster
from grader.classroom.schema import open_class
from grader.exitcodes import ExitCode
from grader.source import from_bytes
from grader.spec import load

from conftest import CHALLENGES, ROOT, SUBMISSIONS

ORIGINAL = SUBMISSIONS / "register_tiled_float4.cu"
"""A matmul of its author's own (not a level): what a copier would take."""
HONEST = (SUBMISSIONS / "cooperative_groups_tiles.cu", SUBMISSIONS / "warp_shuffle.cu")
"""Two matmuls written apart on one idea (a warp per element of C): alike in places (0.30), not copies."""
RENAMED = {"load_a_tile": "fetchTileA", "load_b_tile": "fetchTileB", "vector_ok": "wide", "acc": "sum",
           "row0": "baseRow", "col0": "baseCol", "matmul_register_tiled": "mmKernel", "ty": "py", "tx": "px"}
XSS = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
HOSTILE = [XSS, IMG, "{{7*7}}", "\u202e", "W" * 3000]
ORIGIN = "http://testserver"


def disguised(text: str) -> str:
    """The original as a student hiding a copy leaves it: names changed, comments dropped and one added,
    indented by two, two independent statements swapped."""
    for old, new in RENAMED.items():
        text = re.sub(rf"\b{old}\b", new, text)
    text = re.sub(r"//[^\n]*", "", text)
    text = text.replace("    int baseRow = blockIdx.y * BM, baseCol = blockIdx.x * BN;\n"
                        "    int py = threadIdx.x / (BN / TN), px = threadIdx.x % (BN / TN);\n",
                        "    int py = threadIdx.x / (BN / TN), px = threadIdx.x % (BN / TN);\n"
                        "    int baseRow = blockIdx.y * BM, baseCol = blockIdx.x * BN;\n")
    lines = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        lines.append("  " * ((len(line) - len(body)) // 4) + body)
    return "// matmul, my solution\n" + "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def matmul():
    return load(CHALLENGES, "matmul")


@pytest.fixture(scope="module")
def vector_add():
    return load(CHALLENGES, "vector_add")


def entry(user: str, n: int, text: str, name: str = "k.cu") -> similarity.Entry:
    return similarity.Entry(user, n, name, text)


# -- the report -------------------------------------------------------------------------------------------

def test_the_disguise_changed_the_text():
    copy = disguised(ORIGINAL.read_text())
    assert "fetchTileA" in copy and "load_a_tile" not in copy and "// 2-D register tiling" not in copy
    assert copy.index("int py =") < copy.index("int baseRow =")


def test_a_planted_near_copy_is_flagged_and_honest_solutions_are_not(matmul):
    entries = [entry("amy", 1, ORIGINAL.read_text()), entry("bob", 2, disguised(ORIGINAL.read_text())),
               entry("cat", 3, HONEST[0].read_text()), entry("dan", 4, HONEST[1].read_text())]
    report = similarity.report(matmul, entries)
    assert report.threshold == similarity.DEFAULT_THRESHOLD and (report.students, report.submissions) == (4, 4)
    assert len(report.pairs) == 6
    assert [(p.a.user, p.b.user) for p in report.flagged] == [("amy", "bob")]
    copied = report.flagged[0]
    assert copied.score > 0.9 and copied.shared_chars > 500
    honest = next(p for p in report.pairs if {p.a.user, p.b.user} == {"cat", "dan"})
    assert 0.1 < honest.score < 0.5  # alike in places, as two solutions of one idea are
    assert "starter.cu" in report.excluded and "levels/1_naive.cu" in report.excluded


def test_regions_are_the_shared_text(matmul):
    original, copy = ORIGINAL.read_text(), disguised(ORIGINAL.read_text())
    given = similarity.Boilerplate.of(matmul).texts
    pair = similarity.compare_two(entry("amy", 1, original), entry("bob", 2, copy), given)
    marked_a = "".join(original[s:e] for s, e in pair.regions_a)
    marked_b = "".join(copy[s:e] for s, e in pair.regions_b)
    assert "__shared__ __align__(16) float As[BK][BM + 4];" in marked_a
    assert "__shared__ __align__(16) float As[BK][BM + 4];" in marked_b
    assert "fetchTileA" in marked_b and "load_a_tile" in marked_a
    for regions, text in ((pair.regions_a, original), (pair.regions_b, copy)):
        assert all(0 <= s < e <= len(text) for s, e in regions)
        assert all(e1 < s2 for (_, e1), (s2, _) in zip(regions, regions[1:]))  # sorted, disjoint


def test_likeness_of_the_starter_alone_is_not_flagged(vector_add):
    """Two students who hand in the starter with changes of their own are alike only in what everyone was
    given: flagged without the boilerplate, not with it."""
    starter = vector_add.starter_path.read_text()
    amy = starter.replace("int threads = 256;", "int threads = 128;  // amy")
    bob = starter.replace("// Your kernel here: compute one or more elements of C.", "float unused = 0.0f;")
    entries = [entry("amy", 1, amy), entry("bob", 2, bob)]
    assert similarity.compare(entries, (), 0.7).flagged  # alike ...
    report = similarity.report(vector_add, entries)
    assert report.flagged == () and report.pairs[0].score < 0.3  # ... in what was given


def test_a_two_line_kernel_is_too_small_to_flag(vector_add):
    """vector_add's usual kernel, written into the starter by two students: nearly all they share beyond
    the boilerplate, but 60 characters, under MIN_SHARED_CHARS (the measurement its docstring cites)."""
    starter = vector_add.starter_path.read_text()
    mark = "// Your kernel here: compute one or more elements of C."
    amy = starter.replace(mark, "int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < N) C[i] = A[i] + B[i];")
    bob = starter.replace(mark, "int idx = threadIdx.x + blockIdx.x * blockDim.x;  // mine\n"
                                "    if (idx < N) C[idx] = A[idx] + B[idx];").replace("threads", "t")
    pair = similarity.report(vector_add, [entry("amy", 1, amy), entry("bob", 2, bob)]).pairs[0]
    assert pair.score > 0.9 and pair.shared_chars == 60 and not pair.flagged(similarity.DEFAULT_THRESHOLD)


def test_a_students_own_submissions_are_never_a_pair(matmul):
    text = ORIGINAL.read_text()
    entries = [entry("amy", 1, text), entry("amy", 2, disguised(text)), entry("amy", 3, text),
               entry("bob", 4, HONEST[0].read_text())]
    for every in (False, True):
        report = similarity.report(matmul, entries, every=every)
        assert all(p.a.user != p.b.user for p in report.pairs)
        assert [(p.a.user, p.b.user) for p in report.pairs] == [("amy", "bob")] and report.flagged == ()
        assert report.students == 2 and report.submissions == (3 if every else 2)  # amy's 3 = her 1, once


def test_every_counts_a_source_handed_in_again_once():
    text = ORIGINAL.read_text()
    entries = [entry("amy", 1, text), entry("amy", 2, text), entry("bob", 3, text), entry("bob", 4, text + " ")]
    assert [e.submission_id for e in similarity.chosen(entries, every=True)] == [1, 3, 4]
    assert [e.submission_id for e in similarity.chosen(entries)] == [2, 4]


def test_every_compares_earlier_submissions_too(matmul):
    """Bob copied amy's first submission; amy's latest is another: only --every sees it, and reports the
    pair of students by their most alike pair of submissions."""
    text = ORIGINAL.read_text()
    entries = [entry("amy", 1, text), entry("bob", 2, disguised(text)), entry("amy", 3, HONEST[0].read_text())]
    assert similarity.report(matmul, entries).flagged == ()
    report = similarity.report(matmul, entries, every=True)
    assert [(p.a.submission_id, p.b.submission_id) for p in report.pairs] == [(1, 2)]
    assert report.flagged and report.every


def test_segments_cut_the_text_at_the_regions():
    text = "ab\r\ncd\nef"
    assert "".join(s.text for s in similarity.segments(text, [(1, 5)])) == text
    assert similarity.segments(text, [(1, 5)])[1] == similarity.Segment("b\r\nc", True)
    rows = similarity.lines(text, [(1, 5)])
    assert [[(s.text, s.shared) for s in row] for row in rows] == [
        [("a", False), ("b", True)], [("c", True), ("d", False)], [("ef", False)]]
    assert similarity.lines("x\n", []) == ((similarity.Segment("x", False),),)


def test_a_submission_of_boilerplate_only_shares_nothing(vector_add):
    starter = vector_add.starter_path.read_text()
    report = similarity.report(vector_add, [entry("amy", 1, starter), entry("bob", 2, starter)])
    assert report.pairs[0].score == 0.0 and report.flagged == ()


def test_an_official_challenge_leaves_out_its_starter_and_the_ladder_it_takes(vector_add):
    """An official challenge as grader.leetgpu.official builds it (its checkout folder as root, the grader's
    ladder for the same problem as levels), without loading PyTorch."""
    folder = ROOT / "tests" / "leetgpu_fixture" / "challenges" / "easy" / "1_vector_add"
    official = dataclasses.replace(vector_add, slug="1_vector_add", root=folder)
    assert similarity.boilerplate_files(official)[0] == folder / "starter" / "starter.cu"
    names = similarity.Boilerplate.of(official).names
    assert names[0] == "starter/starter.cu" and "vector_add/levels/1_naive.cu" in names and len(names) == 5


# -- the command ----------------------------------------------------------------------------------------

def _class_db(path: Path, submissions: list[tuple[str, str, str, str]]) -> Path:
    """A class database holding (user, challenge, filename, source) submissions, in order."""
    limits = queue.Limits(max_pending=100, hourly_cap=1000)
    with open_class(path) as store:
        for user, slug, filename, text in submissions:
            data = text.encode()
            queue.enqueue(store, user, slug, filename, from_bytes(data, filename), len(data), limits)
    return path


def _copied_class(tmp_path: Path) -> Path:
    text = ORIGINAL.read_text()
    return _class_db(tmp_path / "class.sqlite3", [
        ("amy", "matmul", "mine.cu", text), ("bob", "matmul", "bob.cu", disguised(text)),
        ("cat", "matmul", "cat.cu", HONEST[0].read_text()), ("dan", "vector_add", "v.cu", text)])


def invoke(*args: str):
    terminal = cli.Terminal(Console(record=True, width=200), Console(record=True, width=200, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.out.export_text() + result.output, terminal.err.export_text()


def test_the_command_lists_the_flagged_pair(tmp_path):
    db = _copied_class(tmp_path)
    result, out, err = invoke("similarity", "matmul", "--db", str(db))
    assert result.exit_code == 0, err
    assert "amy ~ bob" in out and "#1 mine.cu · #2 bob.cu" in out and "cat" not in out
    assert "1 of 3 pairs" in err and "3 submissions of 3 students" in err and "starter.cu" in err


def test_the_command_as_json(tmp_path):
    db = _copied_class(tmp_path)
    result, out, _ = invoke("similarity", "matmul", "--db", str(db), "--json")
    assert result.exit_code == 0
    pairs = json.loads(result.stdout)
    assert len(pairs) == 1
    pair = pairs[0]
    sides = (pair["a"]["user"], pair["a"]["submission_id"], pair["b"]["user"], pair["b"]["submission_id"])
    assert sides == ("amy", 1, "bob", 2)
    assert pair["score"] >= similarity.DEFAULT_THRESHOLD and pair["a"]["share"] > 0.5
    assert pair["a"]["regions"] and all(len(r) == 2 and r[0] < r[1] for r in pair["a"]["regions"])
    result, out, _ = invoke("similarity", "matmul", "--db", str(db), "--json", "--threshold", "1")
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def test_the_command_with_every(tmp_path):
    text = ORIGINAL.read_text()
    db = _class_db(tmp_path / "class.sqlite3", [("amy", "matmul", "a.cu", text),
                                                ("bob", "matmul", "b.cu", disguised(text)),
                                                ("amy", "matmul", "a2.cu", HONEST[0].read_text())])
    assert json.loads(invoke("similarity", "matmul", "--db", str(db), "--json")[0].stdout) == []
    pairs = json.loads(invoke("similarity", "matmul", "--db", str(db), "--json", "--every")[0].stdout)
    assert [(p["a"]["submission_id"], p["b"]["submission_id"]) for p in pairs] == [(1, 2)]


def test_the_command_says_when_there_are_too_few_students(tmp_path):
    db = _class_db(tmp_path / "class.sqlite3", [("amy", "matmul", "a.cu", ORIGINAL.read_text())])
    result, out, err = invoke("similarity", "matmul", "--db", str(db))
    assert result.exit_code == 0 and "1 student(s) submitted" in err and "needs two or more" in err
    result, out, err = invoke("similarity", "vector_add", "--db", str(db), "--json")
    assert result.exit_code == 0 and json.loads(result.stdout) == [] and "0 student(s)" in err


def test_the_command_refuses_an_unknown_challenge_or_database(tmp_path):
    db = _copied_class(tmp_path)
    result, out, err = invoke("similarity", "nope", "--db", str(db))
    assert result.exit_code == ExitCode.USAGE and "no challenge named 'nope'" in err and "hint" in err
    result, out, err = invoke("similarity", "matmul", "--db", str(tmp_path / "missing.sqlite3"), "--json")
    assert result.exit_code == ExitCode.USAGE and not (tmp_path / "missing.sqlite3").exists()
    answer = json.loads(result.stdout)
    assert "no class database" in answer["error"] and "grader serve --db" in answer["hint"]


# -- the pages ------------------------------------------------------------------------------------------

@pytest.fixture
def site(tmp_path):
    """A server with two challenges, a copied pair of matmul submissions among three students, and an
    instructor; the similarity routes added where the app does not have them yet."""
    db = _copied_class(tmp_path)
    challenges = {slug: load(CHALLENGES, slug) for slug in ("vector_add", "matmul")}
    with open_class(db) as store:
        tokens = {"prof": roster.add(store, "prof", roster.Role.INSTRUCTOR).token,
                  "amy": roster.add(store, "amy").token}
    application = app.create_app(app.Settings(db, challenges, queue.Limits(), engine="test engine"))
    with TestClient(application, follow_redirects=False, headers={"Origin": ORIGIN}) as client:
        yield client, db, tokens


def _login(client, token: str) -> None:
    assert client.post("/login", data={"token": token}).status_code == 303


def test_the_instructor_sees_the_flagged_pairs(site):
    client, _, tokens = site
    _login(client, tokens["prof"])
    page = client.get("/instructor/similarity/matmul")
    assert page.status_code == 200 and "script-src 'none'" in page.headers["content-security-policy"]
    text = page.text
    assert 'href="/instructor/similarity/matmul/1/2"' in text and "amy · bob" in text
    assert "Compared 3 submissions of 3 students" in text and "starter.cu" in text and "levels/1_naive.cu" in text
    assert "<script>" not in text
    every = client.get("/instructor/similarity/matmul?every=1")
    assert every.status_code == 200 and "every submission" in every.text


def test_the_page_s_threshold_can_be_changed_and_is_checked(site):
    client, _, tokens = site
    _login(client, tokens["prof"])
    default = client.get("/instructor/similarity/matmul").text
    assert 'name="threshold" min="1" max="100" step="1" value="70"' in default
    def flagged(text: str) -> int:
        return int(re.search(r"pairs of students, (\d+) at \d+&nbsp;% or more", text).group(1))

    lowest = client.get("/instructor/similarity/matmul?threshold=1").text
    highest = client.get("/instructor/similarity/matmul?threshold=100").text
    assert 'value="1"' in lowest and "at 1&nbsp;% or more" in lowest and "at 100&nbsp;% or more" in highest
    assert flagged(lowest) >= flagged(default) >= flagged(highest) and flagged(default) >= 1
    for bad in ("0", "101", "0.5", "abc", "١٢"):
        refused = client.get("/instructor/similarity/matmul", params={"threshold": bad})
        assert refused.status_code == 400 and "whole percentage from 1 to 100" in refused.text, bad


def test_the_pair_page_marks_the_shared_code(site):
    client, _, tokens = site
    _login(client, tokens["prof"])
    page = client.get("/instructor/similarity/matmul/1/2")
    assert page.status_code == 200
    text = page.text
    assert text.count('class="side"') == 2 and "<mark>" in text and "flagged" in text
    assert re.search(r"<mark>[^<]*fetchTileA", text) and re.search(r"<mark>[^<]*load_a_tile", text)
    assert '<th scope="row">1</th>' in text and "@media (max-width: 800px)" in text
    assert client.get("/instructor/similarity/matmul/1/4").status_code == 404  # dan's is a vector_add
    assert client.get("/instructor/similarity/matmul/1/x").status_code == 404
    assert client.get("/instructor/similarity/nope").status_code == 404


def test_students_and_strangers_do_not_see_it(site):
    client, _, tokens = site
    for path in ("/instructor/similarity/matmul", "/instructor/similarity/matmul/1/2"):
        away = client.get(path)
        assert away.status_code == 303 and away.headers["location"] == "/login"
    _login(client, tokens["amy"])
    for path in ("/instructor/similarity/matmul", "/instructor/similarity/matmul/1/2"):
        refused = client.get(path)
        assert refused.status_code == 403 and "instructor" in refused.text and "<mark>" not in refused.text


def test_person_made_strings_are_shown_as_text(tmp_path):
    """Hostile user names, file names and sources (inside the shared code too) come out escaped."""
    body = ORIGINAL.read_text().replace("#include <cuda_runtime.h>",
                                        "#include <cuda_runtime.h>\n// " + " ".join(HOSTILE) + "\n"
                                        "const char* NOTE = \"" + XSS + IMG + "{{7*7}}\u202e\";")
    db = _class_db(tmp_path / "class.sqlite3", [(XSS, "matmul", IMG + ".cu", body),
                                                ("{{7*7}}\u202e", "matmul", XSS + "\u202e.cu", disguised(body))])
    with open_class(db) as store:
        prof = roster.add(store, "prof", roster.Role.INSTRUCTOR).token
    application = app.create_app(app.Settings(db, {"matmul": load(CHALLENGES, "matmul")}, queue.Limits(), engine="t"))
    with TestClient(application, follow_redirects=False, headers={"Origin": ORIGIN}) as client:
        _login(client, prof)
        for path in ("/instructor/similarity/matmul", "/instructor/similarity/matmul/1/2"):
            text = client.get(path).text
            assert "<script>alert" not in text and "<img src=x" not in text and "\u202e" not in text
            assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "&lt;img src=x onerror=alert(1)&gt;" in text
            assert "{{7*7}}" in text and "\\u202e" in text
        pair_page = client.get("/instructor/similarity/matmul/1/2").text
        assert re.search(r"<mark>[^<]*&lt;script&gt;alert\(1\)&lt;/script&gt;", pair_page)  # escaped inside a mark
        assert "W" * 3000 in pair_page
    result, out, _ = invoke("similarity", "matmul", "--db", str(db))
    assert result.exit_code == 0 and "\u202e" not in out and "\\u202e" in out
