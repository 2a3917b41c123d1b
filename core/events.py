"""Typed events: the only way a front end learns what the engine is doing.

The engine emits every state change of every tool call to an `EventSink` it is given (the
TUI, the headless printer and the tests are sinks). Events are small frozen values, cheap to
make on the hot path, and each says which call it is about (`tool_use_id`), which tool, which
batch it runs in (calls that may run together share a batch id) and when (`at`, from
`time.monotonic()`, so durations never jump with the wall clock; `wall_time()` converts).

Events are read-only by convention rather than `frozen`: a frozen dataclass costs three times
as much to build, and a busy turn emits tens of thousands of them.

One call produces: `ToolQueued`, then `ToolStarted`, then any of `ToolProgress`,
`PermissionAsked` / `PermissionAnswered`, `ResultPersisted`, `ToolNotice`, and exactly one
terminal event: `ToolCompleted` or `ToolCancelled`. A call cancelled before it started goes
straight from `ToolQueued` to `ToolCancelled`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from .access.decision import DecidedBy

if TYPE_CHECKING:
    from .ports import PermissionAnswer, PermissionRequest

Stage = Literal[
    "lookup", "schema", "validate", "pre_hook", "permission", "call", "map", "persist", "post_hook"
]
"""The lifecycle stage at which a call failed (core/executor/lifecycle.py runs them in order)."""
CancelReason = Literal["sibling_error", "user_interrupted", "streaming_fallback", "cut_off"]
"""Why a call was cancelled rather than run to its end."""
Outcome = Literal["succeeded", "failed", "denied"]
"""How a completed call ended. Denied is not failed: the call did not run because someone
(the person, a rule, a hook, the mode) said no. A cancelled call ends with `ToolCancelled`."""

FAILURE_WORDS: dict[Stage, str] = {
    "lookup": "not run: there is no such tool",
    "schema": "not run: its input does not fit the tool",
    "validate": "not run: the tool refused its input",
    "pre_hook": "not run: a hook blocked it",
    "permission": "not run: not allowed",
    "call": "failed",
    "map": "failed: its result could not be read",
    "post_hook": "ran, then a hook reported a problem",
    "persist": "ran, but its output could not be saved",
}
"""A failed call's stage in the words a person reads (the app's lines, headless output):
a stage name such as `validate` means nothing to someone watching."""

CANCEL_WORDS: dict[CancelReason, str] = {
    "sibling_error": "cancelled: another command in its batch failed",
    "user_interrupted": "cancelled: interrupted",
    "streaming_fallback": "cancelled: the response stream broke and was retried",
    "cut_off": "not run: the response was cut off at the output token limit",
}
"""A cancelled call's reason in a person's words (`CANCEL_MESSAGES` is what the model gets)."""


def failure_words(stage: str | None) -> str:
    """How a failed call ended, in words, for a stage known or not ("failed" when None)."""
    if not stage:
        return "failed"
    known = (words for name, words in FAILURE_WORDS.items() if name == stage)
    return next(known, f"failed ({stage.replace('_', ' ')})")


_WALL_OFFSET = time.time() - time.monotonic()


def wall_time(at: float) -> float:
    """Seconds since the epoch for a monotonic event timestamp."""
    return at + _WALL_OFFSET


@dataclass(slots=True, kw_only=True)
class EngineEvent:
    kind: ClassVar[str] = "event"
    at: float = field(default_factory=time.monotonic)


@dataclass(slots=True, kw_only=True)
class ToolEvent(EngineEvent):
    tool_use_id: str
    tool_name: str
    batch_id: str
    parent_tool_use_id: str | None = None
    """Set for calls made by a sub-agent: the tool_use_id of its Task call."""


@dataclass(slots=True, kw_only=True)
class ToolQueued(ToolEvent):
    kind: ClassVar[str] = "queued"
    input: Any
    summary: str
    concurrency_safe: bool
    headline_field: str | None = None
    """The input field that says most about the call (`Tool.headline_field`): a front end
    shows it above the rest of the input."""


@dataclass(slots=True, kw_only=True)
class ToolStarted(ToolEvent):
    kind: ClassVar[str] = "started"


@dataclass(slots=True, kw_only=True)
class ToolSandboxed(ToolEvent):
    """How a command is about to run: in which sandbox, or outside it, and why. Emitted
    just before a sandboxable tool (Bash) starts its work, with the policy it will get."""

    kind: ClassVar[str] = "sandbox"
    policy: Literal["read-only", "workspace", "none"]
    why: str


@dataclass(frozen=True, slots=True)
class OutputProgress:
    """A running command's output so far: its last lines (`text`), how much it has written,
    and where the whole output is being spooled. Bash's progress payload."""

    text: str
    total_bytes: int
    elapsed_s: float
    spool: Path
    kind: Literal["output"] = "output"


