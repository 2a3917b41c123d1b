"""A change of mode while calls wait for an answer: each is decided again by the real chain.

Allowed now: the question is withdrawn, the call runs, and the record says the mode allowed
it. Denied now (plan mode and a change): withdrawn, and the call ends denied with the
chain's reason. Still asking, or the chain failing: the question stays for the person.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import (
    HANG_BOUND_S,
    eventually,
    make_context,
    make_services,
    outcomes_of,
    text_of,
)
from tools_for_tests import Sleep, Tracker

from core.abort import AbortController
from core.access.modes import switch_mode
from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import (
    EventRecorder,
    ModeChanged,
    PermissionAnswered,
    ToolCompleted,
    ToolNotice,
)
from core.executor import StreamingToolExecutor, ToolCall
from core.executor.waiting import redeciding_on_mode_change
from core.permissions.decide import DecisionChain
from core.ports import Approve, PermissionAnswer, PermissionRequest, Reject
from core.tool import ToolContext


class HeldPort:
    """A person who has not answered yet: each question waits until the test answers it,
    and a question the engine withdraws is noted."""

    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []
        self.withdrawn: list[str] = []
        self._answers: dict[str, asyncio.Future[PermissionAnswer]] = {}

    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer:
        future = asyncio.get_running_loop().create_future()
        self._answers[request.tool_use_id] = future
        self.asked.append(request)
        try:
            return await future
        except asyncio.CancelledError:
            self.withdrawn.append(request.tool_use_id)
            raise

    def answer(self, tool_use_id: str, answer: PermissionAnswer) -> None:
        self._answers[tool_use_id].set_result(answer)

    def open(self) -> list[str]:
        return [i for i, f in self._answers.items() if not f.done()]


def change_mode(context: ToolContext, mode: Any) -> None:
    context.set_app_state(
        lambda state: state.with_permission_context(switch_mode(state.permission_context, mode))
    )


def completed(recorder: EventRecorder, tool_use_id: str) -> ToolCompleted:
    (event,) = [e for e in recorder.of(tool_use_id) if isinstance(e, ToolCompleted)]
    return event


def answered(recorder: EventRecorder, tool_use_id: str) -> PermissionAnswered:
    (event,) = [e for e in recorder.of(tool_use_id) if isinstance(e, PermissionAnswered)]
    return event


class Engine:
    """An executor on Sleep calls that ask (they are not read-only), and a person who has
    not answered yet."""

    def __init__(self, chain: Any = None) -> None:
        self.tracker = Tracker()
        self.recorder = EventRecorder()
        self.port = HeldPort()
        changes: dict[str, Any] = {"permission_port": self.port}
        if chain is not None:
            changes["permissions"] = chain
        self.services = make_services(self.recorder, **changes)
        self.executor = StreamingToolExecutor(self.services, make_context([Sleep(self.tracker)]))

    async def ask(self, *names: str, safe: bool = False) -> None:
        for name in names:
            call = ToolCall(name, "Sleep", {"read_only": False, "safe": safe, "output": name})
            self.executor.add_tool(call)
        await eventually(lambda: sorted(self.port.open()) == sorted(names), "the questions")


async def drain(executor: StreamingToolExecutor) -> list[Any]:
    """Every result; a call left waiting for an answer fails the test instead of hanging it."""

    async def results() -> list[Any]:
        return [u async for u in executor.get_remaining_results()]

    return await asyncio.wait_for(results(), HANG_BOUND_S)


async def test_plan_mode_denies_a_waiting_change_and_closes_its_question():
    engine = Engine()
    await engine.ask("w")

    change_mode(engine.executor.context, "plan")
    settled = await engine.services.waiting.redecide_waiting()

    (outcome,) = outcomes_of(await drain(engine.executor))
    assert settled == 1 and engine.port.withdrawn == ["w"] and engine.tracker.entered == []
    event = completed(engine.recorder, "w")
    assert event.ended == "denied" and event.denied_by is not None
    assert event.denied_by.detail == "plan mode"
    assert answered(engine.recorder, "w").decided_by == event.denied_by
    assert isinstance(answered(engine.recorder, "w").answer, Reject)  # the record says no
    assert "Plan mode is on" in text_of(outcome)
    assert text_of(outcome).startswith("<tool_use_error>")  # the model is told it did not run


async def test_bypass_allows_every_waiting_call_and_each_runs():
    engine = Engine()
    context = engine.executor.context
    context.set_app_state(
        lambda state: state.with_permission_context(
            replace(state.permission_context, bypass_available=True)
        )
    )
    await engine.ask("a", "b", "c", safe=True)  # safe calls: all three wait at once

    change_mode(context, "bypassPermissions")
    assert await engine.services.waiting.redecide_waiting() == 3

    await drain(engine.executor)
    assert sorted(engine.port.withdrawn) == ["a", "b", "c"]
    assert sorted(engine.tracker.finished) == ["a", "b", "c"]
    for name in ("a", "b", "c"):
        event = completed(engine.recorder, name)
        assert event.ended == "succeeded" and event.content == name
        by = answered(engine.recorder, name).decided_by
        assert by is not None and by.kind == "mode"
        assert isinstance(answered(engine.recorder, name).answer, Approve)
        notices = [(e.level, e.text) for e in engine.recorder.of(name) if isinstance(e, ToolNotice)]
        said = f"Allowed without an answer once the mode changed: {by.detail}."
        assert notices == [("info", said)]
    assert len(engine.services.waiting) == 0


async def test_a_call_that_still_asks_keeps_its_question_for_the_person():
    engine = Engine()
    await engine.ask("w")

    change_mode(engine.executor.context, "acceptEdits")  # Sleep edits no file: it still asks
    assert await engine.services.waiting.redecide_waiting() == 0
    assert engine.port.open() == ["w"] and engine.port.withdrawn == []

    engine.port.answer("w", Approve())
    await drain(engine.executor)
    assert engine.tracker.finished == ["w"]
    assert answered(engine.recorder, "w").decided_by is None  # the person answered
    assert completed(engine.recorder, "w").ended == "succeeded"


class FailingAgain(DecisionChain):
    """A chain that decides the first time and breaks on every later decision."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0

    async def decide(self, tool: Any, input: Any, context: Any, hook: Any) -> Any:
        self.decisions += 1
        if self.decisions > 1:
            raise RuntimeError("settings unreadable")
        return await super().decide(tool, input, context, hook)


