"""A tool call in the conversation: one line until someone opens it.

The pane (`conversation.py`) decides where lines go and which of them a batch of events
touched; this module draws one call from its `CallRecord`. Two choices shape it:

- The detail widgets (full input, result, a sub-agent's answer) are built on the first
  expand and redrawn only while open, so a session of hundreds of calls costs a header and
  two hidden statics per call, and a batch of progress events redraws one header.
- Colours come from CSS: the call's state is a class on `ToolLine` (`-running`, `-done`...)
  and the header draws with component classes that those classes style with the `$tool-*`
  theme variables, so a theme decides every colour.

The formatting helpers are plain functions so the rules (what a state says, where a result
is cut) read in one place and need no screen to check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from tui.calls import CallRecord, CallState, format_duration

RESULT_MAX_LINES = 40
RESULT_MAX_CHARS = 8_000
"""A result longer than this is cut in the expanded view; the saved copy has it all."""

GLYPHS: dict[CallState, str] = {
    "queued": "○",
    "waiting": "◆",
    "running": "●",
    "done": "✓",
    "failed": "✗",
    "cancelled": "⊘",
}
STATE_CLASSES: tuple[str, ...] = tuple(f"-{state}" for state in GLYPHS)

HEADLINE_KEYS: tuple[tuple[str, str], ...] = (
    ("command", "$ "),
    ("file_path", ""),
    ("notebook_path", ""),
    ("url", ""),
    ("pattern", ""),
)
"""Input fields shown above the JSON, most telling first: the command a Bash call runs, the
file an edit touches. The prefix marks a shell command as one."""


def state_text(record: CallRecord) -> str:
    """The right-hand end of a call's line: what it is doing, or how long it took."""
    match record.state:
        case "queued":
            return "queued"
        case "waiting":
            return "needs approval"
        case "running":
            return "running"
        case "done":
            return format_duration(record.elapsed(record.ended_at or 0.0))
        case "failed":
            stage = f" ({record.why})" if record.why and record.why != "call" else ""
            return f"failed{stage} · {format_duration(record.elapsed(record.ended_at or 0.0))}"
        case "cancelled":
            return "cancelled"
    return record.state


def one_line(text: str) -> str:
    return " ".join(text.split())


def describe_input(tool_input: Any) -> tuple[str, str]:
    """The headline of a call's input (command or path) and the rest as pretty JSON."""
    if not isinstance(tool_input, Mapping):
        return "", json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)
    headline = ""
    rest = dict(tool_input)
    for key, prefix in HEADLINE_KEYS:
        value = rest.get(key)
        if isinstance(value, str) and value:
            headline = prefix + rest.pop(key)
            break
    body = json.dumps(rest, indent=2, ensure_ascii=False, default=str) if rest else ""
    return headline, body


def cut_result(text: str, persisted: str | None) -> tuple[str, str]:
    """The part of a result the expanded view shows, and the note saying what was left out."""
    lines = text.splitlines()
    shown = lines[:RESULT_MAX_LINES]
    while sum(len(line) + 1 for line in shown) > RESULT_MAX_CHARS and len(shown) > 1:
        shown.pop()
    hidden = len(lines) - len(shown)
    body = "\n".join(shown)
    if len(body) > RESULT_MAX_CHARS:  # one enormous line
        body = body[:RESULT_MAX_CHARS] + "…"
    where = f"saved to {persisted}, ctrl+o to browse" if persisted else ""
    if hidden:
        note = f"… {hidden} more line{'s' if hidden != 1 else ''}" + (f"; {where}" if where else "")
    else:
        note = f"full output {where}" if where else ""
    return body, note


@dataclass(slots=True)
class SubAgentText:
    """What a Task call's sub-agent has said: its latest line while it works, its answer."""

    label: str = ""
    activity: str = ""
    final_text: str = ""
    working: bool = True
    _tail: str = ""

    def add_text(self, text: str) -> None:
        # Only the last line is shown, so only a short tail of the stream is kept.
        self._tail = (self._tail + text)[-400:]
        lines = [line for line in self._tail.splitlines() if line.strip()]
        if lines:
            self.activity = lines[-1].strip()

    def add_message(self, content: tuple[Mapping[str, Any], ...]) -> None:
        text = "\n\n".join(
            str(block.get("text", ""))
            for block in content
            if block.get("type") == "text" and block.get("text")
        )
        if text:
            self.final_text = text
        self._tail = ""

    def add_call(self, tool_name: str, summary: str) -> None:
        self.activity = one_line(f"{tool_name} {summary}")


