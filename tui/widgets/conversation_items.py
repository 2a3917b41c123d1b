"""What the conversation knows how to say about one tool call, and its opened view.

The pane (`conversation.py`) decides where things go; the lines of a run of calls are drawn
by `tool_run.py`. This module holds what both need and no layout:

- the formatting rules (what a state says, which input field heads the call, where a long
  result is cut) as plain functions, so they read in one place and need no screen to check;
- `SubAgentText`, what a Task call's sub-agent has said, kept as data the run draws from;
- `ToolLineDetail`, the one widget a call gets, built only when someone opens the call:
  full input, the sub-agent's answer, the result the model got. Results wrap and can be
  selected, which is why the opened view is widgets and the closed line is not.

Colours come from CSS: the call's state is a class on the detail (`-failed`...) that the
result's border keys on with the `$tool-*` theme variables, so a theme decides every colour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from core.events import failure_words
from tui.calls import SANDBOX_WORDS, CallRecord, CallState, denied_words, format_duration

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
    ToolLineDetail.-failed > .result { border-left: outer $tool-failed; }
    ToolLineDetail.-denied > .result { border-left: outer $tool-denied; }
    ToolLineDetail.-cancelled > .result { border-left: outer $tool-cancelled; }
    """

    def __init__(self, record: CallRecord) -> None:
        super().__init__(classes=f"-{record.state}")
        self.record = record
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
        yield self.agent_text
        yield self.result
        yield self.result_note

    @property
    def tool_use_id(self) -> str:
        return self.record.tool_use_id

    def show(self, agent: SubAgentText | None) -> None:
        """Redraw from the record (and the sub-agent's words) after they changed."""
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
