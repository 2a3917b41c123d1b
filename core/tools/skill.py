"""Skill: the model loads one of the session's skills, whole, when it needs it.

Seed 001 lists the tool (not read-only, not concurrency-safe, "execute a skill"); what a
skill is follows the seeds' system: a `SKILL.md` with front matter (core/tools/skill_files.py)
in `.claude/skills/<name>/`, `~/.claude/skills/<name>/` or proctor's config `skills/`.

- Announced, not loaded: the tool's description lists every skill by name and description,
  sorted, from the catalog found when the session opened. That text sits in the tools, the
  cached prefix of every request, so it must not change during the session: a skill added
  later is not listed until the next session. It can still be used: a call naming a skill
  the catalog does not hold looks in the same directories again (a project's only when
  trusted; the call has passed the permission chain by then), so "use the new deploy skill"
  works without breaking the cache. The body is read only when the model calls Skill, and
  the result carries it with the skill's base directory (its other files are named relative
  to it) and the call's `args` filled in for `$ARGUMENTS`, `$1`… (core/tools/arguments.py,
  as a slash command's are).
- Its permission follows the seed: not read-only, so the chain and the mode decide like any
  other call (default mode asks; an allow rule `Skill(name)`, `Skill(prefix:*)` or `Skill`
  stops the asking; plan mode refuses).
  The person sees which skill the model wants before its instructions reach the model.
- `allowed-tools` only narrows. From the call on, until the turn ends, a call that the list
  does not cover is refused (core/permissions/skill_scope.py); one it covers still goes
  through the rules and the mode. A skill never grants: a project's skills come from a
  cloned repository and are text for the model, never code proctor runs, and nothing in
  them can allow a call the person would otherwise be asked about. Their names and
  descriptions still steer the model, so a project's skills are offered only in a directory
  the person trusted (core/agent/skills.py, live.py). "While it runs" is read as "until
  this turn ends": a skill has no end of its own that proctor could see, and a turn is
  the span the person watches; the loop ends every skill's scope when its turn ends (`end_skills`).
- A sub-agent cannot load skills (its scope would narrow the person's own session, whose
  state it shares); it does work under the scope of a skill running in the main agent.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import Field

from ..access.context import PermissionRule, SkillScope
from ..access.targets import NameTarget
from ..app_state import AppState
from ..session_services import ServiceKey
from ..tool import Progress, Tool, ToolContent, ToolContext, ToolInput, ToolOptions, ToolResult
from .arguments import expand
from .skill_files import SkillCatalog, SkillFileError, SkillInfo, read_skill

SKILLS: ServiceKey[SkillCatalog] = ServiceKey("skills")
"""The session's skills, found once when it opens (core/agent/skills.py)."""


class SkillInput(ToolInput):
    skill: str = Field(description='The skill\'s name, exactly as listed: "release-notes".')
    args: str | None = Field(
        default=None, description="Optional arguments for the skill, as the user gave them."
    )


@dataclass(frozen=True, slots=True)
class SkillLoaded:
    skill: SkillInfo
    args: str | None


PROMPT_HEAD = """\
Load a skill: instructions written for a kind of task, with the files they name. When the \
user's request matches a skill's description, call this tool with its name before doing the \
task, then follow what it says. Load a skill once per turn; its instructions stay in the \
conversation. A skill that lists allowed tools limits you to them until your turn ends. \
A skill the user names that is not listed below may have been added since the session \
began: call it by that name.

Available skills:"""

NO_SKILLS = "\n(none in this session)"


