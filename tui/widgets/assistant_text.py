"""The assistant's words, rendered as markdown while they stream.

Its own module so that Textual's markdown machinery (markdown-it and the block widgets) is
imported with the first text the assistant writes, not with the app: the first frame shows
none. The conversation pane (conversation.py) decides when a block starts and ends; this
widget only appends fragments in order, through Textual's `MarkdownStream`.
"""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantText(Markdown):
    """One stretch of the assistant's text, rendered as markdown while it streams."""

    DEFAULT_CSS = """
    AssistantText {
        margin: 1 0 0 0;
        padding: 0 1;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self._stream: MarkdownStream | None = None
        self._no_more_text = False
        """Not `_closed`: Textual's message pump owns that name and drops messages when set."""
        self._finished = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._no_more_text

    def feed(self, text: str) -> None:
        """Append a fragment (the pane joins a batch's deltas into one)."""
        if not self._no_more_text and text:
            self.call_later(self._write, text)

    def close(self) -> None:
        """No more text will come: finish drawing what is queued and stop the stream."""
        if not self._no_more_text:
            self._no_more_text = True
            self.call_later(self._stop)

    async def wait_finished(self) -> None:
        """Until every fragment is drawn after `close()` (for tests and screenshots)."""
        await self._finished.wait()

    async def _write(self, text: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(text)

    async def _stop(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
        self._finished.set()

    async def on_unmount(self) -> None:
        # A stream left running would outlive the widget as a pending task.
        if self._stream is not None:
            await self._stream.stop()
