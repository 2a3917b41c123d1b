"""Compacting from the palette: what the summary should keep, asked before it is written.

`/compact [what to keep]` takes instructions on its line; the palette's entry has no line to
take them from, so it asks here, in one text box: enter compacts (with the words, or none),
esc changes nothing. The box is the whole dialog, so the person is one key from either.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Input, Static

from .dialog import DIALOG_STYLESHEET, DialogScreen

EXPLAINED = (
    "The model writes a summary that replaces the conversation so far (the transcript keeps "
    "everything; the todos, the mode and the plan stay). Say what it must keep, or leave the "
    "box empty."
)


class CompactScreen(DialogScreen[str | None]):
    """Returns the instructions for the summary ("" for none), or None when cancelled."""

    CSS_PATH = [DIALOG_STYLESHEET, "compact.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Do not compact")]

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static("Compact the conversation", id="header")
            with VerticalScroll(id="body"):
                yield Static(EXPLAINED, id="explained")
            with Vertical(id="footer"):
                yield Input(placeholder="What the summary should keep (optional)", id="keep")
                yield Static("enter compact · esc cancel", id="keys")

    def on_mount(self) -> None:
        super().on_mount()
        box = self.query_one("#keep", Input)
        box.cursor_blink = not self.app.is_headless
        box.focus()

    @on(Input.Submitted, "#keep")
    def _compact(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip())

    def action_cancel(self) -> None:
        self.dismiss(None)
