"""MCP tool names: `mcp__<server>__<tool>`, what the API accepts, and how people read them.

The API takes tool names of letters, digits, `_` and `-`, at most 64 characters. A server's
tool whose full name breaks that cannot be offered at all: it is reported and skipped, never
renamed behind the user's back (a renamed tool would no longer match the rules and hooks
written for its real name). `__` separates server from tool, so a server name may not hold
it nor end in `_` (the settings reader refuses such a name:
`core.settings.mcp_servers.server_name_problem`), and the first `__` after the prefix is where
the server's name ends; a tool name may hold `__` or start with `_`, and everything after the
server's `__` is the tool.

In the lowest layer, and importing nothing of proctor's, because everyone shows or matches
these names: the rules, the settings, the MCP package, and the app's first frame.
"""

from __future__ import annotations

import re

MCP_PREFIX = "mcp__"
API_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
RULE_NAME = re.compile(r"mcp___?[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*(?:__(?:\*|[A-Za-z0-9_-]+))?")
"""What an MCP rule may name: a server (no `__` in it, not ending in `_`), all its tools
(`__*`), or one tool."""


def tool_name(server: str, tool: str) -> str:
    return f"{MCP_PREFIX}{server}__{tool}"


def split_tool_name(name: str) -> tuple[str, str] | None:
    """(server, tool) for an MCP tool name; None for any other name."""
    if not name.startswith(MCP_PREFIX):
        return None
    server, separator, tool = name[len(MCP_PREFIX) :].partition("__")
    if not separator or not server or not tool:
        return None
    return server, tool


def display_name(name: str) -> str:
    """`github › create_issue` for `mcp__github__create_issue`; other names as they are."""
    parts = split_tool_name(name)
    return name if parts is None else f"{parts[0]} › {parts[1]}"


def tool_name_problem(server: str, tool: str) -> str | None:
    """Why the server's tool `tool` cannot be offered to the model, or None."""
    full = tool_name(server, tool)
    if not API_NAME.fullmatch(full):
        if len(full) > 64:
            return f"its full name {full!r} is longer than the 64 characters the API allows"
        return f"its name {tool!r} holds characters the API refuses (letters, digits, _ and -)"
    return None
