"""What the tool queue's rows are and what each one says, without a widget.

Why it is shaped so:

- The queue is a flat list of tiny row descriptors (`QueueRow`): a turn line, a batch
  header, a call, or one line of a running command's tail. A row holds no text: what it
  says is read from the `CallBook` when it is drawn, so a repainted line is always current
  and the descriptors stay cheap to rebuild.
- Grouping is drawn, not described: a parallel batch gets a `┌ 3 in parallel` header and a
  bracket (`│` ... `└`) down its rows, serial calls stand alone, a sub-agent's calls are
  indented under their Task row (grouped by batch the same way).
- `QueueLayout` lays the growing (last) turn out batch by batch and remembers where each
  batch starts, so a queued call or a grown tail re-lays only from its batch (`regrow`).
  It also answers the questions the widget asks of it between events: does this change need
  a new layout and from where (`first_changed_group`), which shown calls are live, where a
  cursor's call or turn went after a re-layout (`key_at`, `row_of_key`).
- `row_text` turns one row into a rich `Text`, given how to style a part by name. Nothing
  here knows about Textual: the widget (`tool_queue.py`) owns state that changes under a
  person's hands (cursor, folding, scrolling, the spinner's frame) and hands it in, so the
  whole layout, and what every row reads, can be tested from a book alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len, set_cell_size
from rich.style import Style
from rich.text import Text

from core.access.mcp_names import display_name, split_tool_name
from core.events import failure_words
from tui.calls import (
    SANDBOX_BADGES,
    CallBook,
    CallRecord,
    CallState,
    denied_words,
    format_duration,
)

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
GLYPHS: dict[CallState, str] = {
    "queued": "○",
    "waiting": "?",
    "running": SPINNER[0],
    "done": "✓",
    "failed": "✗",
    "denied": "⊖",
    "cancelled": "⊘",
}
LIVE_STATES: frozenset[CallState] = frozenset({"running", "waiting"})
MIN_NAME_WIDTH = 4
DURATION_WIDTH = 8
_UNPRINTABLE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x1f\x7f]")

RowKind = Literal["turn", "batch", "call", "tail"]
SELECTABLE: frozenset[RowKind] = frozenset({"turn", "call"})
RowKey = tuple[RowKind, str | int]
"""What the cursor is on, kept across re-layouts: ("call", tool_use_id) or ("turn", index)."""

StyleOf = Callable[[str], Style]
"""A part's style by name: a call state, or "batch", "tail", "summary"."""


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
        self.name_width = MIN_NAME_WIDTH
        """The name column: as wide as the longest name shown, so no name is cut."""
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

    def first_changed_group(
        self, book: CallBook, call_ids: Iterable[str], is_expanded: Callable[[int], bool]
    ) -> int | None:
        """Whether changed calls change which rows there are: None if not, else the first
        batch of the open turn to lay out again (-1: lay out everything)."""
        first: int | None = None
        for call_id in call_ids:
            record = book.calls.get(call_id)
            if record is None:
                continue
            if call_id in self.call_rows:
                if shown_tail(record) == self.tail_counts.get(call_id, 0):
                    continue
            elif not is_expanded(record.turn):
                continue  # new, but in a folded turn: its summary line is repainted
            if record.turn != self.open_turn:
                return -1
            group = self.group_of(book, record)
            first = group if first is None else min(first, group)
        return first

    def live_calls(self, book: CallBook, start: int = 0) -> Iterator[str]:
        """The shown calls, from row `start` on, that the spinner animates."""
        calls = book.calls
        for row in self.rows[start:]:
            if row.kind == "call" and calls[row.call_id].state in LIVE_STATES:
                yield row.call_id

    def key_at(self, y: int) -> RowKey | None:
        """What row `y` shows, in terms that survive a re-layout (None: no such row)."""
        if not 0 <= y < len(self.rows):
            return None
        row = self.rows[y]
        return ("call", row.call_id) if row.kind == "call" else ("turn", row.turn)

    def row_of_key(self, key: RowKey | None, book: CallBook) -> int:
        """Where `key` is now; a call whose turn was folded is found at its turn line."""
        if key is None:
            return -1
        kind, value = key
        if kind == "call" and isinstance(value, str):
            row = self.call_rows.get(value)
            record = book.calls.get(value)
            if row is None and record is not None:
                row = self.turn_rows.get(record.turn)
            return -1 if row is None else row
        return self.turn_rows.get(value, -1) if isinstance(value, int) else -1

    def selectable(self, start: int, step: int) -> int | None:
        """The first row a cursor can rest on (a call or a turn) from `start` by `step`."""
        rows = self.rows
        y = start + step
        while 0 <= y < len(rows):
            if rows[y].kind in SELECTABLE:
                return y
            y += step
        return None

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
        self.name_width = max(self.name_width, cell_len(record.display_name))
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


MIN_NOTE_WIDTH = 8
"""The fewest cells a cut note may keep ("denied …" still reads; "wai…" does not)."""


def fit(text: str, width: int) -> str:
    """`text` cut to `width` cells with an ellipsis when it does not fit."""
    if width <= 0:
        return ""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"


def fit_tool_name(name: str, width: int) -> str:
    """A tool's name as people read it, cut to `width` cells. An MCP tool's own name says
    what the call does and its server only where, so the server gives way first
    (`gith… › create_issue`), and where the tool's name would not fit whole beside any of
    it, the tool's name stands alone (`create_issue`, `create_is…`)."""
    shown = display_name(name)
    parts = split_tool_name(name)
    if parts is None or cell_len(shown) <= width:
        return fit(shown, width)
    server, tool = parts
    server_room = width - 3 - cell_len(tool)  # " › "
    if server_room < 2:
        return fit(tool, width)
    return f"{fit(server, server_room)} › {tool}"


