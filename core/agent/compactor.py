"""The loop's side of compaction: measuring after each response, and compacting.

It lives apart from loop.py so the loop gains four calls, not a hundred lines: `measure`
after a response, `due` before a request, `compact` when due, on `/compact` or when a
request is refused as too long. What it sends and what replaces the conversation are
decided in compaction.py; here is only the doing: PreCompact hooks, the summary request
(streamed like any other, with the same tools and system prompt, so the cached prefix
stays byte for byte what it was), the transcript's compaction record, the events.

A compaction that fails (the model errs, or writes nothing) changes nothing: the
conversation stays as it was and the person is told why. A compaction that cannot bring the
context under the threshold (nothing left to summarise, or still above it after) is not
tried again before every request: the person is told once that the instructions and tools
fill the window, the threshold rests until a compaction gets under it (or `/clear`), and a
request then refused as too long takes the loop's too-long path, which says so.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..abort import AbortSignal
from ..events import HookRan
from ..hooks import NO_EVENT_OUTCOME
from ..tools.skill import narrowing_note
from .compaction import (
    CompactTrigger,
    Gauge,
    clipped,
    compacted_conversation,
    context_tokens,
    estimated_tokens,
    is_too_long,
    pending_prompt,
    summary_request,
    summary_text,
)
from .events import (
    Compacted,
    Compacting,
    CompactionFailed,
    ContextMeasured,
    HookNotice,
    UsageUpdated,
)
from .instructions import reminder_text
from .prompt import system_blocks, tool_definitions
from .transcript_records import compaction_record

if TYPE_CHECKING:
    from ..executor import ExecutorServices
    from ..tool import ToolContext
    from .model import ModelClient
    from .prompt import Environment
    from .transcript import Transcript


class AgentLoop(Protocol):
    """What compaction needs of the loop (a protocol: the loop imports this module)."""

    messages: list[dict[str, Any]]
    model: ModelClient
    services: ExecutorServices
    context: ToolContext
    environment: Environment
    extra_prompt: str
    transcript: Transcript | None


_T = TypeVar("_T")


class Compactor:
    """One session's context gauge and compactions."""

    def __init__(self, window: int, threshold: float | None) -> None:
        self.window = window
        self.threshold = threshold
        self.tokens = 0
        self.compactions = 0
        self._measured_upto = 0
        """Messages the last measure covered; those after it are estimated or counted."""
        self.futile = False
        """Compaction could not get under the threshold: the threshold rests (said once)."""
        self.prefix_percent = 0
        """The share of the window the system prompt and tools alone take (once futile)."""

    @property
    def gauge(self) -> Gauge:
        return Gauge(self.tokens, self.window)

    async def due(self, loop: AgentLoop) -> bool:
        """Whether the next request would pass the threshold. The last response's usage
        does not cover what came after it (tool results, a prompt): they are estimated,
        and counted by the API's token counting when the estimate reaches the threshold."""
        if self.threshold is None or self.futile:
            return False
        unmeasured = loop.messages[self._measured_upto :]
        estimate = self.tokens + estimated_tokens(unmeasured)
        if estimate < self.threshold * self.window:
            return False
        if unmeasured:
            counted = await self._count(loop)
            if counted is not None:
                self.tokens, self._measured_upto = counted, len(loop.messages)
                self._announce(loop)
                if self.gauge.fraction < self.threshold:
                    return False
        if len(loop.messages) <= 1:  # the prompt alone, or a summary: nothing to summarise
            await self._cannot_help(loop)
            return False
        return True

    async def _cannot_help(self, loop: AgentLoop) -> None:
        """Compaction cannot bring the context under the threshold: say so once, in words,
        and let the threshold rest so the loop does not compact before every request."""
        if self.futile:  # said already (a too-long refusal compacted again): once is enough
            return
        self.futile = True
        system, tools = _prefix(loop)
        placeholder = [{"role": "user", "content": "."}]
        counted = await self._count_of(loop, system, placeholder, tools)
        if counted is None:
            counted = estimated_tokens([{"system": system, "tools": tools}])
        self.prefix_percent = Gauge(counted, self.window).percent
        threshold = round((self.threshold or 0) * 100)
        if self.prefix_percent >= threshold:
            why = (
                f"The instructions and tools alone fill {self.prefix_percent}% of the window, "
                f"above the {threshold}% compaction threshold"
            )
        else:
            why = (
                f"Even compacted, the conversation fills {self.gauge.percent}% of the window, "
                f"above the {threshold}% compaction threshold"
            )
        loop.services.emit(
            CompactionFailed(
                message=f"{why}: compaction cannot help, so it will not run again by itself. "
                "If the model refuses a request as too long, you will be told."
            )
        )

    async def _count(self, loop: AgentLoop) -> int | None:
        """The API's count of the next request's input; None if it could not say."""
        system, tools = _prefix(loop)
        return await self._count_of(loop, system, loop.messages, tools)

    async def _count_of(
        self,
        loop: AgentLoop,
        system: list[dict[str, Any]],
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
    ) -> int | None:
        count = getattr(loop.model, "count_tokens", None)
        if count is None:
            return None
        try:
            return int(await count(system=system, messages=messages, tools=tools))
        except Exception:  # counting is a refinement: the estimate stands
            return None

    def resume(self, loop: AgentLoop, tokens: int) -> None:
        """A resumed conversation holds `tokens`, as its transcript last measured them: the
        gauge shows them from the start, and the threshold counts from them."""
        self.tokens = tokens
        self._measured_upto = len(loop.messages)
        self._announce(loop)

    def restart(self, loop: AgentLoop) -> None:
        """`/clear` emptied the conversation: nothing measured is in it any more (the next
        response measures the prompt and tools again)."""
        self.tokens = 0
        self._measured_upto = 0
        self.futile = False
        self._announce(loop)

    def measure(self, loop: AgentLoop, usage: Mapping[str, Any]) -> None:
        """A response's usage (called once it is in the conversation): the context the
        next request starts from."""
        self.tokens = context_tokens(usage)
        self._measured_upto = len(loop.messages)
        self._announce(loop)

    def _announce(self, loop: AgentLoop) -> None:
        loop.services.emit(
            ContextMeasured(tokens=self.tokens, window=self.window, threshold=self.threshold)
        )

    async def compact(
        self,
        loop: AgentLoop,
        trigger: CompactTrigger,
        instructions: str = "",
        signal: AbortSignal | None = None,
    ) -> bool:
        """Replace the conversation by a summary; False (nothing changed) if it failed or
        `signal` aborted first (Esc)."""
        if not loop.messages:
            loop.services.emit(CompactionFailed(message="There is no conversation to compact."))
            return False
        loop.services.emit(Compacting(trigger=trigger))
        await self._pre_compact_hooks(loop, trigger, instructions)
        request = summary_request(loop.messages, instructions)
        try:
            content, _ = await _unless_aborted(self._summarise(loop, request), signal)
        except _Aborted:
            return self._interrupted(loop)
        except Exception as error:
            if not is_too_long(error):
                return self._failed(loop, error)
            try:  # the conversation itself is too long to send whole: a shorter copy
                content, _ = await _unless_aborted(self._summarise(loop, clipped(request)), signal)
            except _Aborted:
                return self._interrupted(loop)
            except Exception as again:
                return self._failed(loop, again)
        summary = summary_text(content)
        if not summary:
            loop.services.emit(
                CompactionFailed(message="The model wrote no summary; nothing was compacted.")
            )
            return False
        before, replaced = self.tokens, len(loop.messages)
        permission_context = loop.context.permission_context
        plan = permission_context.plan_file if permission_context.mode == "plan" else None
        messages = compacted_conversation(
            summary,
            replaced=loop.messages,
            todos=loop.context.get_app_state().todos,
            plan_file=Path(plan) if plan else None,
            pending_prompt=pending_prompt(loop.messages),
            reminders=[*_instruction_reminders(loop), *_skill_reminders(loop)],
        )
        loop.messages[:] = messages
        self.compactions += 1
        # Until the next response says: the API's count, else an estimate of it.
        counted = await self._count(loop)
        if counted is None:
            system, tools = _prefix(loop)
            counted = estimated_tokens([*messages, {"system": system, "tools": tools}])
        self.tokens, self._measured_upto = counted, len(messages)
        still_above = self.threshold is not None and self.gauge.fraction >= self.threshold
        if loop.transcript is not None:
            loop.transcript.append(
                compaction_record(
                    trigger,
                    messages=messages,
                    summary_request=request[-1]["content"],
                    summary=content,
                    tokens_before=before,
                    instructions=instructions,
                )
            )
            loop.transcript.sync()
        loop.services.emit(
            Compacted(
                trigger=trigger,
                tokens_before=before,
                messages_replaced=replaced,
                summary=summary,
            )
        )
        self._announce(loop)
        if still_above:
            await self._cannot_help(loop)
        else:
            self.futile = False
        return True

    async def _pre_compact_hooks(
        self, loop: AgentLoop, trigger: CompactTrigger, instructions: str
    ) -> None:
        run_event = getattr(loop.services.hooks, "run_event", None)
        if run_event is None:
            return
        payload = {"trigger": trigger, "custom_instructions": instructions}
        outcome = await run_event("PreCompact", payload)
        for message in outcome.messages:
            loop.services.emit(HookNotice(text=message))
        if outcome != NO_EVENT_OUTCOME:
            loop.services.emit(HookRan(hook_event="PreCompact", outcome=outcome))

    async def _summarise(
        self, loop: AgentLoop, messages: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], dict[str, int]]:
        """The summary request, streamed; its text blocks and usage."""
        system, tools = _prefix(loop)
        async with loop.model.stream(system=system, messages=messages, tools=tools) as stream:
            final = await stream.get_final_message()
        dumped = final.usage.model_dump() if final.usage is not None else {}
        usage = {k: v for k, v in dumped.items() if isinstance(v, int)}
        loop.services.emit(
            UsageUpdated(request_id=final.id or "compaction", model=loop.model.model, usage=usage)
        )
        content = [
            {"type": "text", "text": block.text} for block in final.content if block.type == "text"
        ]
        return content, usage

    def _interrupted(self, loop: AgentLoop) -> bool:
        message = "Compaction was interrupted; the conversation is unchanged."
        loop.services.emit(CompactionFailed(message=message))
        return False

    def _failed(self, loop: AgentLoop, error: BaseException) -> bool:
        from .model import classify_failure

        reason = classify_failure(error).reason
        loop.services.emit(
            CompactionFailed(message=f"Compaction failed, the conversation is unchanged: {reason}")
        )
        return False


