"""The app state: the few values that tools, the engine and the front end all share.

A single store holding one immutable `AppState` value. Reads are plain attribute access (the
permission decision reads the mode on every call, so the mode key takes effect at the very
next decision); writes replace the whole value through an updater function. The front
end learns of changes from events (`ModeChanged`, `TodosChanged`), not from the store.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from .access.context import ToolPermissionContext


@dataclass(frozen=True, slots=True)
class AppState:
    permission_context: ToolPermissionContext = field(default_factory=ToolPermissionContext)
    todos: tuple[Any, ...] = ()

    def with_permission_context(self, permission_context: ToolPermissionContext) -> AppState:
        return replace(self, permission_context=permission_context)


Updater = Callable[[AppState], AppState]


class AppStateStore:
    __slots__ = ("_state",)

    def __init__(self, state: AppState | None = None) -> None:
        self._state = state if state is not None else AppState()

    def get(self) -> AppState:
        return self._state

    def set(self, updater: Updater) -> AppState:
        self._state = updater(self._state)
        return self._state
