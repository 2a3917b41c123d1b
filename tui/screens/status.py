"""The status screen (/status, F3, the palette): the session at a glance.

Why it is shaped this way:

- It answers "what is this session running with?" in one look: which session and where its
  files are, the model, the mode, how full the context is, then the things that steer the
  model without anyone typing (instruction files, settings files, hooks), and the guards
  (the sandbox, MCP servers). Short facts first, as label and value on one line each; the
  lists after, each a heading and one line per file, so a long list only lengthens the body,
  which scrolls (dialog.py), and esc stays on screen at 80×24.
- Each instruction file says where it came from in one word (`user`, `project`, `rules`,
  `local`, `AGENTS.md`, `subdirectory`, `import`: status_facts.py) with how it was reached
  beside it; `/memory` says the same in sentences in the conversation.
- A project's settings and hooks that an untrusted project keeps from running are listed
  as set aside, not left out: the person should see they exist and why they do nothing.
- It is a drawing of `StatusFacts`, gathered when it opens; it does not follow the session
  while open (close and open it again: it is cheap).
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from ..status_facts import SETTINGS_WORDS, STATUS_KEY, StatusFacts
from .dialog import DIALOG_STYLESHEET, DialogScreen
from .mcp import shown_path

LABEL_WIDTH = 10


def _shown(path: Path, project: Path | None) -> str:
    """A path below the project as the person types it there; else with `~`."""
    if project is not None:
        try:
            return path.relative_to(project).as_posix()
        except ValueError:
            pass
    return shown_path(path)


def _fact(label: str, value: str, style: str = "") -> Text:
    line = Text(f"{label:<{LABEL_WIDTH}}", style="bold")
    line.append(value, style=style)
    return line


def facts_text(facts: StatusFacts) -> Text:
    """The short facts: one `label  value` line each."""
    if facts.starting:
        lines = [_fact("Session", facts.session_id or "not open yet")]
        lines.append(Text("The session is still starting (or did not start): nothing else"))
        lines.append(Text("is known yet."))
        return Text("\n").join(lines)
    where = shown_path(facts.session_dir) if facts.session_dir is not None else ""
    tokens, window = facts.context_tokens
    context = facts.context.removeprefix("context ")
    if window:
        measured = f" ({tokens:,} of {window:,} tokens)" if context else ""
        context = f"{context}{measured}" or f"not measured yet (a {window:,}-token window)"
    context = context or "not measured yet"
    hooks = f"{facts.hooks} hook command{'s' if facts.hooks != 1 else ''}"
    if facts.hooks_set_aside:
        hooks += f"; {facts.hooks_set_aside} of the project's set aside (not trusted)"
    lines = [
        _fact("Session", facts.session_id),
        _fact("", where, "dim"),
        _fact("Project", shown_path(facts.project) if facts.project else ""),
        _fact("Model", facts.model),
        _fact("Mode", facts.mode),
        _fact("Context", context),
        _fact("Sandbox", facts.sandbox.removeprefix("sandbox: ")),
        _fact("MCP", facts.mcp.removeprefix("MCP ") + " ready" if facts.mcp else "none"),
        _fact("Hooks", hooks),
        *(_fact("Records", error, "bold") for error in facts.unwritten),
    ]
    return Text("\n").join(lines)


def instructions_text(facts: StatusFacts) -> Text:
    text = Text("Instructions", style="bold")
    text.append("  (later wins)" if len(facts.instructions) > 1 else "", style="dim")
    if not facts.instructions:
        text.append("\n  none: no CLAUDE.md, AGENTS.md or .claude/rules applies here")
    for row in facts.instructions:
        text.append(f"\n  {row.origin:<13}", style="bold")
        text.append(_shown(row.path, facts.project))
        if row.detail:
            text.append(f"  {row.detail}", style="dim")
    for problem in facts.instruction_problems:
        text.append(f"\n  problem: {problem}", style="italic")
    return text


def settings_text(facts: StatusFacts) -> Text:
    text = Text("Settings files", style="bold")
    text.append("  (highest first)" if len(facts.settings) > 1 else "", style="dim")
    if not facts.settings:
        text.append("\n  none: proctor's defaults")
    for row in facts.settings:
        source = SETTINGS_WORDS.get(row.source, row.source)
        text.append(f"\n  {source:<22}", style="bold" if row.in_force else "dim")
        text.append(_shown(row.path, facts.project), style="" if row.in_force else "dim strike")
        if not row.in_force:
            text.append("  set aside: not trusted", style="italic")
    if not facts.claude_settings_read:
        text.append(
            "\n  Claude's settings and ~/.claude's instructions are not read "
            "(readClaudeSettings / PROCTOR_NO_CLAUDE_SETTINGS)",
            style="dim",
        )
    return text


class StatusScreen(DialogScreen[None]):
    """The session at a glance; esc, q or the status key closes it."""

    CSS_PATH = [DIALOG_STYLESHEET, "status.tcss"]
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding(STATUS_KEY, "close", "Close", show=False),
    ]

    def __init__(self, facts: StatusFacts) -> None:
        super().__init__()
        self.facts = facts

    def compose(self) -> ComposeResult:
        facts = self.facts
        with Vertical(id="dialog"):
            with Vertical(id="header"):
                yield Static(Text("Status", style="bold"), id="title")
            with VerticalScroll(id="body"):
                yield Static(facts_text(facts), id="facts")
                if not facts.starting:
                    yield Static(instructions_text(facts), id="instructions")
                    yield Static(settings_text(facts), id="settings")
            with Vertical(id="footer"):
                yield Static(
                    "esc closes · /memory lists the instructions in the conversation", id="hint"
                )

    def action_close(self) -> None:
        self.dismiss(None)
