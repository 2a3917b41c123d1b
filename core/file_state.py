"""What the agent has read, so that it never edits a file it has not seen as it is now.

Write and Edit refuse a file that was not read in this session, or that changed on disk
since (its modification time moved). The record keeps the range read so that the refusal can
say what was seen.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True, slots=True)
class FileReadRecord:
    mtime_ns: int
    offset: int | None = None
    limit: int | None = None
    read_at: float = field(default_factory=time.time)


class ReadFileState:
    """Shared by every call of a session (and copied for a sub-agent, which reads on its own)."""

    __slots__ = ("_records",)

    def __init__(self) -> None:
        self._records: dict[Path, FileReadRecord] = {}

    def record(
        self, path: Path, mtime_ns: int, offset: int | None = None, limit: int | None = None
    ) -> None:
        self._records[path] = FileReadRecord(mtime_ns, offset, limit)

    def get(self, path: Path) -> FileReadRecord | None:
        return self._records.get(path)

    def copy(self) -> ReadFileState:
        clone = ReadFileState()
        clone._records = dict(self._records)
        return clone

    def __contains__(self, path: object) -> bool:
        return path in self._records

    def __len__(self) -> int:
        return len(self._records)
