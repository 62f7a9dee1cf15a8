"""End-to-end grading through the CPU emulator: real .cu files compiled, run, checked, verdicts
asserted. This is what CI exercises of the whole pipeline (CI has no GPU)."""

from __future__ import annotations

import os
import shutil
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np
import pytest

from grader import pipeline, run
from grader import source as sources
from grader.buffers import SharedArena, SharedHostBuffer
from grader.backends.emulator import encode_command
from grader.results import CaseKind, Mode
from grader.verdict import Verdict

from conftest import CHALLENGES, NAIVE, SUBMISSIONS, corpus, expectation, graded_with, read

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="the emulator needs g++")

CORPUS = corpus("emulator", challenge_folders=False)  # the levels and wrong files: tests/test_challenge_check.py


@pytest.fixture(scope="module")
def emulator():
    from grader.backends.emulator import EmulatorBackend
    return EmulatorBackend()


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("emulator-cache")


def grade(path: Path, challenge, backend, cache: Path, mode: Mode = Mode.RUN, seed: int = 7):
    return pipeline.grade(read(path, f"solutions/{path.name}"), challenge, backend, pipeline.Options(mode, seed, cache))


@pytest.mark.parametrize("entry", CORPUS, ids=[f.id for f in CORPUS])
def test_corpus_verdict(entry, challenge_named, emulator, cache):
    path = entry.path
    verdict, message = expectation(path, "emulator")
    report = grade(path, challenge_named(entry.slug), emulator, cache, graded_with(path))
    assert report.verdict is Verdict[verdict], (report.message, report.worker_output[-2000:])
    if message:
        assert message.lower() in report.message.lower(), report.message


