"""`grader grade FOLDER`: what is found in a class folder, what is skipped and why, and a batch that
goes on when the grader fails on one student's file. Nothing here compiles."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from grader import __version__, batch, cli, pipeline
from grader.cli.boards import leaderboard_command
from grader.backends import Environment
from grader.errors import SpecError, UsageError
from grader.exitcodes import ExitCode
from grader.results import GradeReport, Mode
from grader.engines import Config, InProcessEngine
from grader.store import Store
from grader.verdict import Verdict

from conftest import CHALLENGES

KERNEL = "extern \"C\" void solve() {}\n"


def write(path: Path, text: str = KERNEL) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def reasons(found: batch.Discovery, folder: Path) -> dict[str, str]:
    return {str(s.path.relative_to(folder)): s.reason for s in found.skipped}


def users(found: batch.Discovery) -> dict[str, str]:
    return {s.user: s.path.name for s in found.submissions}


# --------------------------------------------------------------------------- discovery


def test_files_and_folders_with_one_cu_file_are_submissions(tmp_path):
    write(tmp_path / "alice.cu")
    write(tmp_path / "bob" / "kernel.cu")
    write(tmp_path / "bob" / "notes.txt")  # other files in a student's folder are ignored
    found = batch.discover(tmp_path)
    assert users(found) == {"alice": "alice.cu", "bob": "kernel.cu"}
    assert found.skipped == ()


def test_the_preferred_name_is_taken_in_order_and_the_rest_said_skipped(tmp_path):
    for name in ("main.cu", "solution.cu", "scratch.cu"):
        write(tmp_path / "carol" / name)
    found = batch.discover(tmp_path)
    assert users(found) == {"carol": "solution.cu"}
    assert reasons(found, tmp_path) == {
        "carol/main.cu": "not graded: solution.cu is the one taken from this folder",
        "carol/scratch.cu": "not graded: solution.cu is the one taken from this folder",
    }


def test_a_folder_with_several_cu_files_and_none_preferred_is_skipped(tmp_path):
    write(tmp_path / "dave" / "a.cu")
    write(tmp_path / "dave" / "b.cu")
    found = batch.discover(tmp_path)
    assert found.submissions == ()
    assert reasons(found, tmp_path) == {"dave": "2 .cu files (a.cu, b.cu) and none named solution.cu, mine.cu or "
                                                "main.cu: keep one, or name the one to grade solution.cu"}


def test_many_names_are_cut(tmp_path):
    for i in range(7):
        write(tmp_path / "erin" / f"part{i}.cu")
    reason = reasons(batch.discover(tmp_path), tmp_path)["erin"]
    assert reason.startswith("7 .cu files (part0.cu, part1.cu, part2.cu, part3.cu, part4.cu, …) and none named")


def test_folders_without_a_cu_file_and_nested_folders_are_skipped(tmp_path):
    (tmp_path / "empty").mkdir()
    write(tmp_path / "frank" / "README.md", "my solution is in src/")
    write(tmp_path / "frank" / "src" / "solution.cu")
    write(tmp_path / "gina" / "solution.cu")
    write(tmp_path / "gina" / "old" / "solution.cu")
    found = batch.discover(tmp_path)
    assert users(found) == {"gina": "solution.cu"}
    assert reasons(found, tmp_path) == {
        "empty": "no .cu file",
        "frank": "no .cu file",
        "frank/src": "a folder inside frank/: only .cu files directly in a student's folder are graded",
        "gina/old": "a folder inside gina/: only .cu files directly in a student's folder are graded",
    }


def test_files_that_are_not_cu_are_skipped(tmp_path):
    write(tmp_path / "harry.cu")
    write(tmp_path / "grades.csv", "x")
    write(tmp_path / "ivy.CU")
    write(tmp_path / "jack.cu.txt")
    found = batch.discover(tmp_path)
    assert users(found) == {"harry": "harry.cu"}
    assert reasons(found, tmp_path) == {name: "not a .cu file" for name in ("grades.csv", "ivy.CU", "jack.cu.txt")}


def test_symbolic_links_are_skipped_and_never_followed(tmp_path):
    outside = write(tmp_path / "outside" / "secret.cu")
    (tmp_path / "outside" / "dir").mkdir()
    folder = tmp_path / "class"
    write(folder / "kim.cu")
    (folder / "link.cu").symlink_to(outside)
    (folder / "linked_folder").symlink_to(tmp_path / "outside")
    (folder / "dangling.cu").symlink_to(tmp_path / "nowhere.cu")
    write(folder / "lee" / "solution.cu")
    (folder / "lee" / "extra.cu").symlink_to(outside)
    (folder / "max").mkdir()
    (folder / "max" / "solution.cu").symlink_to(outside)  # only a link: nothing to grade in max/
    (folder / "max" / "notes").symlink_to(tmp_path / "outside" / "dir")  # a link that is not .cu: ignored
    found = batch.discover(folder)
    assert users(found) == {"kim": "kim.cu", "lee": "solution.cu"}
    link = "a symbolic link: submissions must be regular files (links are not followed)"
    assert reasons(found, folder) == {"dangling.cu": link, "link.cu": link, "linked_folder": link,
                                      "lee/extra.cu": link, "max/solution.cu": link, "max": "no .cu file"}


def test_hidden_entries_are_ignored_silently(tmp_path):
    write(tmp_path / "nina.cu")
    write(tmp_path / ".DS_Store", "x")
    write(tmp_path / ".git" / "config", "x")
    write(tmp_path / ".hidden.cu")
    write(tmp_path / "oscar" / ".solution.cu.swp", "x")
    write(tmp_path / "oscar" / "solution.cu")
    found = batch.discover(tmp_path)
    assert users(found) == {"nina": "nina.cu", "oscar": "solution.cu"}
    assert found.skipped == ()


def test_a_fifo_named_cu_is_skipped_without_opening_it(tmp_path):
    os.mkfifo(tmp_path / "pipe.cu")  # opening it would block the batch forever
    (tmp_path / "paul").mkdir()
    os.mkfifo(tmp_path / "paul" / "solution.cu")
    found = batch.discover(tmp_path)
    assert found.submissions == ()
    assert reasons(found, tmp_path) == {"pipe.cu": "not a regular file or folder",
                                        "paul/solution.cu": "not a regular file or folder", "paul": "no .cu file"}


def test_nothing_to_grade_is_a_usage_error_after_the_skipped_entries_are_known(tmp_path):
    write(tmp_path / "notes.txt", "x")
    found = batch.discover(tmp_path)
    assert [s.reason for s in found.skipped] == ["not a .cu file"]
    with pytest.raises(UsageError, match="no submissions"):
        found.require_submissions()


def test_a_file_instead_of_a_folder_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError, match="is not a folder"):
        batch.discover(write(tmp_path / "one.cu"))


def invoke(*args: str):
    terminal = cli.Terminal(Console(record=True, width=300), Console(record=True, width=300, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.err.export_text()


def test_grade_prints_each_skipped_entry_inert(tmp_path):
    folder = tmp_path / "class"
    write(folder / "notes.txt", "x")
    write(folder / "evil\x1b[2J" / "a.cu")
    write(folder / "evil\x1b[2J" / "b.cu")
    (folder / "[red]link.cu").symlink_to(folder / "notes.txt")
    result, err = invoke("grade", str(folder), "--db", str(tmp_path / "results.sqlite3"))
    assert result.exit_code == ExitCode.USAGE, err
    lines = [line for line in err.splitlines() if line.startswith("skipped")]
    assert lines == [
        f"skipped {folder}/[red]link.cu: a symbolic link: submissions must be regular files (links are not followed)",
        f"skipped {folder}/evil\\x1b[2J: 2 .cu files (a.cu, b.cu) and none named solution.cu, mine.cu or main.cu: "
        "keep one, or name the one to grade solution.cu",
        f"skipped {folder}/notes.txt: not a .cu file",
    ]
    assert "no submissions in" in err
    assert not (tmp_path / "results.sqlite3").exists(), "nothing opened before there is something to grade"


# --------------------------------------------------------------------------- a batch that goes on


class FakeBackend:
    name = "emulator"
    measures_time = False

    def environment(self) -> Environment:
        return Environment("emulator", None, None, None, None, None, None)


def _report(display: str, challenge, verdict: Verdict = Verdict.ACCEPTED) -> GradeReport:
    return GradeReport(
        submission=display, challenge=challenge.slug, challenge_version=challenge.version,
        functional_version=challenge.functional_version, performance_version=challenge.performance_version,
        mode=Mode.SUBMIT, seed=7, verdict=verdict, message="", build=None, cases=(), performance=(),
        environment=FakeBackend().environment(), baseline_label=None, grader_version=__version__, wall_s=0.0,
        kernel_s=0.0)


@pytest.fixture
def class_folder(tmp_path) -> Path:
    folder = tmp_path / "class"
    for user in ("amy", "bob", "cat"):
        write(folder / f"{user}.cu", KERNEL + f"// {user}\n")
    return folder


def _grade_all(folder: Path, db: Path, matmul, progress=None) -> batch.Summary:
    options = pipeline.Options(Mode.SUBMIT, 7, None, secret=True)
    with Store.open(db) as store:
        jobs = batch.plan(batch.discover(folder).require_submissions(), (), forced=matmul).jobs
        return batch.grade_all(jobs, in_process(matmul), store, options, progress)


def in_process(challenge) -> InProcessEngine:
    return InProcessEngine(Config(challenge.root.parent), FakeBackend())


def test_the_grader_failing_on_one_student_is_recorded_and_the_batch_goes_on(tmp_path, class_folder, matmul,
                                                                             monkeypatch):
    graded = []

    def grade(source, challenge, backend, options, progress=None):
        graded.append(source.display_path)
        if source.display_path.startswith("bob/"):
            raise RuntimeError("the grader tripped on bob's file")
        return _report(source.display_path, challenge)

    monkeypatch.setattr(pipeline, "grade", grade)
    db = tmp_path / "results.sqlite3"
    summary = _grade_all(class_folder, db, matmul)
    assert graded == ["amy/amy.cu", "bob/bob.cu", "cat/cat.cu"], "the students after bob are graded too"
    assert summary.graded == 3 and summary.verdicts == {"ACCEPTED": 2, "GRADER_ERROR": 1}
    assert summary.not_accepted == {}, "the grader's failure is not bob's verdict"
    assert [(f.user, f.error) for f in summary.failures] == [("bob", "RuntimeError: the grader tripped on bob's file")]
    assert "Traceback" in summary.failures[0].traceback
    with sqlite3.connect(db) as c:
        rows = {user: (verdict, message, secret) for user, verdict, message, secret in
                c.execute("SELECT user, verdict, message, secret_seed FROM runs")}
    assert rows["amy"][0] == rows["cat"][0] == "ACCEPTED"
    verdict, message, secret = rows["bob"]
    assert verdict == "GRADER_ERROR" and secret == 1
    assert "the grader failed on this file (RuntimeError: the grader tripped on bob's file)" in message
    assert "not a judgement of the submission" in message
    graded.clear()
    again = _grade_all(class_folder, db, matmul)
    assert graded == ["bob/bob.cu"] and again.skipped == 2, "the next batch grades again only what the grader failed on"


def test_each_file_is_graded_with_a_seed_of_its_own_and_the_same_file_with_the_same_one(tmp_path, class_folder,
                                                                                         matmul, monkeypatch):
    """A batch derives each file's seed from the class's secret seed, the student and the file's hash
    (grader.seeds.for_source): no two students share hidden shapes, a file graded again (after the grader
    failed on it, here) draws the same ones, and a changed file fresh ones. Every run keeps its seed."""
    from grader import seeds

    given, tries = {}, []

    def grade(source, challenge, backend, options, progress=None):
        given.setdefault(source.display_path, []).append(options.seed)
        tries.append(source.display_path)
        if source.display_path == "bob/bob.cu" and tries.count("bob/bob.cu") == 1:
            raise RuntimeError("the grader tripped")
        return dataclasses.replace(_report(source.display_path, challenge), seed=options.seed, secret=True)

    monkeypatch.setattr(pipeline, "grade", grade)
    db = tmp_path / "results.sqlite3"
    _grade_all(class_folder, db, matmul)
    _grade_all(class_folder, db, matmul)  # bob's file again, the others skipped
    write(class_folder / "cat.cu", KERNEL + "// cat, changed\n")
    _grade_all(class_folder, db, matmul)
    with sqlite3.connect(db) as c:
        kept = c.execute("SELECT user, source_hash, seed FROM runs ORDER BY id").fetchall()
    assert [(user, seed) for user, _, seed in kept] == [(user, seeds.for_source(7, user, digest)) for user, digest, _ in kept]
    assert given["bob/bob.cu"] == [kept[1][2]] * 2, "the GRADER_ERROR run and the run after it: one seed"
    assert len({seed for _, _, seed in kept}) == len(kept) - 1 == 4 and 7 not in {seed for _, _, seed in kept}


def test_a_broken_challenge_stops_the_batch_rather_than_blaming_each_student(tmp_path, class_folder, matmul,
                                                                            monkeypatch):
    def grade(source, challenge, backend, options, progress=None):
        raise SpecError(challenge.root / "reference.py", "generate", "raised SystemExit(0) when the grader called it")

    monkeypatch.setattr(pipeline, "grade", grade)
    with pytest.raises(SpecError):
        _grade_all(class_folder, tmp_path / "results.sqlite3", matmul)
    with sqlite3.connect(tmp_path / "results.sqlite3") as c:
        assert c.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0


def test_ctrl_c_stops_the_batch(tmp_path, class_folder, matmul, monkeypatch):
    def grade(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline, "grade", grade)
    with pytest.raises(KeyboardInterrupt):
        _grade_all(class_folder, tmp_path / "results.sqlite3", matmul)


class RecordingProgress:
    def __init__(self):
        self.labels = []

    def stage(self, text, total=None):
        pass

    def advance(self, text):
        self.labels.append(text)


def test_student_names_reach_the_progress_bar_inert_and_as_plain_text(tmp_path, matmul, monkeypatch):
    """The progress bar reads rich markup: a name like "[reverse]…" would be styled, and one with a
    control character would move the teacher's cursor."""
    from rich.text import Text

    folder = tmp_path / "class"
    write(folder / "[reverse]x\x1b[2J.cu")
    monkeypatch.setattr(pipeline, "grade", lambda source, challenge, *a, **k: _report(source.display_path, challenge))
    progress = RecordingProgress()
    assert _grade_all(folder, tmp_path / "results.sqlite3", matmul, progress).graded == 1
    assert [Text.from_markup(label).plain for label in progress.labels] == ["[reverse]x\\x1b[2J"]


