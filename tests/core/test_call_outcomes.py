"""How a call ended, as `ToolCompleted` says it: succeeded, failed, or denied (and by whom),
with the time spent waiting for a person kept apart from the call's own duration.

The model still gets an error result marked `<tool_use_error>` for a denied call: it must
not assume the call ran. Only people are told "denied" rather than "failed".
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from engine_helpers import ScriptedHooks, ScriptedPort, make_context, make_services
from tools_for_tests import Sleep

from core.access.context import ToolPermissionContext
from core.access.rules import parse_rule
from core.agent.transcript_records import event_record
from core.events import EventRecorder, PermissionAnswered, ToolCompleted
from core.executor import StreamingToolExecutor, ToolCall, lifecycle, streaming
from core.hooks import PreToolUseOutcome
from core.ports import Approve, PermissionRequest, Reject


async def completed_event(
    spec: dict[str, Any],
    *,
    permission_context: ToolPermissionContext | None = None,
    recorder: EventRecorder | None = None,
    **services: Any,
) -> ToolCompleted:
    recorder = recorder if recorder is not None else EventRecorder()
    context = make_context([Sleep()], permission_context=permission_context)
    executor = StreamingToolExecutor(make_services(recorder, **services), context)
    executor.add_tool(ToolCall("t", "Sleep", spec))
    _ = [update async for update in executor.get_remaining_results()]
    (event,) = [e for e in recorder.of("t") if isinstance(e, ToolCompleted)]
    return event


@pytest.mark.parametrize(
    ("spec", "ended", "stage"),
    [
        ({"output": "fine"}, "succeeded", None),
        ({"raise_error": True}, "failed", "call"),
        ({"fail": True}, "failed", "call"),
        ({"ms": "soon"}, "failed", "schema"),
    ],
)
async def test_a_call_that_ran_or_broke_succeeded_or_failed(
    spec: dict[str, Any], ended: str, stage: str | None
):
    event = await completed_event(spec)
    assert (event.ended, event.outcome, event.failed_stage) == (ended, ended, stage)
    assert event.denied_by is None and event.waited_s == 0


async def test_the_persons_no_is_denied_by_them_and_the_model_still_gets_an_error():
    port = ScriptedPort([Reject(feedback="not on a Friday")])
    event = await completed_event({"read_only": False}, permission_port=port)
    assert event.ended == "denied" and event.is_error
    assert event.denied_by is not None and event.denied_by.kind == "user"
    assert isinstance(event.content, str)
    assert event.content.startswith("<tool_use_error>") and "not on a Friday" in event.content


async def test_a_deny_rule_a_hook_and_plan_mode_each_deny_and_say_so():
    rules = ToolPermissionContext(rules=(parse_rule("Sleep", "deny", source="project"),))
    by_rule = await completed_event({}, permission_context=rules)
    hooks = ScriptedHooks(pre=PreToolUseOutcome(permission="deny", reason="not today"))
    by_hook = await completed_event({}, hooks=hooks)
    planning = ToolPermissionContext(mode="plan")
    by_mode = await completed_event({"read_only": False}, permission_context=planning)
    assert [e.ended for e in (by_rule, by_hook, by_mode)] == ["denied"] * 3
    assert [e.denied_by.kind for e in (by_rule, by_hook, by_mode)] == ["rule", "hook", "mode"]  # type: ignore[union-attr]
    assert by_rule.waited_s == by_hook.waited_s == by_mode.waited_s == 0


async def test_with_nobody_to_ask_or_a_broken_prompt_the_call_is_denied_not_failed():
    unattended = await completed_event({"read_only": False})
    assert unattended.ended == "denied" and unattended.denied_by is not None
    assert unattended.denied_by.detail == "nobody was there to approve it"

    class BrokenPort:
        async def request_permission(self, request: PermissionRequest) -> Approve:
            raise RuntimeError("screen gone")

    broken = await completed_event({"read_only": False}, permission_port=BrokenPort())
    assert broken.ended == "denied" and broken.denied_by is not None
    assert broken.denied_by.detail == "the approval prompt failed"


async def test_a_chain_that_breaks_denies_the_call():
    class BrokenChain:
        async def decide(self, tool: Any, input: Any, context: Any, hook: Any) -> Any:
            raise RuntimeError("rules unreadable")

        async def record_answer(self, request: Any, answer: Any, context: Any) -> None:
            return None

    event = await completed_event({}, permissions=BrokenChain())
    assert event.ended == "denied" and "rules unreadable" in str(event.content)


class Clock:
    """The executor's clock, moved by the test: a person takes 6.2 s, the call 12 ms."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_waiting_for_the_person_is_kept_apart_from_the_calls_own_time(
    monkeypatch: pytest.MonkeyPatch,
):
    clock = Clock()
    monkeypatch.setattr(lifecycle, "time", SimpleNamespace(monotonic=clock.monotonic))
    monkeypatch.setattr(streaming, "time", SimpleNamespace(monotonic=clock.monotonic))

    class SlowPerson:
        async def request_permission(self, request: PermissionRequest) -> Approve:
            clock.now += 6.2
            return Approve()

    class TimedSleep(Sleep):
        async def call(self, input: Any, context: Any, progress: Any) -> Any:
            clock.now += 0.012
            return await super().call(input, context, progress)

    recorder = EventRecorder()
    context = make_context([TimedSleep()])
    services = make_services(recorder, permission_port=SlowPerson())
    executor = StreamingToolExecutor(services, context)
    executor.add_tool(ToolCall("t", "Sleep", {"read_only": False}))
    _ = [update async for update in executor.get_remaining_results()]
    (event,) = [e for e in recorder.of("t") if isinstance(e, ToolCompleted)]

    assert event.ended == "succeeded"
    assert event.waited_s == pytest.approx(6.2)
    assert event.duration_s == pytest.approx(0.012)
    record = event_record(event)
    assert record["waited_s"] == pytest.approx(6.2) and record["outcome"] == "succeeded"


async def test_the_transcript_record_says_how_a_call_ended_and_who_said_no():
    recorder = EventRecorder()
    port = ScriptedPort([Reject()])
    event = await completed_event({"read_only": False}, permission_port=port, recorder=recorder)
    record = event_record(event)
    assert record["outcome"] == "denied" and record["is_error"] is True
    assert record["denied_by"] == {"kind": "user", "detail": "the person said no"}
    (answered,) = [e for e in recorder.of("t") if isinstance(e, PermissionAnswered)]
    assert event_record(answered)["decided_by"] is None  # the person answered
