"""What one session keeps for its tools between calls: shells, sub-agents, its sandbox.

Background shells, running sub-agents, the command sandbox (and, later, MCP connections)
belong to a session. They reach a tool through its context (`context.options.services`),
never through a module global, so two sessions in one process never see each other's shells
and a test's session is gone with its context.

A service is found by a typed key (`ServiceKey[ShellSession]`), as aiohttp's `AppKey` finds
application state: the key is declared beside the service's type, in whichever layer owns
it, so this module (the lowest layer) needs to know none of them. A key may say how to make
its service on first use (a session's shells start in its working directory); a key without
one is provided by whoever assembles the session (the sub-agent runner needs the model).

`close()` stops them users first (sub-agents, then shells, then the sandbox: each key says
its stage), each on its own: one that fails to close is logged and the others still close.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Generic, TypeVar

_log = logging.getLogger(__name__)

S = TypeVar("S")


class ServiceKey(Generic[S]):
    """The name of one kind of session service; compared by identity.

    `close_stage` orders closing: a service that uses others closes before them (the
    sub-agents, which run commands, at 0; the shells at 1; the sandbox they run in at 2)."""

    __slots__ = ("close_stage", "name")

    def __init__(self, name: str, *, close_stage: int = 1) -> None:
        self.name = name
        self.close_stage = close_stage

    def __repr__(self) -> str:
        return f"ServiceKey({self.name!r})"


class SessionServices:
    """One session's services, by key."""

    __slots__ = ("_items",)

    def __init__(self) -> None:
        self._items: dict[ServiceKey[Any], Any] = {}

    def provide(self, key: ServiceKey[S], service: S) -> None:
        """Give the session `service` under `key` (replacing what was there)."""
        self._items[key] = service

    def get(self, key: ServiceKey[S]) -> S | None:
        found: S | None = self._items.get(key)
        return found

    def setdefault(self, key: ServiceKey[S], make: Callable[[], S]) -> S:
        """The service under `key`, made by `make` the first time it is asked for."""
        found: S | None = self._items.get(key)
        if found is None:
            found = self._items[key] = make()
        return found

    async def close(self) -> None:
        """Close every service that can be closed, by `close_stage` (newest first within a
        stage), then forget them all. Until the last has closed, each is still found: a
        sub-agent winding down still reaches the session's shells, never fresh ones."""
        items = list(self._items.items())
        items.reverse()  # newest first; the sort below is stable
        items.sort(key=lambda item: item[0].close_stage)
        try:
            for key, service in items:
                close = getattr(service, "close", None)
                if close is None:
                    continue
                try:
                    await close()
                except Exception:
                    _log.exception("closing the session's %s failed", key.name)
        finally:
            self._items.clear()