@dataclass(slots=True, kw_only=True)
class ToolProgress(ToolEvent):
    kind: ClassVar[str] = "progress"
    data: Any
    """The tool's own payload: `OutputProgress` for commands; front ends match on its type."""


@dataclass(slots=True, kw_only=True)
class PermissionAsked(ToolEvent):
    kind: ClassVar[str] = "permission_asked"
    request: PermissionRequest


@dataclass(slots=True, kw_only=True)
class PermissionAnswered(ToolEvent):
    kind: ClassVar[str] = "permission_answered"
    answer: PermissionAnswer
    decided_by: DecidedBy | None = None
    """None when the person answered. Otherwise the question was withdrawn unanswered: the
    mode changed while it waited and the chain, asked again, allowed or denied the call
    (`answer` is then `Approve()` or `Reject()`, and this says what decided)."""


@dataclass(slots=True, kw_only=True)
class ResultPersisted(ToolEvent):
    kind: ClassVar[str] = "persisted"
    path: Path
    size_chars: int


@dataclass(slots=True, kw_only=True)
class ToolNotice(ToolEvent):
    """Something the user should see about a call: a hook's message, a hook that failed."""

    kind: ClassVar[str] = "notice"
    level: Literal["info", "warning", "error"]
    text: str


@dataclass(frozen=True, slots=True)
class SavedResult:
    """Output too large for the model, saved to disk: by the engine (a result over its
    tool's limit) or by the tool itself (Bash's spool file)."""

    path: Path
    size_chars: int
    """Characters of a result the engine saved; bytes of output a tool saved itself (Bash's
    spool is raw output, not decoded), as `ResultPersisted.size_chars` has it too."""


@dataclass(slots=True, kw_only=True)
class ToolCompleted(ToolEvent):
    """The call's end, with its result: front ends read results here, never from messages."""

    kind: ClassVar[str] = "completed"
    duration_s: float
    """The call's own time: from its start to its end, less `waited_s`."""
    is_error: bool
    failed_stage: Stage | None = None
    """For an error: the lifecycle stage that produced it (`call` when the tool itself failed)."""
    sandbox: Literal["read-only", "workspace", "none"] | None = None
    """For a command: the sandbox it ran in ("none": outside); None for other tools."""
    content: str | list[dict[str, Any]] = ""
    """The tool_result content the model was given (for saved output, the preview it saw)."""
    saved: SavedResult | None = None
    """Where the full output is, when it was too large to give the model whole."""
    output: Any = None
    """The tool's own typed output (`ToolResult.data`: a command's exit code and output, an
    edit's diff, ...), for front ends that show more than the model's text; None when the
    call failed before its tool ran (`content` says why)."""
    outcome: Outcome | None = None
    """How it ended (the engine always says; read `ended`, which also answers for events
    built without it)."""
    denied_by: DecidedBy | None = None
    """For a denied call: who said no (`user` for the person)."""
    waited_s: float = 0.0
    """Seconds spent waiting for a person's answer; `duration_s` leaves them out."""

    @property
    def ended(self) -> Outcome:
        if self.outcome is not None:
            return self.outcome
        return "failed" if self.is_error else "succeeded"


@dataclass(slots=True, kw_only=True)
class ToolCancelled(ToolEvent):
    kind: ClassVar[str] = "cancelled"
    reason: CancelReason
    message: str


