"""Reading a submission: its bytes once, without following a link, within a size cap.

Compilers get the grader's copy of the text, alone in a folder of their own: no compiler ever opens
the student's file or sees the student's folder.
"""

from __future__ import annotations

import enum
import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

MAX_SOURCE_BYTES = 1 << 20
"""1 MiB: the largest reference solution is about 20 KiB; a file past this is not hand-written CUDA."""
SNIFF_BYTES = 8192
"""How much of a file decides text against binary (a NUL byte there: binary, as git and grep decide)."""


class Problem(enum.Enum):
    MISSING = "missing"
    LINK = "symbolic link"
    NOT_A_FILE = "not a regular file"
    TOO_LARGE = "too large"
    UNREADABLE = "unreadable"
    EMPTY = "empty"
    BINARY = "binary"


@dataclass(frozen=True)
class Source:
    text: str
    display_path: str
    """How the user named the file; diagnostics and reports show this."""
    sha256: str


class SourceError(Exception):
    def __init__(self, problem: Problem, message: str, hint: str):
        super().__init__(message)
        self.problem, self.message, self.hint = problem, message, hint


def read(path: Path, display_path: str | None = None) -> Source:
    """The file's text, read through one descriptor opened without following a final symbolic link."""
    shown = display_path or str(path)
    return checked(_read_bytes(path, shown), shown)


def checked(data: bytes, shown: str) -> Source:
    """The Source of bytes that came from elsewhere (an upload): refused, as `read` refuses a file, if
    they are binary or blank. The caller has capped their size."""
    if b"\0" in data[:SNIFF_BYTES]:
        raise SourceError(Problem.BINARY, f"{shown} is not a text file (it holds NUL bytes): the grader expects "
                                          "CUDA source", "pass your .cu file, not a compiled library or object file")
    if not data.strip():
        raise SourceError(Problem.EMPTY, f"{shown} is empty", "write your solve there (`grader init` writes a starter)")
    return from_bytes(data, shown)


def from_bytes(data: bytes, display_path: str) -> Source:
    """The Source of bytes already read: the text as the grader decodes it, the hash of the bytes
    themselves (what was submitted, not what the decoding made of it)."""
    return Source(data.decode("utf-8", errors="replace"), display_path, hashlib.sha256(data).hexdigest())


def _read_bytes(path: Path, shown: str) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise _open_error(error, shown) from error
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise SourceError(Problem.NOT_A_FILE, f"{shown} is not a regular file", "pass the path of your .cu file")
        if info.st_size > MAX_SOURCE_BYTES:
            raise _too_large(shown, info.st_size)
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_SOURCE_BYTES:  # it grew while being read
                raise _too_large(shown, size)
        return b"".join(chunks)
    except OSError as error:
        raise SourceError(Problem.UNREADABLE, f"{shown} cannot be read: {error.strerror}",
                          "check the file's permissions") from error
    finally:
        os.close(fd)


def _open_error(error: OSError, shown: str) -> SourceError:
    if error.errno == errno.ELOOP:
        return SourceError(Problem.LINK, f"{shown} is a symbolic link; the grader reads only regular files",
                           "pass the file itself, not a link to it")
    if error.errno == errno.ENOENT:
        return SourceError(Problem.MISSING, f"{shown}: no such file", "pass the path of your .cu file")
    return SourceError(Problem.UNREADABLE, f"{shown} cannot be read: {error.strerror}", "check the file's permissions")


def _too_large(shown: str, size: int) -> SourceError:
    return SourceError(Problem.TOO_LARGE, f"{shown} is {size / (1 << 20):.1f} MiB; a submission may be at most "
                                          f"{MAX_SOURCE_BYTES >> 20} MiB of source",
                       "submit the hand-written kernel only: no generated tables or embedded data")
