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
from ..tools.skill_files import SKILL_FILE, SkillCatalog, SkillSource, discover


def skill_directories(cwd: Path) -> list[tuple[Path, SkillSource]]:
    return [
        (user_config_dir() / "skills", "user"),
        (claude_user_dir() / "skills", "claude-user"),
        (cwd / ".claude" / "skills", "project"),
    ]


def session_skills(cwd: Path, *, project: bool = True) -> SkillCatalog:
    """The skills a session in `cwd` offers, and the problems of the files that were not.
    `project`: whether the person trusted the directory, so its own skills are offered (their
    names and descriptions are in the model's prompt: a cloned repository's words steering
    the model, which waits for trust as its CLAUDE.md does)."""
    return discover(d for d in skill_directories(cwd) if project or d[1] != "project")


def project_skill_files(cwd: Path) -> list[Path]:
    """The project's own SKILL.md files, for the trust dialog to list."""
    folder = cwd / ".claude" / "skills"
    try:
        return sorted(p / SKILL_FILE for p in folder.iterdir() if (p / SKILL_FILE).is_file())
    except OSError:
        return []
