"""MCP benchmarks: what proctor adds to a call to a server, and how servers start together.

- `mcp_call_overhead_ms`: the median time of an `echo` call through the executor's whole
  lifecycle (`run_tool_use` with a real decision chain, result store and an allow rule, the
  server started by `McpServers`) minus the median of the bare SDK call (`mcp.Client`
  connected straight to another copy of the same server). The two alternate call by call,
  in both orders, so the machine's noise falls on both alike. The server is written with the
  SDK (`data/mcp_echo_server.py`).
- `mcp_startup_parallel_ratio`: the time from `McpServers.start()` until `ready()` for five
  servers that each sleep 0.5 s before they answer anything, over the same for one (median
  of the rounds of each, interleaved). The server (`data/mcp_slow_server.py`) speaks stdio
  JSON-RPC with the standard library alone: five importing the SDK (~0.6 s of CPU each)
  would measure the machine's cores, not proctor's parallel start. A server that does not
  end ready with its tool stops the benchmark with its reason: the figure is not made.
"""

from __future__ import annotations

import asyncio
import gc
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

DATA = Path(__file__).resolve().parent / "data"
ECHO_SERVER = DATA / "mcp_echo_server.py"
SLOW_SERVER = DATA / "mcp_slow_server.py"

CALLS = 300
"""Calls of each kind measured, after `WARM_UP` of each."""
WARM_UP = 30
START_S = 0.5
START_ROUNDS = 5
"""Rounds of one server and of five, alternated, after one of each not counted (it pays
for importing the SDK)."""
START_TIMEOUT_S = 20.0


def _environment() -> dict[str, Any]:
    from importlib.metadata import version

    return {
        "python": platform.python_version(),
        "mcp_sdk": version("mcp"),
        "cpus": os.cpu_count(),
    }


def _servers(configs: Sequence[Any], log_dir: Path) -> Any:
    from core.mcp.servers import McpServers

    return McpServers(
        configs,
        cwd=log_dir,
        log_dir=log_dir,
        emit=lambda _: None,
        startup_timeout_s=START_TIMEOUT_S,
    )


def _config(name: str, script: Path, *args: str) -> Any:
    from core.settings.mcp_servers import McpServerConfig

    return McpServerConfig(
        name=name,
        transport="stdio",
        source="user",
        command=sys.executable,
        args=(str(script), *args),
    )


def _check_ready(servers: Any, tools: int) -> None:
    """Every server ready with `tools` tools, or RuntimeError saying which and why not."""
    for connection in servers.connections.values():
        if connection.state != "ready" or connection.tool_count != tools:
            raise RuntimeError(
                f"the bench server `{connection.name}` is {connection.state} with "
                f"{connection.tool_count} tool(s), not ready with {tools}: {connection.detail}"
            )


# -- mcp_call_overhead_ms -----------------------------------------------------------------------


async def _call_overhead(folder: Path, calls: int, warm_up: int) -> tuple[list[float], list[float]]:
    from mcp import Client, StdioServerParameters

    from core.access.context import ToolPermissionContext
    from core.access.rules import parse_rule
    from core.app_state import AppState, AppStateStore
    from core.executor import ExecutorServices, ToolCall, run_tool_use
    from core.permissions.decide import DecisionChain
    from core.results import ResultStore
    from core.tool import ToolContext, ToolOptions, ToolPool

    servers = _servers([_config("bench", ECHO_SERVER)], folder)
    params = StdioServerParameters(command=sys.executable, args=[str(ECHO_SERVER)], cwd=folder)
    bare_ms: list[float] = []
    full_ms: list[float] = []
    options = ToolOptions(session_dir=folder)
    try:
        async with Client(params) as client:
            await servers.ready()
            _check_ready(servers, 1)
            permissions = ToolPermissionContext().with_rules(parse_rule("mcp__bench", "allow"))
            options = ToolOptions(tools=ToolPool(servers.tools()), session_dir=folder)
            context = ToolContext(
                cwd=folder,
                app_state=AppStateStore(AppState(permission_context=permissions)),
                options=options,
            )
            services = ExecutorServices(permissions=DecisionChain(), results=ResultStore(folder))

            async def bare(i: int) -> float:
                text = f"call {i}"
                started = time.perf_counter()
                result = await client.call_tool("echo", {"text": text})
                elapsed = time.perf_counter() - started
                if result.is_error or getattr(result.content[0], "text", None) != text:
                    raise RuntimeError(f"the bare call failed: {result}")
                return elapsed * 1000

            async def full(i: int) -> float:
                text = f"call {i}"
                call = ToolCall(f"toolu_{i}", "mcp__bench__echo", {"text": text})
                started = time.perf_counter()
                outcome = await run_tool_use(call, services, context)
                elapsed = time.perf_counter() - started
                if outcome.block.get("is_error") or outcome.block["content"] != text:
                    raise RuntimeError(f"the call through the lifecycle failed: {outcome.block}")
                return elapsed * 1000

            for i in range(warm_up):
                await bare(i)
                await full(i)
            gc.collect()
            for i in range(calls):
                # ABBA: neither side always goes first.
                if i % 2:
                    bare_ms.append(await bare(i))
                    full_ms.append(await full(i))
                else:
                    full_ms.append(await full(i))
                    bare_ms.append(await bare(i))
    finally:
        await servers.close()
        await options.services.close()
    return bare_ms, full_ms


