"""The agent loop, driven end to end through the offline demo model and real tools."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import HANG_BOUND_S, ScriptedHooks, eventually, make_services
from tools_for_tests import Sleep

from core.access.context import ToolPermissionContext
from core.agent.demo import DEMO_MODEL, DemoModel, copy_sample_project
from core.agent.loop import (
    INTERRUPT_MESSAGE,
    AgentLoop,
    AssistantMessage,
    Interrupted,
    Retrying,
    TextDelta,
    TurnEnded,
    TurnError,
)
from core.agent.model import (
    DEFAULT_MODEL,
    MissingApiKey,
    ModelClient,
    RetryPolicy,
    classify_failure,
)
from core.agent.prompt import Environment, system_blocks, tool_definitions
from core.agent.scenario import parse_scenario
from core.agent.transcript import Transcript, transcribing
from core.agent.transcript_resume import messages_from
from core.app_state import AppState, AppStateStore
from core.events import EngineEvent, EventRecorder, ToolCancelled
from core.hooks import PostToolUseOutcome
from core.registry import assemble_tool_pool
from core.tool import ToolContext, ToolOptions, ToolPool

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


@dataclass
class Rig:
    loop: AgentLoop
    demo: DemoModel
    recorder: EventRecorder
    workspace: Path
    requests: list[dict[str, Any]] = field(default_factory=list)

    def of(self, kind: type[EngineEvent]) -> list[Any]:
        return [e for e in self.recorder.events if isinstance(e, kind)]

    def outcomes(self) -> list[str]:
        return [s.outcome for s in self.demo.served]


def rig(
    tmp_path: Path,
    *turns: Any,
    permission_context: ToolPermissionContext = BYPASS,
    max_turns: int = 10,
    transcript: Transcript | None = None,
    speed: float = 0,
    **services: Any,
) -> Rig:
    scenario = parse_scenario(json.dumps({"name": "t", "turns": list(turns)}))
    workspace = copy_sample_project(tmp_path / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=speed)
    requests: list[dict[str, Any]] = []
    serve = demo.handle

    async def handle(request: Any) -> Any:
        requests.append(json.loads(request.content))
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    session_dir = tmp_path / "session"
    pool = assemble_tool_pool(permission_context)
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=permission_context)),
        options=ToolOptions(tools=pool, model=DEMO_MODEL, session_dir=session_dir),
    )
    recorder = EventRecorder()
    built = make_services(recorder, session_dir=session_dir, **services)
    if transcript is not None:  # as a live session does: one sink writes the transcript
        built = replace(built, sink=transcribing(transcript, recorder))
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        built,
        context,
        max_turns=max_turns,
        retry=RetryPolicy(max_attempts=4, base_delay_s=0),
        transcript=transcript,
    )
    return Rig(loop, demo, recorder, workspace, requests)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def assert_valid(messages: list[dict[str, Any]]) -> None:
    """Roles alternate and every tool_use is answered, in order, by the next message."""
    assert messages[0]["role"] == "user"
    for before, after in itertools.pairwise(messages):
        assert before["role"] != after["role"]
    for index, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        calls = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not calls:
            continue
        answer = messages[index + 1]["content"]
        results = [b["tool_use_id"] for b in answer if b["type"] == "tool_result"]
        assert results == calls
        assert all(b["type"] == "tool_result" for b in answer[: len(calls)])


def results_of(message: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in message["content"] if b["type"] == "tool_result"]


# -- the happy path --------------------------------------------------------------------------


async def test_parallel_reads_run_and_come_back_in_call_order(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            text("I will look at the project from three sides at once, starting right now."),
            tool("Read", file_path="{workspace}/README.md"),
            tool("Glob", pattern="**/*.py", path="{workspace}"),
            tool("Grep", pattern="def ", path="{workspace}", output_mode="files_with_matches"),
        ],
        [text("All done.")],
    )
    ended = await r.loop.send("look around")

    assert ended.stop_reason == "end_turn" and ended.requests == 2
    assert len(r.of(TextDelta)) > 2  # streamed, not delivered whole
    streamed = "".join(e.text for e in r.of(TextDelta))
    assert streamed.startswith("I will look") and streamed.endswith("All done.")
    messages = r.loop.messages
    assert_valid(messages)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    results = results_of(messages[2])
    assert not any(b.get("is_error") for b in results)
    assert "textstats" in results[0]["content"]  # the README
    assert "counts.py" in results[1]["content"]
    # The second request carried the first turn's calls and their results.
    assert r.requests[1]["messages"] == messages[:3]
    assert [e.stop_reason for e in r.of(AssistantMessage)] == ["tool_use", "end_turn"]
    assert r.of(TurnEnded) == [ended]


async def test_tools_start_while_the_model_still_streams(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            tool("Read", file_path="{workspace}/README.md"),
            {**text("More text, after a pause."), "pace_ms": 300_000},  # 60 s at speed 0.2
        ],
        [text("ok")],
        speed=0.2,
    )
    kinds: list[str] = []
    real = r.loop.services.sink
    watch = replace(r.loop.services, sink=lambda event: (kinds.append(event.kind), real(event))[-1])
    r.loop.services = watch
    task = asyncio.create_task(r.loop.send("go"))
    await eventually(lambda: "completed" in kinds, "the Read's completion")
    # The Read finished before the text after it had begun to stream.
    assert "text" not in kinds
    r.loop.interrupt()
    await asyncio.wait_for(task, HANG_BOUND_S)


async def test_the_request_has_tools_system_prompt_and_cache_breakpoints(tmp_path: Path) -> None:
    r = rig(tmp_path, [text("hi")])
    await r.loop.send("hello")
    body = r.requests[0]
    names = [t["name"] for t in body["tools"]]
    assert "Read" in names and names == sorted(names)
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"][:-1])
    stable, volatile = body["system"]
    assert stable["cache_control"] == {"type": "ephemeral"}
    assert "cache_control" not in volatile
    assert str(r.workspace) in volatile["text"]
    assert "bypass permissions" in volatile["text"]


def test_plan_mode_says_what_it_allows_and_where_the_plan_goes(tmp_path: Path) -> None:
    plan = tmp_path / "plan.md"
    context = ToolPermissionContext(mode="plan", plan_file=plan)
    options = ToolOptions(tools=assemble_tool_pool(context))
    blocks = system_blocks(options, context, Environment(cwd=tmp_path, date="2026-01-01"))
    assert "Plan mode is on" in blocks[1]["text"]
    assert str(plan) in blocks[1]["text"]
    assert "ExitPlanMode" in blocks[1]["text"]
    assert "Plan mode" not in blocks[0]["text"]  # the cached prefix does not change


def test_deferred_tools_are_named_not_sent_until_discovered(tmp_path: Path) -> None:
    class Later(Sleep):
        name = "LaterTool"
        should_defer = True

    pool = ToolPool([*assemble_tool_pool(ToolPermissionContext()), Later()])
    options = ToolOptions(tools=pool)
    sent = [t["name"] for t in tool_definitions(options)]
    assert "LaterTool" not in sent and "Read" in sent
    volatile = system_blocks(options, ToolPermissionContext(), Environment(cwd=tmp_path))[1]
    assert "LaterTool" in volatile["text"] and "ToolSearch" in volatile["text"]
    loaded = ToolOptions(tools=pool, discovered_tools=frozenset({"LaterTool"}))
    assert "LaterTool" in [t["name"] for t in tool_definitions(loaded)]
    volatile = system_blocks(loaded, ToolPermissionContext(), Environment(cwd=tmp_path))[1]
    assert "LaterTool" not in volatile["text"]


async def test_max_turns_stops_the_loop(tmp_path: Path) -> None:
    read = tool("Read", file_path="{workspace}/README.md")
    r = rig(tmp_path, [read], [read], [read], [text("never reached")], max_turns=2)
    ended = await r.loop.send("go")
    assert ended.stop_reason == "max_turns" and ended.requests == 2
    assert len(r.requests) == 2
    assert_valid(r.loop.messages)


# -- faults ----------------------------------------------------------------------------------


async def test_overloaded_is_retried_with_an_event(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        {"fault": {"kind": "overloaded", "times": 2}, "blocks": [text("finally")]},
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn"
    retries = r.of(Retrying)
    assert [e.attempt for e in retries] == [1, 2]
    assert "overloaded" in retries[0].error
    assert "retrying in" in retries[0].describe()
    assert r.outcomes() == ["overloaded", "overloaded", "played"]


async def test_an_error_event_discards_the_executor_and_retries(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        {
            "fault": {"kind": "error_event", "after_blocks": 2},
            "blocks": [
                tool("Bash", command="sleep 5"),
                tool("Glob", pattern="**/*.py", path="{workspace}"),
                text("after the tools"),
            ],
        },
        [text("done")],
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn"
    assert r.outcomes() == ["error_event", "played", "played"]
    retry = r.of(Retrying)
    assert len(retry) == 1 and retry[0].discarded_calls == 2
    cancelled = r.of(ToolCancelled)
    # The sleep was running, the Glob queued behind it (Bash runs alone): both cancelled.
    assert [e.reason for e in cancelled] == ["streaming_fallback"] * 2
    messages = r.loop.messages
    assert_valid(messages)
    # Only the retried response's calls are in the conversation.
    ids = [b["id"] for b in messages[1]["content"] if b["type"] == "tool_use"]
    assert len(ids) == 2 and len(r.requests) == 3


async def test_a_dropped_connection_is_retried(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        {
            "fault": {"kind": "drop", "after_blocks": 1},
            "blocks": [text("The connection drops after this."), tool("Glob", pattern="*.md")],
        },
        [text("done")],
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn"
    assert r.outcomes() == ["drop", "played", "played"]
    assert "connection" in r.of(Retrying)[0].error
    assert_valid(r.loop.messages)


async def test_retries_give_up_with_a_turn_error(tmp_path: Path) -> None:
    r = rig(tmp_path, {"fault": {"kind": "overloaded", "times": 9}, "blocks": [text("x")]})
    ended = await r.loop.send("go")
    assert ended.stop_reason == "error"
    assert len(r.of(Retrying)) == 3
    assert "gave up after 4" in r.of(TurnError)[0].message


async def test_a_truncated_tool_use_is_not_run(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        {
            "fault": {"kind": "max_tokens"},
            "blocks": [
                tool("Read", file_path="{workspace}/README.md"),
                tool(
                    "Write",
                    file_path="{workspace}/NOTES.md",
                    content="# Notes\n\nLong enough that cutting its JSON in half cuts this.\n",
                ),
            ],
        },
        [text("I will try again with less.")],
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn"
    assert not (r.workspace / "NOTES.md").exists()
    read, write = results_of(r.loop.messages[2])
    assert not read.get("is_error")
    assert write["is_error"] and "max_tokens" in write["content"]
    assert r.loop.messages[1]["content"][-1]["name"] == "Write"
    assert_valid(r.loop.messages)


async def test_unknown_tools_and_invalid_input_get_error_results(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [tool("FrobnicateRepository", level=3)],
        [tool("Read", path="README.md", lines="all")],
        [text("Every fault played.")],
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "end_turn" and ended.requests == 3
    unknown = results_of(r.loop.messages[2])[0]
    invalid = results_of(r.loop.messages[4])[0]
    assert unknown["is_error"] and "FrobnicateRepository" in unknown["content"]
    assert invalid["is_error"]
    assert_valid(r.loop.messages)


async def test_a_refused_request_stops_with_a_clear_error(tmp_path: Path) -> None:
    r = rig(tmp_path, [text("x")])
    r.loop.model.client = r.loop.model.client.with_options(base_url="http://demo.invalid/nope")
    ended = await r.loop.send("go")
    assert ended.stop_reason == "error"
    assert not r.of(Retrying)
    assert "404" in r.of(TurnError)[0].message


# -- interrupts and hooks --------------------------------------------------------------------


async def test_an_interrupt_cancels_running_tools_and_keeps_the_conversation_valid(
    tmp_path: Path,
) -> None:
    r = rig(
        tmp_path,
        [text("Sleeping."), tool("Bash", command="sleep 600")],
        [text("never")],
    )
    task = asyncio.create_task(r.loop.send("go"))
    await eventually(lambda: "started" in [e.kind for e in r.recorder.events], "the call's start")
    r.loop.interrupt()
    ended = await asyncio.wait_for(task, HANG_BOUND_S)
    assert ended.stop_reason == "interrupted"
    assert len(r.of(Interrupted)) == 1
    assert [e.reason for e in r.of(ToolCancelled)] == ["user_interrupted"]
    messages = r.loop.messages
    assert_valid(messages)
    assert messages[-1]["content"][-1] == text(INTERRUPT_MESSAGE)
    assert results_of(messages[-1])[0]["is_error"]
    # The session goes on: the next prompt joins the interruption note.
    r.loop.interrupt()  # between turns: nothing to do
    await r.loop.send("carry on")
    assert_valid(r.loop.messages)


async def test_an_interrupt_mid_stream_keeps_what_was_said(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [text("Some words first."), {**text("then a long wait"), "pace_ms": 600_000}],
        speed=0.1,  # the wait: 60 s
    )
    task = asyncio.create_task(r.loop.send("go"))

    def said() -> str:
        return "".join(e.text for e in r.of(TextDelta))

    await eventually(lambda: said().endswith("first."), "the first words")
    r.loop.interrupt()
    ended = await asyncio.wait_for(task, HANG_BOUND_S)
    assert ended.stop_reason == "interrupted"
    assert r.loop.messages[1] == {"role": "assistant", "content": [text("Some words first.")]}
    assert_valid(r.loop.messages)


async def test_an_interrupt_while_streaming_and_running_answers_every_call(
    tmp_path: Path,
) -> None:
    r = rig(
        tmp_path,
        [
            tool("Bash", command="sleep 600"),
            {**text("still writing"), "pace_ms": 600_000},  # 60 s at speed 0.1
            tool("Read", file_path="{workspace}/README.md"),
        ],
        speed=0.1,
    )
    task = asyncio.create_task(r.loop.send("go"))
    await eventually(lambda: "started" in [e.kind for e in r.recorder.events], "the call's start")
    r.loop.interrupt()
    ended = await asyncio.wait_for(task, HANG_BOUND_S)
    assert ended.stop_reason == "interrupted" and ended.requests == 1
    messages = r.loop.messages
    assert_valid(messages)
    assert [b["name"] for b in messages[1]["content"]] == ["Bash"]  # the Read never came
    result = results_of(messages[2])[0]
    assert result["is_error"] and "interrupted" in result["content"]


async def test_a_hook_can_stop_the_loop(tmp_path: Path) -> None:
    hooks = ScriptedHooks(
        post=PostToolUseOutcome(
            prevent_continuation=True,
            stop_reason="the hook said stop",
            additional_context=("hook context",),
        )
    )
    r = rig(
        tmp_path,
        [tool("Read", file_path="{workspace}/README.md")],
        [text("never")],
        hooks=hooks,
    )
    ended = await r.loop.send("go")
    assert ended.stop_reason == "the hook said stop"
    assert len(r.requests) == 1
    last = r.loop.messages[-1]["content"]
    assert last[0]["type"] == "tool_result" and last[1] == text("hook context")


async def test_big_results_reach_the_model_as_persisted_previews(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [tool("Bash", command="seq 1 30000")],
        [text("That was long.")],
    )
    await r.loop.send("go")
    sent = results_of(r.requests[1]["messages"][2])[0]["content"]
    assert "<persisted-output>" in sent
    assert len(sent) < 5_000


async def test_the_transcript_rebuilds_the_conversation(tmp_path: Path) -> None:
    with Transcript(tmp_path / "t.jsonl") as transcript:
        r = rig(
            tmp_path,
            [tool("Glob", pattern="*.md")],
            [text("done")],
            transcript=transcript,
        )
        await r.loop.send("go")
        records = list(transcript.records())
    assert messages_from(records) == r.loop.messages
    kinds = [rec.get("kind") for rec in records if rec["type"] in ("tool_event", "engine_event")]
    assert "completed" in kinds and "turn_ended" in kinds and "text" not in kinds
    assert records[-1]["type"] == "turn" and records[-1]["stop_reason"] == "end_turn"


# -- the model client ------------------------------------------------------------------------


def test_from_env_needs_a_key() -> None:
    with pytest.raises(MissingApiKey, match="ANTHROPIC_API_KEY"):
        ModelClient.from_env("m", env={})
    client = ModelClient.from_env(None, env={"ANTHROPIC_API_KEY": "sk-test"})
    assert client.model == DEFAULT_MODEL and client.client.max_retries == 0


def test_the_model_is_the_flag_then_anthropic_model_then_the_settings() -> None:
    key = {"ANTHROPIC_API_KEY": "sk-test"}
    both = {**key, "ANTHROPIC_MODEL": "claude-opus-4-6"}
    assert ModelClient.from_env("claude-haiku-4-5", settings_model="x", env=both).model == (
        "claude-haiku-4-5"
    )
    assert ModelClient.from_env(None, settings_model="x", env=both).model == "claude-opus-4-6"
    assert ModelClient.from_env(None, settings_model="claude-sonnet-4-6", env=key).model == (
        "claude-sonnet-4-6"
    )


def test_failures_are_classified() -> None:
    import anthropic
    import httpx2

    request = httpx2.Request("POST", "http://x/v1/messages")

    def status(code: int, error_type: str) -> anthropic.APIStatusError:
        body = {"type": "error", "error": {"type": error_type, "message": "m"}}
        response = httpx2.Response(code, json=body, request=request)
        return anthropic.APIStatusError("m", response=response, body=body)

    assert classify_failure(status(529, "overloaded_error")).action == "retry"
    assert classify_failure(status(200, "api_error")).action == "retry"
    assert classify_failure(httpx2.ReadError("x", request=request)).action == "retry"
    refused = classify_failure(status(401, "authentication_error"))
    assert refused.action == "stop" and "ANTHROPIC_API_KEY" in refused.reason
    assert classify_failure(status(400, "invalid_request_error")).action == "stop"
    assert RetryPolicy(base_delay_s=1, draw=lambda: 0).delay(3) == 4
