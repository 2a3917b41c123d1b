"""The MCP servers screen: each server of the session, its state in words, and why.

Why it is shaped this way:

- States come from the call book's board (tui/mcp_board.py), which the app feeds from the
  session's events; the app tells an open screen when a frame held a server's change
  (`show_servers`), so the screen follows a server from "connecting…" to "ready" or
  "failed" while it is open, and never asks the session how a server is doing.
- How each server was configured (command or URL, log file, the file that declared it) does
  not change, so it is read from the session when the screen draws (`setups`).
- A server is a few lines, not a table row: why one failed is several lines of its own
  stderr, and the person needs all of them, with the log's path to read the rest.
- With no servers it says how to add one, since that is what a person opening it wants.
- The servers are the body, which scrolls (PageUp/PageDown); the title and the keys stay
  (dialog.py), so many servers never push "esc closes" off a small screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..mcp_board import SERVERS_KEY, McpBoard, ServerSetup, ServerStatus, state_words
from .dialog import DIALOG_STYLESHEET, DialogScreen

STATE_CLASSES: tuple[str, ...] = tuple(
    f"-{state}" for state in ("connecting", "ready", "failed", "crashed", "skipped", "closed")
)


def shown_path(path: Path) -> str:
    """A path as a person would type it: `~/...` under the home directory."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except (ValueError, RuntimeError):  # elsewhere, or no home directory to speak of
        return str(path)


def empty_text(user_settings: Path | None) -> Text:
    text = Text()
    text.append("No MCP servers are configured for this session.\n\n", style="bold")
    text.append("Add one to ")
    text.append(".mcp.json", style="bold")
    text.append(" in the project, or under ")
    text.append('"mcpServers"', style="bold")
    text.append(" in a settings file: ")
    text.append(".proctor/settings.json", style="bold")
    text.append(" for this project")
    if user_settings is not None:
        text.append(", ")
        text.append(shown_path(user_settings), style="bold")
        text.append(" for every project")
    text.append(". For example:\n\n")
    text.append(
        '{"mcpServers": {\n'
        '  "github": {"command": "npx",\n'
        '             "args": ["-y", "@modelcontextprotocol/server-github"]},\n'
        '  "docs": {"type": "http", "url": "https://example.com/mcp"}\n'
        "}}\n\n"
    )
    text.append("Servers start with the session: start proctor again after adding one.")
    return text


class ServerRow(Vertical):
    """One server: its name and what runs it, its state, why, and where its log is."""

    def __init__(self, name: str) -> None:
        super().__init__(classes="server")
        self.server = name
        self.head = Static(classes="server-head")
        self.state = Static(classes="server-state")
        self.detail = Static(classes="server-detail", markup=False)
        self.where = Static(classes="server-where", markup=False)

    def compose(self) -> ComposeResult:
        yield self.head
        yield self.state
        yield self.detail
        yield self.where

    def show(self, status: ServerStatus, setup: ServerSetup | None) -> None:
        head = Text(status.name, style="bold")
        head.append(f"  {setup.transport if setup else status.transport}")
        if setup is not None and setup.target:
            head.append(f"  {setup.target}")
        self.head.update(head)
        self.state.remove_class(*STATE_CLASSES)
        self.state.add_class(f"-{status.state}")
        self.state.update(Text(state_words(status)))
        # A skipped server's words say why already; a ready one's detail names the tools it
        # could not offer.
        detail = status.detail.strip() if status.state != "skipped" else ""
        self.detail.set_class(status.state == "ready", "-note")
        self.detail.update(detail)
        self.detail.display = bool(detail)
        lines = []
        if setup is not None and setup.declared_in is not None:
            lines.append(f"from {shown_path(setup.declared_in)}")
        if setup is not None and setup.log_path is not None and status.state != "skipped":
            lines.append(f"log: {shown_path(setup.log_path)}")
        self.where.update("\n".join(lines))
        self.where.display = bool(lines)


class McpServersScreen(DialogScreen[None]):
    """Lists the session's MCP servers; esc, q or the servers key closes it."""

    CSS_PATH = [DIALOG_STYLESHEET, "mcp.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding(SERVERS_KEY, "close", "Close", show=False),
    ]

    def __init__(
        self,
        board: McpBoard,
        setups: Callable[[], dict[str, ServerSetup]],
        *,
        user_settings: Path | None = None,
    ) -> None:
        """`board`: the servers' states, kept by the app; `setups`: how each was configured,
        read when the screen draws; `user_settings`: the user's settings file, for the
        words on how to add a server."""
        super().__init__()
        self.board = board
        self.setups = setups
        self.user_settings = user_settings
        self.rows: dict[str, ServerRow] = {}

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with Vertical(id="header"):
                yield Static(id="title")
            with VerticalScroll(id="body"):
                yield Static(empty_text(self.user_settings), id="empty")
            with Vertical(id="footer"):
                yield Static("esc closes", id="hint")

    def on_mount(self) -> None:
        self.show_servers()

    def show_servers(self) -> None:
        """Draw the servers as the board has them now (the app calls this on each change)."""
        statuses = self.board.sorted()
        setups = self.setups()
        body = self.query_one("#body", VerticalScroll)
        if [s.name for s in statuses] != list(self.rows):
            # A server not seen before: rebuild in name order (a handful of rows, rarely).
            for row in self.rows.values():
                row.remove()
            self.rows = {status.name: ServerRow(status.name) for status in statuses}
            body.mount_all(self.rows.values())
        for status in statuses:
            self.rows[status.name].show(status, setups.get(status.name))
        self.query_one("#empty", Static).display = not statuses
        title = Text("MCP servers", style="bold")
        if statuses:
            title.append(f"  {self.board.ready} of {len(statuses)} ready")
        self.query_one("#title", Static).update(title)

    def action_close(self) -> None:
        self.dismiss(None)
