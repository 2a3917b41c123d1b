"""The session's saved outputs on disk: persisted tool results and Bash spool files.

Why it is shaped this way:

- It only looks at the directory, never at the engine: `core/results.py` writes
  `tool-results/<tool_use_id>.txt` and the Bash tool spools to `shells/<n>-<name>.txt`, and
  those two layouts are all this module knows. Which tool made a result, and its summary, is
  the app's knowledge (from its record of calls); the screen merges the two.
- Side files (`.cwd`, written by the shell's EXIT trap) and the engine's atomic-write temp
  files (`.tmp-*`) are not outputs and are skipped.
- Whether a spool is still being written cannot be read from the file. The caller can say
  which spools are live (`live_spools`); without that, a spool written to in the last
  `RECENT_WRITE_S` seconds counts as running, which is the best guess a directory allows.
- A file that vanishes between listing and `stat` is left out rather than failing the list.
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

RESULTS_DIRNAME = "tool-results"
SHELLS_DIRNAME = "shells"
FIRST_LINE_BYTES = 200
RECENT_WRITE_S = 10.0


@dataclass(frozen=True, slots=True)
class SavedOutput:
    path: Path
    tool_use_id: str
    size_bytes: int
    mtime: float
    first_line: str
    running: bool

    @property
    def is_spool(self) -> bool:
        return self.path.parent.name == SHELLS_DIRNAME


def read_first_line(path: Path, limit: int = FIRST_LINE_BYTES) -> str:
    """The first non-blank line of the file's first `limit` bytes, decoded leniently."""
    try:
        with open(path, "rb") as file:
            head = file.read(limit)
    except OSError:
        return ""
    text = head.decode("utf-8", errors="replace")
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def scan_saved_outputs(
    session_dir: str | os.PathLike[str],
    *,
    live_spools: Collection[Path] | None = None,
    now: float | None = None,
) -> list[SavedOutput]:
    """Every saved output of the session, newest first."""
    root = Path(session_dir)
    live = {Path(p).resolve() for p in live_spools} if live_spools is not None else None
    moment = time.time() if now is None else now
    found: list[SavedOutput] = []
    for dirname in (RESULTS_DIRNAME, SHELLS_DIRNAME):
        folder = root / dirname
        try:
            candidates = sorted(folder.glob("*.txt"))
        except OSError:
            continue
        for path in candidates:
            if path.name.startswith(".tmp-"):
                continue
            try:
                stat = path.stat()
            except OSError:
                continue
            running = False
            if dirname == SHELLS_DIRNAME:
                if live is not None:
                    running = path.resolve() in live
                else:
                    running = moment - stat.st_mtime < RECENT_WRITE_S
            found.append(
                SavedOutput(
                    path=path,
                    tool_use_id=path.stem,
                    size_bytes=stat.st_size,
                    mtime=stat.st_mtime,
                    first_line=read_first_line(path),
                    running=running,
                )
            )
    found.sort(key=lambda output: (output.mtime, output.path.name), reverse=True)
    return found


def human_size(size_bytes: int) -> str:
    """`512 B`, `1.5 KB`, `12.0 MB`: short enough for a table column."""
    size = float(size_bytes)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size_bytes} B" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"  # pragma: no cover - the loop returns at GB


@dataclass(frozen=True, slots=True)
class SavedOutputEntry:
    """A saved output as the screens show it: the file, plus what the app knows of its call."""

    output: SavedOutput
    tool_name: str
    summary: str = ""

    @classmethod
    def from_output(cls, output: SavedOutput) -> SavedOutputEntry:
        """With nothing known about the call, the directory names the tool."""
        if output.is_spool:
            return cls(output, "Bash (running)" if output.running else "Bash")
        return cls(output, "result")

    @property
    def path(self) -> Path:
        return self.output.path

    @property
    def running(self) -> bool:
        return self.output.running

    @property
    def size_bytes(self) -> int:
        return self.output.size_bytes

    @property
    def first_line(self) -> str:
        return self.output.first_line

    @property
    def short_path(self) -> str:
        """The path inside the session directory: `tool-results/toolu_01.txt`."""
        return f"{self.output.path.parent.name}/{self.output.path.name}"
