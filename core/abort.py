"""Abort signals: the asyncio counterpart of the AbortController the seeds build on.

Cancellation in proctor has several causes that must stay apart (the user pressed Esc, a
sibling Bash call failed, the model's stream fell over), and some code wants to *ask* whether
it was cancelled and why, rather than just receive a `CancelledError`. So a signal carries a
reason, can be observed synchronously (`aborted`), awaited (`wait()`), or listened to, and
controllers form a tree: aborting a parent aborts every child, never the other way round.

`start_whole` is the one place a child process's start meets cancellation (Bash, Grep and
hooks start processes that may start more).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

Listener = Callable[[str], None]
P = TypeVar("P")


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


async def start_whole(start: Awaitable[P], stop: Callable[[P], Awaitable[None]]) -> P:
    """Await a process's start so that a cancel cannot cut it in half.

    Cancelled inside `asyncio.create_subprocess_*`, asyncio kills the new process alone and
    waits for its pipes, which whatever it has started meanwhile keeps open (or leaves that
    running). So the start is allowed to finish, the process is stopped with `stop` as one
    cancelled later would be (its whole group), and the cancel goes on."""
    starting = asyncio.ensure_future(start)
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(starting)
        if not starting.cancelled() and starting.exception() is None:
            await stop(starting.result())
        raise
