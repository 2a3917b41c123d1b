"""A session's past as the events that drew it: what a resumed session shows first.

`--continue` and `--resume` should show the earlier conversation as it was seen, not a
count of messages. The transcript holds everything the front end was shown (transcript.py),
so the past is rebuilt as engine events and the front end draws it with the code that drew
it live: the same tool lines, results that open the same way, the same notices.

Why it is shaped this way:

- Prompts are told apart by position, not by content: a prompt is the first user message
  after the session started or a turn ended (`start` and `turn` records); every other user
  message carries tool results (or hook context, or the interrupt note) and is not drawn.
  A replayed prompt is a `PastPrompt`; the front end turns it into its own turn start.
- A call's result is not in its `completed` record (it would double the transcript) but in
  the user message that carried it to the model; it is looked up there by tool_use_id.
- The transcript writes a request's calls as they ran and its assistant message only at the
  request's end, but live the text came first. So a request's events are held until its
  message, and each text block is put back before the first call that followed it.
- The past is drawn, not relived: permission questions and answers, progress, retries,
  MCP server states and hook decisions are left out (the calls' outcomes say what came of
  them); usage updates are kept, so the status bar's tokens and cost continue the session's,
  and so are compaction marks and the context gauge.
- Only the last `PAST_TURNS_SHOWN` turns are drawn (a widget per message; a long session
  would take seconds to draw). Usage from the turns not drawn still counts.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, get_args

from ..events import (
    CancelReason,
    EngineEvent,
    ModeChanged,
    ResultPersisted,
    SavedResult,
    Stage,
    SubAgentEvent,
    ToolCancelled,
    ToolCompleted,
    ToolEvent,
    ToolNotice,
    ToolQueued,
    ToolSandboxed,
    ToolStarted,
)
from .events import (
    AssistantMessage,
    CommandNotice,
    Compacted,
    ContextMeasured,
    HookNotice,
    InstructionsJoined,
    Interrupted,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
    TurnError,
    UsageUpdated,
)
from .transcript_resume import INTERRUPTED_RESULT

PAST_TURNS_SHOWN = 30

_SANDBOXES = ("read-only", "workspace", "none")
_NOTICE_LEVELS = ("info", "warning", "error")


@dataclass(slots=True, kw_only=True)
class PastPrompt(EngineEvent):
    """A prompt the person sent earlier in the session."""

    kind: ClassVar[str] = "past_prompt"
    text: str
    """What the person typed (for a slash command, its line: `/deploy staging`)."""
    expansion: str = ""
    """A slash command's text as the model got it; empty for a plain prompt."""


@dataclass(slots=True)
class Past:
    events: list[EngineEvent] = field(default_factory=list)
    turns: int = 0
    """Turns the session had (prompts sent)."""
    hidden_turns: int = 0
    """The earliest turns, not among `events` (their usage is)."""


def past_events(records: Iterable[Mapping[str, Any]], *, turns: int = PAST_TURNS_SHOWN) -> Past:
    """The events that draw the session's last `turns` turns, in the order they were seen."""
    records = list(records)
    results = _results_by_call(records)
    replay = _Replay(results)
    for record in records:
        replay.take(record)
    replay.cut_short(replay.last_at)
    events = _final_usage_only(replay.events)
    prompts = [i for i, event in enumerate(events) if isinstance(event, PastPrompt)]
    hidden = max(0, len(prompts) - turns)
    if not hidden:
        return Past(events, len(prompts), 0)
    cut = prompts[hidden]
    # Before the cut only usage is kept: the session's tokens and cost count all of it.
    kept = [e for e in events[:cut] if isinstance(e, UsageUpdated)]
    return Past(kept + events[cut:], len(prompts), hidden)


def _final_usage_only(events: list[EngineEvent]) -> list[EngineEvent]:
    """A request's usage streamed in updates; the past needs only the last of each."""
    seen: set[str] = set()
    kept: list[EngineEvent] = []
    for event in reversed(events):
        if isinstance(event, UsageUpdated):
            if event.request_id in seen:
                continue
            seen.add(event.request_id)
        kept.append(event)
    kept.reverse()
    return kept


