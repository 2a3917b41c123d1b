"""The tool queue's rows from a `CallBook` alone: no App, no widget.

`QueueLayout` and `row_text` are pure, so these tests feed real engine events into a book,
lay it out and read each row's kind and plain text, as the widget would draw them at a
given width. The widget's own behaviour (keys, scrolling, repaint) is in test_tool_queue.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from app_helpers import output
from rich.style import Style

from core.events import (
    EngineEvent,
    ToolCompleted,
    ToolProgress,
    ToolQueued,
    ToolStarted,
)
from tui.calls import CallBook
from tui.widgets.queue_layout import QueueLayout, row_text


def ids(call_id: str, tool: str, batch: str, parent: str | None) -> dict[str, Any]:
    return {
        "tool_use_id": call_id,
        "tool_name": tool,
        "batch_id": batch,
        "parent_tool_use_id": parent,
    }


def queued(call_id: str, tool: str, batch: str, summary: str, parent: str | None = None) -> Any:
    return ToolQueued(
        at=1.0,
        input={},
        summary=summary,
        concurrency_safe=True,
        **ids(call_id, tool, batch, parent),
    )


def started(call_id: str, tool: str, batch: str, parent: str | None = None) -> ToolStarted:
    return ToolStarted(at=2.0, **ids(call_id, tool, batch, parent))


def completed(call_id: str, tool: str, batch: str) -> ToolCompleted:
    return ToolCompleted(at=3.5, duration_s=1.5, is_error=False, **ids(call_id, tool, batch, None))


def feed(book: CallBook, *events: EngineEvent) -> None:
    for event in events:
        book.apply(event)


def last_open(book: CallBook) -> Callable[[int], bool]:
    """The widget's default folding: earlier turns folded, the last one open."""
    return lambda turn: turn == len(book.turns)


def drawn(
    book: CallBook, layout: QueueLayout, width: int = 80, *, now: float = 4.0
) -> list[tuple[str, str]]:
    expanded = last_open(book)
    return [
        (
            row.kind,
            row_text(
                row,
                book,
                layout,
                width=width,
                now=now,
                frame=0,
                is_expanded=expanded,
                style=lambda _name: Style(),
                base=Style(),
            ).plain.rstrip(),
        )
        for row in layout.rows
    ]


def right(left: str, duration: str, width: int = 80) -> str:
    """A call row whose duration is pushed to the right edge."""
    return left.ljust(width - len(duration)) + duration


def two_turns() -> CallBook:
    book = CallBook()
    book.begin_turn("first", at=0.0)
    feed(book, queued("a", "Read", "b1", "one.py"), started("a", "Read", "b1"))
    feed(book, completed("a", "Read", "b1"))
    book.end_turn("end_turn", at=5.0)

    book.begin_turn("second", at=6.0)
    feed(
        book,
        queued("r1", "Read", "b2", "src/a.py"),
        queued("r2", "Grep", "b2", "def main"),
        queued("sh", "Bash", "b3", "pytest -q"),
        queued("t", "Task", "b4", "explore the parser"),
        started("t", "Task", "b4"),
        queued("g1", "Grep", "s1", "def parse", parent="t"),
        queued("g2", "Glob", "s1", "**/*.py", parent="t"),
        queued("x", "Bash", "s2", "python -m parser", parent="t"),
        started("x", "Bash", "s2", parent="t"),
        ToolProgress(data=output("ok 1\nok 2"), **ids("x", "Bash", "s2", "t")),
    )
    return book


def test_two_turns_a_parallel_batch_a_serial_call_and_a_task_with_children() -> None:
    book = two_turns()
    rows = drawn(book, QueueLayout.build(book, last_open(book)))
    assert rows == [
        ("turn", "▸ Turn 1 · 1 call · 1 done · 5.0 s  first"),
        ("turn", "▾ Turn 2 · 4 calls so far  second"),
        ("batch", "┌ 2 in parallel"),
        ("call", "│ ○ Read src/a.py"),
        ("call", "└ ○ Grep def main"),
        ("call", "  ○ Bash pytest -q"),
        ("call", right("  ⠋ Task explore the parser", "2.0 s")),
        ("batch", "    ┌ 2 in parallel"),
        ("call", "    │ ○ Grep def parse"),
        ("call", "    └ ○ Glob **/*.py"),
        ("call", right("      ⠋ Bash python -m parser", "2.0 s")),
        ("tail", "          ok 1"),
        ("tail", "          ok 2"),
    ]


def test_an_unfolded_earlier_turn_shows_its_calls_and_the_index_finds_them() -> None:
    book = two_turns()
    layout = QueueLayout.build(book, lambda turn: True)
    rows = drawn(book, layout)
    assert rows[:3] == [
        ("turn", "▸ Turn 1 · 1 call · 1 done · 5.0 s  first"),  # the mark is the widget's
        ("call", right("  ✓ Read one.py", "1.5 s")),
        ("turn", "▾ Turn 2 · 4 calls so far  second"),
    ]
    assert layout.turn_rows == {1: 0, 2: 2}
    assert layout.call_rows["a"] == 1 and layout.call_rows["x"] == 11
    assert layout.tail_counts == {"x": 2}
    assert sorted(layout.live_calls(book)) == ["t", "x"]


