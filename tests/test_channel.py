"""The worker channel: every answer checked on arrival; anything a worker could not have said is the
submission's fault (Outcome.MALFORMED), never the grader's exception."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from grader import channel, run


def line(message) -> bytes:
    return json.dumps(message).encode()


@pytest.mark.parametrize("op, message, answer", [
    ("start", {"ok": True, "ready": True}, channel.Started()),
    ("start", {"ok": True, "ready": True, "pid": 1234}, channel.Started(1234)),
    ("call", {"ok": True, "seconds": 0.25}, channel.Called(0.25)),
    ("call", {"ok": True, "seconds": 0.0, "kernels": [{"name": "k", "line": 3, "shared": False, "barriers": [7]}],
              "threads_left": 2, "libraries_loaded": ["libcublas.so.13"]},
     channel.Called(0.0, (channel.Launch("k", 3, (7,), False),), 2, ("libcublas.so.13",))),
    ("runtime", {"ok": True, "runtime": True, "pid": 9}, channel.RuntimeUp(9)),
    ("time", {"ok": True, "timing": True}, channel.TimingOpened()),
    ("sample", {"ok": True, "ms": [1.5, 1.25], "wall_s": [0.0021, 0.0019]}, channel.Sampled((1.5, 1.25), (0.0021, 0.0019))),
    ("end", {"ok": True, "pong": True}, channel.Ponged()),
    ("ping", {"ok": True, "pong": True}, channel.Ponged()),
    ("call", {"ok": False, "cuda_error": 700, "name": "cudaErrorIllegalAddress", "message": "in kernel k"},
     channel.Failed(channel.FailureKind.CUDA_ERROR, "cudaErrorIllegalAddress (CUDA error 700): in kernel k", 700)),
    ("call", {"ok": False, "crash": "SIGSEGV in kernel k"}, channel.Failed(channel.FailureKind.CRASH, "SIGSEGV in kernel k")),
    ("sample", {"ok": False, "fault": "the context was reset"},
     channel.Failed(channel.FailureKind.FAULT, "the context was reset")),
    ("call", {"ok": False, "internal": "Traceback ..."}, channel.Failed(channel.FailureKind.INTERNAL, "Traceback ...")),
])
def test_every_answer_the_workers_send_is_accepted_as_its_typed_value(op, message, answer):
    assert channel.parse(line({"id": 77, **message}), op, 77) == answer


@pytest.mark.parametrize("answered", [None, 76, "77", True, 77.0])
def test_an_answer_must_name_its_request(answered):
    message = {"ok": True, "seconds": 0.5} | ({} if answered is None else {"id": answered})
    with pytest.raises(channel.Malformed, match="does not name the request"):
        channel.parse(line(message), "call", 77)


@pytest.mark.parametrize("op, raw, said", [
    ("call", b"not json", "not JSON"),
    ("call", b"\xff\xfe", "not JSON"),
    ("call", line([1, 2]), "'ok'"),
    ("call", line({"seconds": 1.0}), "'ok'"),
    ("call", line({"ok": 1, "seconds": 1.0}), "'ok'"),
    ("call", line({"ok": True}), "no field 'seconds'"),
    ("call", line({"ok": True, "seconds": "fast"}), "invalid value in field 'seconds'"),
    ("call", line({"ok": True, "seconds": -1.0}), "invalid value in field 'seconds'"),
    ("call", line({"ok": True, "seconds": True}), "invalid value in field 'seconds'"),
    ("call", b'{"ok": true, "seconds": NaN}', "invalid value in field 'seconds'"),
    ("call", line({"ok": True, "seconds": 1.0, "verdict": "ACCEPTED"}), "unexpected field 'verdict'"),
    ("call", line({"ok": True, "seconds": 1.0, "threads_left": -3}), "invalid value in field 'threads_left'"),
    ("call", line({"ok": True, "seconds": 1.0, "kernels": [{"name": "k"}]}), "invalid value in field 'kernels'"),
    ("sample", line({"ok": True, "ms": [-1.0], "wall_s": [1.0]}), "invalid value in field 'ms'"),
    ("sample", b'{"ok": true, "ms": [Infinity], "wall_s": [1.0]}', "invalid value in field 'ms'"),
    ("sample", line({"ok": True, "ms": [], "wall_s": []}), "invalid value in field 'ms'"),
    ("sample", line({"ok": True, "ms": [1.0]}), "no field 'wall_s'"),
    ("sample", line({"ok": True, "ms": [1.0], "wall_s": [1.0, 2.0]}), "as many times as clocks"),
    ("sample", line({"ok": True, "ms": [1.0], "wall_s": [1.0], "samples_ms": [0.5]}), "unexpected field 'samples_ms'"),
    ("runtime", line({"ok": True, "ready": True}), "no field 'runtime'"),
    ("start", line({"ok": True, "seconds": 1.0}), "no field 'ready'"),
    ("call", line({"ok": False}), "no known kind"),
    ("call", line({"ok": False, "cuda_error": "700", "name": "x"}), "no known kind"),
    ("call", line({"ok": False, "crash": "x", "extra": 1}), "no known kind"),
    ("call", b'{"ok": true, "seconds": 1, "x": "' + b"a" * channel.MAX_LINE_BYTES + b'"}', "bytes"),
])
def test_anything_else_is_malformed_and_says_what(op, raw, said):
    if raw.startswith(b'{"ok"'):
        raw = b'{"id": 5, ' + raw[1:]  # it names its request; what follows is what is wrong
    with pytest.raises(channel.Malformed) as caught:
        channel.parse(raw, op, 5)
    assert said in str(caught.value)


def fake_worker(tmp_path, body: str) -> run.Worker:
    """A worker that answers `ready`, then runs `body` for each command it reads: `out` writes, `rid`
    is the request's id (a real answer names it)."""
    script = tmp_path / "worker.py"
    script.write_text(textwrap.dedent("""
        import json, os, sys
        commands = os.fdopen(int(sys.argv[1]), "r")
        results = os.fdopen(int(sys.argv[2]), "w")
        def out(text):
            results.write(text)
            results.flush()
        out('{"id": 0, "ok": true, "ready": true}\\n')
        for command in commands:
            rid = json.loads(command).get("id", 0)
            if '"exit"' in command:
                break
        """) + textwrap.indent(textwrap.dedent(body), " " * 4))
    return run.Worker(lambda commands, results: [sys.executable, str(script), str(commands), str(results)])


