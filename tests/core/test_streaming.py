"""The streaming executor: start rule, ordering, progress, sibling abort, interrupt, discard."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from engine_helpers import (
    HANG_BOUND_S,
    eventually,
    executing_violations,
    make_context,
    make_services,
    outcomes_of,
    terminal_kinds,
    text_of,
)
from tools_for_tests import Shell, Sleep, Small, Tracker

from core.abort import AbortController
from core.events import EventRecorder, ToolCompleted
from core.executor import ProgressUpdate, ResultUpdate, StreamingToolExecutor, ToolCall
from core.tool import ToolContext, ToolResult


def executor_for(*tools, recorder=None, abort=None, **services):
    recorder = recorder if recorder is not None else EventRecorder()
    context = make_context(tools, abort=abort)
    return StreamingToolExecutor(make_services(recorder, **services), context), recorder


async def drain(executor):
    return [u async for u in executor.get_remaining_results()]


async def test_safe_calls_run_together_and_an_unsafe_call_runs_alone():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker))
    executor.add_tool(ToolCall("a", "Sleep", {"hold": True}))
    executor.add_tool(ToolCall("b", "Sleep", {"hold": True}))
    executor.add_tool(ToolCall("c", "Sleep", {"ms": 5, "safe": False}))
    executor.add_tool(ToolCall("d", "Sleep", {"ms": 5}))
    await eventually(lambda: tracker.inside >= 2, "a and b running together")
    tracker.release("a", "b")
    await drain(executor)

    assert tracker.max_inside == 2
    assert tracker.overlaps_with_unsafe == 0
    assert executing_violations(recorder.events, cap=10) == []
    # d was queued behind the unsafe c, so it started only after c.
    assert tracker.entered.index("d") > tracker.entered.index("c")


async def test_results_come_in_call_order_even_when_later_calls_finish_first():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker))
    executor.add_tool(ToolCall("slow", "Sleep", {"hold": True, "output": "slow"}))
    executor.add_tool(ToolCall("fast", "Sleep", {"ms": 0, "output": "fast"}))
    await eventually(lambda: "completed" in recorder.kinds("fast"), "fast's completion")
    # fast has finished but slow has not: nothing may be yielded yet.
    assert executor.get_completed_results() == []
    tracker.release("slow")
    results = outcomes_of(await drain(executor))
    assert [o.tool_use_id for o in results] == ["slow", "fast"]
    assert [text_of(o) for o in results] == ["slow", "fast"]


async def test_progress_is_delivered_at_once_while_results_wait_their_turn():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker))
    executor.add_tool(ToolCall("first", "Sleep", {"hold": True}))
    executor.add_tool(ToolCall("second", "Sleep", {"progress": 3}))
    await eventually(lambda: "completed" in recorder.kinds("second"), "second's completion")
    updates = executor.get_completed_results()
    assert [u.data for u in updates if isinstance(u, ProgressUpdate)] == [
        {"step": 0},
        {"step": 1},
        {"step": 2},
    ]
    assert not any(isinstance(u, ResultUpdate) for u in updates)
    assert [e.kind for e in recorder.of("second")].count("progress") == 3
    tracker.release("first")
    await drain(executor)


async def test_get_remaining_results_wakes_on_progress_without_waiting_for_completion():
    release = asyncio.Event()

    class Gate(Sleep):
        name = "Gate"

        async def call(self, input, context, progress):
            progress("halfway")
            await release.wait()
            return ToolResult("through")

    executor, _ = executor_for(Gate())
    executor.add_tool(ToolCall("g", "Gate", {}))
    remaining = executor.get_remaining_results()
    first = await asyncio.wait_for(remaining.__anext__(), HANG_BOUND_S)
    assert isinstance(first, ProgressUpdate) and first.data == "halfway"
    release.set()
    rest = [u async for u in remaining]
    assert [text_of(o) for o in outcomes_of(rest)] == ["through"]


async def test_a_failing_bash_call_cancels_its_sibling_shells_but_not_other_tools():
    tracker = Tracker()
    executor, recorder = executor_for(Shell(tracker), Sleep(tracker))
    executor.add_tool(ToolCall("long", "Bash", {"hold": True}))
    executor.add_tool(ToolCall("read", "Sleep", {"hold": True, "output": "file body"}))
    executor.add_tool(ToolCall("fails", "Bash", {"hold": True, "fail": True, "output": "exit 1"}))
    executor.add_tool(ToolCall("later", "Bash", {"ms": 0, "safe": False}))
    await eventually(lambda: tracker.inside == 3, "the three safe calls running together")
    tracker.release("fails")
    await eventually(lambda: "long" in tracker.cancelled, "the running shell's cancellation")
    tracker.release("read")  # it runs on after its sibling shell failed
    results = {o.tool_use_id: o for o in outcomes_of(await drain(executor))}

    assert results["long"].cancelled == "sibling_error"
    assert results["later"].cancelled == "sibling_error"
    assert "a sibling command failed" in text_of(results["long"])
    assert "Bash(" in text_of(results["long"])  # names the command that failed
    assert results["fails"].is_error and results["fails"].cancelled is None
    assert text_of(results["read"]) == "file body"
    assert "long" in tracker.cancelled  # the running shell really was stopped
    assert "later" not in tracker.entered  # the queued one never started
    assert terminal_kinds(recorder, "long") == ["cancelled"]


async def test_a_bash_call_arriving_after_a_sibling_failed_is_refused_and_others_still_run():
    """The model streams `mkdir out` (fails), then `cp a out/`: the copy must not run once the
    mkdir has failed, even though it arrived after the failure; a Read after it still runs."""
    tracker = Tracker()
    executor, recorder = executor_for(Shell(tracker), Sleep(tracker))
    executor.add_tool(ToolCall("mkdir", "Bash", {"fail": True, "output": "exit 1"}))
    await eventually(lambda: "completed" in recorder.kinds("mkdir"), "the failing shell's end")
    executor.add_tool(ToolCall("cp", "Bash", {"output": "copied"}))
    executor.add_tool(ToolCall("read", "Sleep", {"output": "file body"}))
    results = {o.tool_use_id: o for o in outcomes_of(await drain(executor))}

    assert results["cp"].cancelled == "sibling_error"
    assert "a sibling command failed" in text_of(results["cp"])
    assert "Bash(" in text_of(results["cp"])  # names the command that failed
    assert "cp" not in tracker.entered
    assert recorder.kinds("cp") == ["queued", "cancelled"]
    assert text_of(results["read"]) == "file body"


async def test_a_failing_read_does_not_cancel_anything():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker), Shell(tracker))
    executor.add_tool(ToolCall("shell", "Bash", {"hold": True}))
    executor.add_tool(ToolCall("bad", "Sleep", {"fail": True}))
    await eventually(lambda: "completed" in recorder.kinds("bad"), "the failing read's end")
    tracker.release("shell")  # it was still running when the read failed
    results = outcomes_of(await drain(executor))
    assert [o.cancelled for o in results] == [None, None]
    assert not results[0].is_error


async def test_interrupt_cancels_cancel_tools_and_lets_block_tools_finish():
    turn = AbortController()
    tracker = Tracker()
    executor, recorder = executor_for(Shell(tracker), Sleep(tracker), abort=turn)
    executor.add_tool(ToolCall("shell", "Bash", {"hold": True}))
    executor.add_tool(ToolCall("block", "Sleep", {"hold": True, "output": "finished"}))
    executor.add_tool(ToolCall("queued", "Sleep", {"ms": 0, "safe": False}))
    await eventually(lambda: tracker.inside == 2, "the shell and the block tool running")
    turn.abort("interrupt")
    await eventually(lambda: "shell" in tracker.cancelled, "the shell's cancellation")
    tracker.release("block")  # it runs on after the interrupt
    results = {o.tool_use_id: o for o in outcomes_of(await drain(executor))}

    assert results["shell"].cancelled == "user_interrupted"
    assert "interrupted" in text_of(results["shell"])
    assert text_of(results["block"]) == "finished"
    assert results["queued"].cancelled == "user_interrupted"
    assert "queued" not in tracker.entered
    # A call added after the interrupt never starts either.
    executor.add_tool(ToolCall("late", "Sleep", {}))
    (late,) = outcomes_of(await drain(executor))
    assert late.cancelled == "user_interrupted"
    assert recorder.kinds("late") == ["queued", "cancelled"]


async def test_interrupt_cancels_a_block_tool_still_waiting_for_approval():
    turn = AbortController()
    waiting = asyncio.Event()

    class SlowPort:
        async def request_permission(self, request):
            waiting.set()
            await asyncio.Event().wait()  # a person who never answers

    executor, _ = executor_for(Sleep(), abort=turn, permission_port=SlowPort())
    executor.add_tool(ToolCall("edit", "Sleep", {"read_only": False}))
    await asyncio.wait_for(waiting.wait(), HANG_BOUND_S)
    turn.abort("interrupt")
    (result,) = outcomes_of(await drain(executor))
    assert result.cancelled == "user_interrupted"


async def test_discard_gives_every_unyielded_call_a_result_and_yields_nothing_more():
    tracker = Tracker()
    executor, recorder = executor_for(Shell(tracker), Sleep(tracker))
    executor.add_tool(ToolCall("done", "Sleep", {"output": "early"}))
    await eventually(lambda: "completed" in recorder.kinds("done"), "the first call's end")
    executor.add_tool(ToolCall("shell", "Bash", {"hold": True}))
    executor.add_tool(ToolCall("queued", "Sleep", {"safe": False}))
    await eventually(lambda: "shell" in tracker.entered, "the shell running")
    outcomes = executor.discard()
    assert [o.tool_use_id for o in outcomes] == ["done", "shell", "queued"]
    assert text_of(outcomes[0]) == "early"
    assert [o.cancelled for o in outcomes[1:]] == ["streaming_fallback"] * 2
    assert executor.get_completed_results() == []
    assert await drain(executor) == []
    await executor.wait_idle()
    assert "shell" in tracker.cancelled and "queued" not in tracker.entered
    assert terminal_kinds(recorder, "shell") == ["cancelled"]


async def test_concurrency_cap_bounds_running_calls():
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker), max_concurrency=3)
    names = [f"c{i}" for i in range(9)]
    for name in names:
        executor.add_tool(ToolCall(name, "Sleep", {"hold": True}))
    await eventually(lambda: tracker.inside >= 3, "three calls running together")
    tracker.release(*names)
    results = outcomes_of(await drain(executor))
    assert len(results) == 9
    assert tracker.max_inside == 3
    assert executing_violations(recorder.events, cap=3) == []


async def test_unsafe_modifier_applies_before_the_next_call_and_safe_ones_after_their_group():
    seen: dict[str, tuple[str, ...]] = {}
    beside = asyncio.Event()

    def add(mark):
        return lambda context: context.replace(messages=(*context.messages, mark))

    class Marking(Sleep):
        name = "Mark"

        async def call(self, input, context: ToolContext, progress):
            seen[context.tool_use_id] = tuple(context.messages)
            if context.tool_use_id == "s1":
                await beside.wait()  # s1 ends only once s2 has started beside it
            if context.tool_use_id == "s2":
                beside.set()
            return ToolResult("ok", context_modifier=add(context.tool_use_id))

    executor, _ = executor_for(Marking())
    executor.add_tool(ToolCall("s1", "Mark", {}))
    executor.add_tool(ToolCall("s2", "Mark", {}))
    executor.add_tool(ToolCall("u", "Mark", {"safe": False}))
    executor.add_tool(ToolCall("after", "Mark", {}))
    updates = await asyncio.wait_for(drain(executor), HANG_BOUND_S)
    results = [u for u in updates if isinstance(u, ResultUpdate)]

    assert seen["s2"] == ()  # ran beside s1: s1's change is not visible yet
    assert seen["u"] == ("s1", "s2")  # the safe group's changes, in call order
    assert seen["after"] == ("s1", "s2", "u")
    assert results[-1].context.messages == ("s1", "s2", "u", "after")
    assert executor.context.messages == ("s1", "s2", "u", "after")


async def test_every_call_emits_queued_started_and_one_terminal_event_with_a_batch_id():
    executor, recorder = executor_for(Sleep())
    executor.add_tool(ToolCall("a", "Sleep", {}))
    executor.add_tool(ToolCall("b", "Sleep", {}))
    executor.add_tool(ToolCall("c", "Sleep", {"safe": False}))
    await drain(executor)
    for tool_use_id in "abc":
        kinds = recorder.kinds(tool_use_id)
        assert kinds[0] == "queued" and kinds[1] == "started" and kinds[-1] == "completed"
    batch = {e.tool_use_id: e.batch_id for e in recorder.events if e.kind == "queued"}
    assert batch["a"] == batch["b"] != batch["c"]
    completed = next(e for e in recorder.of("a") if isinstance(e, ToolCompleted))
    assert completed.duration_s >= 0 and not completed.is_error


@pytest.mark.parametrize("when", ["before its first step", "inside the tool"])
async def test_a_call_cancelled_from_outside_still_gets_a_terminal_event(when: str):
    tracker = Tracker()
    executor, recorder = executor_for(Sleep(tracker))
    executor.add_tool(ToolCall("a", "Sleep", {"hold": True}))
    task = executor._calls[0].task
    assert task is not None
    if when == "inside the tool":
        await eventually(lambda: "a" in tracker.entered, "the call inside the tool")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert ("a" in tracker.cancelled) == (when == "inside the tool")
    assert recorder.kinds("a")[-1] == "cancelled"
    assert terminal_kinds(recorder, "a") == ["cancelled"]
    (result,) = outcomes_of(await drain(executor))
    assert result.cancelled == "user_interrupted"


async def test_each_completion_carries_the_result_the_model_got_and_where_big_output_went(
    tmp_path: Path,
):
    """Front ends take results from ToolCompleted alone: the content, the saved file, the
    tool's own output; never from the messages sent to the model."""
    recorder = EventRecorder()
    big = "\n".join(f"line {i}" for i in range(100))
    context = make_context([Sleep(), Small()])
    executor = StreamingToolExecutor(make_services(recorder, session_dir=tmp_path), context)
    executor.add_tool(ToolCall("small", "Sleep", {"output": "hello"}))
    executor.add_tool(ToolCall("big", "Small", {"output": big}))
    executor.add_tool(ToolCall("bad", "Sleep", {"fail": True}))
    executor.add_tool(ToolCall("unknown", "Nope", {}))
    outcomes = {
        o.call.id: o for o in outcomes_of([u async for u in executor.get_remaining_results()])
    }
    done = {e.tool_use_id: e for e in recorder.events if isinstance(e, ToolCompleted)}
    assert set(done) == {"small", "big", "bad", "unknown"}
    for tool_use_id, event in done.items():
        assert event.content == outcomes[tool_use_id].block["content"]
    assert done["small"].content == "hello" and done["small"].saved is None
    assert done["small"].output == "hello"
    saved = done["big"].saved
    assert saved is not None and saved.path.read_text() == big and saved.size_chars == len(big)
    assert str(saved.path) in done["big"].content and done["big"].output == big
    assert done["bad"].is_error and done["bad"].failed_stage == "call"
    assert done["unknown"].is_error and done["unknown"].output is None
    assert "Nope" in str(done["unknown"].content)
