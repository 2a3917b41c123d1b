"""The audit log: every permission decision and every answer, one JSON object per line.

"Why was this allowed?" must have an answer after the fact, so the chain writes each
decision with what made it, and the user's answers with what they chose to keep. The file
is append-only and each line is one unbuffered write, so a crash loses at most the line
being written. A log that cannot be written never stops a decision: the failure is kept in
`error` for the UI.

Two kinds of record, each field exact (tests/core/test_audit_records.py, and a real headless
and app session in tests/test_audit_headless.py, tests/tui/test_audit_app.py): `decision`
(what decided, in which mode, the words the person or model read, the sandbox) and `answer`
(the person's choice and the rule it really kept, which may be the suggested one).
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
from ..ports import Approve, PermissionAnswer, PermissionRequest


class AuditLog:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None
        self._file: IO[bytes] | None = None

    def decision(
        self,
        tool_use_id: str,
        tool_name: str,
        input: Any,
        decision: PermissionDecision,
        permissions: ToolPermissionContext,
    ) -> None:
        self._write(
            {
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
                **_sandbox(getattr(decision, "sandbox", None)),
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

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def _write(self, record: dict[str, Any]) -> None:
        record = {"at": time.time(), **record}
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
            self.error = f"the audit log {self.path} could not be written: {error}"


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


def _sandbox(policy: SandboxPolicy | None) -> dict[str, Any]:
    """For a command: the sandbox it runs (or, asked, would run) in, and why."""
    if policy is None:
        return {}
    return {"sandbox": policy.kind, "sandbox_why": policy.why}


def _plain(input: Any) -> Any:
    dump = getattr(input, "model_dump", None)
    return dump(mode="json", exclude_unset=True) if callable(dump) else input
