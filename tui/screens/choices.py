"""What the permission and plan dialogs share: keyed choices, and a "no" that asks why.

Why it is shaped this way: both dialogs offer a few choices in an `OptionList` (`#choices`),
each with a key; one of them declines, and declining asks in place what the agent should do
instead (an `Input`, `#feedback`, that appears under the choices) rather than on a second
screen. Esc steps back out of that box to the choices, and from the choices it declines
without a word. Everything else says yes to something, so it is refused for a moment after
the dialog appears: the person may still be typing a prompt (an "a" or an enter) when it
pops up. Declining works at once.

A dialog names its declining choice (`DECLINE`), builds its answers (`_approve`,
`_decline`) and composes its own `#choices` and `#feedback`, both in its `#footer` so that
they stay on screen however long the body is (dialog.py); this class does the rest. The
rule that hides the feedback box until it is asked for is here too, beside the code that
shows it. Textual runs a base class's message handlers as well as a subclass's, so a
dialog's own `on_mount` adds to this one's (it runs first) and need not call it.
"""

from __future__ import annotations

import time
from typing import ClassVar, TypeVar

from rich.text import Text
from textual.widgets import Input, OptionList

from .dialog import DialogScreen

AnswerT = TypeVar("AnswerT")


def choice_label(key: str, words: str) -> Text:
    """A choice as the option list shows it: its key, reversed, then what it means."""
    return Text.assemble((f" {key} ", "bold reverse"), "  ", words)


class ChoiceDialog(DialogScreen[AnswerT]):
    """Keyed choices, one of which declines and asks for feedback; dismisses with AnswerT."""

    DEFAULT_CSS = """
    ChoiceDialog #feedback {
        display: none;
    }

    ChoiceDialog #feedback.-shown {
        display: block;
    }
    """

    DECLINE: ClassVar[str]
    """The id of the choice that declines and asks for feedback."""

    approve_delay_s: ClassVar[float] = 0.5
    """Choices other than `DECLINE` are refused this long after the dialog appears."""

    def __init__(self) -> None:
        super().__init__()
        self._shown_at = time.monotonic()

    def on_mount(self) -> None:
        self._shown_at = time.monotonic()
        self.query_one("#feedback", Input).cursor_blink = not self.app.is_headless
        self.query_one("#choices", OptionList).focus()

    # --- what a dialog says ------------------------------------------------------------------

    def _approve(self, choice: str) -> None:
        """Dismisses with the answer `choice` means, if it means one now."""
        raise NotImplementedError

    def _decline(self, feedback: str) -> AnswerT:
        """The answer for "no"; `feedback` is what the person typed ("" for none)."""
        raise NotImplementedError

    # --- keys --------------------------------------------------------------------------------

    def action_choose(self, choice: str) -> None:
        if choice == self.DECLINE:
            feedback = self.query_one("#feedback", Input)
            feedback.add_class("-shown")
            feedback.focus()
        elif time.monotonic() < self._shown_at + self.approve_delay_s:
            # Keys typed for the prompt as the dialog appeared must not approve anything.
            self.app.bell()
        else:
            self._approve(choice)

    def action_escape(self) -> None:
        feedback = self.query_one("#feedback", Input)
        if feedback.has_class("-shown"):
            feedback.remove_class("-shown")
            self.query_one("#choices", OptionList).focus()
        else:
            self.dismiss(self._decline(""))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option_id is not None:
            self.action_choose(event.option_id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(self._decline(event.value.strip()))
