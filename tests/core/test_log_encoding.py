"""The two session logs encode with an encoder built once (for speed: bench
executor_overhead_us); these pin that its lines are the lines `json.dumps` wrote before, and
that a record it refuses does not spoil the records after it; and that a process killed
without closing them has lost none of the records it wrote."""

from __future__ import annotations

import json
import math
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.access.context import ToolPermissionContext
from core.access.decision import Allow, DecidedBy
from core.agent.transcript import Transcript
from core.permissions.audit import AuditLog

PLAIN_RECORDS: list[dict[str, Any]] = [
    {"type": "tool_event", "at": 1795714374.8086438, "kind": "queued", "input": {}},
    {"type": "x", "text": 'héllo — ✓ \u2028 "quoted" \\ tab\t', "n": -3, "big": 10**30},
    {"type": "x", "nested": {"a": [1, 2.5, None, True, False, {"b": []}]}, "e": 1e-7},
    {"type": "x", "unicode key é": "v", "emoji": "\U0001f600"},
]


def test_transcript_lines_are_what_json_dumps_writes(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    with Transcript(path) as transcript:
        for record in PLAIN_RECORDS:
            assert transcript.append(record)
    expected = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in PLAIN_RECORDS)
    assert path.read_text(encoding="utf-8") == expected


def test_a_refused_transcript_record_is_converted_and_the_next_ones_are_plain(
    tmp_path: Path,
) -> None:
    inner: dict[str, Any] = {"value": math.inf}
    path = tmp_path / "t.jsonl"
    with Transcript(path) as transcript:
        assert transcript.append({"type": "x", "inner": inner})
        inner["value"] = 1.5
        assert transcript.append({"type": "y", "inner": inner})
    records = list(Transcript(path).records())
    assert records == [
        {"type": "x", "inner": {"value": "inf"}},
        {"type": "y", "inner": {"value": 1.5}},
    ]


def decide(log: AuditLog, input: Any) -> None:
    allow = Allow(DecidedBy("mode", "a read-only call"))
    log.decision("toolu_1", "Read", input, allow, ToolPermissionContext())


def test_audit_lines_are_what_json_dumps_with_default_str_writes(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    odd = {"path": Path("/tmp/x"), "nan": math.nan, "text": "é ✓"}
    decide(log, odd)
    log.close()
    (line,) = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert line == json.dumps(record | {"input": odd}, ensure_ascii=False, default=str)
    assert record["input"]["path"] == "/tmp/x" and math.isnan(record["input"]["nan"])


def test_an_audit_record_that_cannot_be_encoded_does_not_spoil_the_next(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    looped: dict[str, Any] = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match="Circular"):
        decide(log, looped)
    # The same dict, no longer circular, is an ordinary input: the failed pass must not
    # have left it marked as "being encoded".
    del looped["self"]
    looped["file"] = "a.txt"
    decide(log, looped)
    log.close()
    lines = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["input"] for line in lines] == [{"file": "a.txt"}]


KILLED_MID_SESSION = """
import os, signal, sys
from pathlib import Path
from core.access.context import ToolPermissionContext
from core.access.decision import Allow, DecidedBy
from core.permissions.audit import AuditLog
from core.agent.transcript import Transcript

folder = Path(sys.argv[1])
log, transcript = AuditLog(folder / "audit.jsonl"), Transcript(folder / "transcript.jsonl")
for i in range(100):
    allow = Allow(DecidedBy("mode", "a read-only call"))
    log.decision(f"toolu_{i}", "Read", {"i": i}, allow, ToolPermissionContext())
    transcript.append({"type": "tool_event", "i": i})
os.kill(os.getpid(), signal.SIGKILL)  # no close, no flush at exit
"""


def test_a_process_killed_without_closing_its_logs_leaves_every_record(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", KILLED_MID_SESSION, str(tmp_path)],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    audit = (tmp_path / "audit.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["input"]["i"] for line in audit] == list(range(100))
    transcript = list(Transcript(tmp_path / "transcript.jsonl").records())
    assert [record["i"] for record in transcript] == list(range(100))
