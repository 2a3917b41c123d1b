"""The agent loop's own cost: a scripted turn of ten parallel 100 ms calls streamed over ~1 s."""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_executor import Wait
from common import Benchmark, Figure

from core.access.context import ToolPermissionContext
from core.agent.demo import DEMO_MODEL, DemoModel
from core.agent.loop import AgentLoop
from core.agent.model import ModelClient
from core.agent.scenario import Scenario, parse_scenario
from core.app_state import AppState, AppStateStore
from core.executor import ExecutorServices
from core.tool import ToolContext, ToolOptions, ToolPool

TOOL_S = 0.1
CALLS = 10


def _scenario() -> Scenario:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "Checking ten things at once."}]
    blocks += [
        {"type": "tool_use", "name": "Wait", "input": {"seconds": TOOL_S}, "pace_ms": 90}
        for _ in range(CALLS)
    ]
    script = {
        "name": "bench",
        "description": "ten parallel calls",
        "workspace": "cwd",
        "turns": [blocks, [{"type": "text", "text": "All done."}]],
    }
    return parse_scenario(json.dumps(script), source="bench")


async def _stream_time(demo: DemoModel) -> float:
    """How long the two responses take to stream, with no tools and no loop."""
    client = demo.client(max_retries=0)
    total = 0.0
    for messages in (
        [{"role": "user", "content": "go"}],
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "x"},
            {"role": "user", "content": "y"},
        ],
    ):
        started = time.perf_counter()
        async with client.messages.stream(
            model=DEMO_MODEL, max_tokens=1000, messages=messages
        ) as stream:
            async for _ in stream:
                pass
        total += time.perf_counter() - started
    return total


async def _turn_time(demo: DemoModel, workspace: Path) -> float:
    permissions = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=permissions)),
        options=ToolOptions(tools=ToolPool([Wait()]), session_dir=workspace),
    )
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL), ExecutorServices(), context
    )
    started = time.perf_counter()
    await loop.send("go")
    return time.perf_counter() - started


def demo_turn_overhead() -> list[Figure]:
    ratios, details = [], []
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        for _ in range(3):
            demo = DemoModel(_scenario(), workspace=workspace, speed=1.0)
            stream = asyncio.run(_stream_time(demo))
            turn = asyncio.run(_turn_time(DemoModel(_scenario(), workspace=workspace), workspace))
            ratios.append(turn / (stream + TOOL_S))
            details.append({"turn_s": round(turn, 3), "stream_s": round(stream, 3)})
    return [
        Figure(
            "demo_turn_overhead_ratio",
            min(ratios),
            "ratio",
            "<=",
            1.15,
            f"turn time with {CALLS} parallel {TOOL_S * 1000:.0f} ms calls streamed over ~1 s, "
            "over the streams' own time plus the slowest call",
            {"rounds": details},
        )
    ]


BENCHMARKS = [Benchmark(("demo_turn_overhead_ratio",), demo_turn_overhead)]
