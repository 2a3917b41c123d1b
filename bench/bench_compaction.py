"""`compaction_keeps_cache`: after compaction, the next request's cacheable prefix (the tool
definitions and the stable system block, up to the last cache breakpoint) is byte for byte
what it was before, so the prompt cache keeps hitting.

The shipped `long` scenario runs through the real loop, the full tool pool and the demo
model's SSE; every request body is kept as sent. The figure is the share of the prefix that
the request after compaction repeats from its start (1.0: identical)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.access.context import ToolPermissionContext
from core.agent.compaction import SUMMARY_PROMPT_START
from core.agent.compactor import Compactor
from core.agent.demo import DEMO_MODEL, DemoModel, copy_sample_project
from core.agent.loop import AgentLoop
from core.agent.model import ModelClient
from core.agent.scenario import load_scenario
from core.app_state import AppState, AppStateStore
from core.executor import ExecutorServices
from core.registry import assemble_tool_pool
from core.results import ResultStore
from core.tool import ToolContext, ToolOptions


async def _requests(folder: Path) -> tuple[list[dict[str, Any]], int]:
    scenario = load_scenario("long")
    workspace = copy_sample_project(folder / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    bodies: list[dict[str, Any]] = []
    serve = demo.handle

    async def handle(request: Any) -> Any:
        if request.url.path.endswith("/v1/messages"):
            bodies.append(json.loads(request.content))
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    permissions = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)
    context = ToolContext(
        cwd=workspace,
        app_state=AppStateStore(AppState(permission_context=permissions)),
        options=ToolOptions(
            tools=assemble_tool_pool(permissions), model=DEMO_MODEL, session_dir=folder / "s"
        ),
    )
    compactor = Compactor(scenario.context_window or 12_000, 0.9)
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        ExecutorServices(results=ResultStore(folder / "s")),
        context,
        compactor=compactor,
    )
    await loop.send(scenario.prompt or "go")
    return bodies, compactor.compactions


def _asks_for_summary(body: dict[str, Any]) -> bool:
    last = body["messages"][-1]["content"]
    return isinstance(last, list) and str(last[-1].get("text", "")).startswith(SUMMARY_PROMPT_START)


def _prefix(body: dict[str, Any]) -> bytes:
    return json.dumps([body.get("tools", []), body["system"][0]], ensure_ascii=False).encode()


def compaction_keeps_cache(*, quick: bool = False) -> list[Figure]:
    # One run of the scripted scenario is the measurement; a quick run is the same run.
    with tempfile.TemporaryDirectory() as folder:
        bodies, compactions = asyncio.run(_requests(Path(folder)))
    asks = [i for i, body in enumerate(bodies) if _asks_for_summary(body)]
    if not asks or compactions == 0:
        share, details = 0.0, {"error": "the scenario did not compact"}
    else:
        ask = asks[-1]
        before = [b for b in bodies[:ask] if not _asks_for_summary(b)][-1]
        after = bodies[ask + 1]
        old, new = _prefix(before), _prefix(after)
        # What the cache can reuse is the common beginning: the share of it, 1.0 when equal.
        common = next(
            (i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b),
            min(len(old), len(new)),
        )
        share = 1.0 if old == new else min(common / max(len(old), len(new)), 0.999)
        details = {
            "prefix_bytes": len(old),
            "requests": len(bodies),
            "compactions": compactions,
            "summary_request_same_prefix": _prefix(bodies[ask]) == old,
        }
    return [
        Figure(
            "compaction_keeps_cache",
            share,
            "share",
            ">=",
            1.0,
            "the cacheable prefix (tools and stable system block) of the request after "
            "compaction, against the one before it, byte for byte",
            details,
        )
    ]


BENCHMARKS = [Benchmark(("compaction_keeps_cache",), compaction_keeps_cache)]
