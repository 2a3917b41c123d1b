"""A running skill's `allowed-tools`, as the first thing the decision chain checks.

A skill (core/tools/skill.py) may list the tools it needs. While it is active, every call
must fit each active skill's list, read as allow rules (`Read`, `Bash(git diff:*)`,
`mcp__github`): a call that does not is refused, whatever the mode, the rules or a hook say.
A call that fits is *not* allowed by that: it goes on through the whole chain, so the list
only ever takes permission away. A skill's file comes from a cloned repository; letting it
grant what the person did not would make cloning a repository a way to get permission.

Matching reuses the chain's own allow-rule matching (`allowed_by_rules`, passed in because it
lives in decide.py, which calls this), so a shell command fits only when every part of it is
covered, and one that cannot be read exactly does not fit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..access.context import PermissionRule, SkillScope
from ..access.decision import DecidedBy, Deny
from .call import Call

SKILL_TOOL_NAME = "Skill"
"""Loading another skill is never refused by a scope: it grants nothing, and its own list
narrows what may run further (every active scope must be satisfied)."""

AllowedBy = Callable[[Call], tuple[PermissionRule, ...]]


def skill_refusal(call: Call, allowed_by_rules: AllowedBy) -> Deny | None:
    """The denial for a call outside an active skill's `allowed-tools`, or None."""
    scopes = call.permissions.skill_scopes
    if not scopes or call.name == SKILL_TOOL_NAME:
        return None
    for scope in scopes:
        narrowed = replace(call, permissions=replace(call.permissions, rules=scope.rules))
        if not allowed_by_rules(narrowed):
            return Deny(DecidedBy("skill", _describe(scope)), _message(call.name, scope))
    return None


def _describe(scope: SkillScope) -> str:
    where = f" in {scope.path}" if scope.path else ""
    return f"the allowed-tools of the {_named(scope)}{where}"


def _named(scope: SkillScope) -> str:
    """`the skill 'review'` or `the command /review`: a slash command narrows a turn too."""
    if scope.kind == "command":
        return f"command {scope.skill}"
    return f"skill {scope.skill!r}"


def _message(tool: str, scope: SkillScope) -> str:
    listed = ", ".join(str(rule) for rule in scope.rules) or "no tools"
    kind = scope.kind
    return (
        f"{tool} was not run: the {_named(scope)} is active, and its allowed-tools "
        f"({listed}) do not cover this call. Finish the {kind}'s task with those tools, or end "
        f"your turn: the {kind}'s limits end with the turn."
    )
