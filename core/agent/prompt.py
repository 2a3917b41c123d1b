"""The request's system prompt and tool list, built so the prompt cache keeps hitting.

The API caches a request's prefix up to each `cache_control` breakpoint, and a prefix only
hits when it is byte for byte the same as before. So the request is laid out from the most
stable part to the least:

1. the tool definitions, in pool order (built-ins sorted, then MCP tools: registry.py), with
   a breakpoint on the last one;
2. the stable system block (who the agent is, how it works), with a breakpoint;
3. the volatile system block, after the last breakpoint: the environment (working
   directory, platform, date, and the git facts read when the session opened:
   git_facts.py), the permission mode (plan mode says what it allows and where
   the plan goes) and the names of deferred tools not yet loaded, which changes whenever
   ToolSearch loads one.

Deferred tools are left out of `tools` entirely and named in the volatile block instead. The
SDK has a `defer_loading` flag, but it belongs to the API's server-side tool search; our
ToolSearch is a client tool, so the schema goes out only once the tool is discovered.

A tool whose `prompt()` raises is still offered with its one-line description: one broken
tool must not stop every request.
"""

from __future__ import annotations

import datetime
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..access.context import ToolPermissionContext
from ..access.modes import MODE_LABELS
from ..tool import ToolOptions
from ..tools.tool_search import deferred_tools_notice
from .git_facts import GitFacts, GitFactsOnTheWay

CACHE_BREAKPOINT: dict[str, str] = {"type": "ephemeral"}

STABLE_PROMPT = """\
You are proctor, a coding agent working in the user's project from a terminal, under the \
user's supervision.

Work with the tools you are given: read before you change, prefer small precise edits, and \
run the project's own checks when you have changed something. Independent read-only calls \
(Read, Glob, Grep) may be made together in one message; they run in parallel. Every call \
may be refused by the user or by a permission rule: when one is, do not retry it unchanged; \
say what you wanted and why, or find another way. Tool results can be cut short or saved \
to a file when large; the result says so and tells you where the rest is.

When the task is done, stop and say briefly what you did and what is left."""

PLAN_MODE_SECTION = """\
Plan mode is on. You may only read and explore: Read, Glob, Grep, read-only commands and \
the like. Do not change files, run commands that change anything, or make commits; such \
calls are refused. The one file you may write is the plan file{where}. Explore until you \
understand the task, write your plan there, then present it with ExitPlanMode and wait for \
the user's approval before changing anything."""


@dataclass(frozen=True, slots=True)
class Environment:
    """What the volatile part of the prompt says about where the agent runs."""

    cwd: Path
    platform: str = platform.system()
    date: str = ""
    git: GitFacts | GitFactsOnTheWay | None = None
    """Read once when the session opens; None (a sub-agent, a test) says nothing of git."""

    def describe(self) -> str:
        date = self.date or datetime.date.today().isoformat()
        said = f"Working directory: {self.cwd}\nPlatform: {self.platform}\nToday's date: {date}"
        return said if self.git is None else f"{said}\n{self.git.describe()}"


def tool_definitions(options: ToolOptions) -> list[dict[str, Any]]:
    """The `tools` parameter: every tool the model may call now, cache breakpoint last."""
    pool = options.tools
    if pool is None:
        return []
    deferred = {t.name for t in pool.deferred()} - options.discovered_tools
    definitions: list[dict[str, Any]] = []
    for tool in pool:
        if tool.name in deferred:
            continue
        try:
            description = tool.prompt(options)
        except Exception:
            description = tool.description
        definitions.append(
            {
                "name": tool.name,
                "description": description or tool.name,
                "input_schema": tool.input_json_schema(),
            }
        )
    if definitions:
        definitions[-1] = {**definitions[-1], "cache_control": dict(CACHE_BREAKPOINT)}
    return definitions


def mode_section(permission_context: ToolPermissionContext) -> str:
    mode = permission_context.mode
    if mode == "plan":
        plan_file = permission_context.plan_file
        return PLAN_MODE_SECTION.format(where=f", {plan_file}" if plan_file else "")
    return f"Permission mode: {MODE_LABELS[mode]}."


def system_blocks(
    options: ToolOptions,
    permission_context: ToolPermissionContext,
    environment: Environment,
    *,
    extra: str = "",
) -> list[dict[str, Any]]:
    """The `system` parameter: the stable block (cached), then the volatile one.

    `extra` (the project's instructions read at start: instructions.py; SessionStart hooks'
    context) goes into the stable block: it is fixed for the session, so the cache holds."""
    stable = STABLE_PROMPT + (f"\n\n{extra.strip()}" if extra.strip() else "")
    volatile = [environment.describe(), mode_section(permission_context)]
    if options.tools is not None:
        notice = deferred_tools_notice(options.tools, options.discovered_tools)
        if notice:
            volatile.append(notice)
    return [
        {"type": "text", "text": stable, "cache_control": dict(CACHE_BREAKPOINT)},
        {"type": "text", "text": "\n\n".join(volatile)},
    ]
