"""This project's sessions, most recently active first (the palette's "Sessions").

Switching sessions inside a running app would mean tearing down a live turn, its shells
and sub-agents; carrying one on is a fresh start instead, so the list says how:
`proctor --resume ID`. Enter copies that command to the clipboard.
"""

from __future__ import annotations

import time
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from core.agent.sessions import SessionSummary, list_sessions


class SessionsScreen(ModalScreen[None]):
    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical {
        width: 90%; max-width: 110; height: 80%;
        border: round $primary; background: $surface; padding: 0 1;
    }
    SessionsScreen OptionList { height: 1fr; }
    SessionsScreen .hint { color: $text-muted; }
    """
    BINDINGS = [Binding("escape,q", "dismiss_screen", "Close")]

    def __init__(self, project: Path) -> None:
        super().__init__()
        self.project = project
        self.summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Sessions of {self.project}"
            yield OptionList(id="sessions")
            yield Label(
                "enter copies `proctor --resume ID` to carry a session on · esc closes",
                classes="hint",
            )

    def on_mount(self) -> None:
        self.load()

    @work(thread=True)
    def load(self) -> None:
        summaries = list_sessions(self.project)
        self.app.call_from_thread(self._show, summaries)

    def _show(self, summaries: list[SessionSummary]) -> None:
        self.summaries = summaries
        options = self.query_one(OptionList)
        if not summaries:
            options.add_option(Option("No sessions yet.", disabled=True))
        for summary in summaries:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.last_activity))
            title = summary.title or "(no prompt yet)"
            state = "" if summary.ended_cleanly else "  (did not end cleanly)"
            options.add_option(
                Option(f"{when}  {summary.id[:12]}  {summary.turns:>3} turns  {title}{state}")
            )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_index < len(self.summaries):
            command = f"proctor --resume {self.summaries[event.option_index].id}"
            self.app.copy_to_clipboard(command)
            self.notify(f"Copied: {command}")

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
