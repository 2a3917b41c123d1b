"""F1 help: every key, where it works, and what the modes and the sandbox mean.

Why it is shaped this way: the keys are generated from the `BINDINGS` of the app, the main
screen's widgets and every dialog (`KEY_PLACES`), every binding with a description, shown in
the footer or not, so the list cannot drift from what the keys really do; a test finds
every class in `tui` that has bindings and checks that its keys are here. Textual's own
bindings (an `Input`'s editing keys and the like) are left out: they are a text box's, not
proctor's. A caller may pass its own `(key, description)` pairs for the first section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen
from textual.widgets import Static

EVERYWHERE_EXTRAS: tuple[tuple[str, str], ...] = (
    ("tab", "Next pane (the prompt, the conversation, the tool queue)"),
)
"""Textual's screen keys that proctor relies on; the rest of Textual's are left out."""

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


def key_places() -> list[tuple[str, type[DOMNode]]]:
    """Where keys work besides everywhere (the app's), in the order help lists them."""
    from ..screens.compact import CompactScreen
    from ..screens.mcp import McpServersScreen
    from ..screens.outputs import SavedOutputsScreen
    from ..screens.permission import PermissionScreen
    from ..screens.plan import PlanScreen
    from ..screens.question import QuestionScreen
    from ..screens.sessions import SessionsScreen
    from ..screens.status import StatusScreen
    from ..screens.trust import TrustScreen
    from ..screens.viewer import OutputViewerScreen
    from ..widgets.prompt_block import PromptBlock
    from ..widgets.prompt_input import PromptInput
    from ..widgets.tool_queue import ToolQueue
    from ..widgets.tool_run import ToolRun

    return [
        ("In the prompt", PromptInput),
        ("In the tool queue", ToolQueue),
        ("On a call in the conversation", ToolRun),
        ("On a slash command's line in the conversation", PromptBlock),
        ("In a permission dialog", PermissionScreen),
        ("In the plan dialog", PlanScreen),
        ("When the agent asks", QuestionScreen),
        ("Trusting a project", TrustScreen),
        ("Saved outputs (ctrl+o)", SavedOutputsScreen),
        ("The output viewer", OutputViewerScreen),
        ("MCP servers", McpServersScreen),
        ("Compacting from the palette", CompactScreen),
        ("Sessions", SessionsScreen),
        ("Status (F3)", StatusScreen),
        ("This help", HelpScreen),
    ]


def binding_rows(owner: type[DOMNode], app: App[Any]) -> list[tuple[str, str]]:
    """`owner`'s keys with a description, as (keys, description and tooltip); keys that do
    the same thing share a row (`↑ / k`). Bindings declared by Textual's own classes are
    left out."""
    rows: dict[tuple[str, str], list[str]] = {}
    for cls in owner.__mro__:
        declared = cls.__dict__.get("BINDINGS")
        if not declared or cls.__module__.startswith("textual."):
            continue
        for binding in Binding.make_bindings(declared):
            if not binding.description:
                continue
            said = binding.description
            if binding.tooltip:
                said += f": {binding.tooltip}"
            keys = rows.setdefault((binding.action, said), [])
            shown = app.get_key_display(binding)
            if shown not in keys:
                keys.append(shown)
    return [(" / ".join(keys), description) for (_, description), keys in rows.items()]


def app_rows(app: App[Any]) -> list[tuple[str, str]]:
    """The keys that work on the main screen whatever has focus: the app's own."""
    rows = binding_rows(type(app), app)
    if app.ENABLE_COMMAND_PALETTE:
        palette = Binding(app.COMMAND_PALETTE_BINDING, "command_palette", "Command palette")
        rows.append((app.get_key_display(palette), palette.description))
    return rows + list(EVERYWHERE_EXTRAS)


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
    AUTO_FOCUS = "#body"  # the list is longer than a small terminal: arrows and pgdn scroll it
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
                yield Static(Text("Everywhere", style="bold"), classes="h")
                yield Static(_key_table(self.app_keys()), id="app-keys")
                for title, owner in key_places():
                    rows = binding_rows(owner, self.app)
                    if rows:
                        yield Static(Text(title, style="bold"), classes="h")
                        yield Static(_key_table(rows), classes="place-keys")
                yield Static(Text("Modes", style="bold"), classes="h")
                yield Static(Text(MODES), id="modes")
                yield Static(Text("The sandbox", style="bold"), classes="h")
                yield Static(Text(SANDBOX), id="sandbox")

    def app_keys(self) -> list[tuple[str, str]]:
        """The given keys, or the app's own."""
        return list(self.keys) if self.keys is not None else app_rows(self.app)

    def action_close(self) -> None:
        self.dismiss(None)
