"""The palette's "Screenshot": an SVG of the screen, saved where it can be, and said where.

Why it is not Textual's own command: that one hands the file to the driver's "delivery",
which saves into a downloads folder that a server or a container often lacks, and then says
only that it failed. Here the file goes to the first folder that takes it: the session's
own directory (beside its transcript, out of the project the agent works in), else the
current directory, else the system's temporary directory; the person is told the full path,
or, when none would take it, every folder tried and why.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path


def screenshot_folders(session_dir: Path | None) -> list[Path]:
    """Where a screenshot may go, best first, without repeats."""
    folders = [session_dir, Path.cwd(), Path(tempfile.gettempdir())]
    unique: list[Path] = []
    for folder in folders:
        if folder is not None and folder not in unique:
            unique.append(folder)
    return unique


def save_screenshot(svg: str, session_dir: Path | None, *, now: float | None = None) -> Path | str:
    """Write `svg` into the first folder that takes it; its path, or why none did."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
    problems: list[str] = []
    for folder in screenshot_folders(session_dir):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = _unused(folder / f"proctor-screenshot-{stamp}.svg")
            # "x": never overwrite a file that appeared between the check and the write
            with path.open("x", encoding="utf-8") as file:
                try:
                    file.write(svg)
                except OSError:
                    path.unlink(missing_ok=True)  # a part of a screenshot is no screenshot
                    raise
        except OSError as error:
            problems.append(f"{folder}: {error.strerror or error}")
            continue
        return path.absolute()
    return "Could not save the screenshot anywhere (" + "; ".join(problems) + ")."


def _unused(path: Path) -> Path:
    """`path`, or the same name with -2, -3... when a screenshot of that second exists."""
    candidate, number = path, 1
    while os.path.lexists(candidate):
        number += 1
        candidate = path.with_name(f"{path.stem}-{number}{path.suffix}")
    return candidate