def test_a_forged_answer_before_the_real_one_stops_the_worker(tmp_path):
    worker = fake_worker(tmp_path, """
        out('{"ok": true, "seconds": 0.000001}\\n')
        out('{"id": %d, "ok": true, "seconds": 0.5}\\n' % rid)
    """)
    with worker:
        assert worker.start().outcome is run.Outcome.OK
        reply = worker.call([], 10)
        assert reply.outcome is run.Outcome.MALFORMED and "does not name the request" in reply.detail
        assert not worker.alive


def test_two_answers_to_one_request_stop_the_worker(tmp_path):
    worker = fake_worker(tmp_path, """
        out('{"id": %d, "ok": true, "seconds": 0.000001}\\n{"id": %d, "ok": true, "seconds": 0.5}\\n' % (rid, rid))
    """)
    with worker:
        assert worker.start().outcome is run.Outcome.OK
        reply = worker.call([], 10)
        assert reply.outcome is run.Outcome.MALFORMED and "more than one answer" in reply.detail
        assert not worker.alive


def test_a_second_answer_arriving_late_is_caught_by_the_next_request(tmp_path):
    worker = fake_worker(tmp_path, """
        import time
        out('{"id": %d, "ok": true, "seconds": 0.000001}\\n' % rid)
        time.sleep(0.3)
        out('{"id": %d, "ok": true, "seconds": 0.5}\\n' % rid)
    """)
    with worker:
        worker.start()
        assert worker.call([], 10).outcome is run.Outcome.OK  # the first answer, read at once
        reply = worker.ping(10)
        assert reply.outcome is run.Outcome.MALFORMED


def test_an_endless_line_is_cut_off_not_buffered_forever(tmp_path):
    worker = fake_worker(tmp_path, """
        while True:
            out("x" * 65536)
    """)
    with worker:
        worker.start()
        reply = worker.call([], 60)
        assert reply.outcome is run.Outcome.MALFORMED and "longer than" in reply.detail
