"""F1 help: the keys of the screen underneath, the dialog keys, and what the modes mean.

Why it is shaped this way: the app's keys are read from the bindings that are live on the
screen below (`Screen.active_bindings`, shown ones only), so the list cannot drift from what
the keys really do; a caller may pass its own `(key, description)` pairs instead. The dialog
keys are fixed by the dialogs in this package, so they are written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

DIALOG_KEYS: tuple[tuple[str, str], ...] = (
    ("y", "yes, run this call once"),
    ("a", "yes, and don't ask again for the suggested rule (kept in .proctor/settings.local.json)"),
    ("s", "yes, for the rest of this session"),
    ("n", "no, and tell the agent what to do instead"),
    ("A", "allow every waiting call, once (when more than one waits)"),
    ("esc", "no (in the feedback box: back to the choices)"),
    ("1 / 2 / 3", "plan: approve and accept edits / approve and ask per edit / keep planning"),
)

MODES = (
    "Modes decide what runs without asking. default asks before anything that changes "
    "things; acceptEdits also runs file edits inside the project; plan only reads and "
    "explores until you approve a plan; dontAsk refuses whatever would ask; "
    "bypassPermissions runs everything except removing critical paths (only when started "
    "with --allow-bypass). Deny and ask rules apply in every mode."
)

SANDBOX = (
    "Commands nobody approved run in a kernel sandbox. In the tool queue, ro means the "
    "read-only sandbox (no writes, no network, no reading outside the project), ws the "
    "workspace sandbox (writes only inside the project, protected paths excepted), un "
    "outside the sandbox: you, a rule or a hook approved it. The status bar says how strong "
    "the sandbox is here. A command that asks to leave the sandbox always asks you."
)


def _key_table(rows: Sequence[tuple[str, str]]) -> Text:
    """Keys in a column: plain `Text` (not a rich Table) so the lines wrap and can be read."""
    width = max((len(key) for key, _ in rows), default=0)
    text = Text()
    for key, description in rows:
        text.append(key.ljust(width + 2), style="bold")
        text.append(description + "\n")
    text.rstrip()
    return text


class HelpScreen(ModalScreen[None]):
    """Lists the keys; esc, F1 or q closes it."""

    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("f1", "close", "Close"),
        Binding("q", "close", "Close"),
    ]

    def __init__(self, keys: Sequence[tuple[str, str]] | None = None) -> None:
        super().__init__()
        self.keys = tuple(keys) if keys is not None else None

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(Text("Keys", style="bold"), id="title")
            with VerticalScroll(id="body"):
                yield Static(id="app-keys")
                yield Static(Text("In a permission or plan dialog", style="bold"), classes="h")
                yield Static(_key_table(DIALOG_KEYS), id="dialog-keys")
                yield Static(Text("Modes", style="bold"), classes="h")
                yield Static(Text(MODES), id="modes")
                yield Static(Text("The sandbox", style="bold"), classes="h")
                yield Static(Text(SANDBOX), id="sandbox")

    def on_mount(self) -> None:
        self.query_one("#app-keys", Static).update(_key_table(self.app_keys()))

    def app_keys(self) -> list[tuple[str, str]]:
        """The given keys, or the shown bindings of the screen this help was opened over."""
        if self.keys is not None:
            return list(self.keys)
        stack = self.app.screen_stack
        below = stack[stack.index(self) - 1] if self in stack and stack.index(self) > 0 else None
        if below is None:
            return []
        rows: list[tuple[str, str]] = []
        for active in below.active_bindings.values():
            binding = active.binding
            if binding.show and binding.description:
                row = (self.app.get_key_display(binding), binding.description)
                if row not in rows:
                    rows.append(row)
        return rows

    def action_close(self) -> None:
        self.dismiss(None)