def call_overhead(*, quick: bool = False) -> list[Figure]:
    calls, warm_up = (10, 2) if quick else (CALLS, WARM_UP)
    with tempfile.TemporaryDirectory(prefix="proctor-bench-mcp-") as folder:
        bare, full = asyncio.run(_call_overhead(Path(folder), calls, warm_up))
    bare_median, full_median = statistics.median(bare), statistics.median(full)
    return [
        Figure(
            "mcp_call_overhead_ms",
            full_median - bare_median,
            "ms",
            "<=",
            2,
            f"median of {calls} `echo` calls to an SDK stdio server through the executor's "
            f"whole lifecycle minus the median of {calls} bare `mcp.Client.call_tool` calls "
            f"to another copy of it, interleaved, after {warm_up} of each not counted",
            {
                "full_median_ms": round(full_median, 3),
                "bare_median_ms": round(bare_median, 3),
                "full_p90_ms": round(statistics.quantiles(full, n=10)[-1], 3),
                "bare_p90_ms": round(statistics.quantiles(bare, n=10)[-1], 3),
                "calls_each": calls,
                "warm_up_each": warm_up,
                **_environment(),
            },
        )
    ]


# -- mcp_startup_parallel_ratio -----------------------------------------------------------------


async def _start(count: int, folder: Path) -> float:
    configs = [_config(f"slow{i}", SLOW_SERVER, str(START_S)) for i in range(count)]
    servers = _servers(configs, folder)
    try:
        started = time.perf_counter()
        servers.start()
        await servers.ready()
        elapsed = time.perf_counter() - started
        _check_ready(servers, 1)
    finally:
        await servers.close()
    return elapsed


async def _startup_rounds(
    folder: Path, rounds: int
) -> tuple[list[float], list[float], float, float]:
    first_one = await _start(1, folder)
    first_five = await _start(5, folder)
    ones: list[float] = []
    fives: list[float] = []
    for _ in range(rounds):
        ones.append(await _start(1, folder))
        fives.append(await _start(5, folder))
    return ones, fives, first_one, first_five


def startup_parallel(*, quick: bool = False) -> list[Figure]:
    rounds = 1 if quick else START_ROUNDS
    with tempfile.TemporaryDirectory(prefix="proctor-bench-mcp-") as folder:
        ones, fives, first_one, first_five = asyncio.run(_startup_rounds(Path(folder), rounds))
    one, five = statistics.median(ones), statistics.median(fives)
    return [
        Figure(
            "mcp_startup_parallel_ratio",
            five / one,
            "ratio",
            "<=",
            1.3,
            f"from McpServers.start() until ready(): five servers that each sleep {START_S:g} s "
            f"before answering, over one (median of {rounds} rounds each, interleaved, after "
            "one of each not counted)",
            {
                "one_server_s": round(one, 4),
                "five_servers_s": round(five, 4),
                "one_server_rounds_s": [round(x, 4) for x in ones],
                "five_servers_rounds_s": [round(x, 4) for x in fives],
                "first_rounds_not_counted_s": {
                    "one": round(first_one, 4),
                    "five": round(first_five, 4),
                },
                "server_sleep_s": START_S,
                **_environment(),
            },
        )
    ]


BENCHMARKS = [
    Benchmark(("mcp_call_overhead_ms",), call_overhead),
    Benchmark(("mcp_startup_parallel_ratio",), startup_parallel),
]
