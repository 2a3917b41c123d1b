"""This project's sessions, most recently active first (the palette's "Sessions", `/resume`).

Opened from the palette, enter copies the command that carries the highlighted session on
(`proctor --resume ID`) to the clipboard. Opened by `/resume` (`pick`), enter carries it on
in this window instead: the screen is dismissed with its id and the app switches to it
(tui/resume.py), or says why it cannot.

The session this app is running has no `end` record yet, which on disk looks like a session
that did not end cleanly; the app says which one it is running, so the list marks it as
running instead. The newest session is highlighted as the list appears, so enter works on
the first row at once.
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


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def describe_session(summary: SessionSummary, *, running: bool) -> str:
    """One row of the list: when, which, how long, what about, and how it ended."""
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.last_activity))
    title = summary.title or "(no prompt yet)"
    if running:
        state = "  (running now, in this window)"
    elif not summary.ended_cleanly:
        state = "  (did not end cleanly)"
    else:
        state = ""
    return f"{when}  {summary.id}  {plural(summary.turns, 'turn'):>9}  {title}{state}"


class SessionsScreen(ModalScreen[str | None]):
    CSS_PATH = "sessions.tcss"
    BINDINGS = [Binding("escape,q", "dismiss_screen", "Close")]

    def __init__(
        self,
        project: Path,
        *,
        running: str | None = None,
        resume: str = "proctor --resume",
        pick: bool = False,
    ) -> None:
        """`running`: the id of the session this app has open, if any; `resume`: the command
        that carries one on, less its id (a demo's needs `--demo`); `pick`: enter carries the
        session on here (the screen's result is its id) rather than copying that command."""
        super().__init__()
        self.project = project
        self.pick = pick
        self.running = running
        self.resume = resume
        self.summaries: list[SessionSummary] = []

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"Sessions of {self.project}"
            yield OptionList(id="sessions")
            hint = (
                "enter carries the session on in this window · esc closes"
                if self.pick
                else f"enter copies `{self.resume} ID` to carry a session on · esc closes"
            )
            yield Label(hint, classes="hint")

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
            running = summary.id == self.running
            options.add_option(Option(describe_session(summary, running=running)))
        if summaries:
            options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option_index < len(self.summaries):
            picked = self.summaries[event.option_index].id
            if self.pick:
                self.dismiss(picked)
                return
            command = f"{self.resume} {picked}"
            self.app.copy_to_clipboard(command)
            self.notify(f"Copied: {command}")

    def action_dismiss_screen(self) -> None:
        self.dismiss(None)
