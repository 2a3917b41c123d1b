"""Tokens as they stream: usage reaches the front end from message_start and message_delta,
before the turn ends, through the real SDK over the demo's in-process transport."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
from engine_helpers import HANG_BOUND_S, eventually, make_services

from core.access.context import ToolPermissionContext
from core.agent.demo import DemoModel, copy_sample_project
from core.agent.events import TurnEnded, UsageUpdated
from core.agent.loop import AgentLoop
from core.agent.model import ModelClient, RetryPolicy
from core.agent.scenario import parse_scenario
from core.app_state import AppState, AppStateStore
from core.events import EventRecorder
from core.registry import assemble_tool_pool
from core.tool import ToolContext, ToolOptions

MODEL = "claude-sonnet-4-5"
BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


def gated_loop(tmp_path: Path, gate: asyncio.Event) -> tuple[AgentLoop, EventRecorder]:
    """A loop whose model sends message_start, then holds the rest of the response until
    `gate` is set: a response still streaming, as a long answer is."""
    turns = [[{"type": "text", "text": "A long answer, " * 40}]]
    scenario = parse_scenario(json.dumps({"name": "t", "turns": turns}))
    workspace = copy_sample_project(tmp_path / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    serve = demo.handle

    async def handle(request: httpx2.Request) -> httpx2.Response:
        response = await serve(request)
        frames = response.stream

        async def held() -> AsyncIterator[bytes]:
            first = True
            async for chunk in frames:  # type: ignore[union-attr]
                yield chunk
                if first:
                    first = False
                    await gate.wait()

        return httpx2.Response(response.status_code, headers=response.headers, content=held())

    demo.handle = handle  # type: ignore[method-assign]
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=BYPASS)),
        options=ToolOptions(tools=assemble_tool_pool(BYPASS), model=MODEL, session_dir=tmp_path),
    )
    recorder = EventRecorder()
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=MODEL),
        make_services(recorder, session_dir=tmp_path),
        context,
        retry=RetryPolicy(max_attempts=1, base_delay_s=0),
    )
    return loop, recorder


def usage_updates(recorder: EventRecorder) -> list[UsageUpdated]:
    return [e for e in recorder.events if isinstance(e, UsageUpdated)]


async def test_input_tokens_arrive_before_the_response_ends_and_output_follows(tmp_path: Path):
    gate = asyncio.Event()
    loop, recorder = gated_loop(tmp_path, gate)
    turn = asyncio.create_task(loop.send("hello"))
    try:
        await eventually(lambda: bool(usage_updates(recorder)), "the first usage update")
        (first,) = usage_updates(recorder)
        assert not turn.done()
        assert not any(isinstance(e, TurnEnded) for e in recorder.events)
        assert first.model == MODEL and first.request_id
        assert first.usage["input_tokens"] > 0
        assert first.usage["output_tokens"] <= 1  # message_start: no answer yet
    finally:
        gate.set()
    ended: Any = await asyncio.wait_for(turn, HANG_BOUND_S)
    updates = usage_updates(recorder)
    last = updates[-1]
    assert len(updates) >= 2 and {u.request_id for u in updates} == {first.request_id}
    assert last.usage["output_tokens"] > 1  # message_delta's count
    assert last.usage["input_tokens"] == first.usage["input_tokens"]
    # The turn's sum says the same as the streamed figures did.
    assert ended.usage["output_tokens"] == last.usage["output_tokens"]
    ended_at = next(i for i, e in enumerate(recorder.events) if isinstance(e, TurnEnded))
    assert recorder.events.index(last) < ended_at


async def test_a_headless_run_streams_usage_lines_and_the_offline_demo_costs_nothing(
    tmp_path: Path, monkeypatch: Any
):
    import io

    from core.agent.headless import HeadlessOptions, run_headless

    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=None,
        cwd=tmp_path,
        output_format="stream-json",
        demo=True,
        scenario="quick",
        demo_speed=0.0,
    )
    assert await run_headless(options, out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    usage = [r for r in records if r.get("kind") == "usage"]
    assert usage and all(r["usage"]["input_tokens"] > 0 for r in usage)
    result = records[-1]
    assert result["type"] == "result"
    assert sum(result["usage"].values()) > 0
    assert result["total_cost_usd"] == 0.0  # the offline demo spends nothing
