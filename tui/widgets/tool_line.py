"""A handle on one call's line in the conversation, for whoever needs to find or open it.

A call is not a widget: it is some rows of whichever `ToolRun` holds it now, and opening a
call elsewhere in its run splits the run (closing joins it again). So tests, benchmarks and
the app ask the pane for a `ToolLine` and read through it; it looks its run up on each use
rather than keeping a run that may be gone by the next frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region

from tui.calls import CallRecord, CallState

if TYPE_CHECKING:
    from .conversation import Conversation
    from .conversation_items import ToolLineDetail
    from .tool_run import ToolRun


class ToolLine:
    """Where a call is in the pane and whether it is open: a handle, not a widget.

    A call is a row of whichever `ToolRun` holds it now (opening calls splits and joins
    runs), so the handle looks its run up each time rather than keeping it.
    """

    def __init__(self, pane: Conversation, tool_use_id: str) -> None:
        self._pane = pane
        self.tool_use_id = tool_use_id

    @property
    def run(self) -> ToolRun:
        return self._pane.run_of(self.tool_use_id)

    @property
    def record(self) -> CallRecord:
        return self.run.record(self.tool_use_id)

    @property
    def state(self) -> CallState:
        return self.record.state

    @property
    def row(self) -> int:
        return self.run.row_of(self.tool_use_id)

    @property
    def is_mounted(self) -> bool:
        return self.run.is_mounted

    @property
    def region(self) -> Region:
        """The call's line on screen (empty until a layout has placed its run)."""
        run = self.run
        if not run.region:
            return Region()
        content = run.content_region
        return Region(content.x, content.y + self.row, content.width, 1)

    def rows_text(self) -> list[str]:
        """The call's line and the notes under it, as drawn."""
        run = self.run
        everything = run.rows_text()
        return [everything[y] for y in run.rows_of(self.tool_use_id)]

    @property
    def text(self) -> str:
        return self.rows_text()[0]

    @property
    def detail(self) -> ToolLineDetail | None:
        return self._pane.detail_of(self.tool_use_id)

    @property
    def expanded(self) -> bool:
        return self._pane.detail_of(self.tool_use_id) is not None

    @expanded.setter
    def expanded(self, expanded: bool) -> None:
        self._pane.set_expanded(self.tool_use_id, expanded)

    def focus(self) -> None:
        """Focus the call's run with its cursor on this call."""
        run = self.run
        run.move_cursor_to(self.tool_use_id)
        run.focus()
