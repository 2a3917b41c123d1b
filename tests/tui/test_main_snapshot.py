"""The main screen mid-batch, pinned as snapshots in the dark and the light theme.

The real app's screen depends on a live engine, real subprocesses and the wall clock, none
of which repeat. So a small host app builds the same `MainScreen` and feeds it a fixed
stream of engine events the way `ProctorApp.deliver` does (the `CallBook` first, then each
widget's `apply`), with fixed `at=` times and a fixed "now", so every run draws the same
frame. What the stream shows is the busiest moment a person watches: an earlier turn folded
to its summary, and in the current one a parallel batch part done, a command streaming
output, a call waiting for approval, and todos in all three states.

Two things would still move between runs and are pinned: the queue's spinner frame (its
timer could tick while the snapshot waits for the screen to settle), and the prompt's
cursor blink.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widgets import Static

from core.access.decision import DecidedBy
from core.agent.events import (
    AssistantMessage,
    TextDelta,
    TurnEnded,
    UsageUpdated,
    UserMessage,
)
from core.events import (
    EngineEvent,
    OutputProgress,
    PermissionAsked,
    TodosChanged,
    ToolCompleted,
    ToolProgress,
    ToolQueued,
    ToolStarted,
)
from core.ports import PermissionRequest
from core.registry import all_base_tools
from core.tools.todo_write import Todo
from tui.app import ProctorApp
from tui.calls import CallBook
from tui.screens.main import MainScreen
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.theming import register_themes
from tui.turn_events import TurnStarted
from tui.widgets.conversation import AssistantText, Conversation
from tui.widgets.prompt_input import PromptInput
from tui.widgets.status_bar import StatusBar
from tui.widgets.todos import TodoList
from tui.widgets.tool_queue import ToolQueue

SIZE = (120, 36)
NOW = 1000.0
"""The screen's clock: running calls' elapsed times are measured to this."""
SESSION_ID = "20260126-094512-a7c3"
SnapCompare = Callable[..., bool]
FIRST_FRAME = "⠋"
"""The spinner's first frame: what a running call shows while the spinner stands still."""


class Host(App[None]):
    """proctor's themes and main screen, fed events like `ProctorApp.deliver` feeds them."""

    CSS_PATH = ProctorApp.CSS_PATH
    BINDINGS = ProctorApp.BINDINGS  # so the footer reads as the real app's

    def __init__(self, theme: str) -> None:
        super().__init__()
        self.book = CallBook()
        register_themes(self)
        self.theme = theme

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("behind the main screen")

    async def on_mount(self) -> None:
        await self.push_screen(MainScreen(clock=lambda: NOW))
        self.screen.query_one(PromptInput).cursor_blink = False

    def deliver(self, batch: Sequence[EngineEvent]) -> None:
        """`ProctorApp.deliver`, minus the app's session: book first, then the widgets."""
        screen = self.screen
        conversation = screen.query_one(Conversation)
        widgets = (
            conversation,
            screen.query_one(ToolQueue),
            screen.query_one(TodoList),
            screen.query_one(StatusBar),
        )
        segment: list[EngineEvent] = []

        def draw(events: list[EngineEvent]) -> None:
            if events:
                for widget in widgets:
                    widget.apply(events, self.book)

        for event in batch:
            if isinstance(event, TurnStarted):
                draw(segment)
                segment = []
                self.book.begin_turn(event.prompt, event.at)
                conversation.add_prompt(event.prompt)
                continue
            self.book.apply(event)
            if isinstance(event, TurnEnded):
                self.book.end_turn(event.stop_reason, event.at)
            segment.append(event)
        draw(segment)


# -- the fixed session ---------------------------------------------------------------------------


def queued(
    tool_use_id: str, name: str, batch: str, at: float, summary: str, **inp: Any
) -> ToolQueued:
    return ToolQueued(
        at=at,
        tool_use_id=tool_use_id,
        tool_name=name,
        batch_id=batch,
        input=inp,
        summary=summary,
        concurrency_safe=name in ("Read", "Grep"),
        headline_field={tool.name: tool.headline_field for tool in all_base_tools()}.get(name),
    )


