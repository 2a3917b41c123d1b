"""The batch path: greedy partitioning and batch-by-batch execution."""

from __future__ import annotations

import asyncio

from engine_helpers import (
    HANG_BOUND_S,
    calls,
    eventually,
    executing_violations,
    make_context,
    make_services,
    outcomes_of,
)
from tools_for_tests import Sleep, Tracker

from core.events import EventRecorder
from core.executor import ResultUpdate, partition_tool_calls, run_tools
from core.executor.services import max_tool_use_concurrency
from core.tool import ToolPool, ToolResult


def shape(batches):
    return [(b.concurrency_safe, [c.id for c in b.calls]) for b in batches]


def test_consecutive_safe_calls_merge_and_unsafe_calls_stand_alone():
    pool = ToolPool([Sleep()])
    batch = calls(
        ("Sleep", {}),  # Read A
        ("Sleep", {}),  # Read B
        ("Sleep", {}),  # Grep C
        ("Sleep", {"safe": False}),  # Bash D
        ("Sleep", {}),  # Read E
        ("Sleep", {"safe": False}),  # Edit F
        ("Sleep", {"safe": False}),  # Edit G
    )
    assert shape(partition_tool_calls(batch, pool)) == [
        (True, ["toolu_000", "toolu_001", "toolu_002"]),
        (False, ["toolu_003"]),
        (True, ["toolu_004"]),
        (False, ["toolu_005"]),
        (False, ["toolu_006"]),
    ]


def test_unknown_tools_invalid_input_and_raising_safety_checks_are_unsafe():
    class Moody(Sleep):
        name = "Moody"

        def is_concurrency_safe(self, input):
            raise ValueError("cannot parse the command")

    pool = ToolPool([Sleep(), Moody()])
    batch = calls(
        ("Sleep", {}),
        ("Nowhere", {}),
        ("Sleep", {"ms": "not a number"}),
        ("Moody", {}),
        ("Sleep", {}),
    )
    assert [b.concurrency_safe for b in partition_tool_calls(batch, pool)] == [
        True,
        False,
        False,
        False,
        True,
    ]


async def test_run_tools_runs_batches_in_order_with_the_cap(monkeypatch):
    monkeypatch.setenv("PROCTOR_MAX_TOOL_USE_CONCURRENCY", "2")
    tracker = Tracker()
    recorder = EventRecorder()
    batch = calls(*[("Sleep", {"hold": True})] * 5, ("Sleep", {"safe": False}), ("Sleep", {}))

    async def run() -> list[object]:
        services, context = make_services(recorder), make_context([Sleep(tracker)])
        return [u async for u in run_tools(batch, services, context)]

    running = asyncio.ensure_future(run())
    await eventually(lambda: tracker.inside >= 2, "two calls running together")
    tracker.release(*(c.id for c in batch))
    updates = await asyncio.wait_for(running, HANG_BOUND_S)
    assert [o.tool_use_id for o in outcomes_of(updates)] == [c.id for c in batch]
    assert tracker.max_inside == 2
    assert executing_violations(recorder.events, cap=2) == []
    assert tracker.entered.index("toolu_006") > tracker.entered.index("toolu_005")


def test_the_cap_comes_from_the_environment_and_bad_values_fall_back(monkeypatch):
    monkeypatch.delenv("PROCTOR_MAX_TOOL_USE_CONCURRENCY", raising=False)
    assert max_tool_use_concurrency() == 10
    monkeypatch.setenv("PROCTOR_MAX_TOOL_USE_CONCURRENCY", "3")
    assert max_tool_use_concurrency() == 3
    for bad in ("zero", "0", "-4"):
        monkeypatch.setenv("PROCTOR_MAX_TOOL_USE_CONCURRENCY", bad)
        assert max_tool_use_concurrency() == 10


async def test_context_modifiers_of_a_safe_batch_apply_after_it_in_call_order():
    batch = calls(
        ("Mark", {}),
        ("Mark", {}),
        ("Mark", {}),
        ("Mark", {"safe": False}),
        ("Mark", {"safe": False}),
    )
    ids = [c.id for c in batch]
    seen = {}
    # Later calls finish first, to show the order is the call order: each call of the safe
    # batch ends only once the next has ended.
    finished = {i: asyncio.Event() for i in ids}
    next_of = {ids[0]: ids[1], ids[1]: ids[2]}

    class Marking(Sleep):
        name = "Mark"

        async def call(self, input, context, progress):
            seen[context.tool_use_id] = tuple(context.messages)
            later = next_of.get(context.tool_use_id)
            if later is not None:
                await finished[later].wait()
            finished[context.tool_use_id].set()
            return ToolResult(
                "ok",
                context_modifier=lambda c, m=context.tool_use_id: c.replace(
                    messages=(*c.messages, m)
                ),
            )

    async def run() -> list[object]:
        return [u async for u in run_tools(batch, make_services(), make_context([Marking()]))]

    updates = await asyncio.wait_for(run(), HANG_BOUND_S)
    assert seen[ids[1]] == seen[ids[2]] == ()
    assert seen[ids[3]] == tuple(ids[:3])
    assert seen[ids[4]] == tuple(ids[:4])
    final = [u for u in updates if isinstance(u, ResultUpdate)][-1].context
    assert final.messages == tuple(ids)
