"""What the person sent, as one block in the conversation.

A slash command (`/deploy staging`) is sent to the model as its file's text, which can run
to pages; shown whole, it buries the line the person actually typed. So the block shows the
typed line, and under it one dim line saying the command was expanded, folded as thinking
is (tui/widgets/thinking.py): a click, or enter once the block has focus, opens the text the
model got, and again folds it. A plain prompt is only its text, and takes no focus.

A plain `Static`: the text is kept here, so folding redraws this block only.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.widgets import Static


class PromptBlock(Static):
    """What the user sent: the typed line, and a slash command's expansion folded under it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_expansion", "Open/close the command's text", show=False),
    ]

    DEFAULT_CSS = """
    PromptBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        background: $boost;
        border-left: thick $primary;
        color: $text;
    }
    PromptBlock:focus { border-left: thick $accent; }
    """

    def __init__(self, text: str, expansion: str = "") -> None:
        super().__init__(text, markup=False)
        self.text = text
        self.expansion = expansion
        """A slash command's text as the model got it; empty for a plain prompt."""
        self.expanded = False
        self.can_focus = bool(expansion)
        if expansion:
            self._show()

    def headline(self) -> str:
        lines = len(self.expansion.strip().splitlines())
        size = f"{lines} line{'s' if lines != 1 else ''}"
        if self.expanded:
            return f"▾ sent to the model as ({size}):"
        return f"▸ sent to the model as {size} of text · click or enter to open"

    def set_expansion(self, expansion: str) -> None:
        """The text the model really got, once the command's `@path` files were read and
        its !`cmd` lines run (the first fold showed the body before that)."""
        self.expansion = expansion
        self.can_focus = bool(expansion)
        self._show()

    def set_expanded(self, expanded: bool) -> None:
        if self.expansion and expanded != self.expanded:
            self.expanded = expanded
            self._show()

    def action_toggle_expansion(self) -> None:
        self.set_expanded(not self.expanded)

    def on_click(self, event: events.Click) -> None:
        if self.expansion:
            event.stop()
            self.set_expanded(not self.expanded)

    def _show(self) -> None:
        shown = Text(self.text)
        shown.append(f"\n{self.headline()}", style="dim")
        if self.expanded:
            shown.append(f"\n{self.expansion.strip()}", style="dim")
        self.update(shown)