def test_accepted_cases_ran_in_both_orders_on_every_shape(matmul, emulator, cache):
    report = grade(NAIVE, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED
    assert len(report.cases) == len(matmul.functional) + matmul.randomized.count + 1
    assert {c.kind for c in report.cases} == {CaseKind.FUNCTIONAL, CaseKind.RANDOMIZED, CaseKind.RECHECK}
    assert report.environment.backend == "emulator" and report.performance == ()


def test_submit_through_the_emulator_reports_no_timings(matmul, emulator, cache):
    report = grade(NAIVE, matmul, emulator, cache, Mode.SUBMIT)
    assert report.verdict is Verdict.ACCEPTED and report.performance == ()


def test_crash_hang_then_correct_in_one_process(matmul, emulator, cache):
    assert grade(SUBMISSIONS / "illegal_address.cu", matmul, emulator, cache).verdict is Verdict.RUNTIME_ERROR
    assert grade(SUBMISSIONS / "divergent_sync.cu", matmul, emulator, cache).verdict is Verdict.RUNTIME_ERROR
    assert grade(NAIVE, matmul, emulator, cache).verdict is Verdict.ACCEPTED


def test_inline_assembly_is_unsupported_with_its_line(matmul, emulator, cache, tmp_path):
    source = tmp_path / "asm.cu"
    source.write_text(NAIVE.read_text().replace(
        "    float acc = 0.0f;",
        '    float acc = 0.0f;\n    unsigned lane; asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));'))
    line = next(i for i, text in enumerate(source.read_text().splitlines(), 1) if "asm volatile" in text)
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.UNSUPPORTED
    assert f"asm.cu:{line}" in report.message and "run on a GPU" in report.message


def test_legacy_volatile_warp_code_gets_a_note(matmul, emulator, cache, tmp_path):
    source = tmp_path / "volatile.cu"
    source.write_text(NAIVE.read_text().replace(
        "    float acc = 0.0f;", "    __shared__ float s[32];\n    volatile float* vs = s; (void)vs;\n    float acc = 0.0f;"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED
    assert any("warp-synchronous" in n for n in report.build.notes)


def test_launch_with_too_many_threads_is_a_runtime_error(matmul, emulator, cache, tmp_path):
    source = tmp_path / "big_block.cu"
    source.write_text(NAIVE.read_text().replace("constexpr int BLOCK = 16;", "constexpr int BLOCK = 33;"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.RUNTIME_ERROR
    assert "cudaErrorInvalidValue" in report.message and "1089 threads per block" in report.message


def test_stray_writes_inside_the_output_are_named_as_such_not_as_a_missing_barrier(matmul, emulator, cache, tmp_path):
    # One column too many, except on the last row: each stray write lands inside C (on the first
    # element of the next row), so no guard sees it; the result depends on which thread writes last.
    source = tmp_path / "stray_inside.cu"
    text = (CHALLENGES / "matmul" / "wrong" / "missing_column_check.cu").read_text()
    source.write_text(text.replace("if (row < M) {", "if (row < M && (col < K || (col == K && row < M - 1))) {"))
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.RACE, report.message
    assert "no kernel wrote shared memory" in report.message and "bounds check" in report.message
    assert "__syncthreads() is probably missing" not in report.message


def test_a_missing_barrier_is_still_named_as_one(matmul, emulator, cache):
    report = grade(CHALLENGES / "matmul" / "wrong" / "missing_sync.cu", matmul, emulator, cache)
    assert report.verdict is Verdict.RACE
    assert "__syncthreads() is probably missing" in report.message and "no kernel wrote" not in report.message


def test_the_emulated_call_limit_grows_with_the_shape_from_measured_speed(matmul, emulator, cache):
    small = emulator.call_limit(matmul, {"M": 1, "N": 1, "K": 1}, cache)
    large = emulator.call_limit(matmul, {"M": 1536, "N": 21, "K": 1536}, cache)
    assert small.seconds == pytest.approx(matmul.limits.case_s, rel=0.01)
    assert large.seconds > 2 * matmul.limits.case_s
    speed = emulator.speed(cache, matmul.limits.compile_s)
    assert speed.measured and 0 < speed.thread_s < 1e-4 and 0 < speed.flop_s < 1e-6
    assert "one warp per output element" in large.why and "measured speed" in large.why



# --------------------------------------------------------------------------- buffers shared by descriptor

REPORTS_ITS_MAPPINGS = """
#include <dirent.h>
#include <cstdio>
#include <cstring>

static void report_mappings() {
    char line[4096];
    if (FILE* maps = std::fopen("/proc/self/maps", "r")) {
        while (std::fgets(line, sizeof line, maps))
            if (std::strstr(line, "grader-buffers") || std::strstr(line, "/dev/shm")) std::printf("MAP %s", line);
        std::fclose(maps);
    }
    if (DIR* dir = opendir("/dev/shm")) {
        while (dirent* entry = readdir(dir)) std::printf("SHM %s\\n", entry->d_name);
        closedir(dir);
    }
}
"""


def with_host_code(path: Path, definitions: str, call: str) -> Path:
    """The naive kernel, with `definitions` added and `call` made at the start of solve."""
    text = NAIVE.read_text().replace("#include <cuda_runtime.h>", "#include <cuda_runtime.h>\n" + definitions)
    path.write_text(text.replace("    dim3 block(BLOCK, BLOCK);", f"    {call}\n    dim3 block(BLOCK, BLOCK);"))
    return path


def dev_shm() -> set[str]:
    return set(os.listdir("/dev/shm"))


def named_shared_memory_held() -> list[str]:
    """What this (the grader's) process holds open or mapped under /dev/shm."""
    held = [line for line in Path("/proc/self/maps").read_text().splitlines() if "/dev/shm/" in line]
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/dev/shm/"):
            held.append(target)
    return held


def test_no_buffer_is_reachable_by_name_during_grading(matmul, emulator, cache, tmp_path, monkeypatch):
    """The grader's buffers live in an anonymous arena the worker inherits by descriptor: nothing in
    /dev/shm, neither in the grader nor in the worker, before, during or after a call."""
    def refuse(*args, **kwargs):
        raise AssertionError("the grader created POSIX shared memory, which any process can open by name")

    monkeypatch.setattr(shared_memory, "SharedMemory", refuse)
    held_while_buffers_live: list[str] = []
    make_buffer = emulator.buffer

    def buffer(name, shape, dtype):
        made = make_buffer(name, shape, dtype)
        held_while_buffers_live.extend(named_shared_memory_held())
        return made

    monkeypatch.setattr(emulator, "buffer", buffer)
    source = with_host_code(tmp_path / "reports_its_mappings.cu", REPORTS_ITS_MAPPINGS, "report_mappings();")
    before = dev_shm()
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED, report.message
    mapped = [line for line in report.worker_output.splitlines() if line.startswith("MAP ")]
    assert mapped and all("memfd:grader-buffers" in line for line in mapped), mapped[:5]
    seen_during_call = {line[4:] for line in report.worker_output.splitlines() if line.startswith("SHM ")}
    appeared = (seen_during_call | dev_shm()) - before
    # other processes on this machine may use /dev/shm too: what the grader used to create were psm_ files
    assert not [name for name in appeared if name.startswith("psm_")], appeared
    assert held_while_buffers_live == []


def test_the_arena_holds_no_memory_once_grading_is_done(matmul, emulator, cache):
    assert grade(NAIVE, matmul, emulator, cache).verdict is Verdict.ACCEPTED
    arena = emulator._arenas.for_buffers()  # the arena the last worker was given
    assert os.fstat(arena.fd).st_blocks == 0, "every case gave its buffers' pages back"


def test_a_buffer_is_sent_as_an_extent_of_the_workers_arena():
    arena = SharedArena()
    buffer = SharedHostBuffer("C", (3, 3), np.float32, arena=arena)
    command = {"op": "call", "id": 5, "order": "reverse", "args": [buffer.worker_arg(), {"int": 3}, {"float": 0.5}]}
    offset = buffer.data_offset
    assert (offset + 48) % 4096 == 0, "the data, rounded up to whole float4s, ends on a page"
    assert encode_command(command, arena) == f"5 call reverse 3 p0,{buffer.extent.length}@{offset}+36=C i3 f0.5"
    with pytest.raises(ValueError, match="arena this worker does not hold"):
        encode_command(command, SharedArena())
    with pytest.raises(ValueError):
        encode_command(command)  # a worker given no arena (the calibration program) takes no buffers
    buffer.free()
    arena.close()


def test_the_worker_refuses_an_extent_past_its_arenas_end(matmul, emulator, cache):
    """Mapping past the end of the file would fault on first touch, blamed on the submission: the
    worker refuses the call instead, as the grader's error."""
    built = emulator.build(sources.read(NAIVE), matmul, cache)
    with emulator.worker(built, matmul) as worker:
        assert worker.start().outcome is run.Outcome.OK
        arena = emulator._arenas.for_buffers()
        past = {"arena": arena.token, "start": 1 << 30, "length": 1 << 20, "offset": 0, "bytes": 4, "name": "A"}
        reply = worker.call([past, past, past, {"int": 1}, {"int": 1}, {"int": 1}], 30)
    assert reply.outcome is run.Outcome.INTERNAL and "past the arena's end" in reply.detail, reply.detail


FORKS_A_CHILD_THAT_TAMPERS = """
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>

static void child_tampers() {
    static bool done = false;
    if (done) return;
    done = true;
    pid_t child = fork();
    if (child == 0) _exit(signal(SIGSEGV, SIG_IGN) == SIG_ERR && errno == EPERM ? 0 : 1);
    int status = 0;
    waitpid(child, &status, 0);
    std::printf(WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "child refused\\n" : "child not refused\\n");
}
"""


def test_a_forked_child_is_refused_quietly(matmul, emulator, cache, tmp_path):
    """The filter is inherited by the submission's child processes, where a refused call just fails
    (EPERM): a child answers nothing, so only the worker's own attempts end the grade."""
    source = with_host_code(tmp_path / "forks.cu", FORKS_A_CHILD_THAT_TAMPERS, "child_tampers();")
    report = grade(source, matmul, emulator, cache)
    assert report.verdict is Verdict.ACCEPTED, report.message
    assert "child refused" in report.worker_output
