"""`proctor mcp list`: every configured server started, asked for its tools, and shut down.

What a user runs to see whether the servers they brought work before a session depends on
them: each server's state (ready with its tools, failed and why, not started because the
project is not trusted), where it was configured, and each tool with what proctor makes of
its hints. The servers start exactly as a session starts them (same connections, same
timeouts, same trust rule), so what works here works there.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..access.mcp_names import display_name
from ..events import McpServerChanged
from ..settings.mcp_servers import McpServerConfig
from ..settings.values import PROJECT_SOURCES
from .servers import McpServers


@dataclass(frozen=True, slots=True)
class ToolReport:
    name: str
    description: str
    read_only: bool
    destructive: bool


@dataclass(frozen=True, slots=True)
class ServerReport:
    config: McpServerConfig
    state: str
    detail: str = ""
    tools: tuple[ToolReport, ...] = field(default=())

    def as_json(self) -> dict[str, Any]:
        config = self.config
        where: dict[str, Any] = (
            {"url": config.url}
            if config.transport == "http"
            else {"command": config.command, "args": list(config.args)}
        )
        return {
            "name": config.name,
            "transport": config.transport,
            **where,
            "source": config.source,
            "file": str(config.path) if config.path else None,
            "state": self.state,
            "detail": self.detail,
            "tools": [
                {
                    "name": tool.name,
                    "description": tool.description,
                    "read_only": tool.read_only,
                    "destructive": tool.destructive,
                }
                for tool in self.tools
            ],
        }

    def as_text(self) -> str:
        config = self.config
        where = str(config.path) if config.path else config.source
        state = f"ready, {len(self.tools)} tools" if self.state == "ready" else self.state
        lines = [
            f"{config.name}: {state}",
            f"  {config.transport}: {config.target}",
            f"  from: {where}",
        ]
        lines += [f"  {line}" for line in self.detail.splitlines()]
        for tool in self.tools:
            marks = " [read-only]" if tool.read_only else ""
            marks += " [destructive]" if tool.destructive else ""
            lines.append(f"  - {display_name(tool.name)}{marks}: {tool.description}")
        return "\n".join(lines)


async def list_servers(
    configs: tuple[McpServerConfig, ...], *, cwd: Path, trusted: bool
) -> list[ServerReport]:
    """Start every server, list what each offers, close them all; in name order."""
    changes: list[McpServerChanged] = []
    with tempfile.TemporaryDirectory(prefix="proctor-mcp-") as logs:
        servers = McpServers(
            configs,
            cwd=cwd,
            log_dir=Path(logs),
            emit=changes.append,
            trusted=trusted,
            project_sources=PROJECT_SOURCES,
        )
        try:
            await servers.ready()
            tools = servers.tools()
            reports = []
            for config in sorted(configs, key=lambda c: c.name):
                connection = servers.connections.get(config.name)
                if connection is None:
                    reports.append(
                        ServerReport(
                            config,
                            "not started",
                            "the project is not trusted; start proctor in it and trust it "
                            "to run the servers its files configure",
                        )
                    )
                    continue
                reports.append(
                    ServerReport(
                        config,
                        connection.state,
                        connection.detail,
                        tuple(
                            ToolReport(t.name, t.description, t.read_only, t.destructive)
                            for t in tools
                            if t.server == config.name
                        ),
                    )
                )
        finally:
            await servers.close()
    return reports
