"""MCP server entries (`mcpServers`) as typed values: what a session starts, and how.

The format is the one users already keep in `.mcp.json` and in settings files:

    {"mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"],
                                "env": {"TOKEN": "${GITHUB_TOKEN}"}},
                    "docs": {"type": "http", "url": "https://example.com/mcp",
                             "headers": {"Authorization": "Bearer ${DOCS_KEY}"}}}}

An entry is a stdio server (`command`, optional `args`, `env`, `cwd`; `"type": "stdio"` may
be given or left out) or a streamable HTTP server (`"type": "http"` and a `url`; `headers`
optional). `${VAR}` and `${VAR:-default}` in any of those strings expand from the environment
when the file is read, as they do for the tools users bring these files from.

A bad entry costs only that entry: it is reported as a `SettingsProblem` (file, line, column)
and that server is not started. A server name must be usable inside a tool name the API
accepts (`mcp__<server>__<tool>`: letters, digits, `_` and `-`), and may not hold `__`, which
separates the server from the tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

McpTransport = Literal["stdio", "http"]


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One server as configured: a stdio command or an HTTP URL, and where it was said."""

    name: str
    transport: McpTransport
    source: str
    """The settings source (`SettingsSource`) that declared it: "user", "project",
    "mcp-json"... Servers from project sources start only in a trusted project."""
    path: Path | None = None
    """The file that declared it (None for servers given in code or on the command line)."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Set on top of proctor's own environment for the server's process."""
    cwd: Path | None = None
    """Where the command runs (relative paths resolve against the declaring file's
    directory); None: the project directory."""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def describe(self) -> str:
        """`github` (`npx -y server-github`, from /p/.mcp.json), for messages and lists."""
        what = self.url if self.transport == "http" else " ".join((self.command, *self.args))
        where = f"from {self.path}" if self.path else self.source
        return f"{self.name} ({what}, {where})"
