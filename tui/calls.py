"""What the screen knows about the tool calls of a session: plain data, kept from events.

Every widget that shows a call (the tool queue, the conversation's inline lines, the saved
output browser) reads the same `CallBook`, which the app feeds each engine event exactly
once. Keeping this out of the widgets means one place decides what state a call is in, the
widgets only draw, and the bookkeeping is testable without a screen (no textual import).

A call moves queued → (waiting for approval ↔ running) → done | failed | denied | cancelled.
Denied is not failed: the call did not run because someone (the person, a rule, a hook, the
mode) said no. Time spent waiting for the person is kept apart from the call's own time
(`waited`, `elapsed`), as the engine measures it. Calls that share a `batch_id` were allowed
to run together; a batch of one is a serial call. A sub-agent's calls carry the Task call's
id as `parent` and nest under it. Calls belong to the turn in which they were queued; the
app starts a turn when it sends a prompt.

The book also keeps the session's MCP servers' states (`servers`, tui/mcp_board.py): they
come on the same event stream, and the widgets that draw calls draw the servers too (the
status bar's count, the conversation's notice when one fails), so they find both in one place.

People read an MCP tool as `server › tool` (`CallRecord.display_name`); `tool_name` stays the
name the engine, the rules and the hooks know.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from core.access.decision import DecidedBy
from core.access.mcp_names import display_name
from core.agent.events import Compacted, InstructionsJoined
from core.events import (
    EngineEvent,
    McpServerChanged,
    Outcome,
    OutputProgress,
    PermissionAnswered,
    PermissionAsked,
    ResultPersisted,
    SubAgentEvent,
    ToolCancelled,
    ToolCompleted,
    ToolEvent,
    ToolNotice,
    ToolProgress,
    ToolQueued,
    ToolSandboxed,
    ToolStarted,
)

from .mcp_board import McpBoard

CallState = Literal["queued", "waiting", "running", "done", "failed", "denied", "cancelled"]
FINISHED: frozenset[CallState] = frozenset({"done", "failed", "denied", "cancelled"})
STATE_OF_OUTCOME: dict[Outcome, CallState] = {
    "succeeded": "done",
    "failed": "failed",
    "denied": "denied",
}

SANDBOX_BADGES: dict[str, str] = {"read-only": "ro", "workspace": "ws", "none": "un"}
"""Two letters in the narrow queue: read-only sandbox, workspace sandbox, unsandboxed."""
SANDBOX_WORDS: dict[str, str] = {
    "read-only": "read-only sandbox",
    "workspace": "workspace sandbox",
    "none": "not sandboxed",
}

TAIL_LINES = 3
"""How many of a running command's last output lines the queue shows under its row."""


@dataclass(slots=True)
class CallRecord:
    tool_use_id: str
    tool_name: str
    batch_id: str
    summary: str
    input: Any
    concurrency_safe: bool
    queued_at: float
    turn: int
    headline_field: str | None = None
    """The input field the tool says tells most about the call (shown above the rest)."""
    parent: str | None = None
    """The Task call this call's sub-agent made it from."""
    state: CallState = "queued"
    started_at: float | None = None
    ended_at: float | None = None
    why: str = ""
    """For a failed call, the stage that failed; for a denied one, who said no, in a few
    words ("you", "plan mode"; empty when that says nothing); for a cancelled one, the
    reason in words."""
    cancel_reason: str | None = None
    """For a cancelled call, why (`ToolCancelled.reason`: "cut_off", "user_interrupted"...)."""
    asked_at: float | None = None
    """Since when the call has been waiting for a person's answer, while it waits."""
    waited_s: float = 0.0
    """Seconds it waited for answers before now (the engine's figure once it ended)."""
    duration_s: float | None = None
    """Its own time as the engine measured it (waiting left out), once it completed."""
    tail: tuple[str, ...] = ()
    """The last lines of a running command's output."""
    output_bytes: int = 0
    spool: Path | None = None
    """Where a running command writes its output, when the tool says."""
    persisted: Path | None = None
    persisted_chars: int = 0
    result: str | None = None
    """The result text the model was given (`ToolCompleted.content`)."""
    output: Any = None
    """The tool's own typed output (`ToolCompleted.output`)."""
    notices: list[tuple[str, str]] = field(default_factory=list)
    children: list[str] = field(default_factory=list)
    sandbox: str | None = None
    """For a command: the sandbox it runs in ("read-only", "workspace", "none": outside)."""

    @property
    def finished(self) -> bool:
        return self.state in FINISHED

    @property
    def display_name(self) -> str:
        """The tool's name as people read it: `github › create_issue` for an MCP tool."""
        return display_name(self.tool_name)

    def elapsed(self, now: float) -> float:
        """Seconds of its own work so far, or its whole duration once finished (0 before
        start); time spent waiting for a person is left out (`waited`)."""
        if self.duration_s is not None:
            return self.duration_s
        if self.started_at is None:
            return 0.0
        end = self.ended_at if self.ended_at is not None else now
        return max(0.0, end - self.started_at - self.waited(end))

    def waited(self, now: float) -> float:
        """Seconds spent waiting for a person's answer, the wait going on now included."""
        waiting = now - self.asked_at if self.asked_at is not None else 0.0
        return self.waited_s + max(0.0, waiting)

    def stop_waiting(self, at: float) -> None:
        """The question was answered (or dropped) at `at`: its wait joins `waited_s`."""
        if self.asked_at is not None:
            self.waited_s += max(0.0, at - self.asked_at)
            self.asked_at = None


