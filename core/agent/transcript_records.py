"""The transcript's records, a builder for each kind; each is a dict of plain JSON values.

- `event_record` is the single translation of an engine event into plain JSON: the
  transcript and headless `stream-json` output both use it, so they cannot drift apart.
- Records are built by the helpers below, whose first key is always `type`. Summaries rely
  on that to count records without parsing every line (sessions.py).
- `jsonable` turns whatever else a record carries (pydantic models, dataclasses, paths, NaN)
  into plain JSON rather than lose the record.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from enum import Enum
from pathlib import PurePath
from typing import Any, Literal

from ..access.decision import DecidedBy
from ..events import (
    EngineEvent,
    HookRan,
    ModeChanged,
    PermissionAnswered,
    PermissionAsked,
    ResultPersisted,
    TodosChanged,
    ToolCancelled,
    ToolCompleted,
    ToolEvent,
    ToolNotice,
    ToolProgress,
    ToolQueued,
    ToolStarted,
    wall_time,
)
from ..ports import Approve

Role = Literal["user", "assistant"]

PROGRESS_STRING_CAP = 4_096
"""Characters a string in progress data keeps (its end: progress is about the latest)."""

_MAX_DEPTH = 32
_BASE_FIELDS = frozenset(
    {"at", "tool_use_id", "tool_name", "batch_id", "parent_tool_use_id", "kind"}
)


def message_record(
    role: Role,
    content: str | Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    stop_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
    typed: str | None = None,
) -> dict[str, Any]:
    """A message of the conversation, as sent to or received from the API; `typed`: the
    slash command line a prompt was expanded from (`/deploy staging`)."""
    record: dict[str, Any] = {
        "type": "message",
        "at": time.time(),
        "role": role,
        "content": jsonable(content),
    }
    if model is not None:
        record["model"] = model
    if stop_reason is not None:
        record["stop_reason"] = stop_reason
    if typed is not None:
        record["typed"] = typed
    if usage is not None:
        record["usage"] = jsonable(usage)
    return record


def compaction_record(
    trigger: str,
    *,
    messages: Sequence[Mapping[str, Any]],
    summary_request: Any,
    summary: Sequence[Mapping[str, Any]],
    tokens_before: int,
    instructions: str = "",
) -> dict[str, Any]:
    """The conversation was compacted: `messages` replace every message before this record
    (which the transcript keeps); the summary request and answer are kept beside them."""
    return {
        "type": "compaction",
        "at": time.time(),
        "trigger": trigger,
        "tokens_before": tokens_before,
        "instructions": instructions,
        "summary_request": jsonable(summary_request),
        "summary": jsonable(summary),
        "messages": jsonable(messages),
    }


def event_record(event: EngineEvent) -> dict[str, Any]:
    """An engine event as plain JSON: for the transcript and for `stream-json` output.

    Tool events carry `tool_use_id`, `name` (the tool), `batch_id`, `parent_tool_use_id`;
    every event carries `kind` and `timestamp` (seconds since the epoch).
    """
    timestamp = wall_time(event.at)
    record: dict[str, Any]
    if isinstance(event, ToolEvent):
        record = {
            "type": "tool_event",
            "at": timestamp,
            "kind": event.kind,
            "tool_use_id": event.tool_use_id,
            "name": event.tool_name,
            "batch_id": event.batch_id,
            "parent_tool_use_id": event.parent_tool_use_id,
            "timestamp": timestamp,
        }
    else:
        record = {"type": "engine_event", "at": timestamp, "kind": event.kind}
        record["timestamp"] = timestamp
    record.update(_event_fields(event))
    return record


def _event_fields(event: EngineEvent) -> dict[str, Any]:
    match event:
        case ToolQueued():
            return {
                "input": jsonable(event.input),
                "summary": event.summary,
                "concurrency_safe": event.concurrency_safe,
                "headline_field": event.headline_field,
            }
        case ToolStarted():
            return {}
        case ToolProgress():
            return {"data": jsonable(event.data, cap=PROGRESS_STRING_CAP)}
        case PermissionAsked():
            request = event.request
            return {
                "message": request.message,
                "decided_by": _decided_by(request.decided_by),
                "suggestions": list(request.suggestions),
                "agent_label": request.agent_label,
            }
        case PermissionAnswered():
            answer = event.answer
            # decided_by: None when the person answered; else what settled it unanswered
            decided_by = _decided_by(event.decided_by)
            if isinstance(answer, Approve):
                return {
                    "answer": "approve",
                    "scope": answer.scope,
                    "rule": answer.rule,
                    "feedback": None,
                    "updated_input": jsonable(answer.updated_input),
                    "decided_by": decided_by,
                }
            return {
                "answer": "reject",
                "scope": None,
                "rule": None,
                "feedback": answer.feedback,
                "decided_by": decided_by,
            }
        case ResultPersisted():
            return {"path": str(event.path), "size_chars": event.size_chars}
        case ToolNotice():
            return {"level": event.level, "text": event.text}
        case ToolCompleted():
            # The content is in the user message that carries it to the model; the typed
            # output is the front ends' (written, it would double the transcript).
            saved = event.saved
            return {
                "duration_s": event.duration_s,
                "waited_s": event.waited_s,
                "outcome": event.ended,
                "denied_by": _decided_by(event.denied_by),
                "is_error": event.is_error,
                "failed_stage": event.failed_stage,
                "sandbox": event.sandbox,
                "saved": None
                if saved is None
                else {"path": str(saved.path), "size": saved.size_chars},
            }
        case ToolCancelled():
            return {"reason": event.reason, "message": event.message}
        case TodosChanged():
            return {"todos": jsonable(event.todos), "agent_id": event.agent_id}
        case HookRan():
            # Not a tool event (session hooks have no call), but a tool's hooks name it.
            return {
                "hook_event": event.hook_event,
                "tool_use_id": event.tool_use_id,
                "name": event.tool_name,
                "outcome": jsonable(event.outcome),
            }
        case ModeChanged():
            return {"mode": event.mode, "previous": event.previous, "why": event.why}
    # An event class added later still gets into the transcript, field by field.
    return {
        field.name: jsonable(getattr(event, field.name))
        for field in dataclasses.fields(event)
        if field.name not in _BASE_FIELDS
    }


def _decided_by(decided_by: DecidedBy | None) -> dict[str, str] | None:
    return None if decided_by is None else {"kind": decided_by.kind, "detail": decided_by.detail}


def turn_record(
    number: int,
    *,
    stop_reason: str,
    duration_s: float | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The end of a turn: the agent stopped and waits for the user (call `sync()` after)."""
    return {
        "type": "turn",
        "at": time.time(),
        "number": number,
        "stop_reason": stop_reason,
        "duration_s": duration_s,
        "usage": jsonable(usage),
    }


