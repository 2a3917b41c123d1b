"""The permission context: the mode and the rules in force, as one immutable value.

It is immutable so that a decision can be explained after the fact (the value it was made
against never changes under it) and so that a mode switch from the UI is a single atomic
replacement in the app state rather than a mutation racing running tool calls.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal, get_args

PermissionMode = Literal["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"]
PERMISSION_MODES: tuple[PermissionMode, ...] = get_args(PermissionMode)

RuleBehavior = Literal["allow", "deny", "ask"]


@dataclass(frozen=True, slots=True)
class PermissionRule:
    """One rule such as `Bash(npm run test:*)`, remembering where it came from."""

    tool_name: str
    content: str | None
    behavior: RuleBehavior
    source: str = "session"
    """Which layer holds it: cli, local, project, user, session, ..."""
    path: Path | None = None
    """The settings file it was read from, when there is one."""

    def __str__(self) -> str:
        return self.tool_name if self.content is None else f"{self.tool_name}({self.content})"

    def describe(self) -> str:
        """`Bash(rm:*)` from /p/.proctor/settings.json, for messages to people and the model."""
        where = f" in {self.path}" if self.path else f" ({self.source})"
        return f"the {self.behavior} rule {self}{where}"


@dataclass(frozen=True, slots=True)
class SkillScope:
    """A running skill's `allowed-tools`: while it is active, a call must match one of these
    (read as allow rules) or it is refused. It only ever takes permission away: a call it
    covers still goes through the whole chain (core/tools/skill.py says why)."""

    skill: str
    rules: tuple[PermissionRule, ...]
    """Empty: the skill listed no tool, so nothing but loading skills may run."""
    path: Path | None = None
    """The SKILL.md that listed them."""
    kind: Literal["skill", "command"] = "skill"
    """What narrowed the turn: a refusal names a slash command as a command, not a skill."""


@dataclass(frozen=True, slots=True)
class ToolPermissionContext:
    mode: PermissionMode = "default"
    additional_working_directories: tuple[Path, ...] = ()
    rules: tuple[PermissionRule, ...] = ()
    bypass_available: bool = False
    """bypassPermissions is reachable only when the session started with it available."""
    avoid_prompts: bool = False
    """Nobody can answer (a headless run or a background agent): an ask becomes a deny."""
    pre_plan_mode: PermissionMode | None = None
    """The mode to offer again when plan mode ends."""
    plan_file: Path | None = None
    """The one file plan mode lets the agent write: where the plan goes."""
    protected_files: tuple[Path, ...] = ()
    """Programs that later run outside the sandbox (hook scripts, MCP servers' own files),
    resolved: an edit to one is never accepted by the mode, it asks."""
    skill_scopes: tuple[SkillScope, ...] = ()
    """The skills loaded in this turn that narrow what may run: a call must fit every one."""

    def rules_with(self, behavior: RuleBehavior) -> tuple[PermissionRule, ...]:
        return tuple(rule for rule in self.rules if rule.behavior == behavior)

    def with_rules(self, *rules: PermissionRule) -> ToolPermissionContext:
        return replace(self, rules=self.rules + rules)