async def test_a_chain_that_fails_on_the_second_look_leaves_the_question_open():
    chain = FailingAgain()
    engine = Engine(chain)
    await engine.ask("w")

    change_mode(engine.executor.context, "plan")  # would deny, if the chain could say so
    assert await engine.services.waiting.redecide_waiting() == 0
    assert chain.decisions == 2 and engine.port.open() == ["w"]

    engine.port.answer("w", Reject())
    await drain(engine.executor)
    event = completed(engine.recorder, "w")
    assert event.ended == "denied" and event.denied_by is not None
    assert event.denied_by.kind == "user" and engine.tracker.entered == []


async def test_the_persons_answer_stands_when_it_comes_first():
    engine = Engine()
    await engine.ask("w")
    engine.port.answer("w", Reject(feedback="not now"))
    change_mode(engine.executor.context, "plan")
    engine.services.waiting.redecide_soon()  # too late: the question is answered

    (outcome,) = outcomes_of(await drain(engine.executor))
    assert "not now" in text_of(outcome) and engine.port.withdrawn == []
    assert completed(engine.recorder, "w").denied_by.kind == "user"  # type: ignore[union-attr]


async def test_an_interrupted_call_leaves_nothing_waiting():
    abort = AbortController()
    tracker = Tracker()
    port = HeldPort()
    services = make_services(EventRecorder(), permission_port=port)
    executor = StreamingToolExecutor(services, make_context([Sleep(tracker)], abort=abort))
    executor.add_tool(ToolCall("w", "Sleep", {"read_only": False, "safe": False}))
    await eventually(lambda: port.open() == ["w"], "the question")
    assert len(services.waiting) == 1

    abort.abort("user")
    await drain(executor)
    await eventually(lambda: port.withdrawn == ["w"], "the question withdrawn")
    assert len(services.waiting) == 0
    assert await services.waiting.redecide_waiting() == 0


