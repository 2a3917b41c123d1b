"""The slash-command matches shown above the prompt while a command name is typed.

A `Static` the prompt fills, not an `OptionList`: focus stays in the prompt (typing goes on,
tab completes the first match, enter sends), so the list only has to be read, never
navigated. It shows at most `MAX_SHOWN` matches, one row each (so 80×24 keeps the
conversation in view), with its argument hint and what it does, and hides itself when there
is nothing to show. A row too long for the width is cut here rather than by the CSS
ellipsis: the description gives way and its trailing label, where the command comes from
("(project skill)"), always stays, since that is what tells a repository's command apart
from the person's own.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from core.agent.commands import Command, describe

MAX_SHOWN = 8
NAME_COLUMN = 24
"""The widest the name-and-hint column grows; a longer one pushes its description on."""
_LABEL = re.compile(r" \([^()]*\)$")
"""The label `describe` ends a description with: the command's source, or "not available"."""


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

    _matches: Sequence[tuple[str, Command]] = ()

    def on_resize(self) -> None:
        if self._matches:
            self.show_matches(self._matches)  # fit the rows to the new width

    def show_matches(self, matches: Sequence[tuple[str, Command]]) -> None:
        self._matches = matches
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
            # One column spare: a row exactly as wide as the widget still gets the CSS ellipsis.
            room = self.content_size.width - width - 3 if self.content_size.width else None
            text.append(f"  {fitted(describe(command), room)}", style="dim")
        if len(matches) > MAX_SHOWN:
            text.append(f"\n… {len(matches) - MAX_SHOWN} more: keep typing", style="dim italic")
        self.update(text)
        self.add_class("-shown")


def fitted(description: str, room: int | None) -> str:
    """`description` in `room` columns (None: unknown yet, whole): its text cut with an
    ellipsis before its trailing label is, so the label survives whenever it fits at all."""
    if room is None or len(description) <= room:
        return description
    label = _LABEL.search(description)
    if label is None or len(label.group()) + 1 >= room:
        return description[: max(room - 1, 0)] + "…"
    text = description[: label.start()]
    return text[: room - len(label.group()) - 1].rstrip() + "…" + label.group()
