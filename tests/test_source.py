"""Reading a submission: once, without following links, within the size cap."""

from __future__ import annotations

import os
import threading

import pytest
from click.testing import CliRunner

from grader import cli, source
from grader.exitcodes import ExitCode

from conftest import NAIVE


def test_reads_text_and_its_hash(tmp_path):
    path = tmp_path / "mine.cu"
    path.write_bytes(NAIVE.read_bytes())
    read = source.read(path, "solutions/mine.cu")
    assert read.text == NAIVE.read_text() and read.display_path == "solutions/mine.cu"
    assert len(read.sha256) == 64


def test_a_symbolic_link_is_refused_not_followed(tmp_path):
    target = tmp_path / "private.txt"
    target.write_text("SECRET-TARGET-TEXT")
    link = tmp_path / "mine.cu"
    link.symlink_to(target)
    with pytest.raises(source.SourceError) as error:
        source.read(link)
    assert error.value.problem is source.Problem.LINK and "SECRET-TARGET-TEXT" not in error.value.message


def test_a_file_past_the_cap_is_refused_before_it_is_read_whole(tmp_path):
    path = tmp_path / "huge.cu"
    path.write_bytes(b"// x\n" * (source.MAX_SOURCE_BYTES // 5 + 10))
    with pytest.raises(source.SourceError) as error:
        source.read(path)
    assert error.value.problem is source.Problem.TOO_LARGE and "1 MiB" in error.value.message


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "pipe.cu"
    os.mkfifo(fifo)
    done = threading.Event()
    result = {}

    def attempt():
        try:
            source.read(fifo)
        except source.SourceError as error:
            result["problem"] = error.problem
        done.set()

    threading.Thread(target=attempt, daemon=True).start()
    assert done.wait(10), "reading a FIFO blocked"
    assert result["problem"] is source.Problem.NOT_A_FILE


@pytest.mark.parametrize("content, problem", [(b"", source.Problem.EMPTY), (b"  \n\t\n", source.Problem.EMPTY),
                                               (b"\x7fELF\x00\x00", source.Problem.BINARY)])
def test_empty_and_binary_files_are_refused(tmp_path, content, problem):
    path = tmp_path / "mine.cu"
    path.write_bytes(content)
    with pytest.raises(source.SourceError) as error:
        source.read(path)
    assert error.value.problem is problem


def test_the_cli_refuses_a_link_and_an_oversized_file_with_exit_2(tmp_path):
    link = tmp_path / "link.cu"
    link.symlink_to(NAIVE)
    big = tmp_path / "big.cu"
    big.write_bytes(b"// padding\n" * (source.MAX_SOURCE_BYTES // 11 + 10))
    for path, words in ((link, "symbolic link"), (big, "at most 1 MiB")):
        out = CliRunner().invoke(cli.cli, ["run", str(path), "--backend", "emulator", "--cache-dir",
                                           str(tmp_path / "cache")])
        assert out.exit_code == ExitCode.USAGE, out.output
        assert words in out.output
    assert not (tmp_path / "cache").exists(), "refused before anything was built"
