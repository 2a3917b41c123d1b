"""The live tool queue: every call of the turn as one line, grouped the way it runs.

Why it is shaped so:

- A Line-API `ScrollView`. A busy turn has thousands of calls and tens of thousands of
  events; a widget per row (or a DataTable) would pay layout for each. Here a flat list of
  tiny row descriptors is the whole layout, `render_line` draws only visible lines, and
  Textual keeps the strips of lines nobody refreshed.
- What the rows are and what each says lives in `queue_layout.py`, pure and testable from a
  book alone; this module is the widget around it: it owns what changes under a person's
  hands (cursor, folded turns, scrolling, the spinner) and decides *when* to lay out again
  and which lines to repaint.
- Rows are laid out again only when the *shape* changes: a call queued, a turn began, ended
  or was folded, a running command's tail grew or went away; and within the growing turn
  only from the first batch that changed (`QueueLayout.regrow`), which is nearly always the
  last one. Any other event (started, progress, completed...) repaints only its call's line
  and tail. So a batch of 300 events costs a few new rows and one repaint of the screen, and
  a command streaming 100,000 lines a repaint of four lines per batch: keys stay responsive.
- Earlier finished turns fold to one summary line each; the last turn stays open.
- A spinner timer runs only while a shown call is running or waiting and repaints only those
  lines (their elapsed time ticks with it).
- New rows are followed like a log's tail. Whether to follow is decided by scrolling alone
  (at the bottom or not), not re-measured when rows arrive, so the first rows that overflow
  the view cannot leave it stuck at the top.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer

from core.events import EngineEvent, ToolEvent
from tui.calls import CallBook

from .queue_layout import (
    LIVE_STATES,
    QueueLayout,
    QueueRow,
    RowKey,
    row_text,
)


class ToolQueue(ScrollView, can_focus=True):
    """The calls of the session's turns, live; earlier turns folded to a summary line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous", show=False),
        Binding("down,j", "cursor_down", "Next", show=False),
        Binding("enter", "select_cursor", "Open call"),
        Binding("space", "toggle_turn", "Fold turn"),
        Binding("home", "cursor_first", "First", show=False),
        Binding("end", "cursor_newest", "Newest", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tool-queue--queued",
        "tool-queue--waiting",
        "tool-queue--running",
        "tool-queue--done",
        "tool-queue--failed",
        "tool-queue--denied",
        "tool-queue--cancelled",
        "tool-queue--tail",
        "tool-queue--batch",
        "tool-queue--summary",
        "tool-queue--cursor",
        "tool-queue--sandbox-read-only",
        "tool-queue--sandbox-workspace",
        "tool-queue--sandbox-none",
    }

    DEFAULT_CSS = """
    ToolQueue {
        background: $surface;
        color: $text;
        overflow-x: hidden;
        overflow-y: auto;
    }
    ToolQueue > .tool-queue--queued { color: $tool-queued; }
    ToolQueue > .tool-queue--waiting { color: $tool-waiting; text-style: bold; }
    ToolQueue > .tool-queue--running { color: $tool-running; }
    ToolQueue > .tool-queue--done { color: $tool-done; }
    ToolQueue > .tool-queue--failed { color: $tool-failed; }
    ToolQueue > .tool-queue--denied { color: $tool-denied; }
    ToolQueue > .tool-queue--cancelled { color: $tool-cancelled; }
    ToolQueue > .tool-queue--tail { color: $text-muted; }
    ToolQueue > .tool-queue--batch { color: $primary; }
    ToolQueue > .tool-queue--summary { color: $text-muted; }
    ToolQueue > .tool-queue--cursor { background: $surface-lighten-1; }
    ToolQueue > .tool-queue--sandbox-read-only { color: $risk-low; }
    ToolQueue > .tool-queue--sandbox-workspace { color: $risk-medium; }
    ToolQueue > .tool-queue--sandbox-none { color: $risk-high; text-style: bold; }
    ToolQueue:focus > .tool-queue--cursor { background: $primary 35%; }
    """

    cursor_row: var[int] = var(-1)
    """The highlighted row (a call or a turn line), -1 for none."""

    auto_scroll: var[bool] = var(True)
    """Keep the newest rows in view while the view is at the bottom (a log's "follow")."""

    class CallSelected(Message):
        """Enter (or a double click) was pressed on a call: the app may open its details."""

        def __init__(self, tool_queue: ToolQueue, tool_use_id: str) -> None:
            super().__init__()
            self.tool_queue = tool_queue
            self.tool_use_id = tool_use_id

        @property
        def control(self) -> ToolQueue:
            return self.tool_queue

    class TurnToggled(Message):
        """A turn's calls were unfolded (`expanded`) or folded to its summary line."""

        def __init__(self, tool_queue: ToolQueue, turn: int, expanded: bool) -> None:
            super().__init__()
            self.tool_queue = tool_queue
            self.turn = turn
            self.expanded = expanded

        @property
        def control(self) -> ToolQueue:
            return self.tool_queue

    def __init__(
        self,
        book: CallBook | None = None,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clock` gives "now" for running calls' elapsed time (fixed in snapshot tests)."""
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        self._clock = clock
        self._book = book if book is not None else CallBook()
        self._layout = QueueLayout()
        self._shape: tuple[int, bool] = (0, False)
        # Earlier turns are folded unless unfolded; the last one is open unless folded.
        self._expanded: set[int] = set()
        self._folded: set[int] = set()
        self._live: set[str] = set()
        self._frame = 0
        self._spinner: Timer | None = None
        self._base_style: Style | None = None
        self._pinned = True
        """The view is at the bottom, so new rows are scrolled into view."""

    def on_mount(self) -> None:
        self._spinner = self.set_interval(0.1, self._tick, pause=True)
        self._rebuild(follow=True)
        self._sync_spinner()

    # -- feeding -------------------------------------------------------------------------------

    def apply(self, events: Sequence[EngineEvent], book: CallBook) -> None:
        """Show a batch of events the book has already taken in."""
        self._book = book
        touched = {event.tool_use_id for event in events if isinstance(event, ToolEvent)}
        if self._shape_of(book) != self._shape:
            self._rebuild(follow=True)
        else:
            first_group = self._layout.first_changed_group(book, touched, self.is_turn_expanded)
            if first_group is not None and first_group < 0:
                self._rebuild(follow=True)
            elif first_group is not None:
                self._regrow(first_group)
            self._repaint_calls(touched, repaint=first_group is None)
        self._sync_spinner()

    def _shape_of(self, book: CallBook) -> tuple[int, bool]:
        turn = book.current_turn
        return (len(book.turns), turn is not None and turn.finished)

    def _rebuild(self, *, follow: bool) -> None:
        keep = self._layout.key_at(self.cursor_row)
        book = self._book
        self._layout = QueueLayout.build(book, self.is_turn_expanded)
        self._shape = self._shape_of(book)
        self._live = set(self._layout.live_calls(book))
        self._reshaped(keep, follow=follow)

    def _regrow(self, first_group: int) -> None:
        keep = self._layout.key_at(self.cursor_row)
        layout = self._layout
        dropped, start = layout.regrow(self._book, first_group)
        self._live.difference_update(dropped)
        self._live.update(layout.live_calls(self._book, start))
        self._reshaped(keep, follow=True)

    def _reshaped(self, keep: RowKey | None, *, follow: bool) -> None:
        self.virtual_size = Size(0, len(self._layout.rows))
        self.cursor_row = self._layout.row_of_key(keep, self._book)
        if not self.is_mounted:
            return
        if follow and self.auto_scroll and self._pinned and not self.is_vertical_scrollbar_grabbed:
            # forced: the scrollbar that would allow it appears only at the next layout
            self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # Only a scroll (the person's, or ours to the end) decides whether to follow; rows
        # added below leave it as it was.
        self._pinned = round(new_value) >= self.max_scroll_y

    def _repaint_calls(self, call_ids: set[str], *, repaint: bool) -> None:
        """Keep the live set current and, unless the whole view is being redrawn anyway,
        repaint the visible lines of the changed calls as one span (one refresh, not one
        per call: a frame can hold hundreds)."""
        layout, calls = self._layout, self._book.calls
        top = self.scroll_offset.y
        bottom = top + self.size.height
        first, last = bottom, top - 1
        for call_id in call_ids:
            record = calls.get(call_id)
            if record is None:
                continue
            y = layout.call_rows.get(call_id)
            if y is None:  # folded away: only its turn's summary line can show the change
                y = layout.turn_rows.get(record.turn, -1)
                end = y
            else:
                end = y + layout.tail_counts.get(call_id, 0)
                if record.state in LIVE_STATES:
                    self._live.add(call_id)
                else:
                    self._live.discard(call_id)
            if end >= top and y < bottom:
                first, last = min(first, max(y, top)), max(last, min(end, bottom - 1))
        if repaint and first <= last:
            self.refresh_lines(first, last - first + 1)

    def _sync_spinner(self) -> None:
        if self._spinner is None:
            return
        if self._live:
            self._spinner.resume()
        else:
            self._spinner.pause()

    def _tick(self) -> None:
        self._frame += 1
        top = self.scroll_offset.y
        bottom = top + self.size.height
        call_rows = self._layout.call_rows
        for call_id in self._live:
            y = call_rows.get(call_id, -1)
            if top <= y < bottom:
                self.refresh_line(y)

    # -- folding -------------------------------------------------------------------------------

    def is_turn_expanded(self, turn: int) -> bool:
        if turn == len(self._book.turns):
            return turn not in self._folded
        return turn in self._expanded

    def set_turn_expanded(self, turn: int, expanded: bool) -> None:
        """Unfold a turn's calls or fold them to its summary line."""
        if expanded == self.is_turn_expanded(turn):
            return
        if turn == len(self._book.turns):
            (self._folded.discard if expanded else self._folded.add)(turn)
        else:
            (self._expanded.add if expanded else self._expanded.discard)(turn)
        self._rebuild(follow=False)
        self._sync_spinner()
        header = self._layout.turn_rows.get(turn)
        if header is not None:
            self._scroll_to_row(header)
        self.post_message(self.TurnToggled(self, turn, expanded))

    def toggle_turn(self, turn: int) -> None:
        self.set_turn_expanded(turn, not self.is_turn_expanded(turn))

    # -- cursor --------------------------------------------------------------------------------

    @property
    def cursor_call(self) -> str | None:
        """The tool_use_id of the highlighted call, if the cursor is on one."""
        row = self._cursor_row_descriptor()
        return row.call_id if row is not None and row.kind == "call" else None

    def _cursor_row_descriptor(self) -> QueueRow | None:
        rows = self._layout.rows
        return rows[self.cursor_row] if 0 <= self.cursor_row < len(rows) else None

    def validate_cursor_row(self, row: int) -> int:
        return max(-1, min(row, len(self._layout.rows) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        for y in (old, new):
            if y >= 0:
                self.refresh_line(y)

    def _move_cursor(self, step: int) -> None:
        if self.cursor_row >= 0:
            start = self.cursor_row
        else:  # no cursor yet: begin at the edge of what is on screen
            top = self.scroll_offset.y
            start = top - 1 if step > 0 else min(top + self.size.height, len(self._layout.rows))
        target = self._layout.selectable(start, step)
        if target is not None:
            self.cursor_row = target
            self._scroll_to_row(target)

    def _scroll_to_row(self, y: int) -> None:
        self.scroll_to_region(
            Region(0, y, max(1, self.size.width), 1), animate=False, immediate=True, x_axis=False
        )

    def action_cursor_up(self) -> None:
        self._move_cursor(-1)

    def action_cursor_down(self) -> None:
        self._move_cursor(+1)

    def action_cursor_first(self) -> None:
        target = self._layout.selectable(-1, +1)
        if target is not None:
            self.cursor_row = target
        self.scroll_home(animate=False, immediate=True)

    def action_cursor_newest(self) -> None:
        """Jump to the newest row; being at the bottom again resumes following."""
        target = self._layout.selectable(len(self._layout.rows), -1)
        if target is not None:
            self.cursor_row = target
        self.scroll_end(animate=False, immediate=True, x_axis=False, force=True)

    def action_select_cursor(self) -> None:
        row = self._cursor_row_descriptor()
        if row is None:
            return
        if row.kind == "call":
            self.post_message(self.CallSelected(self, row.call_id))
        elif row.kind == "turn":
            self.toggle_turn(row.turn)

    def action_toggle_turn(self) -> None:
        row = self._cursor_row_descriptor()
        if row is not None:
            self.toggle_turn(row.turn)

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        y = offset.y + self.scroll_offset.y
        rows = self._layout.rows
        if not 0 <= y < len(rows):
            return
        row = rows[y]
        if row.kind == "turn":
            self.cursor_row = y
            self.toggle_turn(row.turn)
        elif row.kind in ("call", "tail"):
            self.cursor_row = self._layout.call_rows[row.call_id]
            if event.chain >= 2:
                self.post_message(self.CallSelected(self, row.call_id))

    # -- drawing -------------------------------------------------------------------------------

    @property
    def _row_width(self) -> int:
        # Not size.width: that includes the vertical scrollbar, which would hide the
        # right-aligned durations.
        return self.scrollable_content_region.width or self.size.width

    def rows_text(self) -> list[str]:
        """The plain text of every row, as drawn at the current width (for tests, snapshots)."""
        width = self._row_width or 100
        now = self._clock()
        return [self._row_text(row, width, now).plain.rstrip() for row in self._layout.rows]

    def render_line(self, y: int) -> Strip:
        width = self._row_width
        index = y + self.scroll_offset.y
        rows = self._layout.rows
        if not 0 <= index < len(rows):
            return Strip.blank(width, self._base)
        text = self._row_text(rows[index], width, self._clock())
        if index == self.cursor_row:
            cursor = self.get_component_rich_style("tool-queue--cursor")
            text.stylize(Style(bgcolor=cursor.bgcolor, bold=cursor.bold))
        return Strip(text.render(self.app.console), width)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None

    @property
    def _base(self) -> Style:
        # `rich_style` walks every ancestor; per line that was half of all drawing time.
        if self._base_style is None:
            self._base_style = self.rich_style
        return self._base_style

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"tool-queue--{name}")

    def _row_text(self, row: QueueRow, width: int, now: float) -> Text:
        return row_text(
            row,
            self._book,
            self._layout,
            width=width,
            now=now,
            frame=self._frame,
            is_expanded=self.is_turn_expanded,
            style=self._style,
            base=self._base,
        )
