"""The session transcript: one JSON object per line, appended, never rewritten.

Everything a session did goes here in order: every message, the engine events of every
tool call (permission questions and answers included; progress only streams, see
`belongs_in_transcript`), every hook outcome, turn ends and a clean end. Resuming rebuilds
the conversation from it (`messages_from`), and `proctor sessions` summarises it.

Why it is shaped this way:

- A crash must cost at most the record being written. Each record is one `os.write` of a
  whole line on an `O_APPEND` descriptor, so a SIGKILL leaves the records already appended
  intact in the page cache. `sync()` (fsync, against power loss) belongs at turn ends and in
  `close()`: per record it would cost a disk flush per event.
- A line without its newline can only be the tail of a write that never finished. Readers
  ignore it (unless it is itself a whole object, which a cut cannot produce), and the first
  append of a new writer truncates it away (`repair`), so the next record starts on a line
  of its own instead of gluing onto the fragment and garbling both.
- A garbled line in the middle (a disk error, a hand edit) is skipped and reported in
  `problems`; the records around it still count. Nothing here raises on bad content.
- Writing never stops the session either: like the audit log, a failed write is kept in
  `error` for the UI, and the next append repairs whatever half line it left.
- `event_record` is the single translation of an engine event into plain JSON: the
  transcript and headless `stream-json` output both use it, so they cannot drift apart.
- Records are built by the helpers below, whose first key is always `type`. Summaries rely
  on that to count records without parsing every line (sessions.py).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, BinaryIO, Literal

from ..events import (
    EngineEvent,
    EventSink,
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
from ..hooks import HookEvent
from ..ports import Approve
from .events import AssistantMessage, TextDelta, UserMessage

Role = Literal["user", "assistant"]
RecordType = Literal["message", "tool_event", "engine_event", "hook", "turn", "start", "end"]

PROGRESS_STRING_CAP = 4_096
"""Characters a string in progress data keeps (its end: progress is about the latest)."""
INTERRUPTED_RESULT = "the session ended before this call finished"
"""The result `messages_from` gives a tool call that a crash left without one."""

_MAX_DEPTH = 32
_BASE_FIELDS = frozenset(
    {"at", "tool_use_id", "tool_name", "batch_id", "parent_tool_use_id", "kind"}
)


# --- the file ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TranscriptProblem:
    line: int
    """1-based line number in the file."""
    kind: Literal["garbled", "cut"]
    """`cut`: the last line, without its newline (a write a crash interrupted)."""
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


class Transcript:
    """One transcript file: `append` records, read them back with `records()`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.problems: list[TranscriptProblem] = []
        """What the last `records()` pass skipped; reset by each pass."""
        self.error: str | None = None
        """Why the last append failed, for the UI; None after one succeeds."""
        self._fd: int | None = None
        self._needs_repair = True

    def append(self, record: Mapping[str, Any]) -> bool:
        """Write one record as one line; False (and `error` set) when it could not be."""
        line = _encode(record)
        try:
            fd = self._open()
            if self._needs_repair:
                self.repair()
            _write_all(fd, line)
        except OSError as error:
            # Whatever part of the line reached the file must not prefix the next record.
            self._needs_repair = True
            self.error = f"the transcript {self.path} could not be written: {error}"
            return False
        self.error = None
        return True

    def records(self) -> Iterator[dict[str, Any]]:
        """Every whole record in order; garbled lines are skipped into `problems`."""
        self.problems = []
        try:
            file = self.path.open("rb")
        except FileNotFoundError:
            return
        with file:
            for number, line in enumerate(file, start=1):
                whole = line.endswith(b"\n")
                record, why = _decode(line)
                if record is not None:
                    yield record
                elif not whole:
                    self.problems.append(
                        TranscriptProblem(number, "cut", "the last record was cut short")
                    )
                elif why is not None:
                    self.problems.append(TranscriptProblem(number, "garbled", why))

    def repair(self) -> str | None:
        """End the file on a whole line; what was done, or None when nothing was needed.

        A fragment left by an interrupted write is truncated. A last line that is a whole
        record missing only its newline gets the newline instead, so nothing readable goes.
        """
        self._needs_repair = False
        try:
            with self.path.open("r+b") as file:
                size = file.seek(0, os.SEEK_END)
                if size == 0:
                    return None
                file.seek(size - 1)
                if file.read(1) == b"\n":
                    return None
                start = _last_line_start(file, size)
                file.seek(start)
                tail = file.read()
                record, _ = _decode(tail)
                if record is not None:
                    file.write(b"\n")
                    return "added the newline a whole last record was missing"
                file.truncate(start)
                return f"dropped {size - start} bytes of a record cut short by a crash"
        except FileNotFoundError:
            return None

    def sync(self) -> None:
        """Force appended records to disk (turn ends); a failure is kept in `error`."""
        if self._fd is None:
            return
        try:
            os.fsync(self._fd)
        except OSError as error:
            self.error = f"the transcript {self.path} could not be synced: {error}"

    def close(self) -> None:
        if self._fd is None:
            return
        self.sync()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> Transcript:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _open(self) -> int:
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
            # A transcript holds whatever the agent read: file contents, command output.
            self._fd = os.open(self.path, flags, 0o600)
        return self._fd


