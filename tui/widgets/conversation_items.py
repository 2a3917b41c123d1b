"""What the conversation knows how to say about one tool call, and its opened view.

The pane (`conversation.py`) decides where things go; the lines of a run of calls are drawn
by `tool_run.py`. This module holds what both need and no layout:

- the formatting rules (what a state says, which input field heads the call, where a long
  result is cut) as plain functions, so they read in one place and need no screen to check;
- `SubAgentText`, what a Task call's sub-agent has said and thought, kept as data the run
  draws from;
- `ToolLineDetail`, the one widget a call gets, built only when someone opens the call:
  full input, the sub-agent's thinking (folded, as the main agent's is), its answer, the
  result the model got. Results wrap and can be selected, which is why the opened view is
  widgets and the closed line is not.

Colours come from CSS: the call's state is a class on the detail (`-failed`...) that the
result's border keys on with the `$tool-*` theme variables, so a theme decides every colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from core.events import failure_words
from tui.calls import SANDBOX_WORDS, CallRecord, CallState, denied_words, format_duration

from .thinking import ThinkingView

RESULT_MAX_LINES = 40
RESULT_MAX_CHARS = 8_000
"""A result longer than this is cut in the expanded view; the saved copy has it all."""

GLYPHS: dict[CallState, str] = {
    "queued": "○",
    "waiting": "◆",
    "running": "●",
    "done": "✓",
    "failed": "✗",
    "denied": "⊖",
    "cancelled": "⊘",
}
STATE_CLASSES: tuple[str, ...] = tuple(f"-{state}" for state in GLYPHS)


def state_text(record: CallRecord) -> str:
    """The right-hand end of a call's line: what it is doing, or how long it took, and for
    a command whether it runs sandboxed."""
    state = _state_words(record)
    if record.sandbox is not None:
        return f"{SANDBOX_WORDS[record.sandbox]} · {state}"
    return state


def _state_words(record: CallRecord) -> str:
    match record.state:
        case "queued":
            return "queued"
        case "waiting":
            return "needs approval"
        case "running":
            return "running"
        case "done":
            return format_duration(record.elapsed(record.ended_at or 0.0)) + waited_words(record)
        case "failed":
            took = format_duration(record.elapsed(record.ended_at or 0.0))
            return f"{failure_words(record.why)} · {took}{waited_words(record)}"
        case "denied":  # it never ran: no time of its own to show
            return denied_words(record) + waited_words(record)
        case "cancelled":
            if record.cancel_reason == "cut_off":  # max_tokens ended the response mid-call
                return "not run: the response was cut off"
            return "cancelled"
    return record.state


def waited_words(record: CallRecord) -> str:
    """ " · waited 6.2 s" for a finished call that waited for a person's answer: kept apart
    from its own time, which it follows."""
    return f" · waited {format_duration(record.waited_s)}" if record.waited_s > 0 else ""


def one_line(text: str) -> str:
    return " ".join(text.split())


def describe_input(tool_input: Any, headline_field: str | None = None) -> tuple[str, str]:
    """The headline of a call's input (the field its tool names: a command, a path) and the
    rest as pretty JSON. A shell command reads as one (`$ ...`)."""
    import json  # here, not at the top: the first frame opens no call

    if not isinstance(tool_input, Mapping):
        return "", json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)
    headline = ""
    rest = dict(tool_input)
    value = rest.get(headline_field) if headline_field else None
    if headline_field and isinstance(value, str) and value:
        headline = ("$ " if headline_field == "command" else "") + rest.pop(headline_field)
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
class SubAgentThought:
    """One thinking block of a sub-agent: growing while it streams."""

    text: str = ""
    redacted: bool = False
    streaming: bool = True


@dataclass(slots=True)
class SubAgentText:
    """What a Task call's sub-agent has said: its latest line while it works, its thinking,
    its answer."""

    label: str = ""
    activity: str = ""
    final_text: str = ""
    working: bool = True
    thoughts: list[SubAgentThought] = field(default_factory=list)
    _tail: str = ""
    _attempt_from: int = 0
    """The first thought of the response streaming now (a retry withdraws from here)."""

    def add_text(self, text: str) -> None:
        self._end_thought()
        # Only the last line is shown, so only a short tail of the stream is kept.
        self._tail = (self._tail + text)[-400:]
        lines = [line for line in self._tail.splitlines() if line.strip()]
        if lines:
            self.activity = lines[-1].strip()

    def add_thinking(self, text: str, *, redacted: bool = False) -> None:
        """A piece of a thought as it streams; a redacted block arrives whole."""
        last = self.thoughts[-1] if self.thoughts else None
        if last is None or not last.streaming or redacted:
            self._end_thought()
            last = SubAgentThought(redacted=redacted, streaming=not redacted)
            self.thoughts.append(last)
        last.text += text
        self.activity = _thinking_activity(last)

    def add_message(self, content: tuple[Mapping[str, Any], ...]) -> None:
        if len(self.thoughts) == self._attempt_from:  # nothing streamed: a replayed message
            self.thoughts += [
                SubAgentThought(str(block.get("thinking", "")), kind != "thinking", False)
                for block in content
                if (kind := block.get("type")) in ("thinking", "redacted_thinking")
            ]
        self._end_thought()
        self._attempt_from = len(self.thoughts)
        text = "\n\n".join(
            str(block.get("text", ""))
            for block in content
            if block.get("type") == "text" and block.get("text")
        )
        if text:
            self.final_text = text
        self._tail = ""

    def retried(self) -> None:
        """The response's stream broke: its thoughts go, the retry thinks again."""
        del self.thoughts[self._attempt_from :]
        self._tail = ""

    def _end_thought(self) -> None:
        if self.thoughts:
            self.thoughts[-1].streaming = False

    def add_call(self, tool_name: str, summary: str) -> None:
        self._end_thought()
        self.activity = one_line(f"{tool_name} {summary}")


