"""Reading a command's spool file, which the command may still be writing.

The spool is the only copy of a command's output (see `process.py`), so everything that shows
it (progress, the Bash result, TaskOutput) reads the file: its size, its first or last few KB.
A spool that is not there (yet, or any more) has size 0. Output is decoded as UTF-8 with
replacement characters, never an error: commands print whatever bytes they like, and a tail cut
mid-file starts at its first whole line so the reader does not see half a line.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def read_head(path: Path, limit: int) -> bytes:
    with open(path, "rb") as file:
        return file.read(limit)


def read_tail(path: Path, limit: int) -> tuple[bytes, bool]:
    """The last `limit` bytes of the file, and whether that is less than the whole file."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        start = max(size - limit, 0)
        file.seek(start)
        return file.read(limit), start > 0


def decode_output(data: bytes, *, cut_in_front: bool = False) -> str:
    """Bytes from a spool as text; a tail cut mid-file starts at its first whole line."""
    text = data.decode("utf-8", errors="replace")
    if cut_in_front:
        newline = text.find("\n")
        if 0 <= newline < len(text) - 1:
            text = text[newline + 1 :]
    return text


def remove_quietly(*paths: Path) -> None:
    for path in paths:
        with contextlib.suppress(OSError):
            path.unlink()
