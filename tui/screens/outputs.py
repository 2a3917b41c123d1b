"""`SavedOutputsScreen`: the session's saved outputs as a table; enter opens one in the viewer.

Why it is shaped this way:

- The screen is given a callable, not a list: the app owns the record of calls (which tool,
  what summary), the directory owns the files, and `r` simply asks again. `for_session()`
  covers the case where only the directory is known.
- A `DataTable` in row mode: a row per file with tool, size, time and first line, keyed by
  the file's path so a refresh keeps the cursor on the same file when it is still there.
- Times are wall-clock times of day (with the date when not today), since a person matches
  them against what they saw happen, not against "3 minutes ago".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from tui.screens.viewer import OutputViewerScreen
from tui.viewer import SavedOutputEntry, human_size, scan_saved_outputs

FIRST_LINE_CHARS = 80
EMPTY_TEXT = (
    "Nothing saved yet. Results too large for the model's context and the output of Bash "
    "commands are kept here as they are written."
)


def when(mtime: float, now: float | None = None) -> str:
    moment = time.localtime(mtime)
    today = time.localtime(time.time() if now is None else now)
    if moment[:3] == today[:3]:
        return time.strftime("%H:%M:%S", moment)
    return time.strftime("%b %d %H:%M", moment)


class SavedOutputsScreen(Screen[None]):
    """Lists the saved outputs; enter opens one, r refreshes, esc or q closes."""

    CSS_PATH = "outputs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
        Binding("r", "reload", "Refresh"),
        Binding("enter", "open", "Open", show=True, priority=False),
    ]

    def __init__(
        self,
        entries: Callable[[], list[SavedOutputEntry]],
        *,
        viewer_refresh_interval: float = 0.5,
    ) -> None:
        super().__init__()
        self.entries_source = entries
        self.viewer_refresh_interval = viewer_refresh_interval
        self.entries: dict[str, SavedOutputEntry] = {}

    @classmethod
    def for_session(cls, session_dir: Path, **options: float) -> SavedOutputsScreen:
        """The screen with the directory's own names for the tools."""
        return cls(
            lambda: [SavedOutputEntry.from_output(o) for o in scan_saved_outputs(session_dir)],
            **options,
        )

    def compose(self) -> ComposeResult:
        yield Static("Saved outputs  ·  enter opens one", id="outputs-title")
        table: DataTable[str] = DataTable(id="outputs-table", cursor_type="row", zebra_stripes=True)
        table.add_column("Tool", key="tool")
        table.add_column("Size", key="size")
        table.add_column("Time", key="time")
        table.add_column("First line", key="first")
        yield table
        yield Static(EMPTY_TEXT, id="outputs-empty")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()
        self.table.focus()

    @property
    def table(self) -> DataTable[str]:
        return self.query_one("#outputs-table", DataTable)

    def action_reload(self) -> None:
        table = self.table
        selected = self._selected_key()
        table.clear()
        self.entries = {}
        for entry in self.entries_source():
            key = str(entry.path)
            self.entries[key] = entry
            tool = f"{entry.tool_name} · {entry.summary}" if entry.summary else entry.tool_name
            table.add_row(
                tool,
                human_size(entry.size_bytes),
                when(entry.output.mtime),
                entry.first_line[:FIRST_LINE_CHARS],
                key=key,
            )
        self.set_class(not self.entries, "-empty")
        if selected in self.entries:
            table.move_cursor(row=table.get_row_index(selected))

    def _selected_key(self) -> str | None:
        table = self.table
        if not table.row_count:
            return None
        row_key, _ = table.coordinate_to_cell_key(table.cursor_coordinate)
        return row_key.value

    def action_open(self) -> None:
        key = self._selected_key()
        if key is not None and key in self.entries:
            self.app.push_screen(
                OutputViewerScreen(self.entries[key], refresh_interval=self.viewer_refresh_interval)
            )

    @on(DataTable.RowSelected, "#outputs-table")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_close(self) -> None:
        self.dismiss(None)
