"""Every question in the audit log has exactly one end.

A `decision` record with behavior `ask` is a question; the log must say how it ended: the
person's `answer`, or `withdrawn` with what ended it (a broken prompt, nobody to ask, the
call cancelled while it waited). Real chain, real executor, real file; the events go
through `auditing` as a session wires them. Only the person is scripted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import pytest
from engine_helpers import HANG_BOUND_S, eventually, make_context, make_services, outcomes_of

from core.abort import AbortController
from core.events import EventRecorder
from core.executor import StreamingToolExecutor, ToolCall, ToolCallOutcome
from core.permissions.audit import AuditLog, auditing
from core.permissions.decide import DecisionChain
from core.ports import Approve, PermissionAnswer, PermissionRequest, Reject
from core.registry import all_base_tools

TOOLS = {tool.name: tool for tool in all_base_tools()}
Person = Literal["approves", "says no", "prompt breaks", "nobody there", "esc while asked"]
PEOPLE: tuple[Person, ...] = (
    "approves",
    "says no",
    "prompt breaks",
    "nobody there",
    "esc while asked",
)


class HeldPort:
    """A person who does not answer: the question waits until the call is cancelled."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request.tool_use_id)
        await asyncio.get_running_loop().create_future()
        raise AssertionError("never answered")


class BrokenPort:
    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        raise RuntimeError("the screen was gone")


class Answering:
    def __init__(self, answer: PermissionAnswer) -> None:
        self.answer = answer

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        return self.answer


async def one_call(
    project: Path, log: AuditLog, person: Person, tool_use_id: str
) -> ToolCallOutcome | None:
    """A Write (which asks: no rule allows it) put to `person`; its outcome, None if the
    call was cancelled and gave none."""
    ports: dict[Person, Callable[[], Any]] = {
        "approves": lambda: Answering(Approve()),
        "says no": lambda: Answering(Reject(feedback="not now")),
        "prompt breaks": BrokenPort,
        "nobody there": lambda: None,
        "esc while asked": HeldPort,
    }
    port = ports[person]()
    abort = AbortController()
    services = make_services(
        permissions=DecisionChain(audit=log),
        permission_port=port,
        sink=auditing(log, EventRecorder()),
    )
    context = make_context(TOOLS.values(), project, abort=abort)
    executor = StreamingToolExecutor(services, context)
    raw = {"file_path": str(project / f"{tool_use_id}.txt"), "content": "y\n"}
    executor.add_tool(ToolCall(tool_use_id, "Write", raw))
    if isinstance(port, HeldPort):
        await eventually(lambda: port.asked == [tool_use_id], "the question")
        abort.abort("interrupt")

    async def results() -> list[ToolCallOutcome]:
        return outcomes_of([u async for u in executor.get_remaining_results()])

    outcomes = await asyncio.wait_for(results(), HANG_BOUND_S)
    return outcomes[0] if outcomes else None


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def ends_of_each_question(log: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """For each `ask` decision, the end records that follow it for its tool_use_id."""
    ends: dict[str, list[dict[str, Any]]] = {}
    for index, record in enumerate(log):
        if record["kind"] == "decision" and record["behavior"] == "ask":
            ends[record["tool_use_id"]] = [
                later
                for later in log[index + 1 :]
                if later["tool_use_id"] == record["tool_use_id"]
                and later["kind"] in ("answer", "withdrawn")
            ]
    return ends


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    root.mkdir()
    return root


@pytest.mark.parametrize("person", PEOPLE)
async def test_each_question_has_exactly_one_end_that_says_how_it_ended(
    tmp_path: Path, project: Path, person: Person
):
    log = AuditLog(tmp_path / "audit.jsonl")
    outcome = await one_call(project, log, person, "toolu_q")
    log.close()
    written = records(tmp_path / "audit.jsonl")
    [end] = ends_of_each_question(written)["toolu_q"]
    how = {"kind": end["kind"], "answer": end.get("answer"), "by": end.get("decided_by")}
    expected: dict[Person, dict[str, Any]] = {
        "approves": {"kind": "answer", "answer": "approve", "by": None},
        "says no": {"kind": "answer", "answer": "reject", "by": None},
        "prompt breaks": {
            "kind": "withdrawn",
            "answer": None,
            "by": {"kind": "default", "detail": "the approval prompt failed"},
        },
        "nobody there": {
            "kind": "withdrawn",
            "answer": None,
            "by": {"kind": "default", "detail": "nobody was there to approve it"},
        },
        "esc while asked": {
            "kind": "withdrawn",
            "answer": None,
            "by": {
                "kind": "default",
                "detail": "the call was cancelled while its question waited",
            },
        },
    }
    assert how == expected[person]
    if end["kind"] == "withdrawn":
        assert end["behavior"] == "deny" and end["tool"] == "Write"
    ran = (project / "toolu_q.txt").exists()
    assert ran == (person == "approves")
    if person == "prompt breaks":  # fail closed, and no one is said to have said no
        assert outcome is not None and outcome.block.get("is_error") is True
        said = str(outcome.block["content"])
        assert "the question could not be shown to the user" in said
        assert "the screen was gone" in said and "doesn't want to proceed" not in said


async def test_in_a_session_of_every_kind_of_question_no_ask_is_left_open(
    tmp_path: Path, project: Path
):
    """One log, every way a question can end, twice over in a shuffled order."""
    log = AuditLog(tmp_path / "audit.jsonl")
    order = [*PEOPLE, *reversed(PEOPLE)]
    for index, person in enumerate(order):
        await one_call(project, log, person, f"toolu_{index}")
    log.close()
    ends = ends_of_each_question(records(tmp_path / "audit.jsonl"))
    assert sorted(ends) == sorted(f"toolu_{index}" for index in range(len(order)))
    assert {tool_use_id: len(found) for tool_use_id, found in ends.items()} == {
        tool_use_id: 1 for tool_use_id in ends
    }