async def test_a_mode_change_through_the_sink_decides_again_without_being_asked_to():
    recorder = EventRecorder()
    port = HeldPort()
    services = make_services(recorder, permission_port=port)
    services = replace(services, sink=redeciding_on_mode_change(recorder, services.waiting))
    executor = StreamingToolExecutor(services, make_context([Sleep()]))
    executor.add_tool(ToolCall("w", "Sleep", {"read_only": False, "safe": False}))
    await eventually(lambda: port.open() == ["w"], "the question")

    change_mode(executor.context, "plan")
    services.emit(ModeChanged(mode="plan", previous="default", why="the mode key"))

    await drain(executor)
    assert port.withdrawn == ["w"] and completed(recorder, "w").ended == "denied"


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


async def test_the_mode_key_lets_a_waiting_write_run_and_the_transcript_says_why(
    tmp_path: Path, isolated_dirs: None
):
    project = tmp_path / "project"
    project.mkdir()
    write = {
        "type": "tool_use",
        "name": "Write",
        "input": {"file_path": "{workspace}/notes.md", "content": "hello\n"},
    }
    scenario = project / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "write",
                "description": "one write",
                "workspace": "cwd",
                "turns": [[write], [{"type": "text", "text": "Written."}]],
            }
        )
    )
    port = HeldPort()
    prepared = prepare_session(
        SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    )
    live = await open_session(prepared, sink=EventRecorder(), trusted=True, permission_port=port)
    try:
        turn = asyncio.create_task(live.send("write the notes"))
        await eventually(lambda: port.open(), "the Write's question")
        assert not (project / "notes.md").exists()

        assert live.cycle_mode() == "acceptEdits"
        ended = await asyncio.wait_for(turn, HANG_BOUND_S)
    finally:
        await live.close()

    assert ended.stop_reason == "end_turn"
    assert (project / "notes.md").read_text() == "hello\n"
    assert port.withdrawn == [port.asked[0].tool_use_id]
    records = [
        json.loads(line) for line in prepared.session.transcript_path.read_text().splitlines()
    ]
    kinds = [r.get("kind") for r in records if r["type"] in ("tool_event", "engine_event")]
    assert kinds.index("mode") < kinds.index("permission_answered")
    (answer,) = [r for r in records if r.get("kind") == "permission_answered"]
    assert answer["answer"] == "approve" and answer["decided_by"]["kind"] == "mode"
    assert "accept edits" in answer["decided_by"]["detail"]
    (done,) = [r for r in records if r.get("kind") == "completed"]
    assert done["outcome"] == "succeeded" and done["waited_s"] > 0


class HeldSecondLook(DecisionChain):
    """A chain whose later decisions, once made, wait at a gate before they are handed back
    (as the real chain waits for the sandbox's view after reading the mode)."""

    def __init__(self) -> None:
        super().__init__()
        self.decisions = 0
        self.held = asyncio.Event()
        self.gate = asyncio.Event()

    async def decide(self, tool: Any, input: Any, context: Any, hook: Any) -> Any:
        self.decisions += 1
        decision = await super().decide(tool, input, context, hook)
        if self.decisions > 1:  # both later looks wait, and go on in the order they came
            self.held.set()
            await self.gate.wait()
        return decision


async def test_a_decision_made_under_a_mode_already_left_does_not_settle_the_question():
    chain = HeldSecondLook()
    engine = Engine(chain)
    context = engine.executor.context
    context.set_app_state(
        lambda state: state.with_permission_context(
            replace(state.permission_context, bypass_available=True)
        )
    )
    await engine.ask("w")

    change_mode(context, "bypassPermissions")  # the person passes through bypass...
    first = asyncio.ensure_future(engine.services.waiting.redecide_waiting())
    await asyncio.wait_for(chain.held.wait(), HANG_BOUND_S)
    change_mode(context, "plan")  # ...and lands on plan before the first look is back
    engine.services.waiting.redecide_soon()  # as the mode change's event sets off
    await eventually(lambda: chain.decisions == 3, "the second look")
    chain.gate.set()
    await asyncio.wait_for(first, HANG_BOUND_S)

    await drain(engine.executor)
    assert engine.tracker.entered == []  # never run under the bypass it was decided in
    event = completed(engine.recorder, "w")
    assert event.ended == "denied" and event.denied_by is not None
    assert event.denied_by.detail == "plan mode"
