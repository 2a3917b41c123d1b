"""Executor benchmarks: per-call overhead, parallel efficiency, the streaming head start.

`executor_overhead_us` runs its no-op calls through the executor as a live session wires it
(core/agent/live.py `open_session`): every event written to the session's transcript on its
way to the front end (here a sink that drops it), the decision chain writing each decision to
the audit log, the result store in the session's directory. A run with a null sink and no
logs is in the details, beside a bare asyncio task, so each layer's share can be read. The
calls are checked after the clock stops: all allowed, each with its decision in the audit
log and its events in the transcript.
"""

from __future__ import annotations

import asyncio
import gc
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import Benchmark, Figure

from core.agent.sessions import Session
from core.agent.transcript import Transcript, transcribing
from core.app_state import AppState, AppStateStore
from core.events import null_sink
from core.executor import ExecutorServices, StreamingToolExecutor, ToolCall, run_tools
from core.executor.calls import ResultUpdate
from core.executor.waiting import WaitingAsks, redeciding_on_mode_change
from core.permissions.audit import AuditLog, auditing
from core.permissions.decide import DecisionChain
from core.results import ResultStore
from core.tool import Tool, ToolContext, ToolInput, ToolOptions, ToolPool, ToolResult

ROUNDS = 3
OVERHEAD_CALLS = 10_000


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


