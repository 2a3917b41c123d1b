"""A resumed session's past, handed to the screen as one batch of events.

The engine rebuilds the earlier turns from the transcript as the events that drew them
(core/agent/transcript_replay.py); the only thing the app adds is its own turn start for
each earlier prompt, exactly as it does when a prompt is sent, so the call book, the
conversation, the queue and the status bar take the past the way they took it live.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .turn_events import TurnStarted

if TYPE_CHECKING:
    from core.agent.transcript_replay import Past
    from core.events import EngineEvent


def past_batch(past: Past) -> list[EngineEvent]:
    from core.agent.transcript_replay import PastPrompt

    return [
        TurnStarted(at=event.at, prompt=event.text, expansion=event.expansion)
        if isinstance(event, PastPrompt)
        else event
        for event in past.events
    ]


def carrying_on(session_id: str, turns: int, hidden: int, mode: str) -> str:
    """The note under the past: which session this is, and what was not drawn."""
    said = f"carrying on session {session_id}: {turns} earlier turn{'s' if turns != 1 else ''}"
    if hidden:
        said += f" (the first {hidden} not drawn here; `proctor sessions` lists the session)"
    return f"{said}; the mode is {mode}"