def _thinking_activity(thought: SubAgentThought) -> str:
    """The Task line's activity row while its sub-agent thinks: folded, as the main agent's
    thinking is; the opened call shows the thought."""
    if thought.redacted:
        return "∴ thinking (redacted)"
    words = len(thought.text.split())
    return f"∴ thinking… {words} word{'s' if words != 1 else ''}"


# -- tool calls -------------------------------------------------------------------------------


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
    ToolLineDetail > .agent-thinking { height: auto; }
    ToolLineDetail > .agent-thinking > ThinkingView { margin: 0; }
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
    ToolLineDetail.-failed > .result { border-left: outer $tool-failed; }
    ToolLineDetail.-denied > .result { border-left: outer $tool-denied; }
    ToolLineDetail.-cancelled > .result { border-left: outer $tool-cancelled; }
    """

    def __init__(self, record: CallRecord, *, thinking_expanded: bool = False) -> None:
        """`thinking_expanded`: the sub-agent's thoughts open, as the pane's are."""
        super().__init__(classes=f"-{record.state}")
        self.record = record
        self.thinking_expanded = thinking_expanded
        self.agent_thinking = Vertical(classes="agent-thinking")
        self._agent: SubAgentText | None = None
        self._state: CallState = record.state
        headline, body = describe_input(record.input, record.headline_field)
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
        yield self.agent_thinking
        yield self.agent_text
        yield self.result
        yield self.result_note

    @property
    def tool_use_id(self) -> str:
        return self.record.tool_use_id

    def thinking_views(self) -> list[ThinkingView]:
        """The sub-agent's thoughts as drawn, in order."""
        return list(self.agent_thinking.query_children(ThinkingView))

    def set_thinking_expanded(self, expanded: bool) -> None:
        """Open or fold the sub-agent's thoughts (the thinking key)."""
        self.thinking_expanded = expanded
        for view in self.thinking_views():
            view.set_expanded(expanded)

    def on_mount(self) -> None:
        self._show_thoughts()

    def _show_thoughts(self) -> None:
        """One folded `ThinkingView` per thought, the newest growing as it streams; views
        are added once the detail is on screen (a container takes no children before)."""
        thoughts = self._agent.thoughts if self._agent is not None else []
        if not self.agent_thinking.is_attached:
            return
        views = self.thinking_views()
        for view in views[len(thoughts) :]:  # a retry withdrew them
            view.remove()
        new: list[ThinkingView] = []
        for index, thought in enumerate(thoughts):
            if index < len(views):
                view = views[index]
            else:
                view = ThinkingView(expanded=self.thinking_expanded, redacted=thought.redacted)
                new.append(view)
            view.text = thought.text
            if not thought.streaming:
                view.streaming = False
            view.refresh_text()
        if new:
            self.agent_thinking.mount_all(new)

    def show(self, agent: SubAgentText | None) -> None:
        """Redraw from the record (and the sub-agent's words) after they changed."""
        self._agent = agent
        self._show_thoughts()
        record = self.record
        if record.state != self._state:
            self.remove_class(f"-{self._state}")
            self.add_class(f"-{record.state}")
            self._state = record.state
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