def started(tool_use_id: str, name: str, batch: str, at: float) -> ToolStarted:
    return ToolStarted(at=at, tool_use_id=tool_use_id, tool_name=name, batch_id=batch)


def completed(
    tool_use_id: str, name: str, batch: str, at: float, took: float, content: str = ""
) -> ToolCompleted:
    return ToolCompleted(
        at=at,
        tool_use_id=tool_use_id,
        tool_name=name,
        batch_id=batch,
        duration_s=took,
        is_error=False,
        content=content,
    )


def tool_use(tool_use_id: str, name: str, **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_use_id, "name": name, "input": inp}


def result(tool_use_id: str, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text}


FIRST_ANSWER = (
    "`top_words` is defined in `textstats/counts.py` and called once, by the CLI in "
    "`textstats/__main__.py`."
)
SECOND_TEXT = (
    "I'll read the counting code, its tests and the CLI together (read-only, so they run in "
    "parallel), run the suite, then fix the sort."
)
TEST_COMMAND = "python3 -m unittest -v"
EDIT = {
    "file_path": "textstats/counts.py",
    "old_string": "key=lambda item: (item[1], item[0]), reverse=True)",
    "new_string": "key=lambda item: (-item[1], item[0]))",
}
USAGE = {
    "input_tokens": 8_412,
    "output_tokens": 1_236,
    "cache_creation_input_tokens": 2_048,
    "cache_read_input_tokens": 14_880,
}


def first_turn() -> list[EngineEvent]:
    """A finished turn: the queue folds it to one summary line."""
    grep = tool_use("toolu_g1", "Grep", pattern="top_words")
    return [
        TurnStarted(at=900.0, prompt="Where is top_words defined, and who calls it?"),
        TextDelta(at=900.5, text="Searching for it."),
        queued("toolu_g1", "Grep", "b0", 901.0, "top_words", pattern="top_words"),
        AssistantMessage(
            at=901.0,
            content=({"type": "text", "text": "Searching for it."}, grep),
            stop_reason="tool_use",
        ),
        started("toolu_g1", "Grep", "b0", 901.1),
        completed("toolu_g1", "Grep", "b0", 901.4, 0.3, "textstats/counts.py:12"),
        UserMessage(at=901.4, content=(result("toolu_g1", "textstats/counts.py:12"),)),
        TextDelta(at=902.0, text=FIRST_ANSWER),
        UsageUpdated(at=903.2, request_id="msg_1", model="claude-sonnet-4-5", usage=dict(USAGE)),
        TurnEnded(at=903.2, stop_reason="end_turn", requests=2, usage=dict(USAGE)),
    ]


def second_turn() -> list[EngineEvent]:
    """The current turn, mid-batch."""
    reads = [
        ("toolu_r1", "textstats/counts.py"),
        ("toolu_r2", "tests/test_counts.py"),
        ("toolu_r3", "textstats/__main__.py"),
    ]
    blocks = [tool_use(i, "Read", file_path=path) for i, path in reads]
    blocks.append(tool_use("toolu_b1", "Bash", command=TEST_COMMAND))
    blocks.append(tool_use("toolu_e1", "Edit", **EDIT))
    request = PermissionRequest(
        tool_use_id="toolu_e1",
        tool_name="Edit",
        input=EDIT,
        summary=EDIT["file_path"],
        message="Edit would change textstats/counts.py.",
        decided_by=DecidedBy("default", "no rule allows it"),
        suggestions=("Edit(textstats/**)",),
    )
    todos = (
        Todo("Read the counting code and tests", "completed", "Reading the code"),
        Todo("Run the test suite", "in_progress", "Running the test suite"),
        Todo("Fix the tie order in top_words", "pending", "Fixing the tie order"),
        Todo("Plan a --json option for the CLI", "pending", "Planning --json"),
    )
    return [
        TurnStarted(at=990.0, prompt="Fix the tie order in top_words and run the tests."),
        TextDelta(at=990.4, text=SECOND_TEXT),
        *(queued(i, "Read", "b1", 991.0, path, file_path=path) for i, path in reads),
        queued("toolu_b1", "Bash", "b2", 991.0, TEST_COMMAND, command=TEST_COMMAND),
        queued("toolu_e1", "Edit", "b3", 991.0, EDIT["file_path"], **EDIT),
        AssistantMessage(
            at=991.0,
            content=({"type": "text", "text": SECOND_TEXT}, *blocks),
            stop_reason="tool_use",
        ),
        TodosChanged(at=991.0, todos=todos),
        *(started(i, "Read", "b1", 991.2) for i, _ in reads),
        completed("toolu_r1", "Read", "b1", 991.3, 0.1),
        completed("toolu_r2", "Read", "b1", 991.5, 0.3),
        started("toolu_b1", "Bash", "b2", 994.5),
        ToolProgress(
            at=996.0,
            tool_use_id="toolu_b1",
            tool_name="Bash",
            batch_id="b2",
            data=OutputProgress(
                text="Ran: test_counts_words ... ok\ntest_top_words_ties ... ",
                total_bytes=52,
                elapsed_s=1.0,
                spool=Path("/tmp/spool.txt"),
            ),
        ),
        PermissionAsked(
            at=997.0, tool_use_id="toolu_e1", tool_name="Edit", batch_id="b3", request=request
        ),
    ]


