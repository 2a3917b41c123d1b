"""The streaming executor: tools start while the model is still streaming.

The loop calls `add_tool` the moment a tool_use block is complete. Each call moves through
four states, queued → executing → completed → yielded, and the start rule of seed 003
decides when a queued call may run:

- with nothing executing, any call may start;
- a concurrency-safe call may join other executing safe calls, up to the concurrency cap;
- an unsafe call runs alone, and no call queued after it starts before it (order is kept
  around unsafe calls, so an Edit never races the Read the model put after it).

Results come out in call order (`get_completed_results`, `get_remaining_results`); progress
comes out at once, whatever the order. Context modifiers of safe calls wait until their group
has drained and are then applied in call order; an unsafe call's apply as soon as it ends.

Three things cut calls short, each with a synthetic result that says why:
- a failing call of a tool that `cancels_siblings_on_error` (Bash) cancels the other such
  calls of the turn, running or queued; the turn itself goes on;
- the turn's abort signal (the user pressed Esc): queued calls and calls still waiting for
  hooks or approval are cancelled, running `cancel` tools are cancelled, running `block`
  tools finish;
- `discard()`, when the stream failed and the loop retries: nothing more is started or
  yielded, and every call not yet yielded gets a result.
A cancelled call keeps its place (and keeps unsafe calls waiting) until its task has
really ended, so cleanup never overlaps the next call.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Literal

from ..abort import AbortController, AbortSignal
from ..events import CancelReason, ToolCancelled, ToolCompleted, ToolQueued, ToolStarted
from ..tool import ContextModifier, ToolContext
from .calls import (
    Classified,
    ExecutorUpdate,
    ProgressUpdate,
    ResultUpdate,
    ToolCall,
    ToolCallOutcome,
    call_summary,
    cancel_message,
    cancelled_outcome,
    classify,
    describe_call,
    error_outcome,
    tool_event_fields,
)
from .lifecycle import run_tool_use
from .services import ExecutorServices

Status = Literal["queued", "executing", "completed", "yielded"]

_batch_ids = itertools.count(1)


class _Tracked:
    __slots__ = (
        "abort",
        "batch_id",
        "call",
        "cancel_reason",
        "classified",
        "entered_call",
        "event_fields",
        "index",
        "outcome",
        "started_at",
        "status",
        "task",
    )

    def __init__(self, index: int, call: ToolCall, classified: Classified, batch_id: str) -> None:
        self.index = index
        self.call = call
        self.classified = classified
        self.batch_id = batch_id
        self.status: Status = "queued"
        self.task: asyncio.Task[ToolCallOutcome] | None = None
        self.outcome: ToolCallOutcome | None = None
        self.entered_call = False  # set by the lifecycle: this object is its CallState
        self.abort = AbortController()
        self.cancel_reason: CancelReason | None = None
        self.started_at = 0.0
        self.event_fields: dict[str, Any] = {}

    @property
    def safe(self) -> bool:
        return self.classified.concurrency_safe

    @property
    def tool_name(self) -> str:
        tool = self.classified.tool
        return tool.name if tool is not None else self.call.name

    @property
    def chains_errors(self) -> bool:
        tool = self.classified.tool
        return tool is not None and tool.cancels_siblings_on_error

    def interruptible(self) -> bool:
        tool = self.classified.tool
        return tool is None or tool.interrupt_behavior == "cancel" or not self.entered_call


class StreamingToolExecutor:
    def __init__(
        self,
        services: ExecutorServices,
        context: ToolContext,
        *,
        abort: AbortSignal | None = None,
    ) -> None:
        """`abort` is the turn's signal (the user's interrupt); it defaults to the context's.
        Give each turn its own: the executor listens to it for as long as the signal lives."""
        self._services = services
        self._context = context
        self._calls: list[_Tracked] = []
        self._first_unyielded = 0
        self._first_unstarted = 0
        self._executing = 0
        self._executing_unsafe = 0
        self._progress: deque[ProgressUpdate] = deque()
        self._pending_modifiers: list[tuple[int, ContextModifier]] = []
        self._waiter: asyncio.Future[None] | None = None
        self._failed_sibling: str | None = None
        self._discarded = False
        self._turn_abort = abort if abort is not None else context.abort
        self._batch_id = ""
        self._turn_abort.add_listener(self._on_interrupt)

    # -- the loop's side ------------------------------------------------------------------

    @property
    def context(self) -> ToolContext:
        """The context after every modifier applied so far."""
        return self._context

    @property
    def interruptible(self) -> bool:
        """Whether Esc would stop everything running now (no `block` tool mid-call)."""
        return all(t.interruptible() for t in self._calls if t.status == "executing")

    def add_tool(self, call: ToolCall) -> None:
        classified = classify(call, self._context.options.tools)
        previous = self._calls[-1] if self._calls else None
        if not (classified.concurrency_safe and previous is not None and previous.safe):
            self._batch_id = f"b{next(_batch_ids)}"
        tracked = _Tracked(len(self._calls), call, classified, self._batch_id)
        self._calls.append(tracked)
        self._services.emit(
            ToolQueued(
                input=call.input,
                summary=_summary(tracked),
                concurrency_safe=classified.concurrency_safe,
                headline_field=classified.tool.headline_field if classified.tool else None,
                **self._event_fields(tracked),
            )
        )
        reason = self._reason_to_refuse(tracked)
        if reason is not None:
            self._finish_unstarted(tracked, reason)
        self._process_queue()

    def get_completed_results(self) -> list[ExecutorUpdate]:
        """Progress received so far, then finished results in call order; never waits."""
        if self._discarded:
            return []
        updates: list[ExecutorUpdate] = []
        if self._progress:
            updates.extend(self._progress)
            self._progress.clear()
        calls = self._calls
        while self._first_unyielded < len(calls) and calls[self._first_unyielded].status == (
            "completed"
        ):
            tracked = calls[self._first_unyielded]
            tracked.status = "yielded"
            assert tracked.outcome is not None
            updates.append(ResultUpdate(tracked.outcome, self._context))
            self._first_unyielded += 1
        return updates

    async def get_remaining_results(self) -> AsyncIterator[ExecutorUpdate]:
        """Every remaining update, waiting (without polling) on completion or progress.

        One consumer at a time: the loop that owns this executor."""
        while True:
            for update in self.get_completed_results():
                yield update
            if self._discarded or self._first_unyielded == len(self._calls):
                return
            if self._progress or self._calls[self._first_unyielded].status == "completed":
                continue  # news arrived while the consumer was handling the last update
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
            self._waiter = None

    def discard(self) -> list[ToolCallOutcome]:
        """Give up on this turn's calls: the stream they came from failed.

        Returns an outcome for every call not yet yielded: its real one if it has finished,
        otherwise a synthetic "cancelled" one. Running `block` tools are left to finish, but
        their results are not used.
        """
        if self._discarded:
            return []
        self._discarded = True
        outcomes = []
        for tracked in self._calls[self._first_unyielded :]:
            if tracked.status == "queued" or (
                tracked.status == "executing" and tracked.interruptible()
            ):
                self._cancel(tracked, "streaming_fallback")
            if tracked.outcome is not None:
                outcomes.append(tracked.outcome)
            else:
                message = cancel_message("streaming_fallback")
                outcomes.append(cancelled_outcome(tracked.call, "streaming_fallback", message))
            if tracked.status != "executing":
                tracked.status = "yielded"
        self._first_unyielded = len(self._calls)
        self._wake()
        return outcomes

    async def wait_idle(self) -> None:
        """Wait until no task of this executor is running (for shutdown and tests)."""
        tasks = [t.task for t in self._calls if t.task is not None and not t.task.done()]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    # -- scheduling -----------------------------------------------------------------------

    def _can_start(self, safe: bool) -> bool:
        if self._executing == 0:
            return True
        return (
            safe
            and self._executing_unsafe == 0
            and (self._executing < self._services.max_concurrency)
        )

    def _process_queue(self) -> None:
        if self._discarded:
            return
        calls = self._calls
        while self._first_unstarted < len(calls) and calls[self._first_unstarted].status != (
            "queued"
        ):
            self._first_unstarted += 1
        for index in range(self._first_unstarted, len(calls)):
            tracked = calls[index]
            if tracked.status != "queued":
                continue
            if not self._can_start(tracked.safe):
                # Whatever blocks this call (an unsafe call running, or the cap) blocks every
                # later one too; and an unsafe call holds everything after it in place.
                break
            self._start(tracked)

    def _start(self, tracked: _Tracked) -> None:
        tracked.status = "executing"
        self._executing += 1
        if not tracked.safe:
            self._executing_unsafe += 1
        tracked.started_at = time.monotonic()
        self._services.emit(ToolStarted(**self._event_fields(tracked)))
        context = self._context.for_call(tracked.call.id, tracked.abort.signal)
        task = asyncio.get_running_loop().create_task(self._run(tracked, context))
        task.add_done_callback(lambda done: self._on_task_done(tracked, done))
        tracked.task = task

    async def _run(self, tracked: _Tracked, context: ToolContext) -> ToolCallOutcome:
        try:
            outcome = await run_tool_use(
                tracked.call,
                self._services,
                context,
                batch_id=tracked.batch_id,
                state=tracked,
                on_progress=self._on_progress,
                classified=tracked.classified,
            )
        except asyncio.CancelledError:
            self._on_finished(tracked, None)
            raise
        # Finishing inside the task (not in the done callback) saves a trip round the loop.
        self._on_finished(tracked, outcome)
        return outcome

    def _on_task_done(self, tracked: _Tracked, task: asyncio.Task[ToolCallOutcome]) -> None:
        if tracked.status != "executing":
            return  # `_run` has finished the call
        # Still executing: the task was cancelled before its first step (so none of `_run`
        # ran), or run_tool_use raised, which it never should. Either way: one result.
        if task.cancelled():
            self._on_finished(tracked, None)
        else:
            error = task.exception()
            message = f"Internal error: {error!r}"
            self._on_finished(tracked, error_outcome(tracked.call, "call", message))

    def _on_progress(self, tool_use_id: str, tool_name: str, data: Any) -> None:
        if not self._discarded:
            self._progress.append(ProgressUpdate(tool_use_id, tool_name, data))
            self._wake()

    def _on_finished(self, tracked: _Tracked, outcome: ToolCallOutcome | None) -> None:
        self._executing -= 1
        if not tracked.safe:
            self._executing_unsafe -= 1
        if tracked.cancel_reason is not None or outcome is None:
            # Cancelled by us (the reason is set), or from outside (no outcome at all).
            outcome = self._cancelled(tracked, tracked.cancel_reason or "user_interrupted")
        else:
            self._services.emit(
                ToolCompleted(
                    # the call's own time: waiting for a person is reported beside it
                    duration_s=max(0.0, time.monotonic() - tracked.started_at - outcome.waited_s),
                    waited_s=outcome.waited_s,
                    outcome=outcome.outcome,
                    denied_by=outcome.denied_by,
                    is_error=outcome.is_error,
                    failed_stage=outcome.failed_stage,
                    sandbox=outcome.sandbox,
                    content=outcome.block.get("content", ""),
                    saved=outcome.saved,
                    output=outcome.data,
                    **self._event_fields(tracked),
                )
            )
            if outcome.is_error and tracked.chains_errors and self._failed_sibling is None:
                self._cancel_siblings(tracked)
            if outcome.context_modifier is not None and not self._discarded:
                self._pending_modifiers.append((tracked.index, outcome.context_modifier))
        tracked.outcome = outcome
        tracked.status = "completed"
        if self._executing == 0:
            self._apply_modifiers()
        self._wake()
        self._process_queue()

    def _apply_modifiers(self) -> None:
        if not self._pending_modifiers:
            return
        self._pending_modifiers.sort(key=lambda pending: pending[0])
        for _, modifier in self._pending_modifiers:
            try:
                self._context = modifier(self._context)
            except Exception:
                continue  # a broken modifier leaves the context as it was
        self._pending_modifiers.clear()

    # -- cutting calls short --------------------------------------------------------------

    def _reason_to_refuse(self, tracked: _Tracked) -> CancelReason | None:
        """Why a call that has just arrived must not start at all, if it must not."""
        if self._discarded:
            return "streaming_fallback"
        if self._turn_abort.aborted:
            return "user_interrupted"
        if self._failed_sibling is not None and tracked.chains_errors:
            return "sibling_error"
        return None

    def _cancel(self, tracked: _Tracked, reason: CancelReason) -> None:
        if tracked.status == "queued":
            self._finish_unstarted(tracked, reason)
        elif tracked.status == "executing" and tracked.cancel_reason is None:
            tracked.cancel_reason = reason
            tracked.abort.abort(reason)
            if tracked.task is not None:
                tracked.task.cancel()

    def _finish_unstarted(self, tracked: _Tracked, reason: CancelReason) -> None:
        tracked.outcome = self._cancelled(tracked, reason)
        tracked.status = "completed"
        self._wake()

    def _cancelled(self, tracked: _Tracked, reason: CancelReason) -> ToolCallOutcome:
        """The synthetic result of a cancelled call, announced to the sink."""
        message = cancel_message(reason, self._failed_sibling)
        self._services.emit(
            ToolCancelled(reason=reason, message=message, **self._event_fields(tracked))
        )
        return cancelled_outcome(tracked.call, reason, message)

    def _cancel_siblings(self, failed: _Tracked) -> None:
        self._failed_sibling = describe_call(
            failed.classified.tool, failed.call, failed.classified.parsed
        )
        for tracked in self._calls:
            if tracked is not failed and tracked.chains_errors:
                self._cancel(tracked, "sibling_error")

    def _on_interrupt(self, _reason: str) -> None:
        for tracked in self._calls:
            if tracked.status == "queued" or (
                tracked.status == "executing" and tracked.interruptible()
            ):
                self._cancel(tracked, "user_interrupted")

    def _event_fields(self, tracked: _Tracked) -> dict[str, Any]:
        if not tracked.event_fields:
            tracked.event_fields = tool_event_fields(
                tracked.call.id,
                tracked.tool_name,
                tracked.batch_id,
                self._services.parent_tool_use_id,
            )
        return tracked.event_fields


def _summary(tracked: _Tracked) -> str:
    classified = tracked.classified
    return call_summary(classified.tool, classified.parsed, tracked.call.input)
