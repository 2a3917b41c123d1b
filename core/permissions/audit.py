"""The audit log: every permission decision, every answer, every change of mode, one JSON
object per line.

"Why was this allowed?" must have an answer after the fact, so the chain writes each
decision with what made it, and the user's answers with what they chose to keep. The file
is append-only and each line is one unbuffered write, so a crash loses at most the line
being written.

Four kinds of record, each field exact (tests/core/test_audit_records.py, and a real headless
and app session in tests/test_audit_headless.py, tests/tui/test_audit_app.py):

- `decision`: what decided, in which mode, the words the person or model read, the sandbox,
  and which agent asked (None: the main one; a sub-agent by its label, as answers name it).
  Every decision record has the same keys, null where one does not apply (`sandbox` for a
  tool that runs in none), so a reader never has to guess whether a key was forgotten. A
  check that raised is a refused decision whose `decided_by` names the failure.
- `answer`: the person's choice and the rule it really kept, which may be the suggested one.
- `mode`: a change of mode, from and to, and by whom (`ModeChanger`).
- `withdrawn`: a question nobody answered, with what ended it: a change of mode that settled
  it, a prompt that failed, nobody there to ask, the call cancelled while it waited. So every
  `ask` in the log has exactly one end (an answer or this).

A log that cannot be written never stops a decision: the log is a record, not a guard (the
decisions it records are made the same either way), and making every call ask because a disk
is full would bury the person in questions that no more safety stands behind. The failure is
kept in `error` and said once through `on_error`, which the session turns into a notice the
person sees (the app) or reads on stderr and in stream-json (headless).
"""

from __future__ import annotations

import json
import json.encoder
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..access.context import ToolPermissionContext
from ..access.decision import PermissionDecision
from ..access.sandbox_policy import SandboxPolicy
from ..events import (
    EngineEvent,
    EventSink,
    ModeChanged,
    PermissionAnswered,
    PermissionAsked,
    SubAgentEvent,
)
from ..ports import Approve, PermissionAnswer, PermissionRequest


class AuditLog:
    def __init__(self, path: Path, on_error: Callable[[str], None] | None = None) -> None:
        """`on_error`: told once, the first time a record cannot be written, why not (the
        system's words, which name the file)."""
        self.path = path
        self.error: str | None = None
        self.on_error = on_error
        self._file: IO[bytes] | None = None

    def decision(
        self,
        tool_use_id: str,
        tool_name: str,
        input: Any,
        decision: PermissionDecision,
        permissions: ToolPermissionContext,
        agent: str | None = None,
    ) -> None:
        sandbox: SandboxPolicy | None = getattr(decision, "sandbox", None)
        self._write(
            {
                "at": time.time(),
                "kind": "decision",
                "tool_use_id": tool_use_id,
                "tool": tool_name,
                "input": _plain(input),
                "behavior": decision.behavior,
                "decided_by": {
                    "kind": decision.decided_by.kind,
                    "detail": decision.decided_by.detail,
                },
                "message": getattr(decision, "message", None),
                "mode": permissions.mode,
                "agent": agent,
                # For a command: the sandbox it runs (or, asked, would run) in, and why.
                "sandbox": sandbox.kind if sandbox is not None else None,
                "sandbox_why": sandbox.why if sandbox is not None else None,
            }
        )

    def answer(
        self, request: PermissionRequest, answer: PermissionAnswer, kept: str | None = None
    ) -> None:
        """`kept`: the rule the answer keeps (for the session or always), which may be the
        request's suggestion rather than one the answer names; None when it keeps none."""
        approved = isinstance(answer, Approve)
        self._write(
            {
                "at": time.time(),
                "kind": "answer",
                "tool_use_id": request.tool_use_id,
                "tool": request.tool_name,
                "answer": "approve" if approved else "reject",
                "scope": answer.scope if isinstance(answer, Approve) else None,
                "rule": kept,
                "feedback": None if isinstance(answer, Approve) else answer.feedback,
                "agent": request.agent_label,
                "sandbox": request.sandbox if approved else None,
            }
        )

    def mode_change(self, event: ModeChanged) -> None:
        self._write(
            {
                "at": time.time(),
                "kind": "mode",
                "from": event.previous,
                "to": event.mode,
                "by": event.by,
                "why": event.why,
            }
        )

    def withdrawn(self, event: PermissionAnswered, agent: str | None) -> None:
        """A question withdrawn unanswered: the chain, asked again once the mode changed,
        settled it, or the executor refused it unanswered (`event.decided_by` says how)."""
        assert event.decided_by is not None
        self._write(
            {
                "at": time.time(),
                "kind": "withdrawn",
                "tool_use_id": event.tool_use_id,
                "tool": event.tool_name,
                "behavior": "allow" if isinstance(event.answer, Approve) else "deny",
                "decided_by": {
                    "kind": event.decided_by.kind,
                    "detail": event.decided_by.detail,
                },
                "agent": agent,
            }
        )

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: dict[str, Any]) -> None:
        """`record` opens with its time (`at`): built in place, not copied, as this runs for
        every call."""
        try:
            line = (_encode(record) + "\n").encode("utf-8", errors="backslashreplace")
        except BaseException:
            _renew_encoder()  # its circular-reference markers may hold this record's dicts
            raise
        try:
            if self._file is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # Unbuffered: each line is one write(2) of its bytes on an O_APPEND file,
                # as the line-buffered text file flushed it, without the text layer.
                self._file = self.path.open("ab", buffering=0)
            view = memoryview(line)
            while view:
                view = view[self._file.write(view) or 0 :]
        except OSError as error:
            first = self.error is None
            self.error = f"the audit log {self.path} could not be written: {error}"
            if first and self.on_error is not None:
                self.on_error(str(error))


def _encoder() -> Callable[[Any], str]:
    """`json.dumps(value, ensure_ascii=False, default=str)` built once: dumps builds its
    encoders on every call, a third of the cost of a line (bench executor_overhead_us)."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(ensure_ascii=False, default=str).encode
    encode = make({}, str, json.encoder.encode_basestring, None, ": ", ", ", False, False, True)
    return lambda value: "".join(encode(value, 0))


_encode = _encoder()


def _renew_encoder() -> None:
    global _encode
    _encode = _encoder()


_AUDITED = frozenset({ModeChanged, SubAgentEvent, PermissionAsked, PermissionAnswered})


def auditing(audit: AuditLog, sink: EventSink) -> EventSink:
    """`sink`, which also writes to `audit` each change of mode and each question a change
    of mode withdrew (the decisions and answers the chain writes itself). Each event reaches
    `sink` first: a log that fails must not cost the front end its event."""
    asked_by: dict[str, str | None] = {}
    """The agent of each open question, by tool_use_id (answers' events do not carry it)."""

    def audited(event: EngineEvent) -> None:
        sink(event)
        if type(event) not in _AUDITED:  # most events: one set lookup, as this sees them all
            return
        if isinstance(event, PermissionAsked):
            asked_by[event.tool_use_id] = event.request.agent_label
        elif isinstance(event, PermissionAnswered):
            agent = asked_by.pop(event.tool_use_id, None)
            if event.decided_by is not None:
                audit.withdrawn(event, agent)
        else:
            inner = event.event if isinstance(event, SubAgentEvent) else event
            if isinstance(inner, ModeChanged):
                audit.mode_change(inner)

    return audited


def _plain(input: Any) -> Any:
    dump = getattr(input, "model_dump", None)
    return dump(mode="json", exclude_unset=True) if callable(dump) else input
