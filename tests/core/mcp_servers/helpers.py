"""Real stdio MCP servers for the tests: the fixture server, started by the session code."""

from __future__ import annotations

import sys
from pathlib import Path

from core.events import EventRecorder, McpServerChanged
from core.mcp.servers import McpServers
from core.settings.mcp_servers import McpServerConfig

FIXTURE = Path(__file__).with_name("fixture_server.py")


def fixture_config(name: str = "fx", *args: str, source: str = "user") -> McpServerConfig:
    """The fixture server in the manner `args[0]` picks (normal when none)."""
    return McpServerConfig(
        name=name,
        transport="stdio",
        source=source,
        command=sys.executable,
        args=(str(FIXTURE), *(args or ("normal",))),
    )


def servers(
    *configs: McpServerConfig, log_dir: Path | None = None, **options: object
) -> tuple[McpServers, EventRecorder]:
    recorder = EventRecorder()
    made = McpServers(
        configs,
        cwd=Path.cwd(),
        log_dir=log_dir,
        emit=recorder,
        **options,  # type: ignore[arg-type]
    )
    return made, recorder


def states(recorder: EventRecorder, server: str) -> list[str]:
    return [
        e.state for e in recorder.events if isinstance(e, McpServerChanged) and e.server == server
    ]
