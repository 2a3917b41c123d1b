"""FileRead: what each of Read's readers returns, and the cap on output they all keep to.

Read declares no result-size limit (see read.py), so every reader bounds its own output: at
most MAX_OUTPUT_CHARS in all, always cut at a whole line (or page, or cell) with a note saying
which offset continues. `start`, `shown` and `total` count lines, pages or cells; for a partial
read they are what the read-file state records, so that Write and Edit know what was seen.

It lives apart from the readers (read_text.py, read_media.py, read_notebook.py) because they
all build it and read.py returns it, whichever of them it picked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

MAX_OUTPUT_CHARS = 100_000

ReadKind = Literal["text", "image", "pdf", "notebook"]


@dataclass(frozen=True, slots=True)
class FileRead:
    """What one Read returned: the content for the model, and what of the file it covers."""

    path: Path
    kind: ReadKind
    content: str | list[dict[str, Any]]
    mtime_ns: int
    size: int
    start: int = 1
    """First line (page, cell) shown, from 1."""
    shown: int = 0
    total: int = 0
    """Lines (pages, cells) in the file; 0 for an image."""

    @property
    def partial(self) -> bool:
        return self.start > 1 or self.start - 1 + self.shown < self.total