@dataclass(slots=True)
class Batch:
    batch_id: str
    calls: list[str] = field(default_factory=list)

    @property
    def parallel(self) -> bool:
        return len(self.calls) > 1


@dataclass(slots=True)
class Turn:
    index: int
    prompt: str
    started_at: float
    batches: list[Batch] = field(default_factory=list)
    """Top-level calls only, grouped by batch, in the order they were queued."""
    ended_at: float | None = None
    stop_reason: str | None = None
    compacted: int = 0
    """How often the conversation was compacted during this turn (the queue marks it)."""

    @property
    def finished(self) -> bool:
        return self.ended_at is not None

    def call_ids(self) -> Iterable[str]:
        for batch in self.batches:
            yield from batch.calls


@dataclass(frozen=True, slots=True)
class TurnSummary:
    calls: int
    done: int
    failed: int
    cancelled: int
    duration_s: float
    denied: int = 0
    compacted: int = 0

    def describe(self) -> str:
        parts = [f"{self.calls} call{'s' if self.calls != 1 else ''}"]
        parts += [
            f"{count} {word}"
            for count, word in (
                (self.done, "done"),
                (self.failed, "failed"),
                (self.denied, "denied"),
            )
            if count
        ]
        if self.cancelled:
            parts.append(f"{self.cancelled} cancelled")
        if self.compacted:
            parts.append("compacted" if self.compacted == 1 else f"compacted ×{self.compacted}")
        return " · ".join(parts) + f" · {self.duration_s:.1f} s"


class CallBook:
    """Every call of the session, by id, and the turns they belong to."""

    def __init__(self, cwd: Path | None = None) -> None:
        """`cwd`: the project; paths under it are shown relative, as the user thinks of them."""
        self._project_prefix: str | None = None
        self.set_project(cwd)
        self.calls: dict[str, CallRecord] = {}
        self.turns: list[Turn] = []
        self._batches: dict[tuple[int, str], Batch] = {}
        self.servers = McpBoard()
        """The session's MCP servers, as last reported."""

    def set_project(self, cwd: Path | None) -> None:
        self._project_prefix = f"{cwd}/" if cwd is not None else None

    # -- turns ---------------------------------------------------------------------------------

    def begin_turn(self, prompt: str, at: float) -> Turn:
        turn = Turn(index=len(self.turns) + 1, prompt=prompt, started_at=at)
        self.turns.append(turn)
        return turn

    def end_turn(self, stop_reason: str, at: float) -> Turn | None:
        turn = self.current_turn
        if turn is not None and not turn.finished:
            turn.ended_at = at
            turn.stop_reason = stop_reason
        return turn

    @property
    def current_turn(self) -> Turn | None:
        return self.turns[-1] if self.turns else None

    def summary(self, turn: Turn) -> TurnSummary:
        records = [self.calls[i] for i in turn.call_ids()]
        end = turn.ended_at if turn.ended_at is not None else turn.started_at
        return TurnSummary(
            calls=len(records),
            done=sum(r.state == "done" for r in records),
            failed=sum(r.state == "failed" for r in records),
            cancelled=sum(r.state == "cancelled" for r in records),
            duration_s=max(0.0, end - turn.started_at),
            denied=sum(r.state == "denied" for r in records),
            compacted=turn.compacted,
        )

    # -- events --------------------------------------------------------------------------------

    def apply(self, event: EngineEvent) -> CallRecord | None:
        """Take one event into account; returns the call it changed, if any."""
        if not isinstance(event, ToolEvent):  # tool events first: there are thousands of them
            if isinstance(event, Compacted) and self.current_turn is not None:
                self.current_turn.compacted += 1
            if isinstance(event, McpServerChanged):
                self.servers.apply(event)
            if isinstance(event, SubAgentEvent) and isinstance(event.event, InstructionsJoined):
                # The sub-agent's instructions changed: a note under its Task call.
                task = self.calls.get(event.agent_id)
                if task is not None:
                    task.notices.append(("info", event.event.describe()))
                return task
            return None
        if isinstance(event, ToolQueued):
            return self._queued(event)
        record = self.calls.get(event.tool_use_id)
        if record is None:  # an event for a call we never saw queued: show it anyway
            record = self._queued(
                ToolQueued(
                    at=event.at,
                    tool_use_id=event.tool_use_id,
                    tool_name=event.tool_name,
                    batch_id=event.batch_id,
                    parent_tool_use_id=event.parent_tool_use_id,
                    input={},
                    summary="",
                    concurrency_safe=False,
                )
            )
        match event:
            case ToolStarted():
                record.state = "running"
                record.started_at = event.at
            case PermissionAsked():
                record.state = "waiting"
                record.asked_at = event.at
            case ToolSandboxed():
                record.sandbox = event.policy
            case PermissionAnswered():
                record.stop_waiting(event.at)
                if not record.finished:
                    record.state = "running"
            case ToolProgress():
                self._progress(record, event.data)
            case ResultPersisted():
                record.persisted = event.path
                record.persisted_chars = event.size_chars
            case ToolNotice():
                record.notices.append((event.level, event.text))
            case ToolCompleted():
                record.result = result_text(event.content)
                record.output = event.output
                if event.saved is not None:
                    record.persisted = event.saved.path
                    record.persisted_chars = event.saved.size_chars
                record.state = STATE_OF_OUTCOME[event.ended]
                record.why = _why(event)
                record.ended_at = event.at
                record.asked_at = None
                record.waited_s = event.waited_s
                record.duration_s = event.duration_s
                record.sandbox = event.sandbox or record.sandbox
                if record.started_at is None:
                    record.started_at = event.at - event.duration_s
            case ToolCancelled():
                record.result = event.message
                record.state = "cancelled"
                record.why = event.message or str(event.reason)
                record.cancel_reason = event.reason
                record.ended_at = event.at
                record.stop_waiting(event.at)
        return record

    def _queued(self, event: ToolQueued) -> CallRecord:
        turn = self.current_turn or self.begin_turn("", event.at)
        record = CallRecord(
            tool_use_id=event.tool_use_id,
            tool_name=event.tool_name,
            batch_id=event.batch_id,
            summary=self._relative(event.summary),
            input=event.input,
            concurrency_safe=event.concurrency_safe,
            headline_field=event.headline_field,
            queued_at=event.at,
            turn=turn.index,
            parent=event.parent_tool_use_id,
        )
        self.calls[record.tool_use_id] = record
        parent = self.calls.get(event.parent_tool_use_id) if event.parent_tool_use_id else None
        if parent is not None:
            parent.children.append(record.tool_use_id)
        else:
            key = (turn.index, event.batch_id)
            batch = self._batches.get(key)
            if batch is None:
                batch = self._batches[key] = Batch(event.batch_id)
                turn.batches.append(batch)
            batch.calls.append(record.tool_use_id)
        return record

    def _relative(self, summary: str) -> str:
        if self._project_prefix is None:
            return summary
        return summary.replace(self._project_prefix, "")

    @staticmethod
    def _progress(record: CallRecord, data: Any) -> None:
        if not isinstance(data, OutputProgress):
            return  # another tool's payload: nothing the queue shows
        lines = [line for line in data.text.splitlines() if line.strip()]
        record.tail = tuple(lines[-TAIL_LINES:])
        record.output_bytes = data.total_bytes
        record.spool = data.spool