def _prefix(loop: AgentLoop) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The system prompt and tools exactly as the loop's next request sends them."""
    system = system_blocks(
        loop.context.options,
        loop.context.permission_context,
        loop.environment,
        extra=loop.extra_prompt,
    )
    return system, tool_definitions(loop.context.options)


class _Aborted(Exception):
    """The summary request was abandoned: the person pressed Esc."""


async def _unless_aborted(work: Coroutine[Any, Any, _T], signal: AbortSignal | None) -> _T:
    """`work`'s result, unless `signal` aborts first (then `_Aborted`, the work cancelled)."""
    task = asyncio.ensure_future(work)
    if signal is None:
        return await task
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done():
            task.cancel()
    if task.cancelled() or not task.done():
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
        raise _Aborted
    return task.result()


def _instruction_reminders(loop: AgentLoop) -> list[str]:
    """The subdirectories' instruction files found so far, as the reminder that first gave
    them (instructions.py): compaction must not take them from the model."""
    instructions = getattr(loop, "instructions", None)
    if instructions is None:
        return []
    found = [f for f in instructions.loaded() if f.found_on_read is not None]
    return [reminder_text(found)] if found else []


def _skill_reminders(loop: AgentLoop) -> list[str]:
    """A skill (or command) still narrowing the turn, said again: the message that loaded it
    and told the model its allowed-tools is among those the summary replaces, while the
    narrowing itself, on the permission context, stays until the turn ends."""
    said = []
    for scope in loop.context.permission_context.skill_scopes:
        is_command = scope.skill.startswith("/")
        what = f"The command {scope.skill}" if is_command else f"The skill {scope.skill!r}"
        note = narrowing_note(scope.rules)
        said.append(f"{what} loaded before this summary is still running. {note}")
    return said
