"""The conversation pane: prompts, the assistant's words, and each tool call as a line.

The app hands the pane a batch of engine events about 30 times a second, after feeding the
same batch to the shared `CallBook` (so every record already holds its end-of-batch state).
One pass over the batch decides three things, and only then is the screen touched:

- text: consecutive `TextDelta`s are joined, so a batch of two hundred deltas is one append
  to one markdown block;
- new widgets: prompts, tool lines, notes and text blocks are collected in order and mounted
  with one `mount_all`, one layout for the batch;
- changed calls: a set of ids, each line redrawn once from its record however many events
  it had (a running command's progress ticks cost a set insert each).

Order is the rule for text blocks: text continues in the current block only while that block
is the last thing in the pane. A tool call, a note or a new message closes it, and the next
delta starts a new block below, so the pane reads top to bottom as things happened.

Assistant text is a `Markdown` fed through Textual's `MarkdownStream`: the stream appends
only the new fragment, re-parses from the last complete block, and merges fragments that
arrive faster than it can draw. Writes are queued on the block's own message queue
(`call_later`), which Textual starts only after the block's mount (and so the render of its
first fragment) is done, so fragments never overtake each other or the first one.

The pane stays scrolled to the end while content arrives (`anchor()`), until the user
scrolls up; scrolling back to the bottom follows again (Textual restores the anchor).
Tool lines live in `conversation_items.py`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from core.agent.events import (
    AssistantMessage,
    HookNotice,
    Interrupted,
    Retrying,
    TextDelta,
    TurnEnded,
    TurnError,
    UserMessage,
)
from core.events import EngineEvent, ModeChanged, SubAgentEvent, ToolEvent, ToolQueued
from core.permissions.modes import MODE_LABELS
from tui.calls import CallBook

from .conversation_items import SubAgentText, ToolLine

__all__ = ["AssistantText", "Conversation", "Notice", "NoticeLevel", "PromptBlock", "ToolLine"]

NoticeLevel = Literal["info", "warning", "error"]

# -- the pieces that are not tool calls ----------------------------------------------------


class PromptBlock(Static):
    """What the user sent."""

    DEFAULT_CSS = """
    PromptBlock {
        margin: 1 0 0 0;
        padding: 0 1;
        background: $boost;
        border-left: thick $primary;
        color: $text;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(text, markup=False)
        self.text = text


class Notice(Static):
    """A note from the app or the engine: a retry, an error, a mode change, a hook's word."""

    DEFAULT_CSS = """
    Notice {
        padding: 0 1;
        color: $text-muted;
    }
    Notice.-warning { color: $text-warning; }
    Notice.-error {
        margin: 1 0 0 0;
        color: $text-error;
        background: $error 10%;
        border-left: thick $error;
    }
    Notice.-mode { text-style: dim; }
    """

    def __init__(self, text: str, level: NoticeLevel, *, classes: str = "") -> None:
        super().__init__(text, markup=False, classes=f"-{level} {classes}".strip())
        self.text = text
        self.level = level


class AssistantText(Markdown):
    """One stretch of the assistant's text, rendered as markdown while it streams."""

    DEFAULT_CSS = """
    AssistantText {
        margin: 1 0 0 0;
        padding: 0 1;
    }
    AssistantText.-discarded { opacity: 50%; }
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


# -- the pane -------------------------------------------------------------------------------


class Conversation(VerticalScroll):
    """The session as it happens: what was asked, said and done, in order."""

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 0 1 0;
    }
    """

    def __init__(
        self,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._lines: dict[str, ToolLine] = {}
        self._agents: dict[str, SubAgentText] = {}
        self._text_block: AssistantText | None = None
        """The block deltas go to; None once something else follows it."""
        self._pending_text: list[str] = []
        self._to_mount: list[Widget] = []
        self._streamed_since_message = False

    def on_mount(self) -> None:
        self.anchor()

    # -- what the app calls ----------------------------------------------------------------

    def add_prompt(self, text: str) -> None:
        """The user's prompt, when it is sent to the agent."""
        self._add(PromptBlock(text))
        self._streamed_since_message = False
        self._mount_new()

    def add_notice(self, text: str, level: NoticeLevel = "info") -> None:
        """An app-level note: a settings problem, a mode switch, a session saved."""
        self._add(Notice(text, level))
        self._mount_new()

    def tool_line(self, tool_use_id: str) -> ToolLine | None:
        return self._lines.get(tool_use_id)

    def apply(self, events: Sequence[EngineEvent], book: CallBook) -> None:
        """Draw a batch of events; the book has taken them in already."""
        changed: set[str] = set()
        for event in events:
            if isinstance(event, TextDelta):
                self._pending_text.append(event.text)
                self._streamed_since_message = True
            elif isinstance(event, ToolEvent):
                self._tool_event(event, book, changed)
            elif isinstance(event, SubAgentEvent):
                self._sub_agent_event(event, changed)
            else:
                self._loop_event(event, changed)
        self._flush_text()
        self._mount_new()
        for tool_use_id in changed:
            line = self._lines.get(tool_use_id)
            if line is not None:
                line.update_from_record(self._agents.get(tool_use_id))

    # -- events ----------------------------------------------------------------------------

    def _tool_event(self, event: ToolEvent, book: CallBook, changed: set[str]) -> None:
        parent = event.parent_tool_use_id
        if parent is not None:
            # A sub-agent's call: its Task line says what the agent is doing.
            if isinstance(event, ToolQueued):
                record = book.calls.get(event.tool_use_id)  # its summary is project-relative
                summary = record.summary if record is not None else event.summary
                self._agent(parent).add_call(event.tool_name, summary)
                changed.add(parent)
            return
        tool_use_id = event.tool_use_id
        if tool_use_id not in self._lines:
            record = book.calls.get(tool_use_id)
            if record is None:
                return
            line = self._lines[tool_use_id] = ToolLine(record)
            self._add(line)
        changed.add(tool_use_id)

    def _sub_agent_event(self, event: SubAgentEvent, changed: set[str]) -> None:
        agent = self._agent(event.agent_id)
        agent.label = event.agent_label
        inner = event.event
        if isinstance(inner, TextDelta):
            agent.add_text(inner.text)
        elif isinstance(inner, AssistantMessage):
            agent.add_message(inner.content)
        elif isinstance(inner, TurnEnded):
            agent.working = False
        else:
            return
        changed.add(event.agent_id)

    def _loop_event(self, event: EngineEvent, changed: set[str]) -> None:
        match event:
            case AssistantMessage():
                self._flush_text()
                if not self._streamed_since_message:
                    self._show_unstreamed(event)
                self._close_text()
                self._streamed_since_message = False
            case UserMessage():
                # Tool results: the book has their text; the lines show it when opened.
                for block in event.content:
                    if block.get("type") == "tool_result":
                        changed.add(str(block.get("tool_use_id")))
            case Retrying():
                # The failed stream's text is superseded by the retried one.
                self._flush_text()
                if self._text_block is not None:
                    self._text_block.add_class("-discarded")
                self._add(Notice(event.describe(), "warning"))
                self._streamed_since_message = False
            case TurnError():
                self._add(Notice(event.message, "error"))
            case Interrupted():
                self._add(Notice("interrupted", "warning"))
            case HookNotice():
                self._add(Notice(f"hook: {event.text}", "info"))
            case ModeChanged():
                label = MODE_LABELS.get(event.mode, event.mode)  # type: ignore[call-overload]
                why = f" ({event.why})" if event.why else ""
                self._add(Notice(f"mode → {label}{why}", "info", classes="-mode"))
            case TurnEnded():
                self._flush_text()
                self._close_text()

    def _show_unstreamed(self, event: AssistantMessage) -> None:
        """A message whose text never streamed (a replayed session): show it whole."""
        text = "\n\n".join(
            str(block.get("text", ""))
            for block in event.content
            if block.get("type") == "text" and block.get("text")
        )
        if text:
            self._pending_text.append(text)
            self._flush_text()

    # -- building the pane -----------------------------------------------------------------

    def _agent(self, agent_id: str) -> SubAgentText:
        agent = self._agents.get(agent_id)
        if agent is None:
            agent = self._agents[agent_id] = SubAgentText()
        return agent

    def _flush_text(self) -> None:
        if not self._pending_text:
            return
        text = "".join(self._pending_text)
        self._pending_text.clear()
        if self._text_block is None:
            self._text_block = AssistantText(text)
            self._to_mount.append(self._text_block)
        else:
            self._text_block.feed(text)

    def _close_text(self) -> None:
        if self._text_block is not None:
            self._text_block.close()
            self._text_block = None

    def _add(self, widget: Widget) -> None:
        """Queue a widget below everything so far; text after it starts a new block."""
        self._flush_text()
        self._close_text()
        self._to_mount.append(widget)

    def _mount_new(self) -> None:
        if self._to_mount:
            widgets, self._to_mount = self._to_mount, []
            self.mount_all(widgets)
