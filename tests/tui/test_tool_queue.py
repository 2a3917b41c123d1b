"""The tool queue driven as the app drives it: real engine events into a `CallBook`, then
`ToolQueue.apply(events, book)`, then what a person would read on the rows.

Each test mounts the widget in a small host app, feeds events built directly (`ToolQueued`,
`ToolStarted`, ...) with explicit timestamps so durations are exact, and reads the rows
through `rows_text()` (the same text `render_line` draws). The layout is rebuilt piecemeal
in the app, so one test checks that piecemeal growth ends in the same rows as a fresh
layout of the same book.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from app_helpers import output
from rich.color import Color
from textual.app import App, ComposeResult

from core.events import (
    EngineEvent,
    PermissionAnswered,
    PermissionAsked,
    ToolCancelled,
    ToolCompleted,
    ToolProgress,
    ToolQueued,
    ToolStarted,
)
from tui.calls import CallBook
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.widgets.queue_layout import SPINNER
from tui.widgets.tool_queue import ToolQueue

SIZE = (100, 30)


class Host(App[None]):
    """Mounts one queue and keeps the messages it posts."""

    def __init__(self) -> None:
        super().__init__()
        self.book = CallBook()
        self.selected: list[str] = []
        self.toggled: list[tuple[int, bool]] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        self.queue = ToolQueue()
        yield self.queue

    def feed(self, *events: EngineEvent) -> None:
        """What the app's event bridge does with one batch."""
        for event in events:
            self.book.apply(event)
        self.queue.apply(events, self.book)

    def on_tool_queue_call_selected(self, message: ToolQueue.CallSelected) -> None:
        self.selected.append(message.tool_use_id)

    def on_tool_queue_turn_toggled(self, message: ToolQueue.TurnToggled) -> None:
        self.toggled.append((message.turn, message.expanded))


def ids(call_id: str, tool: str, batch: str, parent: str | None = None) -> dict[str, Any]:
    return {
        "tool_use_id": call_id,
        "tool_name": tool,
        "batch_id": batch,
        "parent_tool_use_id": parent,
    }


def queued(
    call_id: str, tool: str, batch: str, summary: str, parent: str | None = None, at: float = 1.0
) -> ToolQueued:
    return ToolQueued(
        at=at,
        input={},
        summary=summary,
        concurrency_safe=tool in ("Read", "Grep", "Glob"),
        **ids(call_id, tool, batch, parent),
    )


def started(call_id: str, tool: str, batch: str, at: float = 2.0, **kw: Any) -> ToolStarted:
    return ToolStarted(at=at, **ids(call_id, tool, batch, **kw))


def completed(
    call_id: str, tool: str, batch: str, at: float = 3.5, stage: Any = None, **kw: Any
) -> ToolCompleted:
    return ToolCompleted(
        at=at,
        duration_s=1.5,
        is_error=stage is not None,
        failed_stage=stage,
        **ids(call_id, tool, batch, **kw),
    )


def progress(call_id: str, text: str, batch: str = "b-bash") -> ToolProgress:
    return ToolProgress(data=output(text), **ids(call_id, "Bash", batch))


def comparable(rows: Sequence[str]) -> list[str]:
    """Rows without what moves with the clock (spinner frames, running times)."""
    spinner = re.compile(f"[{SPINNER}]")
    clock = re.compile(r"(\d+\.\d s|\d+m \d+s|\d+h \d+m)$")
    return [clock.sub("", spinner.sub("*", row)).rstrip() for row in rows]


def row_of(rows: Sequence[str], needle: str) -> str:
    matches = [row for row in rows if needle in row]
    assert len(matches) == 1, (needle, rows)
    return matches[0]


async def test_parallel_batch_has_a_header_and_a_bracket_serial_call_stands_alone() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("look around", at=0.0)
        app.feed(
            queued("r1", "Read", "b1", "src/a.py"),
            queued("r2", "Read", "b1", "src/b.py"),
            queued("r3", "Read", "b1", "src/c.py"),
        )
        app.feed(queued("sh", "Bash", "b2", "pytest -q"))
        await pilot.pause()
        rows = app.queue.rows_text()
        assert rows[0].startswith("▾ Turn 1 · 4 calls")
        assert rows[1] == "┌ 3 in parallel"
        assert rows[2].startswith("│ ○ Read") and "src/a.py" in rows[2]
        assert rows[3].startswith("│ ○ Read") and "src/b.py" in rows[3]
        assert rows[4].startswith("└ ○ Read") and "src/c.py" in rows[4]
        # the serial call: no header of its own, no bracket
        assert rows[5].startswith("  ○ Bash") and "pytest -q" in rows[5]
        assert len(rows) == 6
        assert sum("in parallel" in row for row in rows) == 1


