"""The trust question, asked once per project that brings its own settings or hooks.

Why it is shaped this way: a cloned repository's `.proctor/` (or `.claude/`) files may hold
hook commands and allow rules, and its `.mcp.json` names MCP servers, which are programs it
would start; none of them may act before the person has seen them. The screen
shows what was found (lines from `tui.trust_findings.trust_findings`), says plainly what
trusting changes, and answers a plain `bool`: True trusts (the app then calls
`core.trust.trust`), False keeps the project's widening settings set aside for this session.
Saying no is the safe default: esc and n both mean no. What was found scrolls (a project
may bring many files); the two buttons stay below it (dialog.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from .dialog import DIALOG_STYLESHEET, DialogScreen

EXPLANATION = (
    "Trusting it means its hooks run (they are shell commands), its MCP servers start (they "
    "are programs too), its instruction files steer the agent, and its allow rules, extra "
    "directories and default mode apply. If you "
    "do not trust it, those are set aside; its deny and ask rules still apply. proctor "
    "remembers a yes for this directory only."
)


class TrustScreen(DialogScreen[bool]):
    """Do you trust the files in this project? Dismisses with True (trust) or False."""

    CSS_PATH = [DIALOG_STYLESHEET, "trust.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Trust"),
        Binding("n", "answer(False)", "Don't trust"),
        Binding("escape", "answer(False)", "Don't trust"),
    ]

    def __init__(self, project: Path, findings: Sequence[str]) -> None:
        super().__init__()
        self.project = project
        self.findings = tuple(findings)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            with Vertical(id="header"):
                yield Static(
                    Text.assemble("Do you trust the files in ", (str(self.project), "bold"), "?"),
                    id="title",
                )
            with VerticalScroll(id="body"):
                yield Static(
                    Text("This project brings its own settings or instructions:"), id="found-intro"
                )
                found = "\n".join(f"  • {line}" for line in self.findings) or "  (nothing)"
                yield Static(Text(found), id="findings")
                yield Static(Text(EXPLANATION), id="explanation")
            with Horizontal(id="footer"):
                yield Button("Yes, trust it (y)", id="trust", variant="warning")
                yield Button("No (n)", id="distrust", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#trust", Button).focus()

    def action_answer(self, trusted: bool) -> None:
        self.dismiss(trusted)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "trust")
