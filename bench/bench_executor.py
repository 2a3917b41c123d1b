"""Executor benchmarks: per-call overhead, parallel efficiency, the streaming head start."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.executor import ExecutorServices, StreamingToolExecutor, ToolCall, run_tools
from core.tool import Tool, ToolContext, ToolInput, ToolOptions, ToolPool, ToolResult

ROUNDS = 3


class WaitInput(ToolInput):
    seconds: float = 0.0


class Wait(Tool[WaitInput, Any]):
    """A safe, read-only tool that waits (or, with 0 seconds, does nothing at all)."""

    name = "Wait"
    input_model = WaitInput

    def __init__(self) -> None:
        self.started: dict[str, float] = {}

    def is_concurrency_safe(self, input: WaitInput) -> bool:
        return True

    def is_read_only(self, input: WaitInput) -> bool:
        return True

    async def call(self, input: WaitInput, context: ToolContext, progress: Any) -> ToolResult:
        self.started[context.tool_use_id] = time.perf_counter()
        if input.seconds:
            await asyncio.sleep(input.seconds)
        return ToolResult("ok")


def setup(max_concurrency: int = 10) -> tuple[Wait, ExecutorServices, ToolContext]:
    tool = Wait()
    context = ToolContext(cwd=Path.cwd(), options=ToolOptions(tools=ToolPool([tool])))
    return tool, ExecutorServices(max_concurrency=max_concurrency), context


# -- executor_overhead_us -------------------------------------------------------------------


async def _overhead_round(calls: int) -> float:
    _, services, context = setup()
    executor = StreamingToolExecutor(services, context)
    times = []
    for i in range(calls):
        started = time.perf_counter()
        executor.add_tool(ToolCall(f"toolu_{i}", "Wait", {}))
        async for _ in executor.get_remaining_results():
            pass
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _bare_task_round(calls: int) -> float:
    """The floor: the same no-op tool as a plain asyncio task, awaited through an event."""
    tool, _, context = setup()
    done = asyncio.Event()
    loop = asyncio.get_running_loop()
    parsed = WaitInput()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        done.clear()
        task = loop.create_task(tool.call(parsed, context, print))
        task.add_done_callback(lambda _task: done.set())
        await done.wait()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def executor_overhead() -> list[Figure]:
    calls = 10_000
    gc.collect()
    medians = [asyncio.run(_overhead_round(calls)) for _ in range(ROUNDS)]
    floors = [asyncio.run(_bare_task_round(calls)) for _ in range(ROUNDS)]
    best, floor = min(medians) * 1e6, min(floors) * 1e6
    return [
        Figure(
            "executor_overhead_us",
            best,
            "us",
            "<=",
            50,
            f"per call through the full lifecycle (streaming executor, events, permission "
            f"chain); a bare asyncio task running the same tool takes {floor:.1f} us",
            {
                "calls_per_round": calls,
                "round_medians_us": [round(m * 1e6, 2) for m in medians],
                "bare_task_us": round(floor, 2),
            },
        )
    ]


# -- parallel_efficiency ----------------------------------------------------------------------


async def _parallel(count: int, cap: int, seconds: float) -> float:
    _, services, context = setup(max_concurrency=cap)
    calls = [ToolCall(f"toolu_{i}", "Wait", {"seconds": seconds}) for i in range(count)]
    started = time.perf_counter()
    async for _ in run_tools(calls, services, context):
        pass
    return time.perf_counter() - started


def parallel_efficiency() -> list[Figure]:
    figures = []
    for name, count, cap, ideal in (
        ("parallel_efficiency_10", 10, 10, 0.1),
        ("parallel_efficiency_30_cap10", 30, 10, 0.3),
    ):
        walls = [asyncio.run(_parallel(count, cap, 0.1)) for _ in range(ROUNDS)]
        best = min(walls)
        figures.append(
            Figure(
                name,
                best / ideal,
                "ratio",
                "<=",
                1.10,
                f"wall time of {count} safe 100 ms calls (cap {cap}) over the ideal {ideal:.1f} s",
                {"walls_s": [round(w, 4) for w in walls]},
            )
        )
    return figures


# -- streaming head start ---------------------------------------------------------------------

SLOW_S, FAST_S = 1.0, 0.05
SLOW_BLOCK_AT, STREAM_END = 0.1, 1.0
FAST_BLOCKS = 9


def _arrivals() -> list[tuple[float, ToolCall]]:
    """When each tool_use block completes in the simulated stream."""
    blocks = [(SLOW_BLOCK_AT, ToolCall("toolu_slow", "Wait", {"seconds": SLOW_S}))]
    step = (STREAM_END - SLOW_BLOCK_AT) / FAST_BLOCKS
    for i in range(FAST_BLOCKS):
        at = SLOW_BLOCK_AT + step * (i + 1)
        blocks.append((at, ToolCall(f"toolu_fast{i}", "Wait", {"seconds": FAST_S})))
    return blocks


async def _turn(streaming: bool) -> tuple[float, list[float]]:
    tool, services, context = setup()
    origin = time.perf_counter()
    added: dict[str, float] = {}
    if streaming:
        executor = StreamingToolExecutor(services, context)
        for at, call in _arrivals():
            await asyncio.sleep(max(0.0, origin + at - time.perf_counter()))
            added[call.id] = time.perf_counter()
            executor.add_tool(call)
        await asyncio.sleep(max(0.0, origin + STREAM_END - time.perf_counter()))
        async for _ in executor.get_remaining_results():
            pass
    else:
        await asyncio.sleep(STREAM_END)
        async for _ in run_tools([call for _, call in _arrivals()], services, context):
            pass
    turn = time.perf_counter() - origin
    latencies = [tool.started[i] - added[i] for i in added]
    return turn, latencies


def streaming_head_start() -> list[Figure]:
    ratios, latencies, details = [], [], []
    for _ in range(ROUNDS):
        streamed, round_latencies = asyncio.run(_turn(streaming=True))
        after, _ = asyncio.run(_turn(streaming=False))
        ratios.append(streamed / after)
        latencies.append(max(round_latencies))
        details.append({"streaming_s": round(streamed, 4), "after_stream_s": round(after, 4)})
    return [
        Figure(
            "streaming_head_start_ratio",
            min(ratios),
            "ratio",
            "<=",
            0.60,
            "turn time with tools started as their blocks complete / started after the stream "
            f"ends ({SLOW_S:g} s tool at {SLOW_BLOCK_AT:g} s, {FAST_BLOCKS} fast tools until "
            f"{STREAM_END:g} s)",
            {"rounds": details},
        ),
        Figure(
            "first_start_latency_ms",
            min(latencies) * 1000,
            "ms",
            "<=",
            5,
            "slowest of the ten calls of a round, from add_tool to the tool's call() starting",
            {"round_max_ms": [round(x * 1000, 3) for x in latencies]},
        ),
    ]


BENCHMARKS = [
    Benchmark(("executor_overhead_us",), executor_overhead),
    Benchmark(("parallel_efficiency_10", "parallel_efficiency_30_cap10"), parallel_efficiency),
    Benchmark(("streaming_head_start_ratio", "first_start_latency_ms"), streaming_head_start),
]
