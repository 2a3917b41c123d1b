"""MCP tool names: `mcp__<server>__<tool>`, what the API accepts, and how people read them.

The API takes tool names of letters, digits, `_` and `-`, at most 64 characters. A server's
tool whose full name breaks that cannot be offered at all: it is reported and skipped, never
renamed behind the user's back (a renamed tool would no longer match the rules and hooks
written for its real name). `__` separates server from tool, so a server name may not hold
it nor end in `_` (`server_name_problem`: the settings reader refuses such a server), and the
first `__` after the prefix is where the server's name ends; a tool name may hold `__` or start
with `_`, and everything after the server's `__` is the tool.

In the lowest layer, and importing nothing of proctor's, because everyone shows or matches
these names: the rules, the settings, the MCP package, and the app's first frame.
"""

from __future__ import annotations

import re

MCP_PREFIX = "mcp__"
LONGEST_NAME = 64
"""The longest tool name the API accepts."""
API_NAME = re.compile(rf"[A-Za-z0-9_-]{{1,{LONGEST_NAME}}}")
SERVER_NAME = re.compile(r"[A-Za-z0-9_-]+")
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


def server_name_problem(server: str) -> str | None:
    """Why `server` cannot name an MCP server, or None when it can."""
    if not SERVER_NAME.fullmatch(server):
        return (
            f"the server name {server!r} cannot be part of a tool name: use letters, digits, "
            "`_` and `-`"
        )
    if "__" in server:
        return f"the server name {server!r} holds `__`, which separates a server from its tool"
    if server.endswith("_"):
        # `fx_` and its tool `echo` would be `mcp__fx___echo`: the `fx` server's `_echo`, and
        # within reach of every rule written for `fx`.
        return (
            f"the server name {server!r} ends in `_`, which would run into the `__` that "
            "separates a server from its tool"
        )
    if len(tool_name(server, "x")) > LONGEST_NAME:
        return (
            f"the server name {server!r} is too long for its tools' names ({LONGEST_NAME} at most)"
        )
    return None


def tool_name_problem(server: str, tool: str) -> str | None:
    """Why the server's tool `tool` cannot be offered to the model, or None."""
    full = tool_name(server, tool)
    if not API_NAME.fullmatch(full):
        if len(full) > LONGEST_NAME:
            return (
                f"its full name {full!r} is longer than the {LONGEST_NAME} characters the API "
                "allows"
            )
        return f"its name {tool!r} holds characters the API refuses (letters, digits, _ and -)"
    return None