def start_record(*, resumed: bool, version: str, model: str = "") -> dict[str, Any]:
    """A process began (or resumed) writing this session."""
    return {
        "type": "start",
        "at": time.time(),
        "resumed": resumed,
        "version": version,
        "model": model,
    }


def clear_record() -> dict[str, Any]:
    """`/clear`: the messages before it are not the conversation any more."""
    return {"type": "clear", "at": time.time()}


def end_record(reason: str) -> dict[str, Any]:
    """A clean end (the user quit, the headless run finished); a crash leaves none."""
    return {"type": "end", "at": time.time(), "reason": reason}


def jsonable(value: Any, *, cap: int | None = None, _depth: int = 0) -> Any:
    """`value` as plain JSON values: models dumped, dataclasses as dicts, paths as text.

    Floats JSON cannot hold (NaN, infinities) become text. With `cap`, strings longer than
    `cap` keep their last `cap` characters behind a note of how much was cut.
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return _capped(value, cap)
    if _depth >= _MAX_DEPTH:
        return _capped(repr(value), cap)
    depth = _depth + 1
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, cap=cap, _depth=depth) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(item, cap=cap, _depth=depth) for item in value]
    if isinstance(value, bytes | bytearray):
        return _capped(bytes(value).decode("utf-8", errors="replace"), cap)
    if isinstance(value, PurePath):
        return str(value)
    if isinstance(value, Enum):
        return jsonable(value.value, cap=cap, _depth=depth)
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return jsonable(dump(mode="json", by_alias=True), cap=cap, _depth=depth)
        except Exception:
            return _capped(repr(value), cap)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: jsonable(getattr(value, f.name), cap=cap, _depth=depth)
            for f in dataclasses.fields(value)
        }
    return _capped(str(value), cap)


def _capped(text: str, cap: int | None) -> str:
    if cap is None or len(text) <= cap:
        return text
    return f"[{len(text) - cap} characters cut] " + text[-cap:]