async def test_a_call_moves_through_its_states() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("sh", "Bash", "b1", "make test"))
        await pilot.pause()
        assert row_of(app.queue.rows_text(), "make test").startswith("  ○ Bash")

        now = time.monotonic()
        app.feed(started("sh", "Bash", "b1", at=now))
        await pilot.pause()
        running = row_of(app.queue.rows_text(), "make test")
        assert running[2] in SPINNER
        assert re.search(r"\d+(\.\d s| ms)$", running)

        app.feed(PermissionAsked(request=None, **ids("sh", "Bash", "b1")))  # type: ignore[arg-type]
        await pilot.pause()
        waiting = row_of(app.queue.rows_text(), "make test")
        assert waiting.startswith("  ? Bash") and "approval" in waiting

        app.feed(PermissionAnswered(answer=None, **ids("sh", "Bash", "b1")))  # type: ignore[arg-type]
        app.feed(
            ToolCompleted(
                at=now + 2.25,
                duration_s=0.75,  # the engine's measure: the wait for approval left out
                waited_s=1.5,
                is_error=False,
                **ids("sh", "Bash", "b1"),
            )
        )
        await pilot.pause()
        done = row_of(app.queue.rows_text(), "make test")
        assert done.startswith("  ✓ Bash")
        assert done.endswith("750 ms") and "waited 1.5 s" in done
        assert "approval" not in done


async def test_failed_shows_its_stage_and_cancelled_its_reason() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("e1", "Edit", "b1", "src/app.py"), queued("sh", "Bash", "b2", "rm -rf x"))
        app.feed(
            started("e1", "Edit", "b1"),
            completed("e1", "Edit", "b1", stage="validate"),
            ToolCancelled(
                reason="sibling_error",
                message="a sibling command failed",
                **ids("sh", "Bash", "b2"),
            ),
        )
        await pilot.pause()
        rows = app.queue.rows_text()
        failed = row_of(rows, "src/app.py")
        assert failed.startswith("  ✗ Edit") and "not run: the tool refused its input" in failed
        assert failed.endswith("1.5 s")
        cancelled = row_of(rows, "rm -rf x")
        assert cancelled.startswith("  ⊘ Bash") and "a sibling command failed" in cancelled


async def test_a_running_commands_tail_shows_under_it_until_it_finishes() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("sh", "Bash", "b-bash", "npm test"), started("sh", "Bash", "b-bash"))
        app.feed(progress("sh", "PASS one\n"))
        await pilot.pause()
        rows = app.queue.rows_text()
        assert rows[2].strip() == "PASS one" and len(rows) == 3

        app.feed(progress("sh", "PASS one\nPASS two\nPASS three\nFAIL four\n"))
        await pilot.pause()
        rows = app.queue.rows_text()
        assert [row.strip() for row in rows[2:]] == ["PASS two", "PASS three", "FAIL four"]
        assert rows[1].startswith("  ") and "npm test" in rows[1]

        app.feed(progress("sh", "PASS five\nPASS six\nPASS seven\n"))  # same count: repainted
        await pilot.pause()
        assert [row.strip() for row in app.queue.rows_text()[2:]] == [
            "PASS five",
            "PASS six",
            "PASS seven",
        ]

        app.feed(completed("sh", "Bash", "b-bash"))
        await pilot.pause()
        rows = app.queue.rows_text()
        assert len(rows) == 2 and rows[1].startswith("  ✓ Bash")


