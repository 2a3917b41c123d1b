"""The decision chain: hooks, rules, the tool's own check, the mode, then the user.

Order follows seed 002 section 4.4.4, and every step fails closed:

1. a PreToolUse hook's deny ends it;
2. deny rules, then ask rules (a hook's allow cannot get past them);
3. the tool's own `check_permissions` (deny and ask stand; allow ends it);
4. a hook's allow or ask;
5. allow rules;
6. the mode: bypassPermissions allows, plan refuses anything not read-only, read-only calls
   are allowed, dontAsk refuses what would ask, everything else asks the user.

Rules here are matched by tool name (`Bash`, `mcp__server`). A rule with a specifier
(`Bash(rm:*)`) that names this tool and would deny or ask cannot be judged by name alone, so
the call asks rather than risk running something the user meant to stop.
"""

from __future__ import annotations

from typing import Any

from ..hooks import PreToolUseOutcome
from ..ports import Approve, PermissionAnswer, PermissionRequest
from ..tool import Tool, ToolContext
from .context import PermissionRule, ToolPermissionContext
from .decision import Allow, Ask, DecidedBy, Deny, PermissionDecision
from .rules import blanket_rule, parse_rule, rule_names_tool

PLAN_MODE_MESSAGE = (
    "Plan mode is on, so only reading and exploring is allowed: {tool} would change things "
    "and was not run. Finish exploring, write your plan, and present it with ExitPlanMode."
)


class BasicPermissionChain:
    async def decide(
        self, tool: Tool[Any], input: Any, context: ToolContext, hook: PreToolUseOutcome
    ) -> PermissionDecision:
        permissions = context.permission_context
        name = tool.name

        if hook.permission == "deny":
            return Deny(_by_hook(hook), hook.reason or f"A PreToolUse hook blocked {name}.")

        if permissions.rules and (stop := _deny_or_ask_rule(name, permissions)):
            return stop

        own = await tool.check_permissions(input, context)
        if own.behavior == "deny":
            return Deny(DecidedBy("tool", f"{name}'s own check"), own.message or f"{name} refused.")
        if own.behavior == "ask" and permissions.mode != "bypassPermissions":
            return Ask(
                DecidedBy("tool", f"{name}'s own check"),
                own.message or f"{name} needs approval.",
                suggestions=own.suggestions,
                updated_input=own.updated_input,
            )
        if own.behavior == "allow":
            return Allow(DecidedBy("tool", f"{name}'s own check"), own.updated_input)

        if hook.permission == "allow":
            return Allow(_by_hook(hook), hook.updated_input)
        if hook.permission == "ask":
            return Ask(_by_hook(hook), hook.reason or f"A PreToolUse hook asks about {name}.")

        if permissions.rules and (rule := blanket_rule(name, permissions.rules, "allow")):
            return Allow(_by_rule(rule))

        return _decide_by_mode(tool, input, permissions, own.suggestions)

    async def record_answer(
        self, request: PermissionRequest, answer: PermissionAnswer, context: ToolContext
    ) -> None:
        if not isinstance(answer, Approve) or answer.scope == "once":
            return
        rule = parse_rule(answer.rule or request.tool_name, "allow", source="session")
        context.set_app_state(
            lambda state: state.with_permission_context(state.permission_context.with_rules(rule))
        )


def _deny_or_ask_rule(name: str, permissions: ToolPermissionContext) -> Deny | Ask | None:
    if rule := blanket_rule(name, permissions.rules, "deny"):
        return Deny(_by_rule(rule), f"Permission to use {name} was denied by {rule.describe()}.")
    if rule := blanket_rule(name, permissions.rules, "ask"):
        return Ask(_by_rule(rule), f"{rule.describe()} asks before every {name} call.")
    if rule := _specific_rule_naming(name, permissions):
        return Ask(
            _by_rule(rule), f"{rule.describe()} may cover this call; it needs your approval."
        )
    return None


_BYPASS = DecidedBy("mode", "bypass permissions mode")
_PLAN = DecidedBy("mode", "plan mode")
_READ_ONLY = DecidedBy("mode", "a read-only call")
_DONT_ASK = DecidedBy("mode", "don't ask mode")
_NO_RULE = DecidedBy("default", "no rule allows it")


def _decide_by_mode(
    tool: Tool[Any], input: Any, permissions: ToolPermissionContext, suggestions: tuple[str, ...]
) -> PermissionDecision:
    mode = permissions.mode
    if mode == "bypassPermissions":
        return Allow(_BYPASS)
    read_only = _is_read_only(tool, input)
    if mode == "plan" and not read_only:
        return Deny(_PLAN, PLAN_MODE_MESSAGE.format(tool=tool.name))
    if read_only:
        return Allow(_READ_ONLY)
    if mode == "dontAsk":
        return Deny(
            _DONT_ASK,
            f"{tool.name} needs approval, and this session runs without asking: it was not run.",
        )
    return Ask(
        _NO_RULE,
        f"{tool.name} can change things and no rule allows it.",
        suggestions=suggestions or (tool.name,),
    )


def _is_read_only(tool: Tool[Any], input: Any) -> bool:
    try:
        return bool(tool.is_read_only(input))
    except Exception:
        return False


def _specific_rule_naming(name: str, permissions: ToolPermissionContext) -> PermissionRule | None:
    for rule in permissions.rules:
        covers = rule.content is not None and rule_names_tool(rule.tool_name, name)
        if covers and rule.behavior != "allow":
            return rule
    return None


def _by_rule(rule: PermissionRule) -> DecidedBy:
    return DecidedBy("rule", rule.describe())


def _by_hook(hook: PreToolUseOutcome) -> DecidedBy:
    return DecidedBy("hook", hook.source)