# -- reading records ----------------------------------------------------------------------------

_WALL_TO_MONOTONIC = time.monotonic() - time.time()


class _Replay:
    def __init__(self, results: Mapping[str, Mapping[str, Any]]) -> None:
        self.results = results
        self.events: list[EngineEvent] = []
        self.held: list[EngineEvent] = []
        """The current request's events, until its assistant message says where text went."""
        self.expect_prompt = True
        self.messages = 0
        self.open_calls: dict[str, ToolEvent] = {}
        """Calls queued and not finished: a crash leaves some."""
        self.turn_open = False
        self.last_at = 0.0

    def take(self, record: Mapping[str, Any]) -> None:
        kind = record.get("type")
        at = self.last_at = _at(record)
        if kind in ("start", "turn"):
            self.flush()
            self.expect_prompt = True
            if kind == "start":
                self.cut_short(at)
            else:
                self.turn_open = False
                self.events.append(
                    TurnEnded(
                        at=at,
                        stop_reason=_text(record.get("stop_reason")) or "end_turn",
                        requests=_int(record.get("number")),
                        usage=_counts(record.get("usage")),
                    )
                )
        elif kind == "message":
            self._message(record, at)
        elif kind == "tool_event":
            event = _tool_event(record, at, self.results)
            if event is not None:
                self.track(event)
                self.held.append(event)
        elif kind == "engine_event":
            event = _engine_event(record, at)
            if event is not None:
                self.held.append(event)

    def _message(self, record: Mapping[str, Any], at: float) -> None:
        content = record.get("content")
        blocks = [b for b in _blocks(content) if isinstance(b, Mapping)]
        if record.get("role") == "user":
            if self.expect_prompt:
                self.flush()
                self.cut_short(at)
                self.turn_open = True
                texts = [_text(b.get("text")) for b in blocks if b.get("type") == "text"]
                sent = texts[0] if texts else ""
                typed = record.get("typed")
                if isinstance(typed, str) and typed:
                    self.events.append(PastPrompt(at=at, text=typed, expansion=sent))
                else:
                    self.events.append(PastPrompt(at=at, text=sent))
                self.expect_prompt = False
            return
        if record.get("role") != "assistant":
            return
        self.messages += 1
        self._assistant(blocks, record, at)

    def _assistant(
        self, blocks: list[Mapping[str, Any]], record: Mapping[str, Any], at: float
    ) -> None:
        held, self.held = self.held, []
        first_of_call: dict[str, int] = {}
        for index, event in enumerate(held):
            if isinstance(event, ToolQueued) and event.parent_tool_use_id is None:
                first_of_call.setdefault(event.tool_use_id, index)
        # Each text block goes before the first call after it that has events; the rest
        # (text after the last call) goes after everything the request did.
        # Thinking goes the same way, as the folded thought it was when it streamed.
        before: dict[int, list[Mapping[str, Any]]] = {}
        pending: list[Mapping[str, Any]] = []
        for block in blocks:
            if block.get("type") in _SAID:
                pending.append(block)
            elif block.get("type") == "tool_use" and str(block.get("id")) in first_of_call:
                before.setdefault(first_of_call[str(block.get("id"))], []).extend(pending)
                pending = []
        for index, event in enumerate(held):
            for said in before.get(index, ()):
                self.events.extend(_said(said, event.at))
            self.events.append(event)
        for said in pending:
            self.events.extend(_said(said, at))
        stop_reason = record.get("stop_reason")
        self.events.append(
            AssistantMessage(
                at=at,
                content=tuple(blocks),
                stop_reason=stop_reason if isinstance(stop_reason, str) else None,
            )
        )
        usage = record.get("usage")
        if isinstance(usage, Mapping) and not self._usage_streamed(held):
            # A transcript from before usage streamed: the message's own count.
            self.events.append(
                UsageUpdated(
                    at=at,
                    request_id=f"past-{self.messages}",
                    model=_text(record.get("model")),
                    usage=_counts(usage),
                )
            )

    @staticmethod
    def _usage_streamed(held: list[EngineEvent]) -> bool:
        return any(isinstance(e, UsageUpdated) for e in held)

    def flush(self) -> None:
        """Events of a request that never got its message (a crash, an interrupt)."""
        self.events.extend(self.held)
        self.held = []

    def track(self, event: EngineEvent) -> None:
        if isinstance(event, ToolQueued):
            self.open_calls[event.tool_use_id] = event
        elif isinstance(event, ToolCompleted | ToolCancelled):
            self.open_calls.pop(event.tool_use_id, None)

    def cut_short(self, at: float) -> None:
        """A turn the process never finished (it crashed, or was killed): its calls end as
        cancelled and the turn as ended, so nothing from the past looks still running."""
        self.flush()
        for call in self.open_calls.values():
            self.events.append(
                ToolCancelled(
                    at=at,
                    tool_use_id=call.tool_use_id,
                    tool_name=call.tool_name,
                    batch_id=call.batch_id,
                    parent_tool_use_id=call.parent_tool_use_id,
                    reason="user_interrupted",
                    message=INTERRUPTED_RESULT,
                )
            )
        self.open_calls.clear()
        if self.turn_open:
            self.events.append(TurnEnded(at=at, stop_reason="session_ended", requests=0, usage={}))
            self.turn_open = False


