"""Where a session's skills come from, in the order a name is claimed.

proctor's own config directory (`skills/`) first, then the user's Claude folder
(`~/.claude/skills`, or `skills/` in `CLAUDE_CONFIG_DIR`), then the project's
`.claude/skills`: the person's own skills win a name over a cloned repository's, so a
project cannot quietly replace a skill the person relies on (the later one is reported).
Found once, when the session opens: the Skill tool's description, which lists them, is part
of the cached prompt prefix (core/tools/skill.py).
"""

from __future__ import annotations

from pathlib import Path

from ..config_dir import user_config_dir
from ..settings.paths import claude_user_dir
from ..tools.skill_files import SkillCatalog, SkillSource, discover


def skill_directories(cwd: Path) -> list[tuple[Path, SkillSource]]:
    return [
        (user_config_dir() / "skills", "user"),
        (claude_user_dir() / "skills", "claude-user"),
        (cwd / ".claude" / "skills", "project"),
    ]


def session_skills(cwd: Path) -> SkillCatalog:
    """The skills a session in `cwd` offers, and the problems of the files that were not."""
    return discover(skill_directories(cwd))
