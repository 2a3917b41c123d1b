"""The slash-command matches shown above the prompt while a command name is typed.

A `Static` the prompt fills, not an `OptionList`: focus stays in the prompt (typing goes on,
tab completes the first match, enter sends), so the list only has to be read, never
navigated. It shows at most `MAX_SHOWN` matches, each with its argument hint and what it
does, and hides itself when there is nothing to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from core.agent.commands import Command, describe

MAX_SHOWN = 8


class CommandHints(Static):
    DEFAULT_CSS = """
    CommandHints {
        height: auto;
        max-height: 10;
        margin: 0 1;
        padding: 0 1;
        background: $surface;
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
        text = Text()
        for index, (name, command) in enumerate(matches[:MAX_SHOWN]):
            if index:
                text.append("\n")
            text.append(f"/{name}", style="bold" if index == 0 else "")
            if command.argument_hint:
                text.append(f" {command.argument_hint}", style="dim")
            text.append(f"  {describe(command)}", style="dim")
        if len(matches) > MAX_SHOWN:
            text.append(f"\n… {len(matches) - MAX_SHOWN} more: keep typing", style="dim italic")
        self.update(text)
        self.add_class("-shown")
