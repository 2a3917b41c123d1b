"""The agent loop: ask the model, run the tools it calls while it streams, repeat.

One `send(prompt)` runs model requests until the model ends its turn, `max_turns` requests
have been made, the user interrupts, or a hook stops continuation. Each request:

- is built from the session's messages with the tool-result budget applied (results.py; one
  `ContentReplacementState` for the session, so earlier requests repeat byte for byte);
- streams; each tool_use goes to a `StreamingToolExecutor` the moment its block is complete,
  and results finish while the model is still writing;
- ends with the assistant message and one user message holding every tool_result in call
  order (hook context as text after them: the API wants results first).

Why it is shaped this way:

- A tool_use cut off by max_tokens must not run. Its `content_block_stop` arrives before the
  `message_delta` that says max_tokens, and the SDK hands over a partial input without
  complaint. So the loop keeps each block's raw JSON and runs a block only if that JSON
  parses as a whole: a cut block gets an error result telling the model why instead, and
  the front end a cancelled call ("cut_off") so the person sees it was not run. This
  needs no waiting for the stop reason, so complete calls still start at once.
- A stream that fails part way is retried as a whole, with a new executor: the calls the
  broken stream started are discarded (`discard()` cancels what it can) and their
  assistant message never enters the conversation; the retried response replaces it. The
  `Retrying` event carries the text the broken stream had shown, so a front end withdraws
  it instead of showing the answer twice. The wait before a retry is the server's
  `retry-after` when it gives one (model.py); the sleep is a parameter, so tests wait for
  nothing.
- Interrupting is an abort signal per `send`: the executor listens to it (cancelling calls
  by their interrupt behaviour) and the loop races the stream against it. The partial
  assistant message is kept with a result for every call it made, so the conversation stays
  one the API accepts, followed by a note that the user interrupted.
- Nothing escapes: API errors become `Retrying` and `TurnError` events, and `send` returns
  a `TurnEnded` saying why it stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..abort import AbortController, AbortSignal
from ..events import EventSink, HookRan, ToolCancelled, ToolQueued
from ..executor import ExecutorServices, ResultUpdate, ToolCall, ToolCallOutcome
from ..executor.calls import (
    call_summary,
    cancel_message,
    cancelled_outcome,
    error_block,
    tool_event_fields,
)
from ..executor.streaming import StreamingToolExecutor
from ..hooks import NO_EVENT_OUTCOME, EventHookOutcome, HookEvent
from ..results import ContentReplacementState, enforce_tool_result_budget
from ..tool import ToolContext, ToolPool, ToolResultBlock
from ..tools.skill import end_skills
from .compaction import context_window, is_too_long, threshold_of
from .compactor import Compactor
from .events import (
    AssistantMessage,
    HookNotice,
    InstructionsJoined,
    Interrupted,
    Retrying,
    TextDelta,
    ThinkingDelta,
    TurnEnded,
    TurnError,
    UsageUpdated,
    UserMessage,
)
from .instructions import InstructionSet, reminder_text
from .model import ModelClient, RetryPolicy, classify_failure
from .prompt import Environment, system_blocks, tool_definitions
from .transcript import Transcript
from .transcript_records import message_record, turn_record

DEFAULT_MAX_TURNS = 100
INTERRUPT_MESSAGE = "[The user interrupted. Stop and wait for their next instruction.]"
TRUNCATED_MESSAGE = cancel_message("cut_off")
CUT_OFF_LINE = "not run: the response was cut off at the output token limit"
"""What a person reads on the line of a call the output token limit cut off."""
MISSING_RESULT_MESSAGE = "This call produced no result (an internal error); it may not have run."


__all__ = [
    "AgentLoop",
    "AssistantMessage",
    "HookNotice",
    "Interrupted",
    "Retrying",
    "TextDelta",
    "TurnEnded",
    "TurnError",
    "UserMessage",
]


# -- one request's stream -------------------------------------------------------------------


@dataclass(slots=True)
class _Stream:
    """What one streaming attempt has seen so far."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    partial_text: str = ""
    streamed: list[str] = field(default_factory=list)
    """Every text delta this attempt emitted, in order."""
    raw_json: dict[int, list[str]] = field(default_factory=dict)
    added: list[str] = field(default_factory=list)
    truncated: set[str] = field(default_factory=set)
    outcomes: dict[str, ToolCallOutcome] = field(default_factory=dict)
    final: Any = None
    request_id: str = ""
    usage: dict[str, int] = field(default_factory=dict)
    """The response's usage so far: message_start's counts, updated by message_delta's."""


