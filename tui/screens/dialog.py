"""What every modal dialog shares: a header, a body that scrolls, the choices pinned below.

Why it is shaped this way: at 80×24 a long diff or plan pushed a dialog's choices off the
bottom of the screen, where no key could reach them. So every dialog composes one
`#dialog` box of three parts:

- `#header`, docked at the top: what is asked, and by whom;
- `#footer`, docked at the bottom: the choices, and the few words that qualify a yes. Docked
  parts are laid out before the rest, so they stay on screen whatever the body holds;
- `#body`, a `VerticalScroll` between them: as tall as its content up to the room the other
  two leave (`max-height: 100%` of what is left once they are docked), so a short question
  makes a short dialog and a long diff scrolls.

PageUp/PageDown scroll the body whatever has focus. They are priority bindings because the
focused choices (an `OptionList`) would otherwise take them to move the highlight, which is
how "PageDown did not reveal them" came about. Tab also reaches the body, where the arrows,
home and end scroll it. While the body overflows, the dialog's bottom border says so.

A dialog's own stylesheet sets its border and width; dialog.tcss holds the layout every
dialog needs, and each dialog lists both in its `CSS_PATH`.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar, Literal, TypeVar

from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen

ResultT = TypeVar("ResultT")

DIALOG_STYLESHEET = Path(__file__).with_name("dialog.tcss")
"""The layout every dialog shares. A stylesheet, not DEFAULT_CSS: the app's own stylesheets
outrank any DEFAULT_CSS, and the main screen's `#body` (1fr) stretched every dialog's body."""

SCROLL_HINT = "PgUp/PgDn scroll"
"""Shown in the dialog's bottom border while its body is too long to show whole."""


class DialogScreen(ModalScreen[ResultT]):
    """A modal dialog laid out as `#dialog` > `#header`, `#body`, `#footer`."""

    CSS_PATH = [DIALOG_STYLESHEET]
    """A dialog with its own stylesheet lists both: `[DIALOG_STYLESHEET, "its.tcss"]`."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("pageup", "scroll_body('up')", "Scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_body('down')", "Scroll down", show=False, priority=True),
    ]

    def on_mount(self) -> None:
        # Say that the body scrolls, and how, while it does: the scrollbar alone did not
        # tell a newcomer which key moves it. The border holds the words, costing no line.
        body = self.query_one("#body", VerticalScroll)
        self.watch(body, "show_vertical_scrollbar", self._body_scrolls)

    def _body_scrolls(self, scrolls: bool) -> None:
        self.query_one("#dialog").border_subtitle = SCROLL_HINT if scrolls else ""

    def action_scroll_body(self, direction: Literal["up", "down"]) -> None:
        body = self.query_one("#body", VerticalScroll)
        if direction == "up":
            body.scroll_page_up(animate=False)
        else:
            body.scroll_page_down(animate=False)
