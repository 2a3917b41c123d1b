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

`close()` stops them in the reverse order they came into being, each on its own: one that
fails to close is logged and the others still close.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Generic, TypeVar

_log = logging.getLogger(__name__)

S = TypeVar("S")


class ServiceKey(Generic[S]):
    """The name of one kind of session service; compared by identity."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

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
        """Close every service that can be closed, newest first; forget them all."""
        items = list(self._items.items())
        self._items.clear()
        for key, service in reversed(items):
            close = getattr(service, "close", None)
            if close is None:
                continue
            try:
                await close()
            except Exception:
                _log.exception("closing the session's %s failed", key.name)