RetrySleep = Callable[[float, AbortSignal], Awaitable[bool]]
"""Waits before a retry: sleeps `delay` seconds, True at once if the signal aborts."""


@dataclass(frozen=True, slots=True)
class _Step:
    stop: str | None
    """None: make another request; otherwise why the loop stops."""


class AgentLoop:
    def __init__(
        self,
        model: ModelClient,
        services: ExecutorServices,
        context: ToolContext,
        *,
        messages: Sequence[Mapping[str, Any]] = (),
        transcript: Transcript | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        retry: RetryPolicy | None = None,
        environment: Environment | None = None,
        extra_prompt: str = "",
        sleep: RetrySleep | None = None,
        instructions: InstructionSet | None = None,
        compactor: Compactor | None = None,
    ) -> None:
        self.model = model
        self.messages: list[dict[str, Any]] = [dict(m) for m in messages]
        # The session's sink writes events to the transcript (transcript.transcribing); the
        # loop itself writes only the messages, with their model, usage and stop reason.
        self._sink: EventSink = services.sink
        self.services = services
        self.context = context
        self.transcript = transcript
        self.max_turns = max_turns
        self.retry = retry or RetryPolicy()
        self._sleep: RetrySleep = sleep or _sleep_unless_aborted
        self.environment = environment or Environment(cwd=context.cwd)
        self.extra_prompt = extra_prompt
        self.instructions = instructions
        """The session's project instructions; subdirectories' are found as files are read."""
        self.replacements = ContentReplacementState()
        self.requests = 0
        """Model requests made in this session (successful attempts)."""
        self._abort: AbortController | None = None
        self._usage: dict[str, int] = {}
        self._request_serial = 0
        self.compactor = compactor or Compactor(context_window(model.model), threshold_of(None))

    # -- the front end's side --------------------------------------------------------------

    def interrupt(self) -> None:
        """Esc: abort the running turn (no effect between turns)."""
        if self._abort is not None:
            self._abort.abort("interrupt")

    @property
    def running(self) -> bool:
        return self._abort is not None

    def use_tools(self, pool: ToolPool) -> None:
        """Offer `pool` from the next request on (the MCP servers' tools joined it)."""
        self.context = self.context.replace(
            options=dataclasses.replace(self.context.options, tools=pool)
        )

    async def compact(self, instructions: str = "") -> bool:
        """`/compact [instructions]`: replace the conversation by a summary now, between
        turns; False (and a `CompactionFailed` event) when nothing was compacted."""
        if self._abort is not None:
            raise RuntimeError("a turn is running; compact when it has ended")
        abort = self._abort = AbortController()
        try:
            return await self.compactor.compact(self, "manual", instructions, abort.signal)
        finally:
            self._abort = None

    async def send(self, prompt: str, *, typed: str | None = None) -> TurnEnded:
        """Run the agent on `prompt` until it stops; returns (and emits) why it stopped.
        `typed`: the line the person typed when `prompt` is a slash command's expansion,
        kept beside it in the transcript so a resumed session shows what was typed."""
        if self._abort is not None:
            raise RuntimeError("a turn is already running; interrupt it or wait")
        abort = self._abort = AbortController()
        started = time.monotonic()
        self._usage = {}
        requests = 0
        stop = "max_turns"
        try:
            submitted = await self._session_hook("UserPromptSubmit", {"prompt": prompt})
            if submitted.blocked:
                stop = "blocked_by_hook"
                self.services.emit(
                    HookNotice(text=submitted.reason or "A hook blocked the prompt.")
                )
            else:
                context = [{"type": "text", "text": c} for c in submitted.additional_context]
                self._append_user([{"type": "text", "text": prompt}, *context], typed=typed)
            stop_hook_active = False
            while stop != "blocked_by_hook" and requests < self.max_turns:
                requests += 1
                step = await self._request(abort.signal)
                if step.stop is None:
                    continue
                stop = step.stop
                if stop != "end_turn":
                    break
                # A Stop hook may send the agent back to work, once per stop it blocks.
                held = await self._session_hook("Stop", {"stop_hook_active": stop_hook_active})
                if not held.blocked:
                    break
                stop_hook_active = True
                stop = "max_turns"
                reason = held.reason or "A Stop hook asked you to continue."
                self._append_user([{"type": "text", "text": f"[Stop hook] {reason}"}])
        finally:
            self._abort = None
            self._end_skills()
        ended = TurnEnded(stop_reason=stop, requests=requests, usage=dict(self._usage))
        self.services.emit(ended)
        if self.transcript is not None:
            self.transcript.append(
                turn_record(
                    self.requests,
                    stop_reason=stop,
                    duration_s=time.monotonic() - started,
                    usage=ended.usage,
                )
            )
            self.transcript.sync()
        return ended

    def _end_skills(self) -> None:
        """A skill's allowed-tools narrow the turn that loaded it, no longer
        (core/tools/skill.py). A sub-agent's turn is not the person's: it leaves them be."""
        if self.context.agent_id is None:
            self.context.set_app_state(end_skills)

    async def _session_hook(self, event: HookEvent, payload: dict[str, Any]) -> EventHookOutcome:
        """Run UserPromptSubmit / Stop hooks when the session has a runner that has them."""
        run_event = getattr(self.services.hooks, "run_event", None)
        if run_event is None:
            return NO_EVENT_OUTCOME
        outcome: EventHookOutcome = await run_event(event, payload)
        for message in outcome.messages:
            self.services.emit(HookNotice(text=message))
        if outcome != NO_EVENT_OUTCOME:
            self.services.emit(HookRan(hook_event=event, outcome=outcome))
        return outcome

    # -- one request, retried ----------------------------------------------------------------

    async def _request(self, signal: AbortSignal, *, after_refusal: bool = False) -> _Step:
        if not after_refusal and await self.compactor.due(self):
            # Esc meanwhile: the request below sees the aborted signal and stops the turn.
            await self.compactor.compact(self, "auto", signal=signal)
        self.context = self.context.replace(messages=tuple(self.messages))
        messages, _ = enforce_tool_result_budget(
            self.messages, self.replacements, self.services.results
        )
        system = system_blocks(
            self.context.options,
            self.context.permission_context,
            self.environment,
            extra=self.extra_prompt,
        )
        tools = tool_definitions(self.context.options)
        attempt = 0
        while True:
            attempt += 1
            executor = StreamingToolExecutor(self.services, self.context, abort=signal)
            state = _Stream()
            task = asyncio.create_task(self._stream(executor, state, system, messages, tools))
            if await _interrupted_before(task, signal):
                return await self._interrupted(executor, state)
            error = task.exception()
            if error is None:
                self.requests += 1
                return await self._finish(executor, state, signal)
            executor.discard()
            if is_too_long(error) and not after_refusal:
                return await self._compact_and_retry(signal)
            failure = classify_failure(error)
            if failure.action == "stop" or attempt >= self.retry.max_attempts:
                gave_up = "" if failure.action == "stop" else f" (gave up after {attempt} tries)"
                self.services.emit(TurnError(message=failure.reason + gave_up))
                return _Step("error")
            delay = self.retry.delay(attempt, failure.retry_after_s)
            self.services.emit(
                Retrying(
                    attempt=attempt,
                    delay_s=delay,
                    error=failure.reason,
                    discarded_calls=len(state.added),
                    max_attempts=self.retry.max_attempts,
                    discarded_text="".join(state.streamed),
                )
            )
            if await self._sleep(delay, signal):
                return await self._interrupted(None, _Stream())

    async def _compact_and_retry(self, signal: AbortSignal) -> _Step:
        """A request refused as too long: compact, then try once more; the prompt stays."""
        if await self.compactor.compact(self, "auto", signal=signal):
            return await self._request(signal, after_refusal=True)
        if signal.aborted:
            return await self._interrupted(None, _Stream())
        self.services.emit(
            TurnError(
                message="The conversation is too long for the model and could not be "
                "compacted; your prompt is kept. Try /compact, or start a new session."
            )
        )
        return _Step("error")

    async def _stream(
        self,
        executor: StreamingToolExecutor,
        state: _Stream,
        system: list[dict[str, Any]],
        messages: Sequence[Mapping[str, Any]],
        tools: list[dict[str, Any]],
    ) -> None:
        async with self.model.stream(system=system, messages=messages, tools=tools) as stream:
            async for event in stream:
                self._on_event(event, executor, state)
                self._collect(executor.get_completed_results(), state)
            state.final = await stream.get_final_message()

    def _on_event(self, event: Any, executor: StreamingToolExecutor, state: _Stream) -> None:
        kind = event.type
        if kind in ("message_start", "message_delta"):
            self._usage_arrived(event, state)
        elif kind == "text":
            state.partial_text += event.text
            state.streamed.append(event.text)
            self.services.emit(TextDelta(text=event.text))
        elif kind == "thinking":
            self._thinking_arrived(event.thinking)
        elif kind == "content_block_start":
            state.partial_text = ""
            if event.content_block.type == "tool_use":
                state.raw_json[event.index] = []
        elif kind == "content_block_delta":
            if event.delta.type == "input_json_delta":
                state.raw_json.setdefault(event.index, []).append(event.delta.partial_json)
        elif kind == "content_block_stop":
            block = event.content_block
            state.blocks.append(_block_dict(block))
            state.partial_text = ""
            if block.type == "redacted_thinking":
                self._thinking_arrived("", redacted=True)
            if block.type == "tool_use":
                raw = "".join(state.raw_json.pop(event.index, []))
                if _complete_json(raw):
                    executor.add_tool(ToolCall(block.id, block.name, block.input))
                    state.added.append(block.id)
                else:
                    state.truncated.add(block.id)
                    self._show_cut_off(block)

    def _thinking_arrived(self, text: str, *, redacted: bool = False) -> None:
        """Thinking is shown as it streams; the block itself (its signature with it) enters
        the conversation whole with the message, and is sent back unchanged, as the API
        requires across tool turns. A block the stream never finished has no signature and
        is dropped with the rest of a broken attempt."""
        self.services.emit(ThinkingDelta(text=text, redacted=redacted))

    def _show_cut_off(self, block: Any) -> None:
        """A call max_tokens cut off is a line the person sees: queued, then not run."""
        fields = tool_event_fields(
            block.id, block.name, f"cut-{block.id}", self.services.parent_tool_use_id
        )
        partial = block.input if isinstance(block.input, dict) else {}
        summary = call_summary(None, None, partial)
        self.services.emit(
            ToolQueued(input=partial, summary=summary, concurrency_safe=False, **fields)
        )
        self.services.emit(ToolCancelled(reason="cut_off", message=CUT_OFF_LINE, **fields))

    def _usage_arrived(self, event: Any, state: _Stream) -> None:
        """Usage as it streams: the input counts open the response, the output count comes
        with each message_delta (counts there are totals so far, and may restate input)."""
        if event.type == "message_start":
            self._request_serial += 1
            state.request_id = event.message.id or f"request-{self._request_serial}"
            usage = event.message.usage
        else:
            usage = event.usage
        dumped = usage.model_dump() if usage is not None else {}
        state.usage.update(
            (key, value)
            for key, value in dumped.items()
            if isinstance(value, int) and not isinstance(value, bool)
        )
        if not state.request_id:  # a delta without a start: still one request of its own
            self._request_serial += 1
            state.request_id = f"request-{self._request_serial}"
        self.services.emit(
            UsageUpdated(
                request_id=state.request_id, model=self.model.model, usage=dict(state.usage)
            )
        )

    def _collect(self, updates: Sequence[Any], state: _Stream) -> None:
        # Progress has reached the sink already (the lifecycle emits it); results are kept.
        for update in updates:
            if isinstance(update, ResultUpdate):
                state.outcomes[update.outcome.tool_use_id] = update.outcome

    # -- after the stream ---------------------------------------------------------------------

    async def _finish(
        self, executor: StreamingToolExecutor, state: _Stream, signal: AbortSignal
    ) -> _Step:
        async for update in executor.get_remaining_results():
            self._collect([update], state)
        self.context = executor.context
        final = state.final
        self._add_usage(final.usage)
        content = [_block_dict(block) for block in final.content]
        content = [b for b in content if not (b["type"] == "text" and not b["text"])]
        calls = [b["id"] for b in content if b["type"] == "tool_use"]
        outcomes = [state.outcomes.get(call) for call in calls]
        results = [
            _truncated_block(call) if call in state.truncated else _result_block(call, outcome)
            for call, outcome in zip(calls, outcomes, strict=True)
        ]
        notes = [text for o in outcomes if o is not None for text in o.additional_context]
        notes += self._instruction_reminders(content, outcomes)
        if content:
            self._append_assistant(content, final)
        self.compactor.measure(self, final.usage.model_dump() if final.usage else {})
        user: list[dict[str, Any]] = [dict(r) for r in results]
        user += [{"type": "text", "text": text} for text in notes]
        if signal.aborted:
            user.append({"type": "text", "text": INTERRUPT_MESSAGE})
        if user:
            self._append_user(user)
        if signal.aborted:
            self.services.emit(Interrupted())
            return _Step("interrupted")
        stopping = [o for o in outcomes if o is not None and o.prevent_continuation]
        if stopping:
            return _Step(stopping[0].stop_reason or "stopped_by_hook")
        if not calls:
            return _Step(str(final.stop_reason or "end_turn"))
        return _Step(None)

    async def _interrupted(self, executor: StreamingToolExecutor | None, state: _Stream) -> _Step:
        """Keep what the stream said and did before Esc, with a result for every call."""
        if executor is not None:
            # Cancellable calls are cancelled already (the executor listens to the signal);
            # `block` calls are waited for, so their effects are reported truthfully.
            async for update in executor.get_remaining_results():
                self._collect([update], state)
            self.context = executor.context
        content = [
            b
            for b in state.blocks
            if (b["type"] == "tool_use" and b["id"] in state.added)
            or (b["type"] == "text" and b["text"])
            or b["type"] not in ("tool_use", "text")
        ]
        if state.partial_text:
            content.append({"type": "text", "text": state.partial_text})
        user: list[dict[str, Any]] = []
        if content:
            self._append_assistant(content, None)
            user = [
                dict(_result_block(b["id"], state.outcomes.get(b["id"]), interrupted=True))
                for b in content
                if b["type"] == "tool_use"
            ]
        self._append_user([*user, {"type": "text", "text": INTERRUPT_MESSAGE}])
        self.services.emit(Interrupted())
        return _Step("interrupted")

    def _instruction_reminders(
        self, content: Sequence[Mapping[str, Any]], outcomes: Sequence[Any]
    ) -> list[str]:
        """Subdirectories' instruction files, found by the files these calls read."""
        if self.instructions is None:
            return []
        found = []
        for block, outcome in zip(
            (b for b in content if b["type"] == "tool_use"), outcomes, strict=True
        ):
            path = _read_path(block)
            if path is not None and outcome is not None and not outcome.is_error:
                joined = self.instructions.on_read(Path(path))
                if joined:
                    self.services.emit(
                        InstructionsJoined(
                            paths=tuple(str(f.path) for f in joined),
                            found_by=str(joined[0].found_on_read or path),
                            cwd=str(self.instructions.cwd),
                        )
                    )
                found += joined
        return [reminder_text(found)] if found else []

    # -- the conversation ------------------------------------------------------------------

    def _append_assistant(self, content: list[dict[str, Any]], final: Any) -> None:
        stop_reason = getattr(final, "stop_reason", None)
        self.messages.append({"role": "assistant", "content": content})
        self.services.emit(AssistantMessage(content=tuple(content), stop_reason=stop_reason))
        if self.transcript is not None:
            usage = final.usage.model_dump() if final is not None else None
            self.transcript.append(
                message_record(
                    "assistant",
                    content,
                    model=self.model.model,
                    stop_reason=stop_reason,
                    usage=usage,
                )
            )

    def _append_user(self, content: list[dict[str, Any]], *, typed: str | None = None) -> None:
        if self.transcript is not None:
            self.transcript.append(message_record("user", content, typed=typed))
        self._sink(UserMessage(content=tuple(content)))
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user":
            # Two user messages in a row (an interrupted request, then a new prompt): one
            # message, results first as the API wants them.
            previous = last["content"]
            if isinstance(previous, str):
                previous = [{"type": "text", "text": previous}]
            last["content"] = [*previous, *content]
            return
        self.messages.append({"role": "user", "content": content})

    def _add_usage(self, usage: Any) -> None:
        for key, value in (usage.model_dump() if usage is not None else {}).items():
            if isinstance(value, int):
                self._usage[key] = self._usage.get(key, 0) + value


