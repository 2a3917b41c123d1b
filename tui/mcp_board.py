"""What the screen knows about the session's MCP servers: plain data, kept from events.

The engine says every state change of every server as a `McpServerChanged` on the session's
one sink, so the app learns about servers the way it learns about calls: the call book takes
each event once (`CallBook.servers` is this board) and the status bar, the conversation and
the servers screen draw from it. Nothing polls the session for states; the only thing read
from it is how each server was configured (its command or URL, its log file), which does not
change (`ServerSetup`).

No textual import, as for calls.py: the words a person reads about a server are decided here,
where they can be checked without a screen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from core.events import McpServerChanged, McpState

if TYPE_CHECKING:
    from core.mcp.servers import McpServers

SERVERS_KEY = "ctrl+s"
"""The key that opens the servers screen (keys.py binds it; notices name it)."""

Health = Literal["none", "ready", "partial", "connecting", "failed"]
"""The servers together, as the status bar colours them: none configured, all ready, some
not started (an untrusted project's) or closed, any still connecting, any failed or crashed."""


@dataclass(slots=True)
class ServerStatus:
    """One server as last reported."""

    name: str
    state: McpState
    tools: int = 0
    detail: str = ""
    transport: str = "stdio"


@dataclass(frozen=True, slots=True)
class ServerSetup:
    """How a server was configured: what does not change while the session runs."""

    transport: str
    target: str
    """The command line of a stdio server, the URL of an HTTP one."""
    log_path: Path | None = None
    """Where a started stdio server's stderr goes; None when it has none."""
    declared_in: Path | None = None
    """The settings file or `.mcp.json` that declared it."""


class McpBoard:
    """Every server the session has reported, by name, in the order first reported."""

    def __init__(self) -> None:
        self.servers: dict[str, ServerStatus] = {}

    def apply(self, event: McpServerChanged) -> ServerStatus:
        status = self.servers.get(event.server)
        if status is None:
            status = self.servers[event.server] = ServerStatus(event.server, event.state)
        status.state = event.state
        status.tools = event.tools
        status.detail = event.detail
        status.transport = event.transport
        return status

    @property
    def configured(self) -> bool:
        return bool(self.servers)

    def sorted(self) -> list[ServerStatus]:
        return [self.servers[name] for name in sorted(self.servers)]

    @property
    def ready(self) -> int:
        return sum(status.state == "ready" for status in self.servers.values())

    def health(self) -> Health:
        states = {status.state for status in self.servers.values()}
        if not states:
            return "none"
        if states & {"failed", "crashed"}:
            return "failed"  # before "connecting": a failure is news, a start only a wait
        if "connecting" in states:
            return "connecting"
        return "ready" if states == {"ready"} else "partial"

    def summary(self) -> str:
        """`MCP 2/3`: ready servers of all configured ones; "" when there are none."""
        return f"MCP {self.ready}/{len(self.servers)}" if self.servers else ""


def state_words(status: ServerStatus) -> str:
    """A server's state as the servers screen says it."""
    match status.state:
        case "ready":
            count = status.tools
            tools = "no tools" if count == 0 else f"{count} tool{'s' if count != 1 else ''}"
            return f"ready · {tools}"
        case "connecting":
            return "connecting…"
        case "failed":
            return "failed"
        case "crashed":
            return "crashed — restarts on next use"
        case "skipped":  # the only reason a configured server is not started (McpState)
            return "not started: project not trusted"
        case "closed":
            return "closed"
    return str(status.state)


def headline(detail: str) -> str:
    """The first line of a server's detail; a line that ends in `:` introduces the next one
    ("...; it wrote:" and the server's own last words), so it takes that line with it."""
    lines = [line.strip() for line in detail.splitlines() if line.strip()]
    if not lines:
        return ""
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def notice_for(event: McpServerChanged) -> tuple[str, Literal["warning", "error"]] | None:
    """What the conversation says when a server fails or crashes (None for other states)."""
    why = headline(event.detail)
    after = f" ({SERVERS_KEY} for details)"
    if event.state == "failed":
        return f"MCP server `{event.server}` failed to start: {why or 'no reason given'}{after}", (
            "error"
        )
    if event.state == "crashed":
        said = f": {why}" if why else ""
        return (
            f"MCP server `{event.server}` crashed{said}; it restarts on the next call to one "
            f"of its tools{after}",
            "warning",
        )
    return None


def server_setups(servers: McpServers | None) -> dict[str, ServerSetup]:
    """How each of the session's servers was configured, started or not."""
    if servers is None:
        return {}
    setups: dict[str, ServerSetup] = {}
    configs = [(c.config, c.log_path) for c in servers.connections.values()]
    configs += [(config, None) for config in servers.untrusted]
    for config, log_path in configs:
        if config.transport == "http":
            log_path = None  # an HTTP server's stderr is not ours to keep
        setups[config.name] = ServerSetup(config.transport, config.target, log_path, config.path)
    return setups
