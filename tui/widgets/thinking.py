"""The model's thinking in the conversation: one folded line, opened on demand.

Thinking can run to pages, and a supervisor mostly wants the calls and the answer; so a
thinking block is a single line ("∴ Thinking…" while it streams, "∴ Thought · 84 words"
after) until the person opens it, with the thinking key (ctrl+r, every block at once, and
blocks that arrive later follow) or a click (that block alone). Opened, it shows the whole
text, dim, under its line. A redacted block (the API sends it encrypted, and it goes back
as it came) has no text to open: its line is "∴ Thinking (redacted)".

A plain `Static`, not markdown: thinking is read to follow the model's reasoning, and is
redrawn once per frame as it streams, which a Static does cheaply. Its text is kept here so
folding and unfolding costs no re-render of anything else.
"""

from __future__ import annotations

from textual import events
from textual.widgets import Static

THINKING_KEY = "ctrl+r"
"""Opens or folds every thinking block in the conversation."""


class ThinkingView(Static):
    """One thinking block (or a run of them streamed together), folded or open."""

    DEFAULT_CSS = """
    ThinkingView {
        margin: 1 0 0 0;
        padding: 0 1;
        color: $text-muted;
        text-style: italic;
    }
    ThinkingView.-open { border-left: outer $foreground-muted; }
    """

    def __init__(self, *, expanded: bool = False, redacted: bool = False) -> None:
        super().__init__("", markup=False)
        self.text = ""
        self.redacted = redacted
        self.streaming = True
        self.expanded = expanded
        self._shown: tuple[str, bool, bool] | None = None
        self.set_class(expanded, "-open")
        self.refresh_text()

    @property
    def words(self) -> int:
        return len(self.text.split())

    def add(self, text: str) -> None:
        """More of the thought (drawn by `refresh_text`, once a frame)."""
        self.text += text

    def finish(self) -> None:
        """The block is complete (its message arrived)."""
        if self.streaming:
            self.streaming = False
            self.refresh_text()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self.set_class(expanded, "-open")
            self.refresh_text()

    def headline(self) -> str:
        if self.redacted:
            return "∴ Thinking (redacted)"  # encrypted by the API: nothing to open
        count = self.words
        size = f"{count} word{'s' if count != 1 else ''}"
        hint = "" if self.expanded else f" · {THINKING_KEY} to open"
        if self.streaming:
            return f"∴ Thinking… {size}{hint}"
        return f"∴ Thought · {size}{hint}"

    def refresh_text(self) -> None:
        key = (self.text, self.streaming, self.expanded)
        if key == self._shown:
            return
        self._shown = key
        body = self.text.strip() if self.expanded and not self.redacted else ""
        self.update(self.headline() + (f"\n{body}" if body else ""))

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.set_expanded(not self.expanded)
