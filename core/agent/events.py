"""The agent loop's own events: text as it streams, whole messages, retries, turn ends.

They live apart from loop.py so a front end can recognise them without importing the loop
(and through it the executor, pydantic and the tools): the TUI draws its first frame before
any of that is loaded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..events import EngineEvent


@dataclass(slots=True, kw_only=True)
class TextDelta(EngineEvent):
    """A piece of the assistant's text as it streams."""

    kind: ClassVar[str] = "text"
    text: str


@dataclass(slots=True, kw_only=True)
class ThinkingDelta(EngineEvent):
    """A piece of the model's thinking as it streams. The whole block, with the signature
    the API wants back, comes in the `AssistantMessage`; a redacted block (`redacted`) has
    no readable text, only that it happened."""

    kind: ClassVar[str] = "thinking"
    text: str
    redacted: bool = False


@dataclass(slots=True, kw_only=True)
class AssistantMessage(EngineEvent):
    """A complete assistant message, as it enters the conversation."""

    kind: ClassVar[str] = "assistant_message"
    content: tuple[Mapping[str, Any], ...]
    stop_reason: str | None


@dataclass(slots=True, kw_only=True)
class Retrying(EngineEvent):
    """A request failed and will be tried again after `delay_s` ("retrying in 4 s")."""

    kind: ClassVar[str] = "retrying"
    attempt: int
    delay_s: float
    error: str
    discarded_calls: int = 0
    """Tool calls the failed stream had started, now cancelled or ignored."""
    max_attempts: int = 0
    """How many attempts the loop makes in all (0: not said)."""
    discarded_text: str = ""
    """Text the failed stream had already streamed: withdrawn, since the retried response
    says it again (a front end drops it rather than show it twice)."""

    def describe(self) -> str:
        wait = f"{self.delay_s:.1f}" if 0 < self.delay_s < 10 else f"{self.delay_s:.0f}"
        of = f"/{self.max_attempts}" if self.max_attempts else ""
        return f"{self.error}, retrying in {wait} s ({self.attempt + 1}{of})"


@dataclass(slots=True, kw_only=True)
class TurnError(EngineEvent):
    """The turn stopped on an error retries could not cure; `message` says what to do."""

    kind: ClassVar[str] = "turn_error"
    message: str


@dataclass(slots=True, kw_only=True)
class Interrupted(EngineEvent):
    kind: ClassVar[str] = "interrupted"


@dataclass(slots=True, kw_only=True)
class HookNotice(EngineEvent):
    """Something a session hook (UserPromptSubmit, Stop) said to the user."""

    kind: ClassVar[str] = "hook_notice"
    text: str


@dataclass(slots=True, kw_only=True)
class CommandNotice(EngineEvent):
    """What a slash command's `@path` or !`cmd` left out, said to the person before the
    prompt goes (core/agent/command_prepare.py)."""

    kind: ClassVar[str] = "command_notice"
    text: str


@dataclass(slots=True, kw_only=True)
class RecordNotWritten(EngineEvent):
    """The session's audit log or transcript could not be written (said once per session):
    the person must know the record they rely on has a hole. Calls go on deciding as before
    (core/permissions/audit.py says why)."""

    kind: ClassVar[str] = "record_not_written"
    record: Literal["audit log", "transcript"]
    reason: str

    def describe(self) -> str:
        """`audit log not written: [Errno 28] No space left on device`."""
        return f"{self.record} not written: {self.reason}"


@dataclass(slots=True, kw_only=True)
class UserMessage(EngineEvent):
    """A user message entering the conversation: the prompt, or the turn's tool results."""

    kind: ClassVar[str] = "user_message"
    content: tuple[Mapping[str, Any], ...]


@dataclass(slots=True, kw_only=True)
class TurnEnded(EngineEvent):
    """`send` is done: why (end_turn, max_turns, interrupted, error, a hook's reason...)."""

    kind: ClassVar[str] = "turn_ended"
    stop_reason: str
    requests: int
    usage: dict[str, int]


@dataclass(slots=True, kw_only=True)
class UsageUpdated(EngineEvent):
    """One model request's token counts so far, as the response streams: the input counts
    at `message_start`, the output count growing with each `message_delta`. A later update
    of the same request (same `request_id`) replaces the earlier one; it does not add."""

    kind: ClassVar[str] = "usage"
    request_id: str
    """The response's message id: what tells one request's updates from another's."""
    model: str
    usage: dict[str, int]
    """The API's counts (`input_tokens`, `output_tokens`, `cache_creation_input_tokens`,
    `cache_read_input_tokens`); input excludes the cache reads and writes, as the API says."""


@dataclass(slots=True, kw_only=True)
class ContextMeasured(EngineEvent):
    """How full the model's context window is, after a response or a compaction."""

    kind: ClassVar[str] = "context"
    tokens: int
    window: int
    threshold: float | None = None
    """The fraction past which the loop compacts by itself; None: it does not."""


@dataclass(slots=True, kw_only=True)
class Compacting(EngineEvent):
    """A summary is being written to replace the conversation (`Compacted` or
    `CompactionFailed` follows): the context gauge says so meanwhile."""

    kind: ClassVar[str] = "compacting"
    trigger: str


@dataclass(slots=True, kw_only=True)
class Compacted(EngineEvent):
    """The conversation was replaced by a summary: the place a front end marks."""

    kind: ClassVar[str] = "compacted"
    trigger: str
    """"auto" (the threshold, or a request refused as too long) or "manual" (/compact)."""
    tokens_before: int
    messages_replaced: int
    summary: str


@dataclass(slots=True, kw_only=True)
class CompactionFailed(EngineEvent):
    """Compaction did not happen (the conversation is unchanged), or it cannot help (the
    instructions and tools fill the window; the threshold rests). `message` says which."""

    kind: ClassVar[str] = "compaction_failed"
    message: str


@dataclass(slots=True, kw_only=True)
class InstructionsJoined(EngineEvent):
    """Instruction files found mid-session now apply: a subdirectory's CLAUDE.md (or rules,
    AGENTS.md...) on the first read below it, or a `.claude/rules` file scoped to the file
    just read. The model gets their text beside that read's result; the person is told,
    since the model's instructions changed without anyone typing anything."""

    kind: ClassVar[str] = "instructions_joined"
    paths: tuple[str, ...]
    found_by: str
    """The file whose read brought them in."""
    cwd: str = ""
    """The working directory, which the paths are shown relative to."""

    def describe(self) -> str:
        """`instructions from sub/CLAUDE.md now apply (found reading sub/x.py)`."""
        shown = [_relative(p, self.cwd) for p in self.paths]
        return (
            f"instructions from {', '.join(shown)} now apply "
            f"(found reading {_relative(self.found_by, self.cwd)})"
        )


def _relative(path: str, cwd: str | None) -> str:
    """`path` below `cwd` as the person reads it there; elsewhere as it is."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path
