"""The engine's event sink inside the app: collect events, draw them a frame at a time.

A busy turn emits thousands of events a second (ten parallel calls, progress ticks, text
deltas). Posting a Textual message per event would make the message queue the bottleneck
and redraw the same rows many times per frame, so the bridge only appends to a list; the
first event of a quiet period arms a timer, and when it fires the whole batch is handed to
`deliver` at once: the app feeds the call book, then each widget draws what changed.

The engine runs on the app's own event loop (its turns are app workers), so the sink is
called on the loop's thread and needs no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App

from core.events import EngineEvent

FRAME_S = 1 / 30
"""How long events may wait to be drawn: a frame at 30 fps."""


class EventBridge:
    def __init__(
        self,
        app: App[Any],
        deliver: Callable[[list[EngineEvent]], None],
        frame_s: float = FRAME_S,
    ) -> None:
        self._app = app
        self._deliver = deliver
        self._frame_s = frame_s
        self._pending: list[EngineEvent] = []
        self._armed = False

    def __call__(self, event: EngineEvent) -> None:
        self._pending.append(event)
        if not self._armed:
            self._armed = True
            self._app.set_timer(self._frame_s, self.flush, name="event bridge")

    def flush(self) -> None:
        """Deliver everything collected so far (the timer calls it; so may tests)."""
        self._armed = False
        if not self._pending:
            return
        batch, self._pending = self._pending, []
        self._deliver(batch)

    @property
    def pending(self) -> int:
        return len(self._pending)
