"""The batch path: every call of a turn is known before any starts.

`partition_tool_calls` groups the calls greedily, as seed 002 section 4.2 describes:
consecutive concurrency-safe calls merge into one batch, every other call is a batch of its
own. `run_tools` runs the batches in order, a safe batch concurrently (at most
`PROCTOR_MAX_TOOL_USE_CONCURRENCY` at once) and an unsafe one alone.

Each batch is handed to a `StreamingToolExecutor` and drained before the next is added, so
both paths share one implementation of the lifecycle, cancellation and result ordering; the
streaming start rule applied to a whole safe batch is exactly "run them together".
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from ..tool import ToolContext, ToolPool
from .calls import ExecutorUpdate, ToolCall, classify
from .services import ExecutorServices
from .streaming import StreamingToolExecutor


@dataclass(frozen=True, slots=True)
class Batch:
    concurrency_safe: bool
    calls: tuple[ToolCall, ...]


def partition_tool_calls(calls: Sequence[ToolCall], tools: ToolPool | None) -> list[Batch]:
    batches: list[Batch] = []
    for call in calls:
        safe = classify(call, tools).concurrency_safe
        if safe and batches and batches[-1].concurrency_safe:
            batches[-1] = Batch(True, (*batches[-1].calls, call))
        else:
            batches.append(Batch(safe, (call,)))
    return batches


async def run_tools(
    calls: Sequence[ToolCall], services: ExecutorServices, context: ToolContext
) -> AsyncIterator[ExecutorUpdate]:
    """Progress as it happens and results in call order. Each `ResultUpdate` carries the
    context later calls should use: a safe batch's modifiers are applied after the whole
    batch, in call order; an unsafe call's right after it."""
    executor = StreamingToolExecutor(services, context)
    for batch in partition_tool_calls(calls, context.options.tools):
        for call in batch.calls:
            executor.add_tool(call)
        async for update in executor.get_remaining_results():
            yield update
