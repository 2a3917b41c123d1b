"""The conversation pane: prompts, the assistant's words, and each tool call as a line.

The app hands the pane a batch of engine events about 30 times a second, after feeding the
same batch to the shared `CallBook` (so every record already holds its end-of-batch state).
One pass over the batch decides three things, and only then is the screen touched:

- text: consecutive `TextDelta`s are joined, so a batch of two hundred deltas is one append
  to one markdown block;
- new widgets: prompts, runs of tool calls, notes and text blocks are collected in order
  and mounted with one `mount_all`, one layout for the batch;
- changed calls: a set of ids, each call's rows repainted once from its record however many
  events it had (a running command's progress ticks cost a set insert each).

A stream that fails and is retried says its text again: the text blocks the failed attempt
streamed are taken out of the pane (`Retrying`), and a notice says the retry, so the answer
reads once. Its tool calls stay, cancelled: they may have started, and that is worth seeing.

Order is the rule for text blocks: text continues in the current block only while that block
is the last thing in the pane. A tool call, a note or a new message closes it, and the next
delta starts a new block below, so the pane reads top to bottom as things happened.

Assistant text is a `Markdown` fed through Textual's `MarkdownStream`: the stream appends
only the new fragment, re-parses from the last complete block, and merges fragments that
arrive faster than it can draw. Writes are queued on the block's own message queue
(`call_later`), which Textual starts only after the block's mount (and so the render of its
first fragment) is done, so fragments never overtake each other or the first one.

Tool calls are not a widget each: consecutive top-level calls (nothing else between them)
share one `ToolRun` (`tool_run.py`), a Line-API widget with a row per call, so a flood of
2,000 calls is one widget to lay out, not thousands. Opening a call puts its
`ToolLineDetail` right under its row by splitting the run after it (run, detail, rest of
the run); closing it joins the two runs again. So the one invariant is: a detail always
follows the run whose last call it shows. New calls join the run that is the last thing in
the pane, if it is; anything else below it (text, a notice, a prompt, an opened call) means
the next call starts a new run.

The model's thinking streams into a `ThinkingView` (thinking.py): one folded line per block,
opened by the thinking key for every block (later ones follow) or by a click for one. It
ends the text block above it, as a call does, and a retry withdraws it with the text. A
sub-agent's thinking is its Task line's activity while it streams ("∴ thinking… 12 words")
and, in the opened Task call, one folded `ThinkingView` per thought that the key opens too.

An MCP server that fails to start or crashes is said once as a notice (the servers screen
has the whole story); the same failure again (a restart that fails as the start did) is not
said twice.

The pane stays scrolled to the end while content arrives (`anchor()`), until the user
scrolls up; scrolling back to the bottom follows again (Textual restores the anchor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

from core.access.mcp_names import display_name
from core.access.modes import MODE_LABELS
from core.agent.events import (
    AssistantMessage,
    CommandNotice,
    Compacted,
    CompactionFailed,
    HookNotice,
    InstructionsJoined,
    Interrupted,
    Retrying,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
    TurnError,
)
from core.events import (
    EngineEvent,
    McpServerChanged,
    ModeChanged,
    SubAgentEvent,
    ToolEvent,
    ToolQueued,
)
from tui.calls import CallBook
from tui.mcp_board import headline, notice_for

from .conversation_items import SubAgentText, ToolLineDetail
from .prompt_block import PromptBlock
from .thinking import ThinkingView
from .tool_line import ToolLine
from .tool_run import ToolRun

if TYPE_CHECKING:
    from .assistant_text import AssistantText


def __getattr__(name: str) -> Any:
    # AssistantText (and with it Textual's markdown machinery) loads with the first text,
    # not with the app: the first frame has none to show.
    if name == "AssistantText":
        from .assistant_text import AssistantText

        return AssistantText
    raise AttributeError(name)


__all__ = [
    "AssistantText",
    "Conversation",
    "Notice",
    "NoticeLevel",
    "PromptBlock",
    "ToolLine",
    "ToolRun",
]

NoticeLevel = Literal["info", "warning", "error"]

# -- the pieces that are not tool calls ----------------------------------------------------


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
        self._run_of: dict[str, ToolRun] = {}
        self._open_run: ToolRun | None = None
        """The run new calls join: the last thing in the pane, or None."""
        self._details: dict[str, ToolLineDetail] = {}
        self._agents: dict[str, SubAgentText] = {}
        self._text_block: AssistantText | None = None
        """The block deltas go to; None once something else follows it."""
        self._pending_text: list[str] = []
        self._attempt_text: list[Widget] = []
        """Text and thinking blocks of the model's current response, withdrawn if its stream
        is retried."""
        self._thinking_block: ThinkingView | None = None
        """The block thinking deltas go to; None once something else follows it."""
        self._thinking_blocks: list[ThinkingView] = []
        self.thinking_expanded = False
        """Thinking blocks are shown open (the thinking key); new ones follow."""
        self._to_mount: list[Widget] = []
        self._streamed_since_message = False
        self._said_of_server: dict[str, tuple[str, str]] = {}
        """The last failure said of each MCP server: its state and the first line of why."""

    def on_mount(self) -> None:
        self.anchor()

    # -- what the app calls ----------------------------------------------------------------

    def show_prepared(self, text: str) -> None:
        """The last prompt's command, now sent as `text` (its files read, its lines run)."""
        blocks = self.query(PromptBlock)
        if blocks and text.strip():
            blocks.last().set_expansion(text)

    def add_prompt(self, text: str, expansion: str = "") -> None:
        """The user's prompt, when it is sent to the agent (a slash command: the line typed,
        and the text the model got, folded)."""
        self._add(PromptBlock(text, expansion))
        self._streamed_since_message = False
        self._attempt_text.clear()
        self._mount_new()

    def add_notice(self, text: str, level: NoticeLevel = "info") -> None:
        """An app-level note: a settings problem, a mode switch, a session saved."""
        self._add(Notice(text, level))
        self._mount_new()

    def run_of(self, tool_use_id: str) -> ToolRun:
        """The run that holds a top-level call now (KeyError for any other id)."""
        return self._run_of[tool_use_id]

    def detail_of(self, tool_use_id: str) -> ToolLineDetail | None:
        """The opened view of a call, while it is open."""
        return self._details.get(tool_use_id)

    def tool_line(self, tool_use_id: str) -> ToolLine | None:
        """A top-level call's line (a sub-agent's calls have none: its Task line speaks)."""
        return ToolLine(self, tool_use_id) if tool_use_id in self._run_of else None

    def tool_lines(self) -> list[ToolLine]:
        """Every call's line, top to bottom."""
        return [
            ToolLine(self, tool_use_id)
            for run in self.query_children(ToolRun)
            for tool_use_id in run.call_ids
        ]

    def apply(self, events: Sequence[EngineEvent], book: CallBook) -> None:
        """Draw a batch of events; the book has taken them in already."""
        changed: set[str] = set()
        for event in events:
            if isinstance(event, TextDelta):
                self._pending_text.append(event.text)
                self._streamed_since_message = True
            elif isinstance(event, ThinkingDelta):
                self._thinking(event.text, redacted=event.redacted)
                self._streamed_since_message = True
            elif isinstance(event, ToolEvent):
                self._tool_event(event, book, changed)
            elif isinstance(event, SubAgentEvent):
                self._sub_agent_event(event, changed)
            else:
                self._loop_event(event, changed)
        self._flush_text()
        if self._thinking_block is not None:
            self._thinking_block.refresh_text()
        self._mount_new()
        by_run: dict[ToolRun, list[str]] = {}
        for tool_use_id in changed:
            run = self._run_of.get(tool_use_id)
            if run is not None:
                by_run.setdefault(run, []).append(tool_use_id)
            detail = self._details.get(tool_use_id)
            if detail is not None:
                detail.show(self._agents.get(tool_use_id))
        for run, ids in by_run.items():
            run.sync(ids)

    # -- thinking --------------------------------------------------------------------------

    def thinking_views(self) -> list[ThinkingView]:
        return list(self._thinking_blocks)

    def set_thinking_expanded(self, expanded: bool) -> None:
        """Open (or fold) every thinking block; blocks that arrive later follow."""
        self.thinking_expanded = expanded
        for block in self._thinking_blocks:
            block.set_expanded(expanded)
        for detail in self._details.values():  # an opened Task call's sub-agent thoughts
            detail.set_thinking_expanded(expanded)

    def _thinking(self, text: str, *, redacted: bool) -> None:
        if self._thinking_block is None or self._pending_text or redacted:
            block = ThinkingView(expanded=self.thinking_expanded, redacted=redacted)
            self._add(block)
            self._thinking_block = block
            self._thinking_blocks.append(block)
            self._attempt_text.append(block)
        self._thinking_block.add(text)
        if redacted:
            self._end_thinking()

    def _end_thinking(self) -> None:
        if self._thinking_block is not None:
            self._thinking_block.finish()
            self._thinking_block = None

    # -- opening a call --------------------------------------------------------------------

    def set_expanded(self, tool_use_id: str, expanded: bool) -> None:
        """Open a call (its detail right under its line) or close it again."""
        if expanded == (tool_use_id in self._details) or tool_use_id not in self._run_of:
            return
        if expanded:
            self._open(tool_use_id)
        else:
            self._close(tool_use_id)

    def on_tool_run_toggle_requested(self, message: ToolRun.ToggleRequested) -> None:
        message.stop()
        tool_use_id = message.tool_use_id
        self.set_expanded(tool_use_id, tool_use_id not in self._details)

    def _open(self, tool_use_id: str) -> None:
        run = self._run_of[tool_use_id]
        detail = self._details[tool_use_id] = ToolLineDetail(
            run.record(tool_use_id), thinking_expanded=self.thinking_expanded
        )
        detail.show(self._agents.get(tool_use_id))
        rest = run.split_after(tool_use_id)
        widgets: list[Widget] = [detail]
        if rest is not None:
            for moved in rest.call_ids:
                self._run_of[moved] = rest
            widgets.append(rest)
        if self._open_run is run:
            self._open_run = rest
        if run.parent is self:
            self.mount_all(widgets, after=run)
        else:  # the run is still waiting in this batch's list
            at = self._to_mount.index(run) + 1
            self._to_mount[at:at] = widgets

    def _close(self, tool_use_id: str) -> None:
        run = self._run_of[tool_use_id]
        detail = self._details.pop(tool_use_id)
        siblings = list(self.children)
        following = siblings.index(detail) + 1 if detail in siblings else len(siblings)
        after = siblings[following] if following < len(siblings) else None
        detail.remove()
        if isinstance(after, ToolRun):
            run.absorb(after)
            for moved in after.call_ids:
                self._run_of[moved] = run
            if after.has_focus:
                run.focus()
            after.remove()
            if self._open_run is after:
                self._open_run = run
        elif after is None and not self._to_mount:
            self._open_run = run

    # -- events ----------------------------------------------------------------------------

    def _tool_event(self, event: ToolEvent, book: CallBook, changed: set[str]) -> None:
        parent = event.parent_tool_use_id
        if parent is not None:
            # A sub-agent's call: its Task line says what the agent is doing.
            if isinstance(event, ToolQueued):
                record = book.calls.get(event.tool_use_id)  # its summary is project-relative
                summary = record.summary if record is not None else event.summary
                self._agent(parent).add_call(display_name(event.tool_name), summary)
                changed.add(parent)
            return
        tool_use_id = event.tool_use_id
        if tool_use_id not in self._run_of:
            record = book.calls.get(tool_use_id)
            if record is None:
                return
            self._flush_text()  # text streamed before the call stays above it
            run = self._open_run
            if run is None:
                self._add(run := ToolRun(self._agents))
                self._open_run = run
            run.add(record)
            self._run_of[tool_use_id] = run
        changed.add(tool_use_id)

    def _sub_agent_event(self, event: SubAgentEvent, changed: set[str]) -> None:
        agent = self._agent(event.agent_id)
        agent.label = event.agent_label
        inner = event.event
        if isinstance(inner, TextDelta):
            agent.add_text(inner.text)
        elif isinstance(inner, ThinkingDelta):
            agent.add_thinking(inner.text, redacted=inner.redacted)
        elif isinstance(inner, Retrying):
            agent.retried()
        elif isinstance(inner, AssistantMessage):
            agent.add_message(inner.content)
        elif isinstance(inner, TurnEnded):
            agent.working = False
        elif not isinstance(inner, InstructionsJoined):  # that one is the Task's note (calls.py)
            return
        changed.add(event.agent_id)

    def _loop_event(self, event: EngineEvent, changed: set[str]) -> None:
        match event:
            case AssistantMessage():
                self._flush_text()
                self._end_thinking()
                if not self._streamed_since_message:
                    self._show_unstreamed(event)
                self._close_text()
                self._streamed_since_message = False
                self._attempt_text.clear()
            case Retrying():
                self._withdraw_attempt_text()
                self._add(Notice(event.describe(), "warning"))
                self._streamed_since_message = False
            case TurnError():
                self._add(Notice(event.message, "error"))
            case Interrupted():
                self._add(Notice("interrupted", "warning"))
            case HookNotice():
                self._add(Notice(f"hook: {event.text}", "info"))
            case CommandNotice():  # a command's @path or !`cmd` left out
                self._add(Notice(event.text, "warning"))
            case Compacted():
                self._flush_text()
                self._close_text()
                self._add(Notice(compaction_mark(event), "info", classes="-compacted"))
            case CompactionFailed():
                self._add(Notice(event.message, "warning"))
            case InstructionsJoined():
                self._add(Notice(event.describe(), "info", classes="-instructions"))
            case ModeChanged():
                label = MODE_LABELS.get(event.mode, event.mode)  # type: ignore[call-overload]
                why = f" ({event.why})" if event.why else ""
                self._add(Notice(f"mode → {label}{why}", "info", classes="-mode"))
            case TurnEnded():
                self._flush_text()
                self._close_text()
                self._end_thinking()
            case McpServerChanged():
                self._server_changed(event)

    def _server_changed(self, event: McpServerChanged) -> None:
        said = notice_for(event)
        if said is None:
            return
        what = (event.state, headline(event.detail))
        if self._said_of_server.get(event.server) == what:
            return
        self._said_of_server[event.server] = what
        self._add(Notice(*said))

    def _withdraw_attempt_text(self) -> None:
        """The failed stream's text goes: the retried response says it again."""
        self._pending_text.clear()
        self._text_block = None
        self._thinking_block = None
        for block in self._attempt_text:
            if isinstance(block, ThinkingView):
                self._thinking_blocks.remove(block)
            if block in self._to_mount:
                self._to_mount.remove(block)
            else:
                block.remove()
        self._attempt_text.clear()

    def _show_unstreamed(self, event: AssistantMessage) -> None:
        """A message whose text never streamed (a replayed session): show it whole."""
        for block in event.content:
            kind = block.get("type")
            if kind in ("thinking", "redacted_thinking"):
                self._thinking(str(block.get("thinking", "")), redacted=kind != "thinking")
                self._end_thinking()
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
            from .assistant_text import AssistantText

            self._text_block = AssistantText(text)
            self._end_thinking()  # text below a thought ends it
            self._to_mount.append(self._text_block)
            self._attempt_text.append(self._text_block)
            self._open_run = None
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
        self._end_thinking()
        self._to_mount.append(widget)
        self._open_run = None

    def _mount_new(self) -> None:
        if self._to_mount:
            widgets, self._to_mount = self._to_mount, []
            self.mount_all(widgets)


def compaction_mark(event: Compacted) -> str:
    """The line where the conversation was compacted: what the model sees from here on."""
    how = "on request" if event.trigger == "manual" else "automatically"
    return (
        f"── conversation compacted {how}: {event.messages_replaced} messages replaced by "
        "a summary (the transcript keeps them) ──"
    )