def _encode(record: Mapping[str, Any]) -> bytes:
    try:
        text = json.dumps(record, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        # Not plain JSON (an object, NaN): convert it rather than lose the record.
        text = json.dumps(jsonable(record), ensure_ascii=False, allow_nan=False)
    # A lone surrogate (from undecodable bytes) cannot be UTF-8; as an escape inside the JSON
    # string it reads back as the same character.
    return (text + "\n").encode("utf-8", errors="backslashreplace")


def _decode(line: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The record on a line, or None and why not (None for a blank line)."""
    if not line.strip():
        return None, None
    try:
        value = json.loads(line)
    except (UnicodeDecodeError, ValueError) as error:
        return None, f"not JSON ({error})"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_line_start(file: BinaryIO, size: int) -> int:
    """Offset just after the last newline (0 when there is none); reads back in blocks."""
    end = size
    while end > 0:
        start = max(0, end - 65_536)
        file.seek(start)
        newline = file.read(end - start).rfind(b"\n")
        if newline != -1:
            return start + newline + 1
        end = start
    return 0


# --- records -------------------------------------------------------------------------------


def message_record(
    role: Role,
    content: str | Sequence[Mapping[str, Any]],
    *,
    model: str | None = None,
    stop_reason: str | None = None,
    usage: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A message of the conversation, as sent to or received from the API."""
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
    if usage is not None:
        record["usage"] = jsonable(usage)
    return record


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


def belongs_in_transcript(event: EngineEvent) -> bool:
    """Whether the transcript keeps this event: all but progress.

    Progress is for watching a call live (stream-json prints it); a long command emits it
    many times a second, each with the last few KB of output, which would swell the
    transcript by megabytes and say nothing the call's result does not.
    """
    return not isinstance(event, ToolProgress)


# The main agent's messages are kept as message records (the loop writes them, with model,
# usage and stop reason); text deltas only stream.
_KEPT_AS_MESSAGES = (TextDelta, AssistantMessage, UserMessage)


def transcribing(transcript: Transcript, sink: EventSink) -> EventSink:
    """The session's one sink: each event is written to the transcript, then passed on.

    Every producer (the loop, the executor, tools such as TodoWrite and the mode tools,
    sub-agents, hooks) is given this sink, so the transcript holds everything the front
    end was shown, in the same order."""

    def emit(event: EngineEvent) -> None:
        if belongs_in_transcript(event) and not isinstance(event, _KEPT_AS_MESSAGES):
            transcript.append(event_record(event))
        sink(event)

    return emit


def _event_fields(event: EngineEvent) -> dict[str, Any]:
    match event:
        case ToolQueued():
            return {
                "input": jsonable(event.input),
                "summary": event.summary,
                "concurrency_safe": event.concurrency_safe,
            }
        case ToolStarted():
            return {}
        case ToolProgress():
            return {"data": jsonable(event.data, cap=PROGRESS_STRING_CAP)}
        case PermissionAsked():
            request = event.request
            return {
                "message": request.message,
                "decided_by": {
                    "kind": request.decided_by.kind,
                    "detail": request.decided_by.detail,
                },
                "suggestions": list(request.suggestions),
                "agent_label": request.agent_label,
            }
        case PermissionAnswered():
            answer = event.answer
            if isinstance(answer, Approve):
                return {
                    "answer": "approve",
                    "scope": answer.scope,
                    "rule": answer.rule,
                    "feedback": None,
                    "updated_input": jsonable(answer.updated_input),
                }
            return {"answer": "reject", "scope": None, "rule": None, "feedback": answer.feedback}
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
        case ModeChanged():
            return {"mode": event.mode, "previous": event.previous, "why": event.why}
    # An event class added later still gets into the transcript, field by field.
    return {
        field.name: jsonable(getattr(event, field.name))
        for field in dataclasses.fields(event)
        if field.name not in _BASE_FIELDS
    }


def hook_record(
    event: HookEvent,
    outcome: object,
    *,
    tool_use_id: str | None = None,
    tool_name: str | None = None,
) -> dict[str, Any]:
    """What the hooks of one event said (a PreToolUseOutcome, EventHookOutcome, ...)."""
    return {
        "type": "hook",
        "at": time.time(),
        "event": event,
        "tool_use_id": tool_use_id,
        "name": tool_name,
        "outcome": jsonable(outcome),
    }


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


# --- resuming ------------------------------------------------------------------------------


def messages_from(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The API message list a session had reached, valid to send again.

    A crash can leave the conversation in a state the API refuses: an assistant message
    whose tool_use blocks never got their tool_result, or a new prompt right after it. Each
    such call gets an error result saying the session ended first; results answering no
    call are dropped; consecutive messages of one role are merged. Valid conversations come
    out unchanged (same strings, same blocks), so a resumed session repeats its history byte
    for byte and keeps the prompt cache.
    """
    merged: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") != "message" or record.get("role") not in ("user", "assistant"):
            continue
        message = {"role": record["role"], "content": record.get("content", "")}
        _append_merged(merged, message)

    out: list[dict[str, Any]] = []
    for message in merged:
        if message["role"] == "assistant":
            _append_merged(out, message)
            continue
        previous = out[-1] if out and out[-1]["role"] == "assistant" else None
        fixed = _answer_calls(_tool_uses(previous), message)
        if fixed is not None:
            _append_merged(out, fixed)
    if out and out[-1]["role"] == "assistant":
        dangling = _tool_uses(out[-1])
        if dangling:
            out.append({"role": "user", "content": [_interrupted(i) for i in dangling]})
    return out


@dataclass(frozen=True, slots=True)
class RestoredState:
    """What a session had when it stopped, beyond its conversation."""

    mode: str | None = None
    todos: tuple[Mapping[str, Any], ...] = ()


def restored_state(records: Iterable[Mapping[str, Any]]) -> RestoredState:
    """The last permission mode and the main agent's last todo list in the records (the
    modes a session may not start in, like bypass without its flag, are refused later by
    the permission setup, as they would be from the command line)."""
    mode: str | None = None
    todos: tuple[Mapping[str, Any], ...] = ()
    for record in records:
        if record.get("type") != "engine_event":
            continue
        if record.get("kind") == "mode" and isinstance(record.get("mode"), str):
            mode = record["mode"]
        elif record.get("kind") == "todos" and record.get("agent_id") is None:
            items = record.get("todos")
            if isinstance(items, list):
                todos = tuple(
                    item
                    for item in items
                    if isinstance(item, dict)
                    and {"content", "status", "active_form"} <= set(item)
                    and item["status"] in ("pending", "in_progress", "completed")
                )
    return RestoredState(mode, todos)


def _answer_calls(calls: list[str], message: dict[str, Any]) -> dict[str, Any] | None:
    """A user message answering exactly `calls`; None when nothing is left of it."""
    content = message["content"]
    blocks: list[Any] = content if isinstance(content, list) else []
    results = [b for b in blocks if _is_result(b)]
    if [r.get("tool_use_id") for r in results] == calls and all(
        _is_result(b) for b in blocks[: len(results)]
    ):
        # Already valid (the usual case): keep the message exactly as written.
        return message if content else None
    kept: list[Any] = []
    for call in calls:
        # The first result for each call, in the order of the calls; orphans are dropped.
        answers = [r for r in results if r.get("tool_use_id") == call]
        kept.append(answers[0] if answers else _interrupted(call))
    others = [b for b in blocks if not _is_result(b)]
    if isinstance(content, str) and content:
        others = [{"type": "text", "text": content}]
    # The API wants a user message's tool_result blocks before anything else in it.
    new_content = kept + others
    return {"role": "user", "content": new_content} if new_content else None


def _append_merged(messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
    if messages and messages[-1]["role"] == message["role"]:
        last = messages[-1]
        messages[-1] = {
            "role": last["role"],
            "content": _blocks(last["content"]) + _blocks(message["content"]),
        }
    else:
        messages.append(message)


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return []


def _tool_uses(message: Mapping[str, Any] | None) -> list[str]:
    if message is None or not isinstance(message.get("content"), list):
        return []
    return [
        str(block["id"])
        for block in message["content"]
        if isinstance(block, Mapping) and block.get("type") == "tool_use" and "id" in block
    ]


def _is_result(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


def _interrupted(tool_use_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": INTERRUPTED_RESULT,
        "is_error": True,
    }
