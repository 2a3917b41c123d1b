"""Events the app adds to the engine's stream, so the screen sees them in order.

A prompt is sent from the app, not the engine; putting a `TurnStarted` into the same
bridge as the engine's events keeps "the prompt, then what the agent did about it" in
order even when one frame holds the end of one turn and the start of the next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.events import EngineEvent


@dataclass(slots=True, kw_only=True)
class TurnStarted(EngineEvent):
    kind: ClassVar[str] = "turn_started"
    prompt: str
    """What the person typed (a slash command's line, not its expansion)."""
    expansion: str = ""
    """A slash command's text as the model gets it, folded under the typed line."""