def _why(event: ToolCompleted) -> str:
    if event.ended == "denied":
        return denier(event.denied_by)
    return (event.failed_stage or "") if event.is_error else ""


def denied_words(record: CallRecord) -> str:
    """ "denied by you", "denied by plan mode", or "denied" when who said no says nothing;
    or the tool's own word for the person's "no", when its output has one (`outcome_words`:
    AskUserQuestion's "declined"), so no tool is known here by name."""
    words = getattr(record.output, "outcome_words", "")
    if isinstance(words, str) and words:
        return words
    return f"denied by {record.why}" if record.why else "denied"


def denier(decided_by: DecidedBy | None) -> str:
    """Who said no to a call, in the few words its line has room for ("denied by you");
    empty when the words would say nothing useful (the result says why in full)."""
    if decided_by is None:
        return ""
    match decided_by.kind:
        case "user":
            return "you"
        case "mode":
            return decided_by.detail
        case "rule":
            return "a rule"
        case "hook":
            return "a hook"
        case "skill":
            return "the running skill"
        case _:
            return ""


def format_duration(seconds: float) -> str:
    """How long a call ran, as the queue and the conversation both show it."""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {rest:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


_ERROR_OPEN, _ERROR_CLOSE = "<tool_use_error>", "</tool_use_error>"


def result_text(content: Any) -> str:
    """A tool_result block's content as text (images and other blocks named, not shown); an
    error's `<tool_use_error>` marks are for the model, so people get the words alone."""
    if isinstance(content, str):
        return _unmarked(content)
    if isinstance(content, Sequence):
        parts = []
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(_unmarked(str(block.get("text", ""))))
            elif isinstance(block, Mapping):
                parts.append(f"[{block.get('type', 'block')}]")
        return "\n".join(parts)
    return "" if content is None else str(content)


def _unmarked(text: str) -> str:
    """The words of an error the model got wrapped in `<tool_use_error>` marks."""
    inner = text.strip()
    if inner.startswith(_ERROR_OPEN) and inner.endswith(_ERROR_CLOSE):
        return inner[len(_ERROR_OPEN) : -len(_ERROR_CLOSE)].strip()
    return text
