"""What Bash may turn a path with an unquoted glob into, so rules and modes judge the files.

`rm .g*` removes `.git`; `cat .e*` reads `.env`. A path with `*` or `?` is expanded here as
Bash would at this moment (hidden names only for a pattern part that starts with a dot, no
match leaves the text as it is), and every match is judged, symlinks included (the callers
judge each match as written and resolved). What is not expanded exactly fails closed:
bracket expressions (`[^x]`, `[[:alpha:]]` and locale ranges differ between Bash and
Python), extglob, patterns with too many matches, and any pattern part that could name a
protected path (`.g*`, `.?laude`): those are never treated as known paths.
"""

from __future__ import annotations

import glob
import os
from fnmatch import fnmatchcase
from pathlib import Path

from ..access.paths import PROTECTED_NAMES

MAX_MATCHES = 1_000
_WILD = frozenset("*?[")


def is_glob(path: str) -> bool:
    return any(char in _WILD for char in path)


def could_name_protected(path: str) -> str | None:
    """The protected name a glob part could match (`.g*` → `.git`), if any. Every protected
    name starts with a dot, which Bash matches only with a dot written at the start."""
    for part in path.split("/"):
        if not is_glob(part) or not part.startswith("."):
            continue
        lowered = part.lower()
        for name in sorted(PROTECTED_NAMES):
            if fnmatchcase(name, lowered):
                return name
    return None


def expand(path: str, cwd: Path, *, for_write: bool) -> list[str] | None:
    """The paths Bash would pass for `path`, relative ones against `cwd`; the path itself
    when it has no glob or nothing matches; None when it cannot be told exactly (and, for
    a write, when it could name a protected path, existing or not)."""
    if not is_glob(path):
        return [path]
    if "[" in path or (for_write and could_name_protected(path) is not None):
        return None
    try:
        found = glob.glob(path, root_dir=os.fspath(cwd))
    except (OSError, ValueError):
        return None
    if len(found) > MAX_MATCHES:
        return None
    return sorted(found) or [path]
