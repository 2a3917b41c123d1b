"""The live tool queue: every call of the turn as one line, grouped the way it runs.

Why it is shaped so:

- A Line-API `ScrollView`. A busy turn has thousands of calls and tens of thousands of
  events; a widget per row (or a DataTable) would pay layout for each. Here a flat list of
  tiny row descriptors (`QueueRow`) is the whole layout, `render_line` draws only visible
  lines, and Textual keeps the strips of lines nobody refreshed.
- Rows are laid out again only when the *shape* changes: a call queued, a turn began, ended
  or was folded, a running command's tail grew or went away; and within the growing turn
  only from the first batch that changed (`QueueLayout.regrow`), which is nearly always the
  last one. Any other event (started, progress, completed...) repaints only its call's line
  and tail. So a batch of 300 events costs a few new rows and one repaint of the screen, and
  a command streaming 100,000 lines a repaint of four lines per batch: keys stay responsive.
- A row holds no text: what it says is read from the `CallBook` when it is drawn, so a
  repainted line is always current and the descriptors stay cheap to rebuild.
- Grouping is drawn, not described: a parallel batch gets a `┌ 3 in parallel` header and a
  bracket (`│` ... `└`) down its rows, serial calls stand alone, a sub-agent's calls are
  indented under their Task row (grouped by batch the same way). Earlier finished turns fold
  to one summary line each; the last turn stays open.
- A spinner timer runs only while a shown call is running or waiting and repaints only those
  lines (their elapsed time ticks with it).
- New rows are followed like a log's tail. Whether to follow is decided by scrolling alone
  (at the bottom or not), not re-measured when rows arrive, so the first rows that overflow
  the view cannot leave it stuck at the top.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rich.cells import cell_len, set_cell_size
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
from tui.calls import CallBook, CallRecord, CallState, format_duration

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
GLYPHS: dict[CallState, str] = {
    "queued": "○",
    "waiting": "?",
    "running": SPINNER[0],
    "done": "✓",
    "failed": "✗",
    "cancelled": "⊘",
}
LIVE_STATES: frozenset[CallState] = frozenset({"running", "waiting"})
NAME_WIDTH_RANGE = (4, 16)
DURATION_WIDTH = 8
_UNPRINTABLE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x1f\x7f]")

RowKind = Literal["turn", "batch", "call", "tail"]
SELECTABLE: frozenset[RowKind] = frozenset({"turn", "call"})
RowKey = tuple[RowKind, str | int]
"""What the cursor is on, kept across re-layouts: ("call", tool_use_id) or ("turn", index)."""


@dataclass(slots=True)
class QueueRow:
    kind: RowKind
    turn: int
    gutter: str = ""
    """The brackets and indentation drawn before the row."""
    call_id: str = ""
    number: int = 0
    """For a batch header, how many calls run together; for a tail line, which one."""


def shown_tail(record: CallRecord) -> int:
    """How many tail lines the queue shows under a call: only a running one has them."""
    return len(record.tail) if record.state == "running" else 0


def batches_of(call_ids: Sequence[str], calls: Mapping[str, CallRecord]) -> list[list[str]]:
    """A sub-agent's calls grouped into runs of one batch id (the book groups only top level)."""
    groups: list[list[str]] = []
    previous: str | None = None
    for call_id in call_ids:
        batch_id = calls[call_id].batch_id
        if groups and batch_id == previous:
            groups[-1].append(call_id)
        else:
            groups.append([call_id])
            previous = batch_id
    return groups


