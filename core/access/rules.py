"""The permission rule language: `Tool` or `Tool(specifier)`.

This module parses rule strings and answers the one question the registry needs, whether a
rule covers a whole tool. Matching a specifier against a call's input (Bash prefixes, path
patterns, domains) lives with each kind of specifier.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from .context import PermissionRule, RuleBehavior
from .mcp_names import MCP_PREFIX as MCP_PREFIX
from .mcp_names import RULE_NAME, split_tool_name

RULE_FAMILY_NAMES = frozenset({"MultiEdit"})
"""Names rules may give that no proctor tool has: MultiEdit, which path rules understand as
an edit (the seeds' system has it). MCP tools are `mcp__...`."""


class RuleSyntaxError(ValueError):
    """A rule string that cannot be read; the message says what is wrong with it."""


def parse_rule(
    text: str, behavior: RuleBehavior, *, source: str = "session", path: Path | None = None
) -> PermissionRule:
    """Parse `Bash(npm run test:*)` into a rule. `Tool()` and `Tool(*)` cover the whole tool."""
    text = text.strip()
    if not text:
        raise RuleSyntaxError("a rule cannot be empty")
    open_at = text.find("(")
    if open_at == -1:
        if ")" in text:
            raise RuleSyntaxError(f"{text!r} has a ')' without a '('")
        tool_name, content = text, None
    else:
        if not text.endswith(")"):
            raise RuleSyntaxError(f"{text!r} must end with ')' to close the specifier")
        tool_name = text[:open_at].strip()
        content = text[open_at + 1 : -1].strip()
        if content in ("", "*"):
            content = None
    if not tool_name:
        raise RuleSyntaxError(f"{text!r} does not name a tool")
    if any(ch.isspace() for ch in tool_name):
        raise RuleSyntaxError(f"{tool_name!r} is not a tool name (tool names have no spaces)")
    return PermissionRule(tool_name, content, behavior, source=source, path=path)


def rule_problem(rule: PermissionRule, tool_names: Collection[str] | None = None) -> str | None:
    """Why a well-formed rule cannot do what it seems to say, if it cannot. `tool_names`
    are the tools this build has (`core.registry.known_tool_names`); None: not checked."""
    name = rule.tool_name
    unknown = tool_names is not None and name not in tool_names
    if name.startswith(MCP_PREFIX):
        if not RULE_NAME.fullmatch(name):
            return (
                f"{name!r} names no MCP tool, so this rule has no effect: write "
                "mcp__<server>, mcp__<server>__* or mcp__<server>__<tool> (no other globs)"
            )
    elif unknown and name not in RULE_FAMILY_NAMES:
        return f"proctor has no tool named {name!r}, so this rule has no effect"
    content = rule.content
    if name == "Bash" and content is not None:
        if content.endswith(":*") and "*" in content[:-2]:
            head = content[:-2]
            return (
                f"a prefix rule ends at `:*`, so the `*` in {head!r} is taken literally and "
                f"the rule can never match; write Bash({head.split('*')[0].strip()}:*) or "
                f"Bash({head})"
            )
        if ":*" in content[:-2]:
            return "`:*` means a prefix only at the end of a rule; here it is taken literally"
    return None


def rule_names_tool(rule_tool_name: str, tool_name: str) -> bool:
    """Whether a rule's tool part names `tool_name`.

    MCP rules may name a whole server: `mcp__github` and `mcp__github__*` cover every tool
    of the `github` server, `mcp__github__create_issue` just the one.
    """
    if rule_tool_name == tool_name:
        return True
    if not rule_tool_name.startswith(MCP_PREFIX):
        return False
    parts = split_tool_name(tool_name)
    if parts is None:
        return False
    server = rule_tool_name.removesuffix("__*")[len(MCP_PREFIX) :]
    # The server's name exactly, not a prefix of the tool's name: `mcp__fx_` names no server
    # (none may end in `_`), and must not cover `mcp__fx___echo`, the `fx` server's `_echo`.
    return server == parts[0]


def blanket_rule(
    tool_name: str, rules: tuple[PermissionRule, ...], behavior: RuleBehavior
) -> PermissionRule | None:
    """The first rule of `behavior` that covers `tool_name` whatever its input, if any."""
    for rule in rules:
        whole_tool = rule.behavior == behavior and rule.content is None
        if whole_tool and rule_names_tool(rule.tool_name, tool_name):
            return rule
    return None