def _results_by_call(records: list[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    results: dict[str, Mapping[str, Any]] = {}
    for record in records:
        if record.get("type") != "message" or record.get("role") != "user":
            continue
        for block in _blocks(record.get("content")):
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                results.setdefault(str(block.get("tool_use_id")), block)
    return results


def _tool_event(
    record: Mapping[str, Any], at: float, results: Mapping[str, Mapping[str, Any]]
) -> EngineEvent | None:
    call: dict[str, Any] = {
        "at": at,
        "tool_use_id": _text(record.get("tool_use_id")),
        "tool_name": _text(record.get("name")),
        "batch_id": _text(record.get("batch_id")),
        "parent_tool_use_id": record.get("parent_tool_use_id") or None,
    }
    if not call["tool_use_id"]:
        return None
    match record.get("kind"):
        case "queued":
            return ToolQueued(
                **call,
                input=record.get("input"),
                summary=_text(record.get("summary")),
                concurrency_safe=bool(record.get("concurrency_safe")),
                headline_field=_text(record.get("headline_field")) or None,
            )
        case "started":
            return ToolStarted(**call)
        case "sandbox" if record.get("policy") in _SANDBOXES:
            return ToolSandboxed(**call, policy=record["policy"], why=_text(record.get("why")))
        case "persisted":
            return ResultPersisted(
                **call,
                path=Path(_text(record.get("path"))),
                size_chars=_int(record.get("size_chars")),
            )
        case "notice":
            level = record.get("level")
            return ToolNotice(
                **call,
                level=level if level in _NOTICE_LEVELS else "info",
                text=_text(record.get("text")),
            )
        case "completed":
            result = results.get(call["tool_use_id"], {})
            saved = record.get("saved")
            stage = record.get("failed_stage")
            sandbox = record.get("sandbox")
            return ToolCompleted(
                **call,
                duration_s=_number(record.get("duration_s")),
                is_error=bool(record.get("is_error")),
                failed_stage=stage if stage in get_args(Stage) else None,
                sandbox=sandbox if sandbox in _SANDBOXES else None,
                content=result.get("content", ""),
                saved=SavedResult(Path(_text(saved.get("path"))), _int(saved.get("size")))
                if isinstance(saved, Mapping) and saved.get("path")
                else None,
            )
        case "cancelled":
            reason: CancelReason = "user_interrupted"
            if record.get("reason") in get_args(CancelReason):
                reason = record["reason"]
            return ToolCancelled(
                **call,
                reason=reason,
                message=_text(record.get("message")),
            )
    return None


def _engine_event(record: Mapping[str, Any], at: float) -> EngineEvent | None:
    match record.get("kind"):
        case "mode" if isinstance(record.get("mode"), str):
            return ModeChanged(
                at=at,
                mode=record["mode"],
                previous=_text(record.get("previous")),
                why=_text(record.get("why")),
            )
        case "usage":
            return _usage(record, at)
        case "turn_error":
            return TurnError(at=at, message=_text(record.get("message")))
        case "interrupted":
            return Interrupted(at=at)
        case "hook_notice":
            return HookNotice(at=at, text=_text(record.get("text")))
        case "instructions_joined" if isinstance(record.get("paths"), list):
            return InstructionsJoined(
                at=at,
                paths=tuple(_text(p) for p in record["paths"]),
                found_by=_text(record.get("found_by")),
                cwd=_text(record.get("cwd")),
            )
        case "command_notice":
            return CommandNotice(at=at, text=_text(record.get("text")))
        case "subagent":
            return _sub_agent(record, at)
        case "compacted":  # the mark where the conversation was compacted, drawn again
            return Compacted(
                at=at,
                trigger=_text(record.get("trigger")),
                tokens_before=_count(record.get("tokens_before")),
                messages_replaced=_count(record.get("messages_replaced")),
                summary=_text(record.get("summary")),
            )
        case "context" if _count(record.get("window")) > 0:
            threshold = record.get("threshold")
            return ContextMeasured(
                at=at,
                tokens=_count(record.get("tokens")),
                window=_count(record.get("window")),
                threshold=float(threshold) if isinstance(threshold, int | float) else None,
            )
    return None


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _sub_agent(record: Mapping[str, Any], at: float) -> EngineEvent | None:
    inner = record.get("event")
    if not isinstance(inner, Mapping):
        return None
    event: EngineEvent
    match record.get("event_kind"):
        case "usage":
            usage = _usage(inner, at)
            return usage  # the session pays for it; the status bar needs no wrapping
        case "assistant_message":
            content = tuple(b for b in _blocks(inner.get("content")) if isinstance(b, Mapping))
            event = AssistantMessage(at=at, content=content, stop_reason=None)
        case "turn_ended":
            event = TurnEnded(
                at=at, stop_reason=_text(inner.get("stop_reason")), requests=0, usage={}
            )
        case "instructions_joined" if isinstance(inner.get("paths"), list):
            event = InstructionsJoined(
                at=at,
                paths=tuple(_text(p) for p in inner["paths"]),
                found_by=_text(inner.get("found_by")),
                cwd=_text(inner.get("cwd")),
            )
        case _:
            return None
    return SubAgentEvent(
        at=at,
        agent_id=_text(record.get("agent_id")),
        agent_label=_text(record.get("agent_label")),
        event_kind=event.kind,
        event=event,
    )


def _usage(record: Mapping[str, Any], at: float) -> UsageUpdated | None:
    request_id = _text(record.get("request_id"))
    if not request_id:
        return None
    return UsageUpdated(
        at=at,
        request_id=request_id,
        model=_text(record.get("model")),
        usage=_counts(record.get("usage")),
    )


# -- plain values -------------------------------------------------------------------------------


def _at(record: Mapping[str, Any]) -> float:
    """A record's wall time on the monotonic clock events use (durations stay right)."""
    return _number(record.get("at")) + _WALL_TO_MONOTONIC


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return content
    if isinstance(content, str) and content:
        return [{"type": "text", "text": content}]
    return []


def _paragraph(text: str) -> str:
    # Live, consecutive text blocks of one message streamed as one markdown document.
    return text if text.endswith("\n") else text + "\n\n"


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v for k, v in value.items() if isinstance(v, int) and not isinstance(v, bool)}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value)


_SAID = ("text", "thinking", "redacted_thinking")
"""The blocks of an assistant message that were streamed as it was said."""


def _said(block: Mapping[str, Any], at: float) -> list[EngineEvent]:
    """The streamed events an assistant block is replayed as (none for empty text)."""
    kind = block.get("type")
    if kind == "thinking":
        return [ThinkingDelta(at=at, text=_text(block.get("thinking")))]
    if kind == "redacted_thinking":
        return [ThinkingDelta(at=at, text="", redacted=True)]
    text = _text(block.get("text"))
    return [TextDelta(at=at, text=_paragraph(text))] if text else []
