"""The tool registry: which tools exist, which the model may see, and in what order.

Three layers, as in seed 000. `all_base_tools()` is every built-in tool this build has.
`get_tools()` filters them for a session: a blanket deny rule hides a tool from the model
entirely, a tool whose `is_enabled()` says no (or raises) is dropped, and `PROCTOR_SIMPLE=1`
keeps only Bash, Read and Edit. `assemble_tool_pool()` adds MCP tools.

The order of the pool is part of the prompt: built-ins sorted by name form one contiguous
prefix, MCP tools sorted by name follow. Adding or removing an MCP server therefore never
changes the bytes of the built-in prefix, and the prompt cache keeps hitting.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import cache

from .access.context import ToolPermissionContext
from .access.rules import blanket_rule
from .tool import AnyTool, ToolPool

SIMPLE_MODE_TOOLS = frozenset({"Bash", "Read", "Edit"})


def all_base_tools() -> list[AnyTool]:
    """Every built-in tool of this build, enabled or not: one module each in core/tools/.

    This is the one registration a new tool needs. Imported here, not at module level, so
    that importing the registry (as `proctor --version` and the CLI do) stays cheap."""
    from .tools.ask_user import AskUserQuestion
    from .tools.bash import Bash
    from .tools.edit import Edit
    from .tools.exit_plan_mode import ExitPlanMode
    from .tools.glob import GlobTool
    from .tools.grep import GrepTool
    from .tools.kill_shell import KillShell
    from .tools.notebook_edit import NotebookEdit
    from .tools.plan_mode import EnterPlanMode
    from .tools.read import Read
    from .tools.skill import Skill
    from .tools.task import Task
    from .tools.task_output import TaskOutput
    from .tools.todo_write import TodoWrite
    from .tools.tool_search import ToolSearch
    from .tools.webfetch import WebFetch
    from .tools.write import Write

    return [
        AskUserQuestion(),
        Bash(),
        Edit(),
        EnterPlanMode(),
        ExitPlanMode(),
        GlobTool(),
        GrepTool(),
        KillShell(),
        NotebookEdit(),
        Read(),
        Skill(),
        Task(),
        TaskOutput(),
        TodoWrite(),
        ToolSearch(),
        WebFetch(),
        Write(),
    ]


@cache
def known_tool_names() -> frozenset[str]:
    """Every name a rule may give a built-in tool: names and aliases (for settings checks).
    The build's tools do not change while it runs, so they are listed once."""
    tools = all_base_tools()
    return frozenset({t.name for t in tools} | {a for t in tools for a in t.aliases})


def get_tools(
    permission_context: ToolPermissionContext, base_tools: Iterable[AnyTool] | None = None
) -> list[AnyTool]:
    """The built-ins this session may offer the model (unsorted)."""
    tools = all_base_tools() if base_tools is None else list(base_tools)
    tools = [t for t in tools if not _hidden_by_deny_rule(t, permission_context)]
    if os.environ.get("PROCTOR_SIMPLE", "").strip() not in ("", "0", "false"):
        tools = [t for t in tools if t.name in SIMPLE_MODE_TOOLS]
    return [t for t in tools if _enabled(t)]


def assemble_tool_pool(
    permission_context: ToolPermissionContext,
    mcp_tools: Iterable[AnyTool] = (),
    base_tools: Iterable[AnyTool] | None = None,
) -> ToolPool:
    """Built-ins sorted by name, then MCP tools sorted by name; a name appears once and a
    built-in wins over an MCP tool of the same name."""
    built_in = sorted(get_tools(permission_context, base_tools), key=_by_name)
    mcp = sorted(
        (t for t in mcp_tools if not _hidden_by_deny_rule(t, permission_context) and _enabled(t)),
        key=_by_name,
    )
    return ToolPool().extended(built_in).extended(mcp)


def _by_name(tool: AnyTool) -> str:
    return tool.name


def _hidden_by_deny_rule(tool: AnyTool, permission_context: ToolPermissionContext) -> bool:
    return blanket_rule(tool.name, permission_context.rules, "deny") is not None


def _enabled(tool: AnyTool) -> bool:
    try:
        return bool(tool.is_enabled())
    except Exception:
        return False  # a tool that cannot say whether it works is not offered
