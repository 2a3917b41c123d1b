"""Abort signals: the asyncio counterpart of the AbortController the seeds build on.

Cancellation in proctor has several causes that must stay apart (the user pressed Esc, a
sibling Bash call failed, the model's stream fell over), and some code wants to *ask* whether
it was cancelled and why, rather than just receive a `CancelledError`. So a signal carries a
reason, can be observed synchronously (`aborted`), awaited (`wait()`), or listened to, and
controllers form a tree: aborting a parent aborts every child, never the other way round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

Listener = Callable[[str], None]


class AbortSignal:
    """The read side of an `AbortController`: tools and the executor only ever see this."""

    __slots__ = ("_event", "_listeners", "_reason")

    def __init__(self) -> None:
        self._reason: str | None = None
        self._listeners: list[Listener] = []
        self._event: asyncio.Event | None = None

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(reason)` on abort (at once if already aborted); returns a remover."""
        if self._reason is not None:
            listener(self._reason)
            return _noop
        self._listeners.append(listener)

        def remove() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return remove

    async def wait(self) -> str:
        """Wait until aborted and return the reason."""
        if self._reason is not None:
            return self._reason
        if self._event is None:
            self._event = asyncio.Event()
        await self._event.wait()
        assert self._reason is not None
        return self._reason

    def _fire(self, reason: str) -> None:
        if self._reason is not None:
            return
        self._reason = reason
        if self._event is not None:
            self._event.set()
        listeners, self._listeners = self._listeners, []
        for listener in listeners:
            listener(reason)


class AbortController:
    """The write side: whoever owns the controller decides when to abort and why."""

    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str = "aborted") -> None:
        self.signal._fire(reason)

    def child(self) -> AbortController:
        """A controller aborted with this one (same reason) but abortable on its own."""
        child = AbortController()
        remove = self.signal.add_listener(child.abort)
        # Once the child fires by itself, the parent need not keep it alive.
        child.signal.add_listener(lambda _reason: remove())
        return child


def _noop() -> None:
    return None