def call_note(record: CallRecord) -> str:
    """The dimmed words after a call's summary: why it waits, failed, was denied or was
    cancelled, and how long it waited for a person (its own time is the right column)."""
    return " · ".join(part for part in call_note_parts(record) if part)


def call_note_parts(record: CallRecord) -> tuple[str, str]:
    """`call_note` in its two parts, most telling first: (why, how long it waited)."""
    waited = f"waited {format_duration(record.waited_s)}" if record.waited_s > 0 else ""
    match record.state:
        case "waiting":
            return "waiting for approval", ""
        case "failed":
            return failure_words(record.why), waited
        case "denied":
            return denied_words(record), waited
        case "cancelled":
            return one_line(record.why) or "cancelled", ""
        case _:
            return "", waited


def fitted_note(record: CallRecord, room: int) -> str:
    """The note in `room` cells: whole; else without the wait (the conversation line keeps
    it); else the why cut short, but never to a stub nobody can read ("wai…"): then none,
    and the glyph and colour say the state."""
    why, waited = call_note_parts(record)
    for candidate in (" · ".join(part for part in (why, waited) if part), why):
        if candidate and cell_len(candidate) <= room:
            return candidate
    return fit(why, room) if room >= MIN_NOTE_WIDTH else ""


def row_text(
    row: QueueRow,
    book: CallBook,
    layout: QueueLayout,
    *,
    width: int,
    now: float,
    frame: int,
    is_expanded: Callable[[int], bool],
    style: StyleOf,
    base: Style,
) -> Text:
    """One row as drawn `width` cells wide: `now` for running calls' elapsed time, `frame`
    for the spinner, `is_expanded` for a turn's ▸/▾ mark."""
    text = Text(style=base, no_wrap=True, end="")
    if row.kind == "turn":
        _turn_text(text, book, row.turn, is_expanded(row.turn), width, style)
    elif row.kind == "batch":
        text.append(row.gutter + f"{row.number} in parallel", style("batch"))
    elif row.kind == "tail":
        record = book.calls[row.call_id]
        line = record.tail[row.number] if row.number < len(record.tail) else ""
        text.append(row.gutter, style("batch"))
        text.append(fit(one_line(line), width - cell_len(row.gutter)), style("tail"))
    else:
        record = book.calls[row.call_id]
        _call_text(text, row, record, layout.name_width, width, now, frame, style)
    text.truncate(width, overflow="ellipsis", pad=True)
    return text


def _turn_text(
    text: Text, book: CallBook, index: int, expanded: bool, width: int, style: StyleOf
) -> None:
    turn = book.turns[index - 1]
    mark = "▾" if expanded else "▸"
    if turn.finished:
        detail = book.summary(turn).describe()
    else:
        count = sum(len(batch.calls) for batch in turn.batches)
        detail = f"{count} call{'s' if count != 1 else ''} so far"
    head = f"{mark} Turn {index} · {detail}"
    text.append(head, style("summary"))
    prompt = one_line(turn.prompt.strip())
    if prompt:
        room = width - cell_len(head) - 2
        text.append("  " + fit(prompt, room), style("tail"))


def _call_text(
    text: Text,
    row: QueueRow,
    record: CallRecord,
    name_width: int,
    width: int,
    now: float,
    frame: int,
    style: StyleOf,
) -> None:
    state = record.state
    state_style = style(state)
    glyph = SPINNER[frame % len(SPINNER)] if state == "running" else GLYPHS[state]
    if record.started_at is None or state == "denied":  # a denied call never ran
        duration = ""
    elif state == "waiting":  # how long the person has been asked, ticking
        duration = format_duration(record.waited(now))
    else:
        duration = format_duration(record.elapsed(now))
    # A name says what the call is, so the column fits the longest one and the summary gives
    # way; a name is cut only where the row has no room for it beside its duration.
    reserve = DURATION_WIDTH if state in LIVE_STATES else cell_len(duration)
    room = width - cell_len(row.gutter) - 3 - reserve - 1
    name_width = max(MIN_NAME_WIDTH, min(name_width, room))
    name = set_cell_size(fit_tool_name(record.tool_name, name_width), name_width)
    text.append(row.gutter, style("batch"))
    text.append(f"{glyph} {name} ", state_style)
    if record.sandbox is not None:  # how a command runs: ro / ws sandboxed, un outside
        text.append(SANDBOX_BADGES[record.sandbox], style(f"sandbox-{record.sandbox}"))
        text.append(" ")
    room = width - cell_len(text.plain) - DURATION_WIDTH - 1
    summary = one_line(record.summary)
    note = call_note(record)
    note_part = f"  {note}" if note else ""
    if cell_len(summary) + cell_len(note_part) > room:
        # The note says why, the summary only what: the note gets up to half the room (or
        # what the summary leaves), in words that fit it whole where they can.
        note_room = max(room // 2, room - cell_len(summary)) - 2
        note = fitted_note(record, note_room)
        note_part = f"  {note}" if note else ""
        summary = fit(summary, room - cell_len(note_part))
    text.append(summary)
    if note_part:
        text.append(note_part, state_style + Style(dim=state != "waiting"))
    gap = width - cell_len(text.plain) - cell_len(duration)
    if duration and gap > 0:
        text.append(" " * gap)
        text.append(duration, state_style if state in LIVE_STATES else style("summary"))