# -- tool calls -------------------------------------------------------------------------------


class ToolLineHeader(Widget):
    """The one line a call takes: glyph, tool name, input summary, state or duration."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tool-line--glyph",
        "tool-line--name",
        "tool-line--summary",
        "tool-line--state",
    }

    DEFAULT_CSS = """
    ToolLineHeader {
        height: 1;
        padding: 0 1;
    }
    ToolLineHeader > .tool-line--name { text-style: bold; }
    ToolLineHeader > .tool-line--summary { color: $text-muted; }
    ToolLineHeader > .tool-line--state { color: $text-muted; }
    """

    def __init__(self, record: CallRecord) -> None:
        super().__init__()
        self.record = record

    def render(self) -> Text:
        record = self.record
        style = self.get_component_rich_style
        left = Text.assemble(
            (GLYPHS.get(record.state, "?"), style("tool-line--glyph")),
            " ",
            (record.tool_name, style("tool-line--name")),
            " ",
            (one_line(record.summary), style("tool-line--summary")),
            no_wrap=True,
            overflow="ellipsis",
        )
        state = Text(state_text(record), style=style("tool-line--state"))
        room = max(1, self.content_size.width - state.cell_len - 1)
        left.truncate(room, overflow="ellipsis", pad=True)
        return Text.assemble(left, " ", state, no_wrap=True, end="")


class ToolLineDetail(Vertical):
    """The opened call: its full input, the sub-agent's answer, the result the model got."""

    DEFAULT_CSS = """
    ToolLineDetail {
        height: auto;
        padding: 0 1 0 3;
    }
    ToolLineDetail > Static { width: 1fr; }
    ToolLineDetail > .input-headline { text-style: bold; color: $text; }
    ToolLineDetail > .input-body { color: $text-muted; }
    ToolLineDetail > .agent-text {
        color: $text;
        border-left: outer $tool-running;
        padding: 0 1;
    }
    ToolLineDetail > .result {
        color: $text;
        border-left: outer $tool-done;
        padding: 0 1;
    }
    ToolLineDetail > .result-note { color: $text-muted; text-style: italic; }
    """

    def __init__(self, record: CallRecord) -> None:
        super().__init__()
        self.record = record
        headline, body = describe_input(record.input)
        self.headline = Static(headline, markup=False, classes="input-headline")
        self.headline.display = bool(headline)
        self.body = Static(body, markup=False, classes="input-body")
        self.body.display = bool(body)
        self.agent_text = Static("", markup=False, classes="agent-text")
        self.result = Static("", markup=False, classes="result")
        self.result_note = Static("", markup=False, classes="result-note")
        self._shown: tuple[str | None, str, str] | None = None

    def compose(self) -> ComposeResult:
        yield self.headline
        yield self.body
        yield self.agent_text
        yield self.result
        yield self.result_note

    def show(self, agent: SubAgentText | None) -> None:
        record = self.record
        final = agent.final_text if agent is not None else ""
        persisted = str(record.persisted) if record.persisted is not None else ""
        key = (record.result, final, persisted)
        if key == self._shown:  # cutting a long result again is the expensive part
            return
        self._shown = key
        self.agent_text.update(final)
        self.agent_text.display = bool(final)
        if record.result is None:
            body, note = "", ""
        else:
            body, note = cut_result(record.result, persisted or None)
        self.result.update(body)
        self.result.display = bool(body)
        self.result_note.update(note)
        self.result_note.display = bool(note)