class QueueLayout:
    """The rows, and where calls and turns are among them.

    The last turn (the one still growing) is laid out batch by batch with each batch's first
    row remembered, so a call queued into it, or a tail that grew, re-lays only that batch
    and the ones after it (`regrow`): new calls land at the end, so that is nearly always a
    few rows. Earlier turns change only when folded or unfolded, which rebuilds everything.
    """

    __slots__ = (
        "call_rows",
        "group_of_batch",
        "group_starts",
        "name_width",
        "open_turn",
        "rows",
        "tail_counts",
        "turn_rows",
    )

    def __init__(self) -> None:
        self.rows: list[QueueRow] = []
        self.call_rows: dict[str, int] = {}
        self.turn_rows: dict[int, int] = {}
        self.tail_counts: dict[str, int] = {}
        self.name_width = NAME_WIDTH_RANGE[0]
        self.open_turn: int | None = None
        """The last turn, when its calls are shown: the one `regrow` works on."""
        self.group_starts: list[int] = []
        self.group_of_batch: dict[str, int] = {}

    @classmethod
    def build(cls, book: CallBook, is_expanded: Callable[[int], bool]) -> QueueLayout:
        """Every turn's header line and, for expanded turns, their calls in queue order."""
        layout = cls()
        for turn in book.turns:
            layout.turn_rows[turn.index] = len(layout.rows)
            layout.rows.append(QueueRow("turn", turn.index))
            if not is_expanded(turn.index):
                continue
            if turn is book.current_turn:
                layout.open_turn = turn.index
                layout._grow(book, 0)
            else:
                for batch in turn.batches:
                    layout._add_group(book.calls, batch.calls, turn.index, "")
        return layout

    def group_of(self, book: CallBook, record: CallRecord) -> int:
        """Which of the open turn's batches holds a call (or its Task); a new one if none."""
        calls = book.calls
        while record.parent is not None and record.parent in calls:
            record = calls[record.parent]
        return self.group_of_batch.get(record.batch_id, len(self.group_starts))

    def regrow(self, book: CallBook, first_group: int) -> tuple[list[str], int]:
        """Lay the open turn out again from its `first_group`-th batch; returns the ids of
        the calls whose rows were dropped (most are laid out again) and the first new row."""
        first_group = min(first_group, len(self.group_starts))
        start = self.group_starts[first_group] if first_group < len(self.group_starts) else None
        dropped: list[str] = []
        if start is not None:
            for row in self.rows[start:]:
                if row.kind == "call":
                    dropped.append(row.call_id)
                    del self.call_rows[row.call_id]
                    self.tail_counts.pop(row.call_id, None)
            del self.rows[start:]
            del self.group_starts[first_group:]
        else:
            start = len(self.rows)
        self._grow(book, first_group)
        return dropped, start

    def _grow(self, book: CallBook, first_group: int) -> None:
        turn = book.current_turn
        assert turn is not None and turn.index == self.open_turn
        for index in range(first_group, len(turn.batches)):
            batch = turn.batches[index]
            self.group_starts.append(len(self.rows))
            self.group_of_batch[batch.batch_id] = index
            self._add_group(book.calls, batch.calls, turn.index, "")

    def _add_group(
        self, calls: Mapping[str, CallRecord], group: Sequence[str], turn: int, prefix: str
    ) -> None:
        if len(group) == 1:
            self._add_call(calls, group[0], turn, prefix + "  ", prefix + "  ")
            return
        self.rows.append(QueueRow("batch", turn, prefix + "┌ ", number=len(group)))
        last = len(group) - 1
        for position, call_id in enumerate(group):
            if position < last:
                self._add_call(calls, call_id, turn, prefix + "│ ", prefix + "│ ")
            else:
                self._add_call(calls, call_id, turn, prefix + "└ ", prefix + "  ")

    def _add_call(
        self, calls: Mapping[str, CallRecord], call_id: str, turn: int, gutter: str, below: str
    ) -> None:
        """One call's row, its tail lines, then its sub-agent's calls; `below` carries the
        bracket of the call's batch on down past the call's own row."""
        record = calls[call_id]
        rows = self.rows
        self.call_rows[call_id] = len(rows)
        rows.append(QueueRow("call", turn, gutter, call_id))
        if len(record.tool_name) > self.name_width:
            self.name_width = min(len(record.tool_name), NAME_WIDTH_RANGE[1])
        tail = shown_tail(record)
        if tail:
            self.tail_counts[call_id] = tail
            for line in range(tail):
                rows.append(QueueRow("tail", turn, below + "    ", call_id, line))
        if record.children:
            for group in batches_of(record.children, calls):
                self._add_group(calls, group, turn, below + "  ")