async def test_a_sub_agents_calls_nest_under_its_task_row() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(
            queued("t1", "Task", "b1", "explore the parser"),
            queued("r1", "Read", "b1", "README.md"),
        )
        app.feed(started("t1", "Task", "b1"))
        app.feed(
            queued("g1", "Grep", "s1", "def parse", parent="t1"),
            queued("g2", "Glob", "s1", "**/*.py", parent="t1"),
        )
        app.feed(queued("s1", "Bash", "s2", "python -m parser", parent="t1"))
        app.feed(
            started("g1", "Grep", "s1", parent="t1"), completed("g1", "Grep", "s1", parent="t1")
        )
        await pilot.pause()
        rows = app.queue.rows_text()
        task = rows.index(row_of(rows, "explore the parser"))
        assert rows[task].startswith("│ ") and "Task" in rows[task]
        nested = rows[task + 1 : task + 5]
        assert nested[0] == "│   ┌ 2 in parallel"
        assert nested[1].startswith("│   │ ✓ Grep") and "def parse" in nested[1]
        assert nested[2].startswith("│   └ ○ Glob") and "**/*.py" in nested[2]
        assert nested[3].startswith("│     ○ Bash") and "python -m parser" in nested[3]
        # the Task's batch goes on below its sub-agent's calls
        assert rows[task + 5].startswith("└ ○ Read") and "README.md" in rows[task + 5]


async def test_a_finished_turn_folds_to_its_summary_and_unfolds_on_request() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("first", at=0.0)
        app.feed(queued("a", "Read", "b1", "one.py"), queued("b", "Read", "b1", "two.py"))
        app.feed(queued("c", "Bash", "b2", "false"))
        app.feed(
            started("a", "Read", "b1"),
            completed("a", "Read", "b1"),
            started("b", "Read", "b1"),
            completed("b", "Read", "b1"),
            started("c", "Bash", "b2"),
            completed("c", "Bash", "b2", stage="call"),
        )
        app.book.end_turn("end_turn", at=8.3)
        app.feed()
        await pilot.pause()
        rows = app.queue.rows_text()
        assert rows[0].startswith("▾ Turn 1 · 3 calls · 2 done · 1 failed · 8.3 s")
        assert len(rows) == 5  # the last turn stays open after it ends

        app.book.begin_turn("second", at=9.0)
        app.feed(queued("d", "Write", "b3", "notes.md", at=9.5))
        await pilot.pause()
        rows = app.queue.rows_text()
        assert rows[0].startswith("▸ Turn 1 · 3 calls · 2 done · 1 failed · 8.3 s")
        assert rows[1].startswith("▾ Turn 2 · 1 call")
        assert "notes.md" in rows[2] and len(rows) == 3
        assert not any("one.py" in row for row in rows)

        app.queue.focus()
        await pilot.press("home", "space")
        rows = app.queue.rows_text()
        assert rows[0].startswith("▾ Turn 1") and "one.py" in rows[2] and len(rows) == 7
        assert app.toggled == [(1, True)]
        await pilot.press("enter")  # enter on a summary line folds it too
        assert len(app.queue.rows_text()) == 3
        assert app.toggled == [(1, True), (1, False)]


async def test_cursor_and_enter_select_a_call() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(
            queued("r1", "Read", "b1", "a.py"),
            queued("r2", "Read", "b1", "b.py"),
            queued("r3", "Read", "b1", "c.py"),
        )
        app.feed(queued("sh", "Bash", "b2", "ls"))
        app.queue.focus()
        await pilot.press("down")  # the first row on screen: the turn line
        assert app.queue.cursor_call is None
        await pilot.press("j", "j")  # past the batch header, onto the calls
        assert app.queue.cursor_call == "r2"
        await pilot.press("enter")
        await pilot.press("down", "down", "down", "enter")  # stops at the last call
        await pilot.press("k", "enter")
        await pilot.pause()
        assert app.selected == ["r2", "sh", "r3"]


async def test_the_cursor_stays_on_its_call_when_rows_are_added_above_its_place() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("r1", "Read", "b1", "a.py"), queued("r2", "Read", "b1", "b.py"))
        app.feed(queued("sh", "Bash", "b2", "make"))
        app.queue.focus()
        await pilot.press("end")
        assert app.queue.cursor_call == "sh"
        app.feed(started("sh", "Bash", "b2"), progress("sh", "one\ntwo", batch="b2"))
        app.feed(queued("r3", "Read", "b1", "late.py"))  # joins the first batch
        await pilot.pause()
        assert app.queue.cursor_call == "sh"


