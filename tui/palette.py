"""proctor's entries in the command palette (ctrl+p), after Textual's own.

Why it is shaped this way: they are system commands (`App.get_system_commands`), so they
are listed as soon as the palette opens and are found by the same fuzzy search as Textual's
theme and quit commands. Each one runs an action the keys run too (keys.py), so a key and
its palette entry cannot drift apart; the mode entries exist only once the session is open,
and only for the modes the mode key would reach. "Screenshot" replaces Textual's own
(`replaced_system_commands`), which saves into a downloads folder that may not exist and
then only says it failed; ours says where the file went (tui/screenshot.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from textual.app import SystemCommand

from core.access.modes import MODE_LABELS

from .keys import KeyActions

replaced_system_commands = frozenset({"Screenshot"})
"""Textual's system commands that `palette_commands` offers in its own way."""


def palette_commands(app: KeyActions) -> Iterator[SystemCommand]:
    if app.live is not None:
        for mode in _reachable_modes(app):
            yield SystemCommand(
                f"Mode: {MODE_LABELS[mode]}",
                f"Switch the permission mode to {MODE_LABELS[mode]}",
                lambda mode=mode: app.set_mode(mode),
            )
    yield SystemCommand(
        "Saved outputs", "Browse tool results saved to disk", app.action_saved_outputs
    )
    yield SystemCommand(
        "Thinking", "Open or fold the model's thinking (ctrl+r)", app.action_toggle_thinking
    )
    if app.live is not None:
        yield SystemCommand(
            "Compact the conversation",
            "Replace the conversation so far by the model's summary; asks what it must keep",
            lambda: _ask_compact(app),
        )
    yield SystemCommand("Todos", "Show or hide the todo list", app.action_toggle_todos)
    yield SystemCommand(
        "MCP servers",
        "The session's MCP servers: their state, why one failed, their logs",
        app.action_mcp_servers,
    )
    yield SystemCommand("Sessions", "This project's sessions", app.action_sessions)
    yield SystemCommand(
        "Status",
        "The session at a glance: model, mode, context, instructions, settings (F3)",
        app.action_status,
    )
    yield SystemCommand(
        "Side panes", "Show or hide the tool queue and todos (F2)", app.action_toggle_side
    )
    yield SystemCommand(
        "Screenshot",
        "Save an SVG of the screen to the session's folder (or the current or a temp one)",
        app.action_save_screenshot,
    )


def _reachable_modes(app: KeyActions) -> list[Any]:
    """The mode cycle's modes, less bypassPermissions unless the session was started with it."""
    assert app.live is not None
    modes = list(app.live.mode_cycle)
    if not app.live.context.permission_context.bypass_available:
        modes = [m for m in modes if m != "bypassPermissions"]
    return modes


def _ask_compact(app: KeyActions) -> None:
    """What the summary should keep, asked first (`/compact` takes it on its line)."""
    from .screens.compact import CompactScreen

    def answered(keep: str | None) -> None:
        if keep is not None:  # esc: nothing is compacted
            app.compact(keep)

    app.push_screen(CompactScreen(), answered)
