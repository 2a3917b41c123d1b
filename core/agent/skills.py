"""Where a session's skills come from, in the order a name is claimed.

proctor's own config directory (`skills/`) first, then the user's Claude folder
(`~/.claude/skills`, or `skills/` in `CLAUDE_CONFIG_DIR`), then the project's
`.claude/skills`: the person's own skills win a name over a cloned repository's, so a
project cannot quietly replace a skill the person relies on (the later one is reported).
Found once, when the session opens: the Skill tool's description, which lists them, is part
of the cached prompt prefix (core/tools/skill.py); a skill added later is found when the
model calls it by name, but it is listed (and a `/name` command) only from the next session.

A skill a person may run (`user-invocable`, true unless the file says false) is also a slash
command: `skill_commands` makes it a `CustomCommand` whose prompt is the skill as the Skill
tool would load it, so `/deploy prod` sends the same text with `prod` filled in, narrows the
turn to its `allowed-tools` and uses its `model`, exactly as a command file's front matter
does. A command file of the same name keeps the name (it was written as a command); the
skill is still the model's to load, and the person is told.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..config_dir import user_config_dir
from ..settings.paths import claude_user_dir
from ..tools.skill import skill_frame
from ..tools.skill_files import SKILL_FILE, SkillCatalog, SkillInfo, SkillSource, discover
from .commands import CommandScope, CustomCommand

_SCOPES: dict[SkillSource, CommandScope] = {
    "user": "proctor",
    "claude-user": "user",
    "project": "project",
}
"""A skill's source named as a command's scope is: proctor's folder, the user's, the project's."""


def skill_directories(cwd: Path, *, claude_user: bool = True) -> list[tuple[Path, SkillSource]]:
    """`claude_user`: whether the user's Claude folder is read (`readClaudeSettings: false`
    or `PROCTOR_NO_CLAUDE_SETTINGS` keep it out, as they keep out its CLAUDE.md)."""
    dirs: list[tuple[Path, SkillSource]] = [(user_config_dir() / "skills", "user")]
    if claude_user:
        dirs.append((claude_user_dir() / "skills", "claude-user"))
    return [*dirs, (cwd / ".claude" / "skills", "project")]


def session_skills(cwd: Path, *, project: bool = True, claude_user: bool = True) -> SkillCatalog:
    """The skills a session in `cwd` offers, and the problems of the files that were not.
    `project`: whether the person trusted the directory, so its own skills are offered (their
    names and descriptions are in the model's prompt: a cloned repository's words steering
    the model, which waits for trust as its CLAUDE.md does). `claude_user`: as above."""
    found = skill_directories(cwd, claude_user=claude_user)
    return discover(d for d in found if project or d[1] != "project")


def project_skill_files(cwd: Path) -> list[Path]:
    """The project's own SKILL.md files, for the trust dialog to list."""
    folder = cwd / ".claude" / "skills"
    try:
        return sorted(p / SKILL_FILE for p in folder.iterdir() if (p / SKILL_FILE).is_file())
    except OSError:
        return []


def skill_commands(
    catalog: SkillCatalog, commands: Sequence[CustomCommand] = ()
) -> tuple[list[CustomCommand], list[str]]:
    """The `/name` commands of the catalog's person-run skills, and a note for each that a
    command file of the same name hides."""
    taken = {c.name: c.path for c in commands}
    made: list[CustomCommand] = []
    notes: list[str] = []
    for skill in catalog.skills:
        if not skill.user_invocable:
            continue
        if skill.name in taken:
            notes.append(
                f"skill: /{skill.name} runs the command in {taken[skill.name]}, not the skill "
                f"in {skill.path} (the model can still load the skill)"
            )
            continue
        made.append(_as_command(skill))
    return made, notes


def _as_command(skill: SkillInfo) -> CustomCommand:
    allowed = None
    if skill.allowed_tools is not None:
        allowed = tuple(str(rule) for rule in skill.allowed_tools)
    return CustomCommand(
        name=skill.name,
        body=skill.body,  # `$ARGUMENTS` filled when it runs (commands.py), then framed
        path=skill.path,
        scope=_SCOPES[skill.source],
        description=skill.description,
        argument_hint=skill.argument_hint,
        allowed_tools=allowed,
        model=skill.model,
        frame=skill_frame(skill),
    )
