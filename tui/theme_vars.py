"""The theme variables proctor's styles use beyond Textual's own.

Tool states, risk and permission modes each get a variable, so a theme (data in `themes/`)
decides every colour and the widgets' CSS never names one. The defaults here apply when a
theme leaves a variable out (Textual's built-in themes, a user's half-finished theme), so
the stylesheet always parses; they are written in terms of Textual's base colours' names
only through the themes, never as literals in widget CSS.
"""

from __future__ import annotations

THEME_VARIABLE_DEFAULTS: dict[str, str] = {
    # tool call states
    "tool-queued": "#8a8f98",
    "tool-waiting": "#e0af68",
    "tool-running": "#7aa2f7",
    "tool-done": "#9ece6a",
    "tool-failed": "#f7768e",
    "tool-denied": "#ff9e64",
    "tool-cancelled": "#a9a1e1",
    # permission modes, as the status bar shows them
    "mode-default": "#8a8f98",
    "mode-accept-edits": "#bb9af7",
    "mode-plan": "#2ac3de",
    "mode-bypass": "#f7768e",
    "mode-dont-ask": "#e0af68",
    # how risky an asked-for call is
    "risk-low": "#9ece6a",
    "risk-medium": "#e0af68",
    "risk-high": "#f7768e",
    # diffs in the permission dialog
    "diff-added": "#9ece6a",
    "diff-removed": "#f7768e",
}
