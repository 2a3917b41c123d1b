"""A run of consecutive tool calls in the conversation, drawn as one Line-API widget.

Why it is shaped so: a busy turn makes thousands of calls, and a widget per call (a header
and its hidden parts, each styled and laid out) cost seconds of layout for a flood of
2,000. Here a run is one widget whose height is its number of rows; a row is a tiny
descriptor (which call, which of its lines), `render_line` draws only the rows on screen,
and Textual keeps the strips of rows nobody refreshed.

- A call takes a header row (glyph, tool name, summary, state or duration on the right),
  then one dim row per notice and, while a Task's sub-agent works, one for what it is doing.
  The rows are laid out again only when that shape changes (a call joined, a notice came,
  an agent started or stopped), and only from the first call that changed.
- A batch of events repaints only the rows of the calls it touched, as one span, so a
  flood of progress ticks costs a few repainted lines, not a layout.
- Colours are component classes styled with the `$tool-*` theme variables, one per state,
  so a theme decides every colour; the cursor shows only while the run has focus.
- The run does not open calls itself: it asks the pane (`ToggleRequested`), which owns the
  opened view (`ToolLineDetail`) and where it goes, because opening a call in the middle of
  a run splits the run around it (`split_after`) and closing it joins them again (`absorb`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget

from tui.calls import CallRecord

from .conversation_items import GLYPHS, SubAgentText, one_line, state_text

ACTIVITY = -1
"""The `line` of a call's sub-agent activity row; 0 is its header, 1.. its notices."""

_STATE_COLOURED = ("waiting", "failed", "denied", "cancelled")
"""States whose words, not only their glyph, take the state's colour: they ask for a look."""


class Row(NamedTuple):
    call: int
    """Position of the call in the run."""
    line: int
    """0 for the call's header, n for its n-th notice, `ACTIVITY` for its sub-agent's line."""