class ToolLine(Vertical, can_focus=True):
    """A call in the conversation: one line, opened with enter or a click on it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "toggle_expanded", "Open/close call", show=False),
    ]

    # The state colours of the header and the result live here, not in those widgets'
    # DEFAULT_CSS: Textual scopes a widget's default CSS to the widget, and these rules key
    # on the line's state class, which sits on this (outer) widget.
    DEFAULT_CSS = """
    ToolLine {
        height: auto;
    }
    ToolLine:focus > ToolLineHeader { background: $primary 20%; }
    ToolLine > .notices { padding: 0 1 0 3; color: $text-warning; }
    ToolLine > .agent-activity { padding: 0 1 0 3; color: $text-muted; text-style: dim; }
    ToolLine.-queued > ToolLineHeader > .tool-line--glyph { color: $tool-queued; }
    ToolLine.-waiting > ToolLineHeader > .tool-line--glyph { color: $tool-waiting; }
    ToolLine.-waiting > ToolLineHeader > .tool-line--state { color: $tool-waiting; }
    ToolLine.-running > ToolLineHeader > .tool-line--glyph { color: $tool-running; }
    ToolLine.-done > ToolLineHeader > .tool-line--glyph { color: $tool-done; }
    ToolLine.-failed > ToolLineHeader > .tool-line--glyph { color: $tool-failed; }
    ToolLine.-failed > ToolLineHeader > .tool-line--state { color: $tool-failed; }
    ToolLine.-cancelled > ToolLineHeader > .tool-line--glyph { color: $tool-cancelled; }
    ToolLine.-cancelled > ToolLineHeader > .tool-line--state { color: $tool-cancelled; }
    ToolLine.-failed > ToolLineDetail > .result { border-left: outer $tool-failed; }
    ToolLine.-cancelled > ToolLineDetail > .result { border-left: outer $tool-cancelled; }
    """

    expanded: reactive[bool] = reactive(False, init=False)

    class Toggled(Message):
        """The call was opened or closed."""

        def __init__(self, tool_line: ToolLine, expanded: bool) -> None:
            super().__init__()
            self.tool_line = tool_line
            self.expanded = expanded

        @property
        def control(self) -> ToolLine:
            return self.tool_line

    def __init__(self, record: CallRecord) -> None:
        super().__init__(classes=f"-{record.state}")
        self.record = record
        self.agent: SubAgentText | None = None
        self.header = ToolLineHeader(record)
        self.notices = Static("", markup=False, classes="notices")
        self.notices.display = False
        self.agent_activity = Static("", markup=False, classes="agent-activity")
        self.agent_activity.display = False
        self.detail: ToolLineDetail | None = None
        self._state: CallState = record.state
        self._notice_count = 0

    @property
    def tool_use_id(self) -> str:
        return self.record.tool_use_id

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.notices
        yield self.agent_activity
        if self.detail is not None:  # opened before it was mounted
            yield self.detail

    def update_from_record(self, agent: SubAgentText | None = None) -> None:
        """Redraw from the call's record (and its sub-agent's words) after they changed."""
        record = self.record
        if agent is not None:
            self.agent = agent
        if record.state != self._state:
            self.remove_class(f"-{self._state}")
            self.add_class(f"-{record.state}")
            self._state = record.state
        self.header.refresh()
        if len(record.notices) != self._notice_count:
            self._notice_count = len(record.notices)
            self.notices.update("\n".join(f"{level}: {text}" for level, text in record.notices))
            self.notices.display = True
        working = self.agent is not None and self.agent.working and not record.finished
        activity = self.agent.activity if self.agent is not None else ""
        self.agent_activity.display = bool(working and activity)
        if working and activity:
            self.agent_activity.update(f"agent: {activity}")
        if self.detail is not None and self.expanded:
            self.detail.show(self.agent)

    def action_toggle_expanded(self) -> None:
        self.expanded = not self.expanded

    def on_click(self, event: events.Click) -> None:
        # Only the line itself toggles, so text in the open view can be selected.
        if event.widget is self.header:
            self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        if expanded:
            if self.detail is None:
                self.detail = ToolLineDetail(self.record)
                # Before mount, compose() places it; mounting now would put it first.
                if self.is_mounted:
                    self.mount(self.detail)
            self.detail.display = True
            self.detail.show(self.agent)
        elif self.detail is not None:
            self.detail.display = False
        self.post_message(self.Toggled(self, expanded))
