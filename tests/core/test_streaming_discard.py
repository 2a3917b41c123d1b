"""Discarding a turn's calls when the stream they came from failed: every call not yet
answered gets exactly one answer, a call that may be stopped is stopped, one that must not
be (`interrupt_behavior = "block"`) is left to finish with its result unused, and a second
discard adds nothing. Each assert here was a mutation of `StreamingToolExecutor.discard`
that no test noticed (docs/mutation.md)."""

from __future__ import annotations

from engine_helpers import eventually, make_context, make_services, terminal_kinds, text_of
from tools_for_tests import Shell, Sleep, Tracker

from core.events import EventRecorder
from core.executor import StreamingToolExecutor, ToolCall
from core.executor.calls import cancel_message


def executor_for(*tools):
    recorder = EventRecorder()
    context = make_context(tools)
    return StreamingToolExecutor(make_services(recorder), context), recorder


async def drain(executor):
    return [u async for u in executor.get_remaining_results()]


async def test_a_queued_call_is_ended_for_the_person_to_see_and_a_second_discard_adds_nothing():
    tracker = Tracker()
    executor, recorder = executor_for(Shell(tracker), Sleep(tracker))
    executor.add_tool(ToolCall("shell", "Bash", {"hold": True}))
    executor.add_tool(ToolCall("queued", "Sleep", {"safe": False}))
    await eventually(lambda: "shell" in tracker.entered, "the shell running")
    outcomes = executor.discard()
    assert [o.tool_use_id for o in outcomes] == ["shell", "queued"]
    assert [o.cancelled for o in outcomes] == ["streaming_fallback"] * 2
    said = cancel_message("streaming_fallback")
    assert [text_of(o) for o in outcomes] == [f"<tool_use_error>{said}</tool_use_error>"] * 2
    assert executor.discard() == []
    await executor.wait_idle()
    # The screen shows each call ending once: none is left looking queued or running.
    assert terminal_kinds(recorder, "queued") == ["cancelled"]
    assert terminal_kinds(recorder, "shell") == ["cancelled"]
    assert "queued" not in tracker.entered
    assert await drain(executor) == []


async def test_a_call_that_must_not_be_interrupted_finishes_but_its_result_is_not_used():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker))
    executor.add_tool(ToolCall("held", "Sleep", {"hold": True, "output": "late"}))
    await eventually(lambda: "held" in tracker.entered, "the call running")
    (outcome,) = executor.discard()
    assert outcome.cancelled == "streaming_fallback"
    assert "held" not in tracker.cancelled  # left to finish: it may be mid-write
    # A call that arrives after the discard (the stream's last words) never starts.
    executor.add_tool(ToolCall("late", "Sleep", {}))
    assert terminal_kinds(recorder, "late") == ["cancelled"]
    tracker.release("held")
    await executor.wait_idle()
    assert "held" in tracker.finished and "late" not in tracker.entered
    assert executor.get_completed_results() == []
    assert await drain(executor) == []