def test_a_task_with_many_children_keeps_them_indented_and_their_names_whole() -> None:
    book = CallBook()
    book.begin_turn("", at=0.0)
    feed(book, queued("t", "Task", "b1", "survey"), queued("r", "Read", "b1", "README.md"))
    names = ["Grep", "Glob", "NotebookEdit", "WebFetch"]
    for k in range(40):
        feed(book, queued(f"c{k}", names[k % 4], f"s{k // 4}", f"child {k}", parent="t"))
    layout = QueueLayout.build(book, last_open(book))

    rows = drawn(book, layout, width=80)
    task = rows.index(("call", "│ ○ Task         survey"))
    children = rows[task + 1 : task + 51]
    assert [kind for kind, _ in children] == (["batch"] + ["call"] * 4) * 10
    for kind, text in children:  # under the Task, inside its batch's bracket
        assert text.startswith("│   ┌ " if kind == "batch" else ("│   │ ", "│   └ "))
    assert children[3][1] == "│   │ ○ NotebookEdit child 2"  # the widest name is not cut
    assert rows[task + 51] == ("call", "└ ○ Read         README.md")

    # a narrow queue cuts the summary, not the name
    narrow = drawn(book, layout, width=36)
    assert narrow[task + 4][1] == "│   │ ○ NotebookEdit child…"
    # only a row with no room for the name beside it cuts the name
    tiny = drawn(book, layout, width=16)
    assert tiny[task + 4][1] == "│   │ ○ Noteb…"


def test_the_name_column_fits_the_longest_name_and_mcp_tools_read_server_tool() -> None:
    book = CallBook()
    book.begin_turn("", at=0.0)
    feed(
        book,
        queued("b", "Bash", "b1", "git status --short --branch"),
        queued("m", "mcp__github__create_pull_request", "b2", "fix the tie order"),
    )
    layout = QueueLayout.build(book, last_open(book))
    rows = [text for kind, text in drawn(book, layout, width=48) if kind == "call"]
    # one column as wide as "github › create_pull_request"; the summaries give way
    assert rows[0] == "  ○ Bash                         git s…"
    assert rows[1] == "  ○ github › create_pull_request fix t…"


def test_growing_piecemeal_lays_out_the_same_rows_as_a_fresh_build() -> None:
    book = CallBook()
    book.begin_turn("", at=0.0)
    steps: Sequence[Sequence[EngineEvent]] = [
        [queued("a", "Read", "b1", "a")],
        [queued("b", "Read", "b1", "b"), queued("t", "Task", "b1", "sub")],
        [queued("c", "Grep", "s1", "c", parent="t"), started("t", "Task", "b1")],
        [queued("d", "Bash", "b2", "d"), started("d", "Bash", "b2")],
        [ToolProgress(data=output("x\ny"), **ids("d", "Bash", "b2", None))],
        [queued("e", "Glob", "s1", "e", parent="t"), completed("d", "Bash", "b2")],
    ]
    expanded = last_open(book)
    layout = QueueLayout.build(book, expanded)
    regrown = 0
    for step in steps:
        feed(book, *step)
        touched = [event.tool_use_id for event in step if hasattr(event, "tool_use_id")]
        first = layout.first_changed_group(book, touched, expanded)
        assert first is None or first >= 0  # all in the open turn
        if first is not None:
            layout.regrow(book, first)
            regrown += 1
        assert drawn(book, layout) == drawn(book, QueueLayout.build(book, expanded))
    assert regrown == len(steps)  # each step added a row or changed a tail


def test_a_change_that_keeps_the_rows_needs_no_new_layout() -> None:
    book = CallBook()
    book.begin_turn("", at=0.0)
    feed(book, queued("a", "Read", "b1", "a"), queued("b", "Bash", "b2", "b"))
    layout = QueueLayout.build(book, last_open(book))
    feed(book, started("b", "Bash", "b2"))
    assert layout.first_changed_group(book, ["b"], last_open(book)) is None
    feed(book, ToolProgress(data=output("out"), **ids("b", "Bash", "b2", None)))
    assert layout.first_changed_group(book, ["b"], last_open(book)) == 1


def test_a_note_too_long_for_its_room_loses_the_wait_then_goes_rather_than_read_wai() -> None:
    from tui.calls import CallRecord
    from tui.widgets.queue_layout import fitted_note

    def record(state: str, why: str = "", waited: float = 0.0) -> CallRecord:
        call = CallRecord("c", "Edit", "b", "src/app.py", {}, False, 0.0, 1)
        call.state, call.why, call.waited_s = state, why, waited  # type: ignore[assignment]
        return call

    done = record("done", waited=6.2)
    assert fitted_note(done, 40) == "waited 6.2 s"
    assert fitted_note(done, 5) == ""  # never "wai…"
    denied = record("denied", why="you", waited=6.2)
    assert fitted_note(denied, 40) == "denied by you · waited 6.2 s"
    assert fitted_note(denied, 14) == "denied by you"  # the wait gives way first
    assert fitted_note(denied, 9) == "denied b…"
    assert fitted_note(denied, 4) == ""
    failed = record("failed", why="validate")
    assert fitted_note(failed, 60) == "not run: the tool refused its input"
