"""The main screen: the conversation beside the live tool queue and todos, the prompt below.

Only layout lives here. The app owns the session and feeds these widgets (see tui/app.py and
tui/bridge.py); keeping the screen dumb lets tests and the screenshot script build it
around any stream of events.

Two things of layout react to the person's hands:

- Below `FOLD_WIDTH` columns the side panes (tool queue, todos) fold away so the
  conversation, which shows every call inline too, keeps the width; F2 brings them back (or
  hides them when wide). That choice holds until the terminal crosses `FOLD_WIDTH`, when
  the width's own default applies again.
- A printable key typed while another pane has focus is not lost: unless that pane uses the
  key (j/k/space in the queue), focus goes to the prompt with the character typed there;
  text pasted there goes to the prompt the same way.

The footer lists `active_bindings` in order, cutting what does not fit; Textual puts the
focused pane's keys first, so at 80 columns the queue's "enter Open call" would push F1 off
the line. Here the app's keys come first, and a pane's own keys fill what room is left.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.app import ComposeResult
from textual.binding import ActiveBinding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer, Input, TextArea

from ..widgets.command_hints import CommandHints
from ..widgets.conversation import Conversation
from ..widgets.prompt_input import PromptInput
from ..widgets.status_bar import StatusBar
from ..widgets.todos import TodoList
from ..widgets.tool_queue import ToolQueue

MAIN_SCREEN_STYLESHEET = Path(__file__).with_name("main.tcss")
"""Loaded by the app: this is its default screen, whose own CSS_PATH Textual would skip."""
FOLD_WIDTH = 100
"""Narrower than this (columns), the side panes start folded away."""


class MainScreen(Screen[None]):
    AUTO_FOCUS = "#prompt"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """`clock` is "now" for running calls' elapsed times (snapshots fix it)."""
        super().__init__()
        self.clock = clock
        self.narrow: bool | None = None
        """Below `FOLD_WIDTH`; None until the first size is known."""
        self.side_wanted: bool | None = None
        """F2's choice for this side of `FOLD_WIDTH`; None: the width decides."""

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Conversation(id="conversation")
            with Vertical(id="side"):
                queue = ToolQueue(id="queue", clock=self.clock)
                queue.border_title = "Tool calls"
                yield queue
                todos = TodoList(id="todos")
                yield todos
        yield CommandHints(id="command-hints")
        yield PromptInput(id="prompt")
        yield StatusBar(id="status")
        yield Footer()

    @property
    def active_bindings(self) -> dict[str, ActiveBinding]:
        """The keys that work now, the app's first (only their order changes: the footer's)."""
        bindings = super().active_bindings
        app = self.app
        return dict(sorted(bindings.items(), key=lambda item: item[1].node is not app))

    # -- the side panes ----------------------------------------------------------------------------

    @property
    def side_shown(self) -> bool:
        if self.side_wanted is not None:
            return self.side_wanted
        return not self.narrow

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < FOLD_WIDTH
        if narrow != self.narrow:
            self.narrow = narrow
            self.side_wanted = None
            self._show_side()

    def toggle_side(self) -> None:
        self.side_wanted = not self.side_shown
        self._show_side()

    def _show_side(self) -> None:
        side = self.query_one("#side")
        shown = self.side_shown
        side.display = shown
        self.set_class(not shown, "-side-folded")
        focused = self.focused
        if not shown and focused is not None and side in focused.ancestors_with_self:
            self.query_one("#prompt").focus()

    # -- keys typed elsewhere ----------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        """A printable key no focused pane takes goes to the prompt instead of vanishing."""
        if not event.is_printable or not event.character:
            return
        focused = self.focused
        if isinstance(focused, (Input, TextArea)):
            return  # typing in a text box already
        bindings = self.active_bindings
        if any(key in bindings for key in (event.key, *event.aliases)):
            return  # the focused pane's own key (j/k/space in the queue), or the app's
        prompt = self.query_one("#prompt", PromptInput)
        if prompt.disabled:
            return
        event.stop()
        event.prevent_default()
        prompt.focus()
        prompt.insert_text_at_cursor(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """Text pasted while another pane has focus lands in the prompt, not nowhere."""
        if isinstance(self.focused, (Input, TextArea)):
            return
        prompt = self.query_one("#prompt", PromptInput)
        if prompt.disabled:
            return
        event.stop()
        prompt.focus()
        prompt.post_message(events.Paste(event.text))
