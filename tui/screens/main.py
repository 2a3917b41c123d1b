"""The main screen: the conversation beside the live tool queue and todos, the prompt below.

Only layout lives here. The app owns the session and feeds these widgets (see tui/app.py and
tui/bridge.py); keeping the screen dumb lets tests and the screenshot script build it
around any stream of events.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Footer

from ..widgets.conversation import Conversation
from ..widgets.prompt_input import PromptInput
from ..widgets.status_bar import StatusBar
from ..widgets.todos import TodoList
from ..widgets.tool_queue import ToolQueue

MAIN_SCREEN_STYLESHEET = Path(__file__).with_name("main.tcss")
"""Loaded by the app: this is its default screen, whose own CSS_PATH Textual would skip."""


class MainScreen(Screen[None]):
    AUTO_FOCUS = "#prompt"

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """`clock` is "now" for running calls' elapsed times (snapshots fix it)."""
        super().__init__()
        self.clock = clock

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            yield Conversation(id="conversation")
            with Vertical(id="side"):
                queue = ToolQueue(id="queue", clock=self.clock)
                queue.border_title = "Tool calls"
                yield queue
                todos = TodoList(id="todos")
                yield todos
        yield PromptInput(id="prompt")
        yield StatusBar(id="status")
        yield Footer()
