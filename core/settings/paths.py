"""Where each settings file lives: the per-source paths of a project and of the user.

Only `<cwd>` is searched for `.proctor/`, `.claude/` and `.mcp.json` (no walk up to parents):
the project is the directory proctor runs in, and `remember_allow_rule` writes exactly there.
The user's file is in the user config directory (`PROCTOR_CONFIG_DIR` or the platform's); the
user's own Claude settings are `settings.json` in `CLAUDE_CONFIG_DIR`, else `~/.claude`, where
the seeds' system keeps them (people bring their rules and hooks from there). The
`--settings` file and the CLI flags have no place of their own; the reader takes them as given.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..config_dir import user_config_dir
from .values import SettingsSource


def settings_paths(cwd: Path) -> dict[SettingsSource, Path]:
    """Where each file source lives for a project, highest first."""
    return {
        "local": cwd / ".proctor" / "settings.local.json",
        "project": cwd / ".proctor" / "settings.json",
        "claude-local": cwd / ".claude" / "settings.local.json",
        "claude-project": cwd / ".claude" / "settings.json",
        "mcp-json": cwd / ".mcp.json",
        "user": user_config_dir() / "settings.json",
        "claude-user": claude_user_dir() / "settings.json",
    }


def claude_user_dir() -> Path:
    """The seeds' system's own folder of the user's settings."""
    configured = os.environ.get("CLAUDE_CONFIG_DIR", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".claude"