class Skill(Tool[SkillInput, SkillLoaded]):
    name = "Skill"
    subagents = "none"
    search_hint = "skill load instructions for a task"
    input_model = SkillInput
    description = "Loads one of the project's or user's skills (SKILL.md) for the model."
    headline_field = "skill"

    def prompt(self, options: ToolOptions) -> str:
        catalog = options.services.get(SKILLS) or SkillCatalog()
        listed = "".join(f"\n- {s.name}: {s.description}" for s in catalog.announced())
        return PROMPT_HEAD + (listed or NO_SKILLS)

    def rule_target(self, input: SkillInput, cwd: Path) -> NameTarget:
        return NameTarget(skill_name(input.skill))

    def summarize_input(self, input: SkillInput) -> str:
        return f"{input.skill} {input.args}".strip() if input.args else input.skill

    async def call(
        self, input: SkillInput, context: ToolContext, progress: Progress
    ) -> ToolResult[SkillLoaded]:
        if context.agent_id is not None:
            return ToolResult(
                "A sub-agent cannot load skills; do the task you were given with your tools.",
                is_error=True,
            )
        catalog = context.options.services.get(SKILLS) or SkillCatalog()
        found = catalog.find(input.skill)
        if found is None:
            # Added since the session began? Looked for where the session's skills were (a
            # project's only if trusted); the call already passed the permission chain.
            found = (await asyncio.to_thread(catalog.rescanned)).find(input.skill)
        if found is None or not found.model_invocable:
            names = ", ".join(s.name for s in catalog.announced()) or "none"
            return ToolResult(
                f"There is no skill {input.skill!r} in this session. Available skills: {names}.",
                is_error=True,
            )
        try:
            skill, _ = await asyncio.to_thread(read_skill, found.path, found.source)
        except SkillFileError as error:
            return ToolResult(
                f"The skill {found.name!r} could not be loaded: {error}", is_error=True
            )
        if skill.name != found.name:
            return ToolResult(
                f"The skill {found.name!r} was renamed to {skill.name!r} in {skill.path} since "
                "the session began; it is not loaded. Ask the user to start a new session.",
                is_error=True,
            )
        if skill.allowed_tools is not None:
            scope = SkillScope(skill.name, skill.allowed_tools, skill.path)
            context.set_app_state(lambda state: _narrowed(state, scope))
        return ToolResult(SkillLoaded(skill, input.args))

    def render(self, output: SkillLoaded) -> ToolContent:
        skill = output.skill
        return skill_text(skill, expand(skill.body, output.args or ""))


def skill_text(skill: SkillInfo, body: str) -> str:
    """A loaded skill as the model reads it: its base directory, `body` (its instructions,
    arguments filled in) and, when it narrows the turn, the tools it leaves."""
    head, tail = skill_frame(skill)
    return head + body + tail


def skill_frame(skill: SkillInfo) -> tuple[str, str]:
    """What comes before and after a skill's instructions: apart from them, so that
    arguments are filled into the instructions only (a `$1` in a folder's name or in an
    allowed-tools rule stays as written)."""
    head = f'<skill name="{skill.name}">\nBase directory for this skill: {skill.base_dir}\n\n'
    tail = ""
    if skill.allowed_tools is not None:
        tail += "\n\n" + narrowing_note(skill.allowed_tools)
    return head, tail + "\n</skill>"


def narrowing_note(rules: tuple[PermissionRule, ...]) -> str:
    """What the model is told of a running skill's allowed-tools (when it loads the skill,
    and again after a compaction replaced that message: core/agent/compactor.py)."""
    listed = ", ".join(str(rule) for rule in rules) or "none"
    return (
        f"Until your turn ends, only these tools may run: {listed} (other calls are "
        "refused; these still need the user's permission as usual)."
    )


def skill_name(asked: str) -> str:
    """The name the model asked for, as the catalog and rules know it (`/x` is `x`)."""
    return asked.strip().removeprefix("/")


def _narrowed(state: AppState, scope: SkillScope) -> AppState:
    permissions = state.permission_context
    scopes = (*permissions.skill_scopes, scope)
    return state.with_permission_context(replace(permissions, skill_scopes=scopes))


def end_skills(state: AppState) -> AppState:
    """The app state with no skill narrowing what may run (the turn ended)."""
    permissions = state.permission_context
    if not permissions.skill_scopes:
        return state
    return state.with_permission_context(replace(permissions, skill_scopes=()))