def one_line(text: str) -> str:
    """Text safe for one terminal row: newlines as spaces, escapes and controls dropped."""
    if text.isascii() and text.isprintable():
        return text
    return _UNPRINTABLE.sub("", text.expandtabs(4).replace("\n", " "))


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis when it does not fit."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"


def call_note(record: CallRecord) -> str:
    """The dimmed words after a call's summary: why it waits, failed or was cancelled."""
    match record.state:
        case "waiting":
            return "waiting for approval"
        case "failed":
            return f"failed at {record.why}" if record.why else "failed"
        case "cancelled":
            return one_line(record.why) or "cancelled"
        case _:
            return ""


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
        "tool-queue--cancelled",
        "tool-queue--tail",
        "tool-queue--batch",
        "tool-queue--summary",
        "tool-queue--cursor",
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
    ToolQueue > .tool-queue--cancelled { color: $tool-cancelled; }
    ToolQueue > .tool-queue--tail { color: $text-muted; }
    ToolQueue > .tool-queue--batch { color: $primary; }
    ToolQueue > .tool-queue--summary { color: $text-muted; }
    ToolQueue > .tool-queue--cursor { background: $surface-lighten-1; }
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
            first_group: int | None = None
            for call_id in touched:
                group = self._reshape_from(call_id)
                if group is None:
                    continue
                first_group = group if first_group is None else min(first_group, group)
                if first_group < 0:
                    break
            if first_group is not None and first_group < 0:
                self._rebuild(follow=True)
            elif first_group is not None:
                self._regrow(first_group)
            self._repaint_calls(touched, repaint=first_group is None)
        self._sync_spinner()

    def _shape_of(self, book: CallBook) -> tuple[int, bool]:
        turn = book.current_turn
        return (len(book.turns), turn is not None and turn.finished)

    def _reshape_from(self, call_id: str) -> int | None:
        """Whether a changed call changes which rows there are: None if not, else the first
        batch of the open turn to lay out again (-1: lay out everything)."""
        record = self._book.calls.get(call_id)
        if record is None:
            return None
        layout = self._layout
        if call_id in layout.call_rows:
            if shown_tail(record) == layout.tail_counts.get(call_id, 0):
                return None
        elif not self.is_turn_expanded(record.turn):
            return None  # new, but in a folded turn: its summary line is repainted
        if record.turn != layout.open_turn:
            return -1
        return layout.group_of(self._book, record)

    def _rebuild(self, *, follow: bool) -> None:
        keep = self._cursor_key()
        book = self._book
        self._layout = QueueLayout.build(book, self.is_turn_expanded)
        self._shape = self._shape_of(book)
        calls = book.calls
        self._live = {i for i in self._layout.call_rows if calls[i].state in LIVE_STATES}
        self._reshaped(keep, follow=follow)

    def _regrow(self, first_group: int) -> None:
        keep = self._cursor_key()
        layout, calls = self._layout, self._book.calls
        dropped, start = layout.regrow(self._book, first_group)
        self._live.difference_update(dropped)
        for row in layout.rows[start:]:
            if row.kind == "call" and calls[row.call_id].state in LIVE_STATES:
                self._live.add(row.call_id)
        self._reshaped(keep, follow=True)

    def _reshaped(self, keep: RowKey | None, *, follow: bool) -> None:
        self.virtual_size = Size(0, len(self._layout.rows))
        self.cursor_row = self._row_of_key(keep)
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

    def _cursor_key(self) -> RowKey | None:
        row = self._cursor_row_descriptor()
        if row is None:
            return None
        return ("call", row.call_id) if row.kind == "call" else ("turn", row.turn)

    def _row_of_key(self, key: RowKey | None) -> int:
        layout = self._layout
        if key is None:
            return -1
        kind, value = key
        if kind == "call" and isinstance(value, str):
            row = layout.call_rows.get(value)
            record = self._book.calls.get(value)
            if row is None and record is not None:  # its turn was folded: stay on the turn
                row = layout.turn_rows.get(record.turn)
            return -1 if row is None else row
        return layout.turn_rows.get(value, -1) if isinstance(value, int) else -1

    def validate_cursor_row(self, row: int) -> int:
        return max(-1, min(row, len(self._layout.rows) - 1))

    def watch_cursor_row(self, old: int, new: int) -> None:
        for y in (old, new):
            if y >= 0:
                self.refresh_line(y)

    def _selectable(self, start: int, step: int) -> int | None:
        rows = self._layout.rows
        y = start + step
        while 0 <= y < len(rows):
            if rows[y].kind in SELECTABLE:
                return y
            y += step
        return None

    def _move_cursor(self, step: int) -> None:
        if self.cursor_row >= 0:
            start = self.cursor_row
        else:  # no cursor yet: begin at the edge of what is on screen
            top = self.scroll_offset.y
            start = top - 1 if step > 0 else min(top + self.size.height, len(self._layout.rows))
        target = self._selectable(start, step)
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
        target = self._selectable(-1, +1)
        if target is not None:
            self.cursor_row = target
        self.scroll_home(animate=False, immediate=True)

    def action_cursor_newest(self) -> None:
        """Jump to the newest row; being at the bottom again resumes following."""
        target = self._selectable(len(self._layout.rows), -1)
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

    def rows_text(self) -> list[str]:
        """The plain text of every row, as drawn at the current width (for tests, snapshots)."""
        width = self.size.width or 100
        now = self._clock()
        return [self._row_text(row, width, now).plain.rstrip() for row in self._layout.rows]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
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
        text = Text(style=self._base, no_wrap=True, end="")
        if row.kind == "turn":
            self._turn_text(text, row.turn, width)
        elif row.kind == "batch":
            text.append(row.gutter + f"{row.number} in parallel", self._style("batch"))
        elif row.kind == "tail":
            record = self._book.calls[row.call_id]
            line = record.tail[row.number] if row.number < len(record.tail) else ""
            text.append(row.gutter, self._style("batch"))
            text.append(fit(one_line(line), width - cell_len(row.gutter)), self._style("tail"))
        else:
            self._call_text(text, row, self._book.calls[row.call_id], width, now)
        text.truncate(width, overflow="ellipsis", pad=True)
        return text

    def _turn_text(self, text: Text, index: int, width: int) -> None:
        book = self._book
        turn = book.turns[index - 1]
        mark = "▾" if self.is_turn_expanded(index) else "▸"
        if turn.finished:
            detail = book.summary(turn).describe()
        else:
            count = sum(len(batch.calls) for batch in turn.batches)
            detail = f"{count} call{'s' if count != 1 else ''} so far"
        head = f"{mark} Turn {index} · {detail}"
        text.append(head, self._style("summary"))
        prompt = one_line(turn.prompt.strip())
        if prompt:
            room = width - cell_len(head) - 2
            text.append("  " + fit(prompt, room), self._style("tail"))

    def _call_text(
        self, text: Text, row: QueueRow, record: CallRecord, width: int, now: float
    ) -> None:
        state = record.state
        state_style = self._style(state)
        glyph = SPINNER[self._frame % len(SPINNER)] if state == "running" else GLYPHS[state]
        # the summary says more than a long tool name does, so a narrow queue trims names
        name_width = min(self._layout.name_width, max(NAME_WIDTH_RANGE[0], width // 5))
        name = set_cell_size(fit(record.tool_name, name_width), name_width)
        text.append(row.gutter, self._style("batch"))
        text.append(f"{glyph} {name} ", state_style)
        duration = "" if record.started_at is None else format_duration(record.elapsed(now))
        room = width - cell_len(text.plain) - DURATION_WIDTH - 1
        summary = one_line(record.summary)
        note = call_note(record)
        note_part = f"  {note}" if note else ""
        wanted = cell_len(summary) + cell_len(note_part)
        if wanted > room:  # keep the note readable: it says why, the summary only what
            note_room = min(cell_len(note_part), max(room // 2, room - cell_len(summary)))
            summary, note_part = fit(summary, room - note_room), fit(note_part, note_room)
        text.append(summary)
        if note_part:
            text.append(note_part, state_style + Style(dim=state != "waiting"))
        gap = width - cell_len(text.plain) - cell_len(duration)
        if duration and gap > 0:
            text.append(" " * gap)
            text.append(duration, state_style if state in LIVE_STATES else self._style("summary"))
