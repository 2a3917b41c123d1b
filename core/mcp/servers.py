"""A session's MCP servers: started together, their tools wrapped around the pool.

This is the one place MCP meets the rest of proctor. The session provides an `McpServers`
under the `MCP` key; it starts every configured server at once, each in its own task with
its own timeout, so the slowest server costs the session its own start time and not the sum,
and a server that hangs or fails costs only its tools. Nothing waits for them until the first
prompt needs the pool (`extend`), so the app draws its first frame at once.

`extend(pool, permissions)` is the pool with the servers' tools after it: the built-ins keep
their sorted prefix (and the prompt cache built on it), MCP tools follow sorted by name, a
tool a blanket deny rule names is not offered at all, and a name already in the pool keeps
its first owner. A listed tool proctor cannot use (a name the API refuses, a schema that is
not an object, a name given twice) is skipped and said in its server's state, never the whole
server. When the servers' schemas together pass `DEFER_THRESHOLD_CHARS`, their tools are
deferred: the model sees their names and loads the ones it needs through ToolSearch.

Servers from a project's own files (`.mcp.json`, `.proctor/settings.json`...) are programs a
cloned repository chose: they start only in a trusted project. The user's own servers always
start, but in the project's directory (unless their entry gives a `cwd`) only once the person
trusted it (`project_trusted`): elsewhere they start beside the file that declared them. None
of them runs in the command sandbox: they are programs the person configured and trusted
(README, "MCP").
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from ..access.context import ToolPermissionContext
from ..access.mcp_names import tool_name_problem
from ..events import McpServerChanged
from ..registry import assemble_tool_pool
from ..session_services import ServiceKey
from ..settings.mcp_servers import McpServerConfig
from ..tool import ToolPool
from .connection import (
    DEFAULT_CALL_TIMEOUT_S,
    DEFAULT_STARTUP_TIMEOUT_S,
    ServerConnection,
    consume,
    timeout_from_env,
)
from .tool import McpTool, UnusableTool

DEFER_THRESHOLD_CHARS = 40_000
"""Above this many characters of MCP tool names, descriptions and schemas (about 10,000
tokens, 5% of a 200k context), the MCP tools are deferred behind ToolSearch."""


class McpServers:
    """The session's servers, by name, and the tools of those that are ready."""

    def __init__(
        self,
        configs: Iterable[McpServerConfig],
        *,
        cwd: Path,
        log_dir: Path | None,
        emit: Callable[[McpServerChanged], None],
        trusted: bool = True,
        project_sources: Collection[str] = (),
        project_trusted: bool | None = None,
        startup_timeout_s: float | None = None,
        call_timeout_s: float | None = None,
        defer_threshold_chars: int = DEFER_THRESHOLD_CHARS,
    ) -> None:
        startup = startup_timeout_s or timeout_from_env("MCP_TIMEOUT", DEFAULT_STARTUP_TIMEOUT_S)
        calls = call_timeout_s or timeout_from_env("MCP_TOOL_TIMEOUT", DEFAULT_CALL_TIMEOUT_S)
        self.defer_threshold_chars = defer_threshold_chars
        self._emit = emit
        self.connections: dict[str, ServerConnection] = {}
        untrusted = []
        in_project = trusted if project_trusted is None else project_trusted
        for config in sorted(configs, key=lambda c: c.name):
            if not trusted and config.source in project_sources:
                untrusted.append(config)
                continue
            self.connections[config.name] = ServerConnection(
                config,
                cwd=cwd if in_project or config.source in project_sources else _away(config),
                log_dir=log_dir,
                on_change=emit,
                on_listed=self._take_tools,
                startup_timeout_s=startup or DEFAULT_STARTUP_TIMEOUT_S,
                call_timeout_s=calls,
            )
        self.untrusted: tuple[McpServerConfig, ...] = tuple(untrusted)
        """Servers from project files, not started: the project is not trusted."""
        self._starts: asyncio.Future[list[bool]] | None = None
        self._tools: dict[str, tuple[McpTool, ...]] = {}

    def start(self) -> None:
        """Start every server, each in its own task; returns at once (`ready` waits)."""
        if self._starts is not None:
            return
        for config in self.untrusted:
            self._emit(
                McpServerChanged(
                    server=config.name,
                    state="skipped",
                    detail="the project is not trusted, so the servers its files configure "
                    "do not start",
                    transport=config.transport,
                )
            )
        self._starts = asyncio.gather(*(c.start() for c in self.connections.values()))
        self._starts.add_done_callback(consume)  # cancelled at close, perhaps never awaited

    @property
    def starting(self) -> tuple[str, ...]:
        return tuple(n for n, c in self.connections.items() if c.state == "connecting")

    async def ready(self) -> None:
        """Wait until every server is ready or has failed (each bounded by its timeout)."""
        self.start()
        assert self._starts is not None
        await asyncio.shield(self._starts)

    def _take_tools(self, connection: ServerConnection) -> str:
        """Make tools of what the server listed, and say which could not be offered."""
        tools: list[McpTool] = []
        skipped: list[str] = []
        seen: set[str] = set()
        for listed in connection.listed:
            why = tool_name_problem(connection.name, listed.name)
            if why is None and listed.name in seen:
                why = "the server lists this name twice; the first is kept"
            if why is None:
                try:
                    tools.append(McpTool(listed, connection))
                except UnusableTool as error:
                    why = str(error)
            if why is not None:
                skipped.append(f"{listed.name}: {why}")
            seen.add(listed.name)
        self._tools[connection.name] = tuple(tools)
        connection.tool_count = len(tools)
        return "not offered: " + "; ".join(skipped) if skipped else ""

    def tools(self) -> tuple[McpTool, ...]:
        """The tools of every server that has started (one that crashed since keeps them:
        a call starts it again), deferred when they are too many."""
        tools = [tool for name in self.connections for tool in self._tools.get(name, ())]
        defer = schema_chars(tools) > self.defer_threshold_chars
        for tool in tools:
            tool.should_defer = defer
        return tuple(tools)

    async def extend(self, base: ToolPool, permissions: ToolPermissionContext) -> ToolPool:
        """`base` (the built-ins) with the servers' tools after it, once all have started."""
        await self.ready()
        return assemble_tool_pool(permissions, mcp_tools=self.tools(), base_tools=base)

    async def close(self) -> None:
        if self._starts is not None and not self._starts.done():
            self._starts.cancel()
        await asyncio.gather(
            *(connection.close() for connection in self.connections.values()),
            return_exceptions=True,
        )


def _away(config: McpServerConfig) -> Path:
    """Where one of the user's servers starts when the project is not trusted: the directory
    of the file that declared it, else the home directory. Started in the project, the
    project's files would decide what it runs (`python -m x` finds the project's `x.py`,
    `npx` its `node_modules`), and the server runs outside the sandbox."""
    return config.path.parent if config.path is not None else Path.home()


def schema_chars(tools: Iterable[McpTool]) -> int:
    """What the tools' definitions cost the prompt, in characters."""
    return sum(
        len(tool.name) + len(tool.instructions) + len(json.dumps(tool.input_json_schema()))
        for tool in tools
    )


MCP: ServiceKey[McpServers] = ServiceKey("mcp", close_stage=1)
"""The session's MCP servers; closed after its sub-agents, with its shells."""
