"""What the audit log must not miss: a check that raised, the same keys on every decision, a
log that cannot be written said to the person (once), and calls that go on as before.

Real chain, real executor, real files; the unwritable log is a real one (its path is a
directory), since CI runs as root and a chmod would not stop the write.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import make_context, make_services, outcomes_of, text_of
from permission_tools import Opaque

from core.access.context import ToolPermissionContext
from core.access.decision import Allow, DecidedBy
from core.access.rules import parse_rule
from core.agent import sessions
from core.agent.headless import HeadlessOptions, run_headless
from core.agent.transcript import Transcript
from core.executor import StreamingToolExecutor, ToolCall
from core.permissions.audit import AuditLog
from core.permissions.decide import DecisionChain
from core.registry import all_base_tools
from core.tool import PermissionResult

TOOLS = {tool.name: tool for tool in all_base_tools()}
DECISION_KEYS = {
    *("at", "kind", "tool_use_id", "tool", "input", "behavior", "decided_by", "message"),
    *("mode", "agent", "sandbox", "sandbox_why"),
}


class Broken(Opaque):
    """A tool whose own permission check raises (a plugin's, say, whose database is locked)."""

    name = "Broken"

    async def check_permissions(self, input: Any, context: Any) -> PermissionResult:
        raise RuntimeError("the plugin's database is locked")


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def run_calls(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any]]], *rules: str
) -> tuple[list[Any], list[dict[str, Any]]]:
    """Calls through the real executor and chain: their outcomes and the audit log."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    log = AuditLog(tmp_path / "audit.jsonl")
    parsed = tuple(parse_rule(text, "deny", source="cli") for text in rules)
    context = make_context(
        [*TOOLS.values(), Broken()],
        project,
        permission_context=ToolPermissionContext(rules=parsed),
    )
    services = make_services(permissions=DecisionChain(audit=log))
    outcomes = []
    for index, (name, raw) in enumerate(calls):  # one at a time: a refusal cancels siblings
        executor = StreamingToolExecutor(services, context)
        executor.add_tool(ToolCall(f"toolu_{index}", name, raw))
        outcomes += outcomes_of([u async for u in executor.get_remaining_results()])
    log.close()
    return outcomes, read_log(tmp_path / "audit.jsonl")


async def test_a_check_that_raises_is_refused_and_recorded_naming_the_failure(tmp_path: Path):
    [outcome], [record] = await run_calls(tmp_path, [("Broken", {"command": "go"})])
    said = "Permission for Broken could not be decided (the plugin's database is locked), so it"
    assert said in text_of(outcome) and outcome.block.get("is_error") is True
    record.pop("at")
    assert record == {
        "kind": "decision",
        "tool_use_id": "toolu_0",
        "tool": "Broken",
        "input": {"command": "go"},
        "behavior": "deny",
        "decided_by": {
            "kind": "default",
            "detail": "the permission check failed: RuntimeError: the plugin's database is locked",
        },
        "message": f"{said} was not run.",
        "mode": "default",
        "agent": None,
        "sandbox": None,
        "sandbox_why": None,
    }


async def test_every_decision_record_has_the_same_keys(tmp_path: Path):
    """Allowed, refused by a rule, refused because its check raised; a command and a tool
    that runs in no sandbox: one key set, so a missing key is never a forgotten one."""
    calls = [
        ("Glob", {"pattern": "*.txt"}),
        ("Bash", {"command": "ls"}),
        ("Bash", {"command": "rm -rf build"}),
        ("Broken", {"command": "go"}),
    ]
    _, records = await run_calls(tmp_path, calls, "Bash(rm:*)")
    assert [r["behavior"] for r in records] == ["allow", "allow", "deny", "deny"]
    assert [set(r) for r in records] == [DECISION_KEYS] * 4
    assert [r["sandbox"] for r in records] == [None, "none", None, None]
    assert [r["agent"] for r in records] == [None] * 4


def test_a_log_that_cannot_be_written_is_said_once_and_stops_nothing(tmp_path: Path):
    told: list[str] = []
    log = AuditLog(tmp_path, on_error=told.append)  # a directory: no line can be appended
    allowed = Allow(DecidedBy("mode", "x"))
    for tool_use_id in ("toolu_a", "toolu_b"):
        log.decision(tool_use_id, "Read", {}, allowed, ToolPermissionContext())
    assert len(told) == 1 and "Is a directory" in told[0] and str(tmp_path) in told[0]
    assert log.error is not None and log.error.endswith(told[0])


def test_a_transcript_that_cannot_be_written_is_said_once(tmp_path: Path):
    told: list[str] = []
    transcript = Transcript(tmp_path)
    transcript.on_error = told.append
    assert transcript.append({"type": "a"}) is False
    assert transcript.append({"type": "b"}) is False
    assert len(told) == 1 and "Is a directory" in told[0]


@pytest.fixture
def unwritable_audit_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session's audit log is its own directory: opening it to append fails."""
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(sessions, "AUDIT_NAME", ".")


@pytest.mark.usefixtures("unwritable_audit_log")
async def test_headless_says_the_log_was_not_written_on_stderr_and_in_stream_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    options = {"prompt": None, "cwd": Path.cwd(), "demo": True, "demo_speed": 0.0}
    out = io.StringIO()
    status = await run_headless(
        HeadlessOptions(**options, scenario="quick", output_format="stream-json"), out
    )
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    [said] = [r for r in records if r.get("kind") == "record_not_written"]
    assert said["record"] == "audit log" and "Is a directory" in said["reason"]
    # The log is a record, not a guard: the run decides and ends as it would have.
    assert status == 0 and records[-1]["is_error"] is False
    ended = [r["outcome"] for r in records if r.get("kind") == "completed"]
    assert ended and set(ended) == {"succeeded"}

    capsys.readouterr()
    status = await run_headless(HeadlessOptions(**options, scenario="quick"), io.StringIO())
    lines = capsys.readouterr().err.splitlines()
    said_lines = [line for line in lines if "not written" in line]
    assert status == 0 and len(said_lines) == 1
    assert said_lines[0].startswith("proctor: audit log not written: [Errno 21] Is a directory")
