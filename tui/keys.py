"""The app's keys: each binding and what it does.

Why it is shaped this way: Textual looks an action up by name on the app (`action_<name>`)
and merges `BINDINGS` only from Textual classes, so the keys are an `App` class the app
inherits from rather than a plain mixin; the command palette (palette.py) offers several of
the same actions. Each action reads the session and the widgets through `AppBase`, and
imports the screen it opens when it opens it: the first frame should not wait for screens
nobody has asked for yet.

ctrl+c does what a person's hands expect of it in a terminal agent, by state (`CtrlC`):
it stops a running turn, clears a typed prompt, and quits only when pressed twice on an
empty one. It is an ordinary (not a priority) binding: the prompt and the screen bind
ctrl+c to "copy" and pass it on when nothing is selected, so selected text is still copied;
and a dialog, being modal, keeps its own keys, ctrl+c among them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from textual import events
from textual.actions import SkipAction
from textual.binding import Binding

from .app_base import AppBase
from .mcp_board import SERVERS_KEY
from .status_facts import STATUS_KEY
from .widgets.thinking import THINKING_KEY
from .widgets.tool_queue import ToolQueue

CtrlC = Literal["interrupt", "clear", "arm", "quit"]
"""What ctrl+c does on the main screen, by the state it is pressed in."""


class KeyActions(AppBase):
    """The app's bindings and actions; `ProctorApp` supplies the session they act on."""

    BINDINGS = [
        Binding("shift+tab", "cycle_mode", "Mode", priority=True),
        Binding(
            "escape", "interrupt", "Interrupt", tooltip="Stop the running turn and its commands"
        ),
        Binding(
            "ctrl+c",
            "ctrl_c",
            "Stop / clear / quit",
            show=False,
            tooltip="Stop the running turn; else clear the prompt; twice on an empty one: quit",
        ),
        Binding("f1", "help", "Help", tooltip="Every key, the modes, the sandbox"),
        Binding("f2", "toggle_side", "Panes", tooltip="Show or hide the tool queue and todos"),
        Binding(
            "ctrl+o",
            "saved_outputs",
            "Saved output",
            show=False,
            tooltip="Browse tool results saved to disk",
        ),
        Binding(
            THINKING_KEY,
            "toggle_thinking",
            "Thinking",
            show=False,
            tooltip="Open or fold the model's thinking in the conversation",
        ),
        Binding("ctrl+t", "toggle_todos", "Todos", show=False, tooltip="Show or hide the todos"),
        Binding(
            SERVERS_KEY,
            "mcp_servers",
            "MCP servers",
            show=False,
            tooltip="Their state, why one failed, their logs",
        ),
        Binding(
            STATUS_KEY,
            "status",
            "Status",
            show=False,
            tooltip="The session at a glance: model, mode, context, instructions, settings",
        ),
        Binding("ctrl+q", "quit", "Quit", priority=True),
    ]

    quit_armed = False
    """ctrl+c was pressed on an empty prompt: pressed again (next), it quits."""

    async def action_quit(self) -> None:
        await self.shutdown()
        self.exit(0)

    def action_toggle_thinking(self) -> None:
        conversation = self.conversation
        conversation.set_thinking_expanded(not conversation.thinking_expanded)

    def action_cycle_mode(self) -> None:
        if self.live is None:
            self.notify("The session is still starting.", severity="warning")
            return
        mode = self.live.cycle_mode()
        self.status_bar.mode = mode  # at once, without waiting for the event's frame

    def set_mode(self, mode: Any) -> None:
        if self.live is not None:
            self.status_bar.mode = self.live.set_mode(mode)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and event.key != "ctrl+c":
            self._arm_quit(False)  # any other key: ctrl+c starts over
        await super().on_event(event)

    def ctrl_c_meaning(self) -> CtrlC:
        """What ctrl+c does now on the main screen."""
        if self.live is not None and self.live.loop.running:
            return "interrupt"
        if self.prompt_input.value:
            return "clear"
        return "quit" if self.quit_armed else "arm"

    async def action_ctrl_c(self) -> None:
        if self.screen is not self.main_screen:
            raise SkipAction()  # another screen's ctrl+c (Textual's "how to quit")
        match self.ctrl_c_meaning():
            case "interrupt":
                self.action_interrupt()
            case "clear":
                kept = self.prompt_input.clear_draft()
                self.notify("Prompt cleared: up brings it back." if kept else "Prompt cleared.")
            case "arm":
                self._arm_quit(True)
                self.notify("Press ctrl+c again to quit.")
            case "quit":
                await self.action_quit()

    def _arm_quit(self, armed: bool) -> None:
        if armed == self.quit_armed:
            return
        self.quit_armed = armed
        screen = self.main_screen
        if screen is not None and screen.is_mounted:
            self.prompt_input.quit_armed = armed

    def action_interrupt(self) -> None:
        if self.live is not None and self.live.running:
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
        screen = self.main_screen
        if screen is not None and not screen.side_shown:
            screen.toggle_side()  # folded (a narrow terminal): the todos live in the side panes
            self.todo_list.remove_class("-hidden")
            return
        self.todo_list.toggle_class("-hidden")

    def action_toggle_side(self) -> None:
        """Show or hide the tool queue and todos (folded away by default when narrow)."""
        screen = self.main_screen
        if screen is not None:
            screen.toggle_side()

    def action_save_screenshot(self) -> None:
        """The palette's screenshot, taken once the palette has left the screen."""
        self.call_after_refresh(self._save_screenshot)

    def _save_screenshot(self) -> None:
        from .screenshot import save_screenshot

        session_dir = self.prepared.session.directory if self.prepared is not None else None
        saved = save_screenshot(self.export_screenshot(), session_dir)
        if isinstance(saved, Path):
            self.notify(f"Screenshot saved to {saved}", timeout=10)
        else:
            self.notify(saved, severity="error", timeout=10)

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

    def action_status(self) -> None:
        from .screens.status import StatusScreen
        from .status_facts import status_facts

        if any(isinstance(screen, StatusScreen) for screen in self.screen_stack):
            return  # (the palette could open it over itself)
        self.push_screen(StatusScreen(status_facts(self)))

    def on_status_bar_mcp_clicked(self, message: Any) -> None:
        self.action_mcp_servers()

    def action_sessions(self, pick: bool = False) -> None:
        """The sessions list; with `pick` (`/resume`), enter carries one on in this window."""
        from .screens.sessions import SessionsScreen

        prepared = self.prepared
        running = prepared.session.id if prepared is not None and self.live is not None else None
        if prepared is None:
            self.push_screen(SessionsScreen(Path.cwd()))
            return
        # A demo's sessions are grouped under the sample, not its scratch copy, and carrying
        # one on needs the same scenario.
        resume = "proctor --resume"
        if prepared.options.demo:
            scenario = prepared.options.scenario
            resume = (
                "proctor --demo" + (f" --scenario {scenario}" if scenario else "") + " --resume"
            )
        screen = SessionsScreen(prepared.session.project, running=running, resume=resume, pick=pick)
        self.push_screen(screen, self._carry_on)

    def _carry_on(self, picked: str | None) -> None:
        if picked:
            self.resume_session(picked)
