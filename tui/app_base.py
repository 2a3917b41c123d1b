"""What every part of the app reaches for: the session, the call book, the main screen's widgets.

Why it is a base class: the app is split by concern (the session and its events in app.py,
the keys in keys.py) but Textual finds an app's actions, handlers and bindings on the app
class itself, so the parts are classes the app inherits from. This one, the lowest, declares
the state they share (set by `ProctorApp`) and finds the main screen's widgets, so each part
type-checks on its own without importing the app.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import App

from .screens.main import MainScreen
from .widgets.conversation import Conversation
from .widgets.prompt_input import PromptInput
from .widgets.status_bar import StatusBar
from .widgets.todos import TodoList
from .widgets.tool_queue import ToolQueue

if TYPE_CHECKING:
    from core.agent.live import LiveSession, PreparedSession

    from .calls import CallBook


class AppBase(App[int]):
    """The state `ProctorApp` sets and its parts read, and the main screen's widgets."""

    prepared: PreparedSession | None
    """The session's settings and paths, once read (after the first frame)."""
    live: LiveSession | None
    """The open session, once assembled; None while starting or if it failed to start."""
    book: CallBook
    """Every call the session has made, as the widgets draw it."""

    def compact(self, instructions: str = "") -> None:
        """Compact the conversation now (app.py runs it as a worker)."""
        raise NotImplementedError

    def resume_session(self, wanted: str) -> object:
        """Carry session `wanted` on in this window (app.py runs it as a worker)."""
        raise NotImplementedError

    async def shutdown(self) -> None:
        """Stop the turn, the shells and the sub-agents; close the transcript."""
        raise NotImplementedError  # ProctorApp's

    @property
    def main_screen(self) -> MainScreen | None:
        for screen in self.screen_stack:
            if isinstance(screen, MainScreen):
                return screen
        return None

    def _widget(self, selector: str, kind: type[Any]) -> Any:
        screen = self.main_screen
        assert screen is not None
        return screen.query_one(selector, kind)

    @property
    def conversation(self) -> Conversation:
        return self._widget("#conversation", Conversation)  # type: ignore[no-any-return]

    @property
    def tool_queue(self) -> ToolQueue:
        return self._widget("#queue", ToolQueue)  # type: ignore[no-any-return]

    @property
    def todo_list(self) -> TodoList:
        return self._widget("#todos", TodoList)  # type: ignore[no-any-return]

    @property
    def status_bar(self) -> StatusBar:
        return self._widget("#status", StatusBar)  # type: ignore[no-any-return]

    @property
    def prompt_input(self) -> PromptInput:
        return self._widget("#prompt", PromptInput)  # type: ignore[no-any-return]