class ToolRun(Widget, can_focus=True):
    """Consecutive tool calls, one row each (plus their notes); enter or a click opens one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor_up", "Previous call", show=False),
        Binding("down,j", "cursor_down", "Next call", show=False),
        Binding("enter", "toggle_call", "Open/close call", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"tool-run--glyph-{state}" for state in GLYPHS),
        *(f"tool-run--state-{state}" for state in _STATE_COLOURED),
        "tool-run--name",
        "tool-run--summary",
        "tool-run--state",
        "tool-run--notice",
        "tool-run--activity",
        "tool-run--cursor",
    }

    DEFAULT_CSS = """
    ToolRun {
        height: 1;
        padding: 0 1;
        & > .tool-run--name { text-style: bold; }
        & > .tool-run--summary { color: $text-muted; }
        & > .tool-run--state { color: $text-muted; }
        & > .tool-run--glyph-queued { color: $tool-queued; }
        & > .tool-run--glyph-waiting { color: $tool-waiting; }
        & > .tool-run--glyph-running { color: $tool-running; }
        & > .tool-run--glyph-done { color: $tool-done; }
        & > .tool-run--glyph-failed { color: $tool-failed; }
        & > .tool-run--glyph-denied { color: $tool-denied; }
        & > .tool-run--glyph-cancelled { color: $tool-cancelled; }
        & > .tool-run--state-waiting { color: $tool-waiting; }
        & > .tool-run--state-failed { color: $tool-failed; }
        & > .tool-run--state-denied { color: $tool-denied; }
        & > .tool-run--state-cancelled { color: $tool-cancelled; }
        & > .tool-run--notice { color: $text-warning; }
        & > .tool-run--activity { color: $text-muted; text-style: dim; }
        & > .tool-run--cursor { background: $primary 20%; }
    }
    """

    class ToggleRequested(Message):
        """Someone asked to open or close a call of this run."""

        def __init__(self, run: ToolRun, tool_use_id: str) -> None:
            super().__init__()
            self.run = run
            self.tool_use_id = tool_use_id

        @property
        def control(self) -> ToolRun:
            return self.run

    def __init__(self, agents: Mapping[str, SubAgentText]) -> None:
        """`agents`: the pane's sub-agents by Task call id, shared and read when drawing."""
        super().__init__()
        self._agents = agents
        self._calls: list[CallRecord] = []
        self._position: dict[str, int] = {}
        self._row_counts: list[int] = []
        self._first_rows: list[int] = []
        self._rows: list[Row] = []
        self._laid_out = 0
        """Calls whose rows are in `_rows`; the rest joined since the last `sync`."""
        self.cursor = 0
        """Position of the call the cursor is on."""
        self._base_style: Style | None = None

    # -- the calls -----------------------------------------------------------------------------

    @property
    def call_ids(self) -> list[str]:
        return [record.tool_use_id for record in self._calls]

    def __contains__(self, tool_use_id: object) -> bool:
        return tool_use_id in self._position

    def __len__(self) -> int:
        return len(self._calls)

    @property
    def row_count(self) -> int:
        return len(self._rows)

    def record(self, tool_use_id: str) -> CallRecord:
        return self._calls[self._position[tool_use_id]]

    def row_of(self, tool_use_id: str) -> int:
        """The header row of a call (after the last `sync`)."""
        return self._first_rows[self._position[tool_use_id]]

    def rows_of(self, tool_use_id: str) -> range:
        position = self._position[tool_use_id]
        first = self._first_rows[position]
        return range(first, first + self._row_counts[position])

    def add(self, record: CallRecord) -> None:
        """A call joins the end of the run; it is drawn at the next `sync`."""
        self._position[record.tool_use_id] = len(self._calls)
        self._calls.append(record)

    def sync(self, changed: Iterable[str] = ()) -> None:
        """Draw what a batch changed: lay out rows if their shape changed, else repaint."""
        first_changed = self._laid_out
        touched: list[int] = []
        for tool_use_id in changed:
            position = self._position.get(tool_use_id)
            if position is None or position >= self._laid_out:
                continue
            touched.append(position)
            first = self._first_rows[position]
            laid = self._rows[first : first + self._row_counts[position]]
            # The rows' kinds, not only their number: a note can come as the activity goes.
            if self._rows_of(position) != laid:
                first_changed = min(first_changed, position)
        if first_changed < len(self._calls):
            self._lay_out(first_changed)
            self.styles.height = len(self._rows)
            # Rows below the first change moved: repaint from there (only what is visible
            # is drawn again).
            start = self._first_rows[first_changed] if self._first_rows else 0
            touched = [p for p in touched if p < first_changed]
            self.refresh(Region(0, start, self.size.width, len(self._rows) - start))
        if touched:
            top = min(self._first_rows[p] for p in touched)
            bottom = max(self._first_rows[p] + self._row_counts[p] for p in touched)
            self.refresh(Region(0, top, self.size.width, bottom - top))

    def split_after(self, tool_use_id: str) -> ToolRun | None:
        """Move the calls after this one into a new run (not mounted); None if it is last."""
        position = self._position[tool_use_id]
        moved = self._calls[position + 1 :]
        if not moved:
            return None
        tail = ToolRun(self._agents)
        for record in moved:
            tail.add(record)
            del self._position[record.tool_use_id]
        tail.sync()
        del self._calls[position + 1 :]
        self._laid_out = min(self._laid_out, len(self._calls))
        del self._row_counts[self._laid_out :]
        del self._first_rows[self._laid_out :]
        self._rows = [row for row in self._rows if row.call < self._laid_out]
        self.cursor = min(self.cursor, len(self._calls) - 1)
        self.styles.height = len(self._rows)
        self.refresh()
        return tail

    def absorb(self, other: ToolRun) -> None:
        """Take in the calls of the run that follows this one (the caller removes it)."""
        for record in other._calls:
            self.add(record)
        self.sync()

    def _rows_of(self, position: int) -> list[Row]:
        """The rows a call takes now: its header, its notes, its sub-agent's line."""
        record = self._calls[position]
        rows = [Row(position, n) for n in range(len(record.notices) + 1)]
        return [*rows, Row(position, ACTIVITY)] if self._activity(record) else rows

    def _activity(self, record: CallRecord) -> str:
        agent = self._agents.get(record.tool_use_id)
        if agent is None or not agent.working or record.finished:
            return ""
        return agent.activity

    def _lay_out(self, first: int) -> None:
        del self._row_counts[first:]
        del self._first_rows[first:]
        start = self._first_rows[first - 1] + self._row_counts[first - 1] if first else 0
        del self._rows[start:]
        for position in range(first, len(self._calls)):
            self._first_rows.append(len(self._rows))
            self._rows.extend(self._rows_of(position))
            self._row_counts.append(len(self._rows) - self._first_rows[-1])
        self._laid_out = len(self._calls)

    # -- keys and the mouse --------------------------------------------------------------------

    @property
    def cursor_call(self) -> str | None:
        return self._calls[self.cursor].tool_use_id if self._calls else None

    def move_cursor_to(self, tool_use_id: str) -> None:
        self._set_cursor(self._position[tool_use_id])

    def _set_cursor(self, position: int) -> None:
        if not self._calls:
            return
        old, self.cursor = self.cursor, max(0, min(position, len(self._calls) - 1))
        self._repaint_cursor(old)
        self._repaint_cursor(self.cursor)
        parent = self.parent
        if self.cursor < self._laid_out and isinstance(parent, Widget) and self.is_mounted:
            # The pane scrolls, not the run; scrolling up this way lets go of the pane's
            # anchor as a user's scroll does.
            top = self.virtual_region.y + self.styles.gutter.top + self._first_rows[self.cursor]
            parent.scroll_to_region(Region(0, top, 1, 1), animate=False)

    def _repaint_cursor(self, position: int) -> None:
        if position < self._laid_out:
            self.refresh(Region(0, self._first_rows[position], self.size.width, 1))

    def action_cursor_up(self) -> None:
        self._set_cursor(self.cursor - 1)

    def action_cursor_down(self) -> None:
        self._set_cursor(self.cursor + 1)

    def action_toggle_call(self) -> None:
        tool_use_id = self.cursor_call
        if tool_use_id is not None:
            self.post_message(self.ToggleRequested(self, tool_use_id))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not 0 <= offset.y < len(self._rows):
            return
        row = self._rows[offset.y]
        self._set_cursor(row.call)
        # Only a call's own line toggles it; its notes are there to be read.
        if row.line == 0:
            self.post_message(self.ToggleRequested(self, self._calls[row.call].tool_use_id))

    def on_focus(self) -> None:
        # Repaint only: a click focuses before it moves the cursor, and must not scroll.
        self._repaint_cursor(self.cursor)

    def on_blur(self) -> None:
        self._repaint_cursor(self.cursor)

    # -- drawing -------------------------------------------------------------------------------

    def row_text(self, y: int, width: int) -> Text:
        """One row as drawn at a width (without the cursor)."""
        row = self._rows[y]
        record = self._calls[row.call]
        style = self.get_component_rich_style
        if row.line == ACTIVITY:
            text = Text(f"  agent: {one_line(self._activity(record))}", style("tool-run--activity"))
        elif row.line:
            level, words = record.notices[row.line - 1]
            text = Text(f"  {level}: {one_line(words)}", style("tool-run--notice"))
        else:
            return self._header_text(record, width)
        text.truncate(width, overflow="ellipsis", pad=True)
        return text

    def _header_text(self, record: CallRecord, width: int) -> Text:
        style = self.get_component_rich_style
        left = Text.assemble(
            (GLYPHS.get(record.state, "?"), style(f"tool-run--glyph-{record.state}")),
            " ",
            (record.display_name, style("tool-run--name")),
            " ",
            (one_line(record.summary), style("tool-run--summary")),
            no_wrap=True,
            overflow="ellipsis",
        )
        name = "state-" + record.state if record.state in _STATE_COLOURED else "state"
        state = Text(state_text(record), style=style(f"tool-run--{name}"))
        left.truncate(max(1, width - state.cell_len - 1), overflow="ellipsis", pad=True)
        return Text.assemble(left, " ", state, no_wrap=True, end="")

    def rows_text(self) -> list[str]:
        """The plain text of every row at the current width (for tests and benchmarks)."""
        width = self.content_size.width or 80
        return [self.row_text(y, width).plain.rstrip() for y in range(len(self._rows))]

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if not 0 <= y < len(self._rows):
            return Strip.blank(width, self._base)
        text = self.row_text(y, width)
        row = self._rows[y]
        if row.line == 0 and row.call == self.cursor and self.has_focus:
            cursor = self.get_component_rich_style("tool-run--cursor")
            text.stylize(Style(bgcolor=cursor.bgcolor))
        text.stylize_before(self._base)
        return Strip(text.render(self.app.console), width).crop_extend(0, width, self._base)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_style = None

    @property
    def _base(self) -> Style:
        # `rich_style` walks every ancestor; worth computing once per style change.
        if self._base_style is None:
            self._base_style = self.rich_style
        return self._base_style
