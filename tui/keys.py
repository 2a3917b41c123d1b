"""The app's keys: each binding and what it does.

Why it is shaped this way: Textual looks an action up by name on the app (`action_<name>`)
and merges `BINDINGS` only from Textual classes, so the keys are an `App` class the app
inherits from rather than a plain mixin; the command palette (palette.py) offers several of
the same actions. Each action reads the session and the widgets through `AppBase`, and
imports the screen it opens when it opens it: the first frame should not wait for screens
nobody has asked for yet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.binding import Binding

from .app_base import AppBase
from .mcp_board import SERVERS_KEY
from .widgets.tool_queue import ToolQueue


class KeyActions(AppBase):
    """The app's bindings and actions; `ProctorApp` supplies the session they act on."""

    BINDINGS = [
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding("escape", "interrupt", "Interrupt"),
        Binding("ctrl+o", "saved_outputs", "Saved output"),
        Binding("ctrl+t", "toggle_todos", "Todos"),
        Binding(SERVERS_KEY, "mcp_servers", "MCP servers"),
        Binding("f1", "help", "Help"),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def action_cycle_mode(self) -> None:
        if self.live is None:
            self.notify("The session is still starting.", severity="warning")
            return
        mode = self.live.cycle_mode()
        self.status_bar.mode = mode  # at once, without waiting for the event's frame

    def set_mode(self, mode: Any) -> None:
        if self.live is not None:
            self.status_bar.mode = self.live.set_mode(mode)

    def action_interrupt(self) -> None:
        if self.live is not None and self.live.loop.running:
            self.live.interrupt()
            self.notify("Interrupted: the running calls are being stopped.")

    def action_saved_outputs(self) -> None:
        from .screens.outputs import SavedOutputsScreen

        self.push_screen(SavedOutputsScreen(self.saved_output_entries))

    def saved_output_entries(self) -> list[Any]:
        from .saved_entries import saved_output_entries

        if self.prepared is None:
            return []
        return saved_output_entries(self.prepared.session.directory, self.book)

    def on_tool_queue_call_selected(self, message: ToolQueue.CallSelected) -> None:
        """Enter on a queue row: its saved or still-streaming output, if it has one."""
        record = self.book.calls.get(message.tool_use_id)
        if record is None:
            return
        from .saved_entries import resolved

        wanted = {resolved(record.persisted), resolved(record.spool)} - {None}
        entry = next((e for e in self.saved_output_entries() if resolved(e.path) in wanted), None)
        if entry is None:
            self.notify(f"{record.display_name} {record.summary}: no saved output to show.")
            return
        from .screens.viewer import OutputViewerScreen

        self.push_screen(OutputViewerScreen(entry))

    def action_toggle_todos(self) -> None:
        self.todo_list.toggle_class("-hidden")

    def action_help(self) -> None:
        from .screens.help import HelpScreen

        self.push_screen(HelpScreen())

    def action_mcp_servers(self) -> None:
        from core.config_dir import user_config_dir

        from .mcp_board import server_setups
        from .screens.mcp import McpServersScreen

        if any(isinstance(screen, McpServersScreen) for screen in self.screen_stack):
            return  # (the palette could open it over itself)
        self.push_screen(
            McpServersScreen(
                self.book.servers,
                lambda: server_setups(self.live.mcp if self.live is not None else None),
                user_settings=user_config_dir() / "settings.json",
            )
        )

    def on_status_bar_mcp_clicked(self, message: Any) -> None:
        self.action_mcp_servers()

    def action_sessions(self) -> None:
        from .screens.sessions import SessionsScreen

        self.push_screen(SessionsScreen(self.prepared.cwd if self.prepared else Path.cwd()))
