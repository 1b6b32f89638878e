"""Files that caches keep beside the store: written whole or not at all."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

__all__ = ["digest", "write_atomically"]


def write_atomically(path: Path, write: Callable[[Path], object]) -> tuple[int, str]:
    """Have `write` fill a temporary file, then move it to `path`: readers see the old or
    the new bytes, never a mix. Returns the new file's size and sha256."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        write(tmp)
        with open(tmp, "rb") as file:
            size, sha = digest(file)
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise
    return size, sha


def digest(file: BinaryIO) -> tuple[int, str]:
    """Size and sha256 of a file, read in chunks."""
    sha = hashlib.sha256()
    size = 0
    while chunk := file.read(1 << 20):
        sha.update(chunk)
        size += len(chunk)
    return size, sha.hexdigest()