def test_grade_finishes_the_class_then_exits_70_when_the_grader_failed_on_a_file(tmp_path, class_folder, matmul,
                                                                                monkeypatch):
    def grade(source, challenge, backend, options, progress=None):
        if source.display_path.startswith("bob/"):
            raise RuntimeError("the grader tripped on bob's file")
        return _report(source.display_path, challenge)

    monkeypatch.setattr(pipeline, "grade", grade)
    result, err = invoke("grade", str(class_folder), "--challenge", "matmul", "--db", str(tmp_path / "results.sqlite3"),
                         "--backend", "emulator", "--sandbox", "off", "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == ExitCode.INTERNAL, err
    assert "the grader failed on" in err and "bob" in err and "graded again by the next batch" in err
    with sqlite3.connect(tmp_path / "results.sqlite3") as c:
        assert sorted(u for (u,) in c.execute("SELECT user FROM runs")) == ["amy", "bob", "cat"]


def test_the_text_graded_is_the_text_stored_though_the_file_changes_meanwhile(tmp_path, class_folder, matmul,
                                                                              monkeypatch):
    """Each file is read once, when the batch finds it: a file rewritten while the class is graded
    changes neither what is graded nor what is kept."""
    graded = {}

    def grade(source, challenge, backend, options, progress=None):
        graded[source.display_path] = source.text
        return _report(source.display_path, challenge)

    monkeypatch.setattr(pipeline, "grade", grade)
    submissions = batch.discover(class_folder).require_submissions()
    write(class_folder / "bob.cu", "// rewritten after it was found\n")
    db = tmp_path / "results.sqlite3"
    with Store.open(db) as store:
        batch.grade_all(batch.plan(submissions, (), forced=matmul).jobs, in_process(matmul), store,
                        pipeline.Options(Mode.SUBMIT, 7, None, secret=True))
    with sqlite3.connect(db) as c:
        kept = {user: (text, digest) for user, text, digest in c.execute("SELECT user, source, source_hash FROM runs")}
    found = KERNEL + "// bob\n"
    assert graded["bob/bob.cu"] == kept["bob"][0] == found
    assert kept["bob"][1] == hashlib.sha256(found.encode()).hexdigest()


def test_a_file_that_cannot_be_read_is_kept_as_a_compile_error_saying_why(tmp_path, matmul, monkeypatch):
    graded = []

    def grade(source, challenge, backend, options, progress=None):
        graded.append(source.display_path)
        return _report(source.display_path, challenge)

    monkeypatch.setattr(pipeline, "grade", grade)
    folder = tmp_path / "class"
    write(folder / "amy.cu", "")
    write(folder / "bob.cu")
    db = tmp_path / "results.sqlite3"
    summary = _grade_all(folder, db, matmul)
    assert graded == ["bob/bob.cu"] and summary.verdicts == {"ACCEPTED": 1, "COMPILE_ERROR": 1}
    with sqlite3.connect(db) as c:
        verdict, message, text = c.execute("SELECT verdict, message, source FROM runs WHERE user = 'amy'").fetchone()
    assert verdict == "COMPILE_ERROR" and message.startswith("amy/amy.cu is empty") and text == ""
    assert _grade_all(folder, db, matmul).skipped == 2, "an unchanged file is not graded again"


# --------------------------------------------------------------------------- each file's challenge

LEVELS_OF = {slug: sorted((CHALLENGES / slug / "levels").glob("*.cu")) for slug in ("vector_add", "softmax", "matmul")}


def invoke_out(*args: str):
    terminal = cli.Terminal(Console(record=True, width=80), Console(record=True, width=300, stderr=True))
    result = CliRunner().invoke(cli.cli, list(args), obj=terminal)
    return result, terminal.out.export_text(), terminal.err.export_text()


def test_grade_grades_each_file_against_the_challenge_its_signature_names(tmp_path, monkeypatch):
    """Two vector_add files are graded as vector_add (they were graded as matmul, INTERFACE_ERROR), a
    matmul file as matmul; a file whose signature two challenges share, or none, is graded against
    nothing, said with the --challenge that would grade it, and the batch exits 2 once the rest are
    graded. The last lines are the leaderboard commands, and they run as printed."""
    graded = {}

    def grade(source, challenge, backend, options, progress=None):
        graded[source.display_path.split("/")[0]] = challenge.slug
        return _report(source.display_path, challenge)

    monkeypatch.setattr(pipeline, "grade", grade)
    folder, db = tmp_path / "class", tmp_path / "my results.sqlite3"
    write(folder / "amy.cu", LEVELS_OF["vector_add"][0].read_text())
    write(folder / "bob" / "solution.cu", LEVELS_OF["vector_add"][1].read_text())
    write(folder / "carl.cu", LEVELS_OF["matmul"][0].read_text())
    write(folder / "dora.cu", LEVELS_OF["softmax"][0].read_text())  # reduction and softmax share a signature
    write(folder / "eve.cu", 'extern "C" void solve(double* x) {}\n')
    result, out, err = invoke_out("grade", str(folder), "--db", str(db), "--backend", "emulator", "--sandbox", "off",
                                  "--cache-dir", str(tmp_path / "cache"))
    assert result.exit_code == ExitCode.USAGE, err
    assert graded == {"amy": "vector_add", "bob": "vector_add", "carl": "matmul"}
    assert (f"not graded {folder}/dora.cu: its solve signature matches several challenges (prefix_sum, reduction, "
            "softmax); --challenge prefix_sum or --challenge reduction or --challenge softmax grades it") \
        in " ".join(err.split())
    assert f"not graded {folder}/eve.cu: its solve(double*) matches no challenge's signature" in " ".join(err.split())
    assert "not graded (2): dora, eve" in out
    assert "vector_add 2, matmul 1" in " ".join(out.split())
    lines = out.strip().splitlines()
    commands = [shlex.split(line) for line in lines[-2:]]
    assert [c[:3] for c in commands] == [["grader", "leaderboard", "vector_add"], ["grader", "leaderboard", "matmul"]]
    for command, users in zip(commands, (["amy", "bob"], ["carl"])):
        board, text, board_err = invoke_out(*command[1:], "--format", "json")
        assert board.exit_code == 0, board_err
        assert sorted(e["user"] for e in json.loads(board.stdout)["entries"]) == users  # all accepted: all ranked


def test_a_batch_of_files_whose_challenge_cannot_be_told_grades_nothing(tmp_path):
    folder = tmp_path / "class"
    write(folder / "amy.cu", LEVELS_OF["softmax"][0].read_text())
    result, out, err = invoke_out("grade", str(folder), "--db", str(tmp_path / "results.sqlite3"))
    assert result.exit_code == ExitCode.USAGE
    assert "could be given a challenge" in err and "--challenge softmax" in err
    assert not (tmp_path / "results.sqlite3").exists()


def test_the_plan_forced_and_by_signature(tmp_path, challenge_named):
    write(tmp_path / "amy.cu", LEVELS_OF["vector_add"][0].read_text())
    write(tmp_path / "bob.cu", "")  # unreadable: its challenge cannot be told from it
    found = batch.discover(tmp_path).require_submissions()
    everything = [challenge_named(slug) for slug in ("matmul", "vector_add", "softmax", "reduction")]
    by_signature = batch.plan(found, everything)
    assert [(sub.user, c.slug) for sub, c in by_signature.jobs] == [("amy", "vector_add")]
    [bob] = by_signature.undecided
    assert bob.user == "bob" and bob.why == "bob/bob.cu is empty, so its challenge cannot be told"
    forced = batch.plan(found, everything, forced=challenge_named("matmul"))
    assert [(sub.user, c.slug) for sub, c in forced.jobs] == [("amy", "matmul"), ("bob", "matmul")]
    assert forced.undecided == () and [c.slug for c in forced.challenges] == ["matmul"]


def test_the_leaderboard_command_names_what_differs_from_the_defaults(tmp_path):
    db = tmp_path / "a class" / "results.sqlite3"
    assert leaderboard_command("matmul", db, cli.DEFAULT_CHALLENGES, None) == \
        f"grader leaderboard matmul --db '{db}'"
    assert shlex.split(leaderboard_command("tiny_add", db, tmp_path, "NVIDIA H200")) == \
        ["grader", "leaderboard", "tiny_add", "--db", str(db), "--challenges-dir", str(tmp_path), "--gpu", "NVIDIA H200"]
