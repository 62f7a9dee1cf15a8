"""`grader backup`: a consistent copy of a results database, taken while a class server (or any grader)
writes to it.

SQLite's online backup API copies every page under one read transaction: in WAL mode readers never block
writers, so the server goes on accepting and grading, and the copy is the database as it was at one
moment, every run with its submission. The copy is made beside its destination under a temporary name,
owner-only from its first byte (it holds every student's source and every secret-seed result), turned into
a single self-contained file (no -wal beside it), checked (`PRAGMA quick_check`), and only then renamed into
place: a failed backup never leaves a partial file where a good one is expected.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from grader.errors import UsageError
from grader.store import Store, StoreError

COUNTED = ("runs", "submissions", "people")
"""Tables whose rows a backup reports (those that exist: a local results database has no roster)."""


@dataclass(frozen=True)
class Backup:
    database: Path
    copy: Path
    size_bytes: int
    rows: dict[str, int]
    """Rows of each COUNTED table the copy holds."""

    def to_json(self) -> dict:
        return {"database": str(self.database), "backup": str(self.copy), "bytes": self.size_bytes,
                "check": "ok", "rows": self.rows}


def backup(database: Path, out: Path, force: bool = False) -> Backup:
    """Copy `database` to `out` (see the module's docstring). An existing `out` is refused unless `force`."""
    if out.exists() and out.resolve() == database.resolve():
        raise UsageError(f"{out} is the database itself", hint="give the backup another name")
    if out.exists() and not force:
        raise UsageError(f"{out} exists", hint="choose another name, or --force to replace it")
    if out.is_dir():
        raise UsageError(f"{out} is a folder", hint="name the backup file, e.g. class-2026-12-01.sqlite3")
    with Store.existing(database, migrate=False) as source:
        out.parent.mkdir(parents=True, exist_ok=True)
        partial = out.with_name(f".{out.name}.{secrets.token_hex(4)}.partial")
        os.close(os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        try:
            rows = _copy(source, partial)
            _sync(partial)
            os.replace(partial, out)
            _sync(out.parent)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
            raise
    return Backup(database, out, out.stat().st_size, rows)


def _copy(source: Store, partial: Path) -> dict[str, int]:
    target = sqlite3.connect(partial, isolation_level=None)
    try:
        try:
            source.db.backup(target)  # every page in one step: one read transaction, one moment
        except sqlite3.DatabaseError as error:
            raise StoreError(f"the backup of {source.path} failed: {error}",
                             hint="check the free space where the backup goes, and that the database is sound") from error
        target.execute("PRAGMA journal_mode=DELETE")  # one file, nothing beside it
        problems = [row[0] for row in target.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise StoreError(f"the backup of {source.path} is not sound: {'; '.join(problems)}",
                             hint="the database itself may be damaged: run `sqlite3 DB 'PRAGMA integrity_check'`")
        tables = {row[0] for row in target.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {name: target.execute(f"SELECT COUNT(*) FROM {name}").fetchone()[0] for name in COUNTED if name in tables}
    finally:
        target.close()


def _sync(path: Path) -> None:
    """The file's (or folder's) contents on disk, so a crash right after the backup does not lose it."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
