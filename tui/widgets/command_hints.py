"""The slash-command matches shown above the prompt while a command name is typed.

A `Static` the prompt fills, not an `OptionList`: focus stays in the prompt (typing goes on,
tab completes the first match, enter sends), so the list only has to be read, never
navigated. It shows at most `MAX_SHOWN` matches, one row each (cut with an ellipsis, so
80×24 keeps the conversation in view), with its argument hint and what it does, and hides
itself when there is nothing to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from core.agent.commands import Command, describe

MAX_SHOWN = 8
NAME_COLUMN = 24
"""The widest the name-and-hint column grows; a longer one pushes its description on."""


class CommandHints(Static):
    DEFAULT_CSS = """
    CommandHints {
        height: auto;
        max-height: 10;
        margin: 0 1;
        padding: 0 1;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
        display: none;
    }
    CommandHints.-shown {
        display: block;
    }
    """

    def show_matches(self, matches: Sequence[tuple[str, Command]]) -> None:
        if not matches:
            self.remove_class("-shown")
            self.update("")
            return
        shown = matches[:MAX_SHOWN]
        heads = [(f"/{n}", f" {c.argument_hint}" if c.argument_hint else "") for n, c in shown]
        width = min(max(len(a) + len(b) for a, b in heads), NAME_COLUMN)  # descriptions align
        text = Text()
        for index, ((name, hint), (_, command)) in enumerate(zip(heads, shown, strict=True)):
            if index:
                text.append("\n")
            text.append(name, style="bold" if index == 0 else "")
            text.append(hint.ljust(width - len(name)), style="dim")
            text.append(f"  {describe(command)}", style="dim")
        if len(matches) > MAX_SHOWN:
            text.append(f"\n… {len(matches) - MAX_SHOWN} more: keep typing", style="dim italic")
        self.update(text)
        self.add_class("-shown")