@dataclass(slots=True, kw_only=True)
class HookRan(EngineEvent):
    """Hooks of one event had something to say: a decision, changed input, context for the
    model, a message, a stop. Kept in the transcript, so that "why was this asked?" has an
    answer there too; a hook that matched nothing or said nothing emits none."""

    kind: ClassVar[str] = "hook"
    hook_event: str
    """PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, SessionStart, Stop."""
    outcome: Any
    """What they decided (`core.hooks`: PreToolUseOutcome, PostToolUseOutcome,
    EventHookOutcome)."""
    tool_use_id: str | None = None
    tool_name: str | None = None


@dataclass(slots=True, kw_only=True)
class TodosChanged(EngineEvent):
    """The agent's todo list was replaced (TodoWrite)."""

    kind: ClassVar[str] = "todos"
    todos: tuple[Any, ...]
    agent_id: str | None = None


@dataclass(slots=True, kw_only=True)
class ModeChanged(EngineEvent):
    """The permission mode changed (the mode key, plan mode entered or approved)."""

    kind: ClassVar[str] = "mode"
    mode: str
    previous: str
    why: str = ""
    by: ModeChanger | None = None
    """Who changed it, for the audit log; None when not known (an older transcript)."""


ModeChanger = Literal["key", "palette", "slash", "plan approval", "agent"]
"""Who may change the mode: the mode key, the palette, `/mode`, the person approving a plan,
the agent entering plan mode."""


@dataclass(slots=True, kw_only=True)
class SubAgentEvent(EngineEvent):
    """A sub-agent's own loop event (text delta, message, turn end...), wrapped so a front end
    can nest it under the Task call; its tool events come tagged and are not wrapped."""

    kind: ClassVar[str] = "subagent"
    agent_id: str
    """The Task call's tool_use_id: what `ToolContext.agent_id` and `TodosChanged.agent_id`
    hold inside the sub-agent (named so, not `parent_tool_use_id`, because the transcript
    treats that name as a tool event's own and would leave it out of the record)."""
    agent_label: str
    event_kind: str
    """`event.kind`, so a JSON record says what the wrapped event is."""
    event: EngineEvent

    @property
    def parent_tool_use_id(self) -> str:
        """The same id under the name tool events use, for front ends that nest by it."""
        return self.agent_id


McpState = Literal["connecting", "ready", "failed", "crashed", "skipped", "closed"]
"""Where an MCP server is: starting; ready with its tools; failed to start (and why);
crashed after starting (restarted on next use); not started (`skipped`: an untrusted
project's server); shut down."""


@dataclass(slots=True, kw_only=True)
class McpServerChanged(EngineEvent):
    """An MCP server of the session changed state (core/mcp/): front ends show each server
    with its state, the transcript keeps why one failed."""

    kind: ClassVar[str] = "mcp_server"
    server: str
    state: McpState
    tools: int = 0
    """Its tools in the pool (ready) or 0."""
    detail: str = ""
    """Why it failed, crashed or was skipped; for a ready server, the tools it offered that
    could not be used and why."""
    transport: str = "stdio"


@dataclass(slots=True, kw_only=True)
class CommandPrepared(EngineEvent):
    """A slash command's `@path` files were read and its !`cmd` lines run: `text` is what the
    model is really sent, so a front end showing the command's text shows this instead."""

    kind: ClassVar[str] = "command_prepared"
    text: str


EventSink = Callable[[EngineEvent], None]


def null_sink(event: EngineEvent) -> None:
    return None


class EventRecorder:
    """A sink that keeps every event; for tests, benchmarks and the headless printer."""

    def __init__(self) -> None:
        self.events: list[EngineEvent] = []

    def __call__(self, event: EngineEvent) -> None:
        self.events.append(event)

    def of(self, tool_use_id: str) -> list[ToolEvent]:
        return [e for e in self.events if isinstance(e, ToolEvent) and e.tool_use_id == tool_use_id]

    def kinds(self, tool_use_id: str) -> list[str]:
        return [e.kind for e in self.of(tool_use_id)]
