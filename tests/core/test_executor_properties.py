"""Property tests: random turns through both paths keep every promise of the executor.

Each example is a random sequence of calls (safe or not, fast or slow, failing, crashing,
shell calls whose failure cancels siblings, unknown tools, invalid input, calls that need
approval), arriving at random moments on the streaming path or all at once on the batch
path, with a user interrupt at a random moment in some of them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from engine_helpers import executing_violations, make_context, make_services
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tools_for_tests import Shell, Sleep, Tracker

from core.abort import AbortController
from core.events import EventRecorder, ToolCancelled, ToolCompleted, ToolEvent, ToolStarted
from core.executor import ResultUpdate, StreamingToolExecutor, ToolCall, run_tools
from core.ports import Approve, PermissionAnswer, PermissionRequest, Reject


@dataclass(frozen=True)
class Spec:
    tool: str
    input: Any
    arrive_after_ms: int


call_inputs = st.fixed_dictionaries(
    {},
    optional={
        "ms": st.integers(0, 4),
        "safe": st.booleans(),
        "fail": st.booleans(),
        "raise_error": st.booleans(),
        "progress": st.integers(0, 3),
        "read_only": st.booleans(),
    },
)
specs = st.builds(
    Spec,
    tool=st.sampled_from(["Sleep", "Sleep", "Bash", "Bash", "Ghost"]),
    input=st.one_of(call_inputs, call_inputs, call_inputs, st.just({"ms": "soon"}), st.just([])),
    arrive_after_ms=st.integers(0, 3),
)
turns = st.fixed_dictionaries(
    {
        "specs": st.lists(specs, min_size=1, max_size=12),
        "streaming": st.booleans(),
        "cap": st.integers(1, 4),
        "interrupt_after_ms": st.none() | st.integers(0, 12),
        "approve": st.booleans(),
    }
)


class SlowPort:
    """A person who takes a moment to answer, and answers the same way every time."""

    def __init__(self, approve: bool) -> None:
        self.approve = approve

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        await asyncio.sleep(0.001)
        return Approve() if self.approve else Reject(feedback="not now")


async def play(
    turn: dict[str, Any],
) -> tuple[list[ToolCall], list[Any], EventRecorder, Tracker, int]:
    tracker = Tracker()
    recorder = EventRecorder()
    turn_abort = AbortController()
    interrupted_at: list[int] = []

    def interrupt() -> None:
        interrupted_at.append(len(recorder.events))
        turn_abort.abort("interrupt")

    services = make_services(
        recorder, max_concurrency=turn["cap"], permission_port=SlowPort(turn["approve"])
    )
    context = make_context([Sleep(tracker), Shell(tracker)], abort=turn_abort)
    calls = [ToolCall(f"toolu_{i}", s.tool, s.input) for i, s in enumerate(turn["specs"])]
    loop = asyncio.get_running_loop()
    if turn["interrupt_after_ms"] is not None:
        loop.call_later(turn["interrupt_after_ms"] / 1000, interrupt)

    if turn["streaming"]:
        executor = StreamingToolExecutor(services, context)
        updates: list[Any] = []
        for spec, call in zip(turn["specs"], calls, strict=True):
            await asyncio.sleep(spec.arrive_after_ms / 1000)
            executor.add_tool(call)
            updates.extend(executor.get_completed_results())
        updates.extend([u async for u in executor.get_remaining_results()])
    else:
        updates = [u async for u in run_tools(calls, services, context)]
    if not interrupted_at:
        interrupted_at.append(len(recorder.events) + 1)
    return calls, updates, recorder, tracker, interrupted_at[0]


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turns)
def test_random_turns_keep_every_promise(turn: dict[str, Any]) -> None:
    calls, updates, recorder, tracker, interrupted_at = asyncio.run(play(turn))
    outcomes = [u.outcome for u in updates if isinstance(u, ResultUpdate)]

    # Every tool_use gets exactly one result, and results come in call order.
    assert [o.tool_use_id for o in outcomes] == [c.id for c in calls]
    for call in calls:
        terminal = [k for k in recorder.kinds(call.id) if k in ("completed", "cancelled")]
        assert len(terminal) == 1, (call.id, recorder.kinds(call.id))
        assert recorder.kinds(call.id)[0] == "queued"

    # An unsafe call never overlaps another executing call; never more than the cap at once.
    assert executing_violations(recorder.events, turn["cap"]) == []
    assert tracker.overlaps_with_unsafe == 0
    assert tracker.max_inside <= turn["cap"]

    # Cancelled calls say why, and only for a reason that happened.
    cancelled_events = {e.tool_use_id: e for e in recorder.events if isinstance(e, ToolCancelled)}
    for outcome in outcomes:
        assert (outcome.cancelled is not None) == (outcome.tool_use_id in cancelled_events)
        if outcome.cancelled is not None:
            assert outcome.is_error
            assert str(outcome.block["content"]).startswith("<tool_use_error>Cancelled:")
            assert cancelled_events[outcome.tool_use_id].reason == outcome.cancelled
        if outcome.cancelled == "user_interrupted":
            assert turn["interrupt_after_ms"] is not None

    # A failed shell command stops its sibling shells, and nothing else: both directions.
    assert sibling_cascade_violations(recorder.events, interrupted_at) == []

    # Nothing starts after the user interrupts.
    started_after = [e for e in recorder.events[interrupted_at:] if isinstance(e, ToolStarted)]
    assert started_after == []


def sibling_cascade_violations(events: list[Any], interrupted_at: int) -> list[str]:
    """Replay the events and report every breach of the cascade, in both directions.

    The first Bash call to complete with an error is the trigger. From that moment every other
    Bash call not yet finished (running, queued, or arriving later) ends cancelled with
    `sibling_error`, or `user_interrupted` when the person's interrupt got to it first, and no
    Bash call starts; before it, and for any other tool, there is no `sibling_error`."""
    tool_events = [(i, e) for i, e in enumerate(events) if isinstance(e, ToolEvent)]
    trigger = next(
        (
            (i, e)
            for i, e in tool_events
            if isinstance(e, ToolCompleted) and e.tool_name == "Bash" and e.is_error
        ),
        None,
    )
    problems = []
    for i, event in tool_events:
        if not isinstance(event, ToolCancelled) or event.reason != "sibling_error":
            continue
        if event.tool_name != "Bash":
            problems.append(f"{event.tool_use_id} ({event.tool_name}) cancelled as a sibling")
        if trigger is None or i < trigger[0]:
            problems.append(f"{event.tool_use_id} cancelled as a sibling before any Bash failed")
    if trigger is None:
        return problems
    trigger_at, failed = trigger
    queued_at = {e.tool_use_id: i for i, e in tool_events if e.kind == "queued"}
    for i, event in tool_events:
        if i <= trigger_at or event.tool_name != "Bash" or event.tool_use_id == failed.tool_use_id:
            continue
        if isinstance(event, ToolStarted):
            problems.append(f"{event.tool_use_id} started after {failed.tool_use_id} failed")
        elif isinstance(event, ToolCompleted):
            problems.append(f"{event.tool_use_id} ran on after {failed.tool_use_id} failed")
        elif isinstance(event, ToolCancelled):
            # The interrupt wins for a call it reached first (queued, or pending, before the
            # failure); otherwise the failure's reason stands.
            interrupted_first = interrupted_at <= max(trigger_at, queued_at[event.tool_use_id])
            if event.reason != "sibling_error" and not (
                interrupted_first and event.reason == "user_interrupted"
            ):
                problems.append(f"{event.tool_use_id} cancelled as {event.reason}")
    return problems
