"""Files that caches keep beside the store: written whole or not at all.

A file is written under a temporary name (``.<name>.<pid>.<random>.tmp``) and moved in
place; a process that dies meanwhile leaves its temporary file behind, which
:func:`remove_leftovers` clears once no process of that pid runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, Final

_TEMPORARY: Final = ".tmp"

__all__ = ["digest", "remove_leftovers", "write_atomically"]


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Have `write` fill a temporary file, then move it to `path`: readers see the old or
    the new bytes, never a mix."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{_TEMPORARY}")
    try:
        write(tmp)
        with open(tmp, "rb") as file:
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def digest(file: BinaryIO) -> tuple[int, str]:
    """Size and sha256 of a file, read in chunks."""
    sha = hashlib.sha256()
    size = 0
    while chunk := file.read(1 << 20):
        sha.update(chunk)
        size += len(chunk)
    return size, sha.hexdigest()


def remove_leftovers(directory: Path) -> list[Path]:
    """Remove the temporary files of writers that are gone; returns what was removed.

    A writer's pid is in its file's name; while a process of that pid runs (on this
    host), its file may be in the middle of being written and stays.
    """
    removed = []
    for path in directory.glob(f".*{_TEMPORARY}"):
        parts = path.name.split(".")  # "", name..., pid, random, "tmp"
        if len(parts) < 5 or not parts[-3].isdigit() or _running(int(parts[-3])):
            continue
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            removed.append(path)
    return removed


def _running(pid: int) -> bool:
    if os.name != "posix":  # elsewhere os.kill(pid, 0) would end the process
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # another user's process, or no valid pid: keep
        pass
    return True
