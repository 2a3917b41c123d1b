"""What a session is asked to be: the command line's choices, as one value.

Kept apart from live.py, which assembles the engine, so the command line and the app can
hold these options without importing the engine; the app's first frame comes before that.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..access.context import PermissionMode


@dataclass(frozen=True, slots=True)
class SessionOptions:
    cwd: Path
    demo: bool = False
    scenario: str | None = None
    model: str | None = None
    mode: PermissionMode | None = None
    allow_bypass: bool = False
    allow: Sequence[str] = ()
    deny: Sequence[str] = ()
    ask: Sequence[str] = ()
    max_turns: int = 100
    demo_speed: float = 1.0
    resume: str | None = None
    """A session id (or a unique prefix) of this project to carry on."""
    continue_latest: bool = False
    """Carry on the project's most recently active session."""
    settings_file: Path | None = None
    """`--settings FILE`: one more settings file, above the project's own (an absolute path:
    the demo runs elsewhere)."""