# -- helpers --------------------------------------------------------------------------------

FILE_TOOLS: dict[str, str] = {
    "Read": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "Write": "file_path",
    "NotebookEdit": "notebook_path",
}
"""The tools that touch one file, by the input key naming it: a call of one that ran
counts as the agent reading below that file's directory."""


def _read_path(block: Mapping[str, Any]) -> str | None:
    key = FILE_TOOLS.get(block.get("name", ""))
    value = block.get("input", {}).get(key) if key else None
    return value if isinstance(value, str) and value else None


def _block_dict(block: Any) -> dict[str, Any]:
    """An SDK content block as the API dict to send back (the SDK's own dump of a
    tool_use is not always the input the model wrote)."""
    if block.type == "text":
        return {"type": "text", "text": block.text}
    if block.type == "tool_use":
        tool_input = block.input if isinstance(block.input, dict) else {}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": tool_input}
    dumped: dict[str, Any] = block.model_dump(exclude_none=True)
    dumped.pop("parsed_output", None)
    return dumped


def _complete_json(raw: str) -> bool:
    if not raw.strip():
        return True  # a call without input: the SDK gives {}
    try:
        return isinstance(json.loads(raw), dict)
    except ValueError:
        return False


def _truncated_block(tool_use_id: str) -> ToolResultBlock:
    return error_block(tool_use_id, TRUNCATED_MESSAGE)


def _result_block(
    tool_use_id: str, outcome: ToolCallOutcome | None, *, interrupted: bool = False
) -> ToolResultBlock:
    if outcome is not None:
        return outcome.block
    if interrupted:
        call = ToolCall(tool_use_id, "", None)
        message = cancel_message("user_interrupted")
        return cancelled_outcome(call, "user_interrupted", message).block
    return error_block(tool_use_id, MISSING_RESULT_MESSAGE)


async def _interrupted_before(task: asyncio.Task[None], signal: AbortSignal) -> bool:
    """Wait for `task`; True if `signal` aborted first (the task is then cancelled)."""
    waiter = asyncio.ensure_future(signal.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        if not task.done() and not signal.aborted:
            task.cancel()  # `send` itself was cancelled
    if task.done():
        return False
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError, Exception):
        await task
    return True


async def _sleep_unless_aborted(delay: float, signal: AbortSignal) -> bool:
    """Sleep `delay` seconds; True (at once) if `signal` aborts meanwhile."""
    if signal.aborted:
        return True
    waiter = asyncio.ensure_future(signal.wait())
    try:
        done, _ = await asyncio.wait({waiter}, timeout=max(delay, 0))
    finally:
        waiter.cancel()
    return bool(done)