# -- the snapshots -------------------------------------------------------------------------------


@pytest.fixture
def still_spinner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The spinner's timer may fire while the snapshot waits for the screen to settle; a
    tick would advance its frame and change the running rows' glyph. Without ticks every
    running row shows the first frame."""
    monkeypatch.setattr(ToolQueue, "_tick", lambda self: None)


async def feed_session(pilot: Pilot[None]) -> None:
    app = pilot.app
    assert isinstance(app, Host)
    app.deliver([*first_turn(), *second_turn()])
    status = app.screen.query_one(StatusBar)
    status.session_id = SESSION_ID
    status.model = "claude-sonnet-4-5"
    status.mode = "plan"
    status.activity = "1 waiting for approval"
    app.screen.query_one(PromptInput).busy = True
    await pilot.pause()
    for block in app.screen.query(AssistantText):
        await block.wait_finished()
    await pilot.pause()


async def test_the_fed_session_draws_what_the_snapshot_is_meant_to_show(
    still_spinner: None,
) -> None:
    """Guards the baseline: a snapshot of the wrong moment would pass forever."""
    app = Host("proctor-dark")
    async with app.run_test(size=SIZE) as pilot:
        await feed_session(pilot)
        rows = app.screen.query_one(ToolQueue).rows_text()
        assert rows[0].startswith("▸ Turn 1 · 1 call · 1 done · 3.2 s")
        assert rows[1].startswith("▾ Turn 2 · 5 calls so far")
        assert rows[2].strip() == "┌ 3 in parallel"
        assert [r.split()[1] for r in rows[3:6]] == ["✓", "✓", FIRST_FRAME]
        assert rows[6].split()[0] == FIRST_FRAME and rows[6].endswith("5.5 s")
        assert rows[7].strip() == "Ran: test_counts_words ... ok"
        assert rows[8].strip() == "test_top_words_ties ..."
        assert "? Edit" in rows[9] and "waiting for" in rows[9]
        todos = app.screen.query_one(TodoList)
        assert todos.border_title == "Todos 1/4"
        states = {str(t.status) for t in todos.todos}
        assert states == {"completed", "in_progress", "pending"}


def test_snapshot_main_screen_mid_batch(snap_compare: SnapCompare, still_spinner: None) -> None:
    assert snap_compare(Host("proctor-dark"), terminal_size=SIZE, run_before=feed_session)


def test_snapshot_main_screen_mid_batch_light(
    snap_compare: SnapCompare, still_spinner: None
) -> None:
    assert snap_compare(Host("proctor-light"), terminal_size=SIZE, run_before=feed_session)


def test_snapshot_main_screen_at_80x24(snap_compare: SnapCompare, still_spinner: None) -> None:
    """A common terminal: the side panes folded away, the calls inline in the conversation,
    the status bar without its least needed parts, the footer with the keys that matter."""
    assert snap_compare(Host("proctor-dark"), terminal_size=(80, 24), run_before=feed_session)