class _SessionFiles:
    """The executor's services as `open_session` wires them, in a scratch session directory."""

    def __init__(self, folder: Path) -> None:
        self.session = Session("bench", folder, folder / "session")
        self.session.directory.mkdir(parents=True)
        self.transcript = self.session.transcript()
        self.audit = AuditLog(self.session.audit_path)
        waiting = WaitingAsks()
        self.services = ExecutorServices(
            waiting=waiting,
            sink=redeciding_on_mode_change(
                auditing(self.audit, transcribing(self.transcript, null_sink)), waiting
            ),
            permissions=DecisionChain(audit=self.audit),
            results=ResultStore(self.session.directory),
        )

    def close(self) -> None:
        self.audit.close()
        self.transcript.close()

    def written(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The audit log's records and the transcript's, read back."""
        path = self.session.audit_path
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        audit = [json.loads(line) for line in lines]
        return audit, list(Transcript(self.session.transcript_path).records())


async def _overhead_round(calls: int, folder: Path | None) -> tuple[float, dict[str, int]]:
    """The median per-call time; with `folder`, through a session's transcript and audit log
    (checked afterwards: how many calls were allowed, audited and transcribed)."""
    tool, services, context = setup()
    files = _SessionFiles(folder) if folder is not None else None
    if files is not None:
        services = files.services
        context = context.replace(app_state=AppStateStore(AppState()))
    executor = StreamingToolExecutor(services, context)
    times, updates = [], []
    for i in range(calls):
        started = time.perf_counter()
        executor.add_tool(ToolCall(f"toolu_{i}", "Wait", {}))
        async for update in executor.get_remaining_results():
            updates.append(update)
        times.append(time.perf_counter() - started)
    answered = sum(
        isinstance(u, ResultUpdate) and u.outcome.outcome == "succeeded" for u in updates
    )
    checked = {"calls": calls, "answered_ok": answered, "ran": len(tool.started)}
    if files is not None:
        files.close()
        audit, transcript = files.written()
        checked["audited_allow"] = sum(
            r["kind"] == "decision" and r["behavior"] == "allow" for r in audit
        )
        checked["transcript_records"] = len(transcript)
    return statistics.median(times), checked


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


def executor_overhead(*, quick: bool = False) -> list[Figure]:
    calls, rounds = (200, 2) if quick else (OVERHEAD_CALLS, ROUNDS)
    gc.collect()
    sessions: list[float] = []
    with tempfile.TemporaryDirectory(prefix="proctor-bench-executor-") as folder:
        for round_ in range(rounds):
            median, checked = asyncio.run(_overhead_round(calls, Path(folder) / str(round_)))
            sessions.append(median)
            # Every call allowed, run and audited, and its queued, started and completed
            # events in the transcript: or the figure would time something else.
            short = [k for k in ("answered_ok", "ran", "audited_allow") if checked[k] != calls]
            if short or checked["transcript_records"] < 3 * calls:
                raise RuntimeError(f"the calls did not all run, audited and transcribed: {checked}")
    bare = [asyncio.run(_overhead_round(calls, None))[0] for _ in range(rounds)]
    floors = [asyncio.run(_bare_task_round(calls)) for _ in range(rounds)]
    best, floor = min(sessions) * 1e6, min(floors) * 1e6
    return [
        Figure(
            "executor_overhead_us",
            best,
            "us",
            "<=",
            50,
            f"per call of a no-op tool through the full lifecycle as a session wires it "
            "(streaming executor, events written to the transcript, the permission chain "
            f"writing the audit log): best of {rounds} medians of {calls:,} calls; a bare "
            f"asyncio task running the same tool takes {floor:.1f} us",
            {
                "calls_per_round": calls,
                "round_medians_us": [round(m * 1e6, 2) for m in sessions],
                "no_transcript_no_audit_us": round(min(bare) * 1e6, 2),
                "bare_task_us": round(floor, 2),
                "transcript_records_per_call": checked["transcript_records"] / calls,
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


def parallel_efficiency(*, quick: bool = False) -> list[Figure]:
    figures = []
    rounds = 2 if quick else ROUNDS
    for name, count, cap, ideal in (
        ("parallel_efficiency_10", 10, 10, 0.1),
        ("parallel_efficiency_30_cap10", 30, 10, 0.3),
    ):
        walls = [asyncio.run(_parallel(count, cap, 0.1)) for _ in range(rounds)]
        best = min(walls)
        figures.append(
            Figure(
                name,
                best / ideal,
                "ratio",
                "<=",
                1.10,
                f"wall time of {count} safe 100 ms calls (cap {cap}) over the ideal {ideal:.1f} s, "
                f"best of {rounds} rounds",
                {"walls_s": [round(w, 4) for w in walls]},
            )
        )
    return figures


# -- streaming head start ---------------------------------------------------------------------

SLOW_S, FAST_S = 1.0, 0.05
SLOW_BLOCK_AT, STREAM_END = 0.1, 1.0
FAST_BLOCKS = 9


def _arrivals(scale: float) -> list[tuple[float, ToolCall]]:
    """When each tool_use block completes in the simulated stream (every time × `scale`)."""
    slow = ToolCall("toolu_slow", "Wait", {"seconds": SLOW_S * scale})
    blocks = [(SLOW_BLOCK_AT * scale, slow)]
    step = (STREAM_END - SLOW_BLOCK_AT) * scale / FAST_BLOCKS
    for i in range(FAST_BLOCKS):
        at = SLOW_BLOCK_AT * scale + step * (i + 1)
        fast = ToolCall(f"toolu_fast{i}", "Wait", {"seconds": FAST_S * scale})
        blocks.append((at, fast))
    return blocks


async def _turn(streaming: bool, scale: float) -> tuple[float, list[float]]:
    tool, services, context = setup()
    origin = time.perf_counter()
    added: dict[str, float] = {}
    if streaming:
        executor = StreamingToolExecutor(services, context)
        for at, call in _arrivals(scale):
            await asyncio.sleep(max(0.0, origin + at - time.perf_counter()))
            added[call.id] = time.perf_counter()
            executor.add_tool(call)
        await asyncio.sleep(max(0.0, origin + STREAM_END * scale - time.perf_counter()))
        async for _ in executor.get_remaining_results():
            pass
    else:
        await asyncio.sleep(STREAM_END * scale)
        async for _ in run_tools([call for _, call in _arrivals(scale)], services, context):
            pass
    turn = time.perf_counter() - origin
    latencies = [tool.started[i] - added[i] for i in added]
    return turn, latencies


def streaming_head_start(*, quick: bool = False) -> list[Figure]:
    ratios, latencies, details = [], [], []
    rounds, scale = (2, 0.2) if quick else (ROUNDS, 1.0)
    for _ in range(rounds):
        streamed, round_latencies = asyncio.run(_turn(streaming=True, scale=scale))
        after, _ = asyncio.run(_turn(streaming=False, scale=scale))
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
            f"ends ({SLOW_S * scale:g} s tool at {SLOW_BLOCK_AT * scale:g} s, {FAST_BLOCKS} fast "
            f"tools until {STREAM_END * scale:g} s), the best of {rounds} rounds' ratios",
            {"rounds": details},
        ),
        Figure(
            "first_start_latency_ms",
            min(latencies) * 1000,
            "ms",
            "<=",
            5,
            f"from add_tool to the tool's call() starting, the slowest of a streaming round's "
            f"{FAST_BLOCKS + 1} calls; the best of {rounds} rounds (each round's slowest in "
            "the details)",
            {"round_max_ms": [round(x * 1000, 3) for x in latencies]},
        ),
    ]


BENCHMARKS = [
    Benchmark(("executor_overhead_us",), executor_overhead),
    Benchmark(("parallel_efficiency_10", "parallel_efficiency_30_cap10"), parallel_efficiency),
    Benchmark(("streaming_head_start_ratio", "first_start_latency_ms"), streaming_head_start),
]