async def test_growing_piecemeal_matches_a_fresh_layout() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        steps: list[list[EngineEvent]] = [
            [queued("a", "Read", "b1", "a")],
            [queued("b", "Read", "b1", "b"), queued("t", "Task", "b1", "sub")],
            [queued("c", "Grep", "s1", "c", parent="t"), started("t", "Task", "b1")],
            [queued("d", "Bash", "b2", "d"), started("d", "Bash", "b2")],
            [queued("e", "Glob", "s1", "e", parent="t"), progress("d", "x\ny", batch="b2")],
            [queued("f", "Bash", "s2", "f", parent="t"), started("f", "Bash", "s2", parent="t")],
            [ToolProgress(data=output("1\n2\n3"), **ids("f", "Bash", "s2", "t"))],
            [completed("d", "Bash", "b2"), queued("g", "Read", "b3", "g")],
        ]
        for step in steps:
            app.feed(*step)
            await pilot.pause()
            fresh = ToolQueue(app.book)
            await app.mount(fresh)
            await pilot.pause()
            assert fresh.size.width == app.queue.size.width
            assert comparable(fresh.rows_text()) == comparable(app.queue.rows_text())
            await fresh.remove()


async def test_states_are_drawn_in_the_themes_colours() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("a", "Read", "b1", "a.py"), started("a", "Read", "b1"))
        app.feed(completed("a", "Read", "b1"))
        await pilot.pause()
        strip = app.queue.render_line(1)
        glyph = next(segment for segment in strip if "✓" in segment.text)
        assert glyph.style is not None
        assert glyph.style.color == Color.parse(THEME_VARIABLE_DEFAULTS["tool-done"])


async def test_new_rows_are_followed_unless_the_person_scrolled_up() -> None:
    app = Host()
    async with app.run_test(size=(80, 10)) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(*(queued(f"c{i}", "Bash", f"b{i}", f"step {i}") for i in range(30)))
        await pilot.pause()
        queue = app.queue
        assert queue.scroll_offset.y == queue.max_scroll_y > 0
        assert "step 29" in queue.render_line(queue.size.height - 1).text

        queue.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        app.feed(queued("c30", "Bash", "b30", "step 30"))
        await pilot.pause()
        assert queue.scroll_offset.y == 0

        queue.focus()
        await pilot.press("end")
        app.feed(queued("c31", "Bash", "b31", "step 31"))
        await pilot.pause()
        assert "step 31" in queue.render_line(queue.size.height - 1).text


async def test_two_thousand_calls_of_five_events_all_end_done() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("flood", at=0.0)
        events: list[EngineEvent] = []
        for i in range(2000):
            call, batch = f"c{i}", f"b{i // 4}"
            events += [
                queued(call, "Read", batch, f"file_{i}.py"),
                started(call, "Read", batch),
                ToolProgress(data=output(f"line {i}"), **ids(call, "Read", batch)),
                ToolProgress(data=output(f"line {i}\nmore"), **ids(call, "Read", batch)),
                completed(call, "Read", batch),
            ]
        for start in range(0, len(events), 300):
            app.feed(*events[start : start + 300])
            await pilot.pause()
        rows = app.queue.rows_text()
        assert rows[0].startswith("▾ Turn 1 · 2000 calls")
        assert sum(row.lstrip("┌│└ ").startswith("✓ Read") for row in rows) == 2000
        assert sum("4 in parallel" in row for row in rows) == 500
        app.book.end_turn("end_turn", at=60.0)
        app.feed()
        await pilot.pause()
        assert app.queue.rows_text()[0].startswith("▾ Turn 1 · 2000 calls · 2000 done")


async def test_clicking_highlights_a_call_and_a_double_click_selects_it() -> None:
    app = Host()
    async with app.run_test(size=SIZE) as pilot:
        app.book.begin_turn("", at=0.0)
        app.feed(queued("r1", "Read", "b1", "a.py"), queued("r2", "Read", "b1", "b.py"))
        await pilot.pause()
        await pilot.click(ToolQueue, offset=(6, 3))  # row 3: the second Read
        assert app.queue.cursor_call == "r2"
        assert app.selected == []
        await pilot.double_click(ToolQueue, offset=(6, 2))
        await pilot.pause()
        assert app.queue.cursor_call == "r1"
        assert app.selected == ["r1"]
        await pilot.click(ToolQueue, offset=(2, 0))  # the turn line folds the turn
        assert app.queue.rows_text() == [app.queue.rows_text()[0]]
        assert app.toggled == [(1, False)]
