"""One tool call, from tool_use to tool_result: the nine stages of seed 002 section 4.4.

    1 lookup       the tool by name or alias
    2 schema       the input against the tool's pydantic model
    3 validate     the tool's own `validate_input`
    4 pre_hook     PreToolUse hooks (may decide, replace the input, or stop the agent)
    5 permission   the decision chain, and the user when it asks
    6 call         `tool.call`, with progress
    7 map          the result to a `tool_result` block
    8 post_hook    PostToolUse, or PostToolUseFailure after an error
    9 persist      oversized results to disk, empty ones to a placeholder

Each stage either passes or ends the call with exactly one error `tool_result` saying, in
words the model can act on, what went wrong. Nothing raises out of `run_tool_use`, except the
`CancelledError` the executor uses to cancel it. Terminal events (completed, cancelled) are the
executor's to emit, because only it knows whether a result will stand.

A question to a person stays open until they answer, or until a change of mode lets the
chain settle it (`waiting.py`); the time it was open is kept apart (`waited_s`), and a call
that was not allowed ends "denied" (`denied_outcome`), not "failed".

PostToolUse hooks see the tool's own output, so they run before persisting; for an MCP tool
a hook may replace that output, and the replacement is what gets bounded and persisted.

Every call of a turn passes through here, so the happy path avoids needless work: no hook
machinery when no hooks are configured, no thread hop for ordinary-sized results.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import replace
from typing import Any, Literal, Protocol

from pydantic import ValidationError

from ..access.call_outcome import call_outcome, denial_message, unmistaken_content
from ..access.decision import (
    Allow,
    Ask,
    DecidedBy,
    Deny,
    PermissionDecision,
    nobody_to_answer,
    undecided,
)
from ..access.sandbox_policy import SandboxPolicy, Unsandboxed
from ..access.targets import CommandTarget
from ..events import (
    HookRan,
    PermissionAnswered,
    PermissionAsked,
    ResultPersisted,
    SavedResult,
    Stage,
    ToolNotice,
    ToolProgress,
    ToolSandboxed,
)
from ..hooks import NO_POST_OUTCOME, NO_PRE_OUTCOME, HookCall, PostToolUseOutcome, PreToolUseOutcome
from ..ports import Approve, ChangePreview, PermissionRequest, Reject
from ..results import (
    PersistedResult,
    content_size,
    content_text,
    empty_result_text,
    is_empty,
    persist_result,
    persistence_threshold,
)
from ..tool import AnyTool, Tool, ToolContext, ToolResult, ToolResultBlock
from .calls import (
    Classified,
    ToolCall,
    ToolCallOutcome,
    call_summary,
    denied_outcome,
    error_outcome,
    tool_event_fields,
)
from .services import ExecutorServices

OnProgress = Callable[[str, str, Any], None]

# Writing a few hundred kilobytes is quicker than a thread hop; above this, use a thread.
_PERSIST_IN_THREAD_ABOVE_CHARS = 1_000_000

_INPUT_ERRORS = (ValidationError, ValueError, TypeError)

BY_PERSON = DecidedBy("user", "the person said no")
_PUT_TO_THE_PERSON = frozenset({"ExitPlanMode", "AskUserQuestion"})
"""The tools whose own result may be the person's "no" (`call_outcome` reads them)."""
BY_BROKEN_PROMPT = DecidedBy("default", "the approval prompt failed")
BY_CANCELLING = DecidedBy("default", "the call was cancelled while its question waited")
BY_UNASKABLE = DecidedBy("default", "the question could not be put to the person")

REJECTED_BY_USER = (
    "The user doesn't want to proceed with this tool use. The call was rejected and did not run "
    "(for an edit, nothing was written)."
)


class CallState(Protocol):
    """Shared with the executor: whether the tool's own work (`call`) has begun.

    An interrupt cancels a call still waiting (for hooks, or for the user's approval) whatever
    the tool's interrupt behaviour; once `call` runs, a `block` tool is left to finish. The
    executor passes its own record of the call.
    """

    entered_call: bool


class _OwnState:
    __slots__ = ("entered_call",)

    def __init__(self) -> None:
        self.entered_call = False


class _Stop(Exception):
    """Ends the call early with its (error) outcome; raised and caught only in this module."""

    def __init__(self, outcome: ToolCallOutcome) -> None:
        self.outcome = outcome


def run_tool_use(
    call: ToolCall,
    services: ExecutorServices,
    context: ToolContext,
    *,
    batch_id: str = "",
    state: CallState | None = None,
    on_progress: OnProgress | None = None,
    classified: Classified | None = None,
) -> Coroutine[Any, Any, ToolCallOutcome]:
    """Run one call through every stage; await it for the outcome.

    `classified` skips the lookup and schema stages when the executor has already done them.
    (A plain function returning the coroutine, to spare every call one coroutine layer.)
    """
    run = _CallRun(call, services, context, batch_id, state or _OwnState(), on_progress)
    return run.run(classified)


class _CallRun:
    """The state of one call as it moves through the stages."""

    __slots__ = (
        "batch_id",
        "call",
        "context",
        "on_progress",
        "question_open",
        "services",
        "stage",
        "state",
        "tool_name",
        "waited_s",
    )

    def __init__(
        self,
        call: ToolCall,
        services: ExecutorServices,
        context: ToolContext,
        batch_id: str,
        state: CallState,
        on_progress: OnProgress | None,
    ) -> None:
        self.call = call
        self.services = services
        self.context = context
        self.batch_id = batch_id
        self.state = state
        self.on_progress = on_progress
        self.stage: Stage = "lookup"
        self.tool_name = call.name
        self.waited_s = 0.0
        self.question_open = False
        """A question the chain logged as `ask` that has no end yet (`end_question`)."""

    def fail(self, message: str) -> _Stop:
        return _Stop(error_outcome(self.call, self.stage, message))

    def deny(self, decided_by: DecidedBy, reason: str) -> _Stop:
        """The call may not run: the model reads a denial (`denial_message`), people read who
        denied it."""
        return _Stop(denied_outcome(self.call, decided_by, denial_message(reason)))

    async def run(self, classified: Classified | None) -> ToolCallOutcome:
        try:
            outcome = await self.stages(classified)
        except _Stop as stop:
            outcome = stop.outcome
        except asyncio.CancelledError:
            raise
        except Exception as error:  # a bug in the engine, a chain or a port: still one result
            message = f"Internal error while running {self.call.name}: {_described(error)}"
            outcome = error_outcome(self.call, self.stage, message)
        outcome.waited_s = self.waited_s
        return outcome

    async def stages(self, classified: Classified | None) -> ToolCallOutcome:
        call, context = self.call, self.context
        tool = self.look_up(classified)
        self.tool_name = tool.name
        parsed = self.parse(tool, classified)

        self.stage = "validate"
        try:
            validation = await tool.validate_input(parsed, context)
        except Exception as error:
            raise self.fail(f"{tool.name} could not check its input: {_described(error)}") from None
        if not validation.ok:
            raise self.fail(validation.message or f"{tool.name} rejected its input.")

        self.stage = "pre_hook"
        hooks = self.services.hooks
        hook_call = HookCall(tool.name, _as_mapping(call.input), call.id) if hooks else None
        pre = await self.pre_hooks(hook_call) if hook_call else NO_PRE_OUTCOME
        if pre.updated_input is not None:
            parsed = self.reparse(
                tool,
                pre.updated_input,
                "A PreToolUse hook replaced the input with one that is not valid. ",
            )
            hook_call = HookCall(tool.name, _as_mapping(pre.updated_input), call.id)

        self.stage = "permission"
        parsed, policy = await self.permit(tool, parsed, pre)
        sandbox = None
        if tool.sandboxable:
            # The policy decided (and shown) is the policy applied: it rides on the context.
            policy = policy or Unsandboxed("no sandbox policy was decided")
            context = self.context = context.replace(sandbox=policy)
            sandbox = policy.kind
            self.services.emit(
                ToolSandboxed(policy=policy.kind, why=policy.why, **self.event_fields())
            )

        self.stage = "call"
        self.state.entered_call = True
        try:
            result = await tool.call(parsed, context, self.progress)
        except Exception as error:
            message = f"{tool.name} failed: {_described(error)}"
            outcome = error_outcome(call, "call", message)
            outcome.sandbox = sandbox
            if hook_call is None:
                return outcome
            return _with_hooks(outcome, pre, await self.post_hooks(hook_call, None, message))

        if result.saved is not None:
            self.services.emit(
                ResultPersisted(
                    path=result.saved.path,
                    size_chars=result.saved.size_bytes,
                    **self.event_fields(),
                )
            )

        self.stage = "map"
        block = self.map(tool, result)
        # The person's "no" to what a tool put before them (a plan, questions) is a denial
        # too: read as the model reads it (core/access/call_outcome.py).
        refused = tool.name in _PUT_TO_THE_PERSON and call_outcome(block, tool.name) == "denied"

        self.stage = "post_hook"
        post = NO_POST_OUTCOME
        if hook_call is not None:
            error_text = None
            if result.is_error:  # the message itself, not the model's marked-up copy
                error_text = result.data if isinstance(result.data, str) else _text(block)
            response = self.hook_response(tool, parsed, result)
            post = await self.post_hooks(hook_call, response, error_text)
            if post.updated_output is not None and tool.is_mcp:
                replaced = ToolResult(post.updated_output, is_error=result.is_error)
                block["content"] = self.map(tool, replaced)["content"]

        self.stage = "persist"
        persisted = None
        if needs_bounding(tool, block):
            persisted = await self.bound_size(tool, block)
        saved = None
        if persisted is not None and persisted.path is not None:
            saved = SavedResult(persisted.path, persisted.size_chars)
        elif result.saved is not None:
            saved = SavedResult(result.saved.path, result.saved.size_bytes)
        outcome = ToolCallOutcome(
            call,
            block,
            failed_stage="call" if result.is_error else None,
            new_messages=tuple(result.new_messages),
            context_modifier=result.context_modifier,
            persisted=persisted,
            saved=saved,
            data=result.data,
            sandbox=sandbox,
            denied_by=BY_PERSON if refused else None,
        )
        return outcome if hook_call is None else _with_hooks(outcome, pre, post)

    # -- stages ---------------------------------------------------------------------------

    def look_up(self, classified: Classified | None) -> AnyTool:
        if classified is not None and classified.tool is not None:
            return classified.tool
        tools = self.context.options.tools
        tool = tools.find(self.call.name) if tools is not None else None
        if tool is None:
            message = f"No such tool available: {self.call.name}."
            if tools is not None and len(tools) <= 40:
                message += " Available tools: " + ", ".join(tools.names) + "."
            raise self.fail(message)
        return tool

    def parse(self, tool: AnyTool, classified: Classified | None) -> Any:
        self.stage = "schema"
        if classified is not None and classified.parsed is not None:
            return classified.parsed
        try:
            return tool.parse_input(self.call.input)
        except _INPUT_ERRORS as error:
            message = format_input_error(tool.name, error)
            options = self.context.options
            if (
                tool.should_defer
                and not tool.always_load
                and (tool.name not in options.discovered_tools)
            ):
                message += (
                    f"\n{tool.name}'s schema has not been loaded yet. Load it with ToolSearch "
                    f'(query "select:{tool.name}") and call it again.'
                )
            raise self.fail(message) from None

    def reparse(self, tool: AnyTool, raw: Any, why: str) -> Any:
        try:
            return tool.parse_input(raw)
        except _INPUT_ERRORS as error:
            raise self.fail(why + format_input_error(tool.name, error)) from None

    async def pre_hooks(self, hook_call: HookCall) -> PreToolUseOutcome:
        hooks = self.services.hooks
        assert hooks is not None
        try:
            pre = await hooks.pre_tool_use(hook_call)
        except Exception as error:  # a guard that could not run: the call asks
            message = f"A PreToolUse hook failed ({error}), so the call asks instead."
            self.notice("error", message)
            pre = PreToolUseOutcome(permission="ask", reason=message, source="PreToolUse hooks")
            self.hook_ran("PreToolUse", pre)
            return pre
        for message in pre.messages:
            self.notice("info", message)
        if pre != NO_PRE_OUTCOME:
            self.hook_ran("PreToolUse", pre)
        return pre

    def hook_ran(self, hook_event: str, outcome: Any) -> None:
        self.services.emit(
            HookRan(
                hook_event=hook_event,
                outcome=outcome,
                tool_use_id=self.call.id,
                tool_name=self.tool_name,
            )
        )

    async def permit(
        self, tool: AnyTool, parsed: Any, pre: PreToolUseOutcome
    ) -> tuple[Any, SandboxPolicy | None]:
        """The input to run with, once allowed, and the sandbox policy decided with it;
        raises `_Stop` when it is not allowed."""
        services = self.services
        try:
            decision = await services.permissions.decide(tool, parsed, self.context, pre)
        except Exception as error:  # a chain that raises (DecisionChain records its own)
            decision = undecided(tool.name, error)
        if isinstance(decision, Ask) and (
            services.permission_port is None or self.context.permission_context.avoid_prompts
        ):
            decision = nobody_to_answer(tool.name, decision)
            # The chain logged the `ask`; the log must also say how that question ended.
            self.end_question(decision.decided_by)
        if isinstance(decision, Deny):
            raise self.deny(decision.decided_by, decision.message)
        if isinstance(decision, Allow):
            parsed = self.reparse_decided(tool, parsed, decision)
            return parsed, decision.sandbox
        self.question_open = True
        try:
            before = parsed
            parsed = self.reparse_decided(tool, parsed, decision)
            return await self.ask_user(tool, parsed, decision, before, pre)
        except asyncio.CancelledError:
            if self.question_open:  # esc, an interrupt, a sibling's error
                self.end_question(BY_CANCELLING)
            raise
        except BaseException:
            if self.question_open:  # an input that no longer parses: refused unasked
                self.end_question(BY_UNASKABLE)
            raise

    def reparse_decided(self, tool: AnyTool, parsed: Any, decision: Allow | Ask) -> Any:
        if decision.updated_input is None:
            return parsed
        return self.reparse(tool, decision.updated_input, "")

    def end_question(self, decided_by: DecidedBy) -> None:
        """Closes a question the chain logged as `ask` that no person answered: the
        audit log (`auditing`) writes it as withdrawn, saying what ended it."""
        self.question_open = False
        self.services.emit(
            PermissionAnswered(answer=Reject(), decided_by=decided_by, **self.event_fields())
        )

    async def ask_user(
        self, tool: AnyTool, parsed: Any, decision: Ask, before: Any, pre: PreToolUseOutcome
    ) -> tuple[Any, SandboxPolicy | None]:
        """The person's answer; or, if the mode changes while they are asked, the chain's
        decision under the new mode (made from `before`, the input as first decided on)."""
        services = self.services
        port = services.permission_port
        assert port is not None
        request = PermissionRequest(
            tool_use_id=self.call.id,
            tool_name=tool.name,
            input=_as_mapping(parsed.model_dump(mode="json", exclude_unset=True, by_alias=True)),
            summary=call_summary(tool, parsed, self.call.input),
            message=decision.message,
            decided_by=decision.decided_by,
            suggestions=decision.suggestions,
            agent_label=services.agent_label,
            sandbox=decision.sandbox.describe() if decision.sandbox is not None else None,
            risk=decision.risk,
            preview=await self.preview(tool, parsed),
            command=self.command_of(tool, parsed),
        )
        services.emit(PermissionAsked(request=request, **self.event_fields()))
        asked_at = time.monotonic()
        try:
            answer = await services.waiting.answer_or_settled(
                self.call.id,
                port.request_permission(request),
                lambda: self.decide_again(tool, before, pre),
            )
        except Exception as error:
            # Nobody said no: the record and the model's words say the prompt broke.
            self.notice("error", f"The approval prompt failed ({error}); the call was refused.")
            self.end_question(BY_BROKEN_PROMPT)
            raise self.deny(
                BY_BROKEN_PROMPT,
                f"{tool.name} needs approval, but the question could not be shown to the "
                f"user (the approval prompt failed: {error}), so it was not run.",
            ) from None
        finally:
            self.waited_s += time.monotonic() - asked_at
        if isinstance(answer, Allow | Deny):
            self.question_open = False
            return self.settled_without_answer(tool, before, answer)
        self.question_open = False
        services.emit(PermissionAnswered(answer=answer, **self.event_fields()))
        try:
            await services.permissions.record_answer(request, answer, self.context)
        except Exception as error:
            self.notice("error", f"Your answer could not be remembered beyond this call: {error}")
        if isinstance(answer, Reject):
            instead = (
                f" The user said what to do instead: {answer.feedback}"
                if answer.feedback
                else " Stop and wait for the user to say how to proceed."
            )
            raise self.deny(BY_PERSON, REJECTED_BY_USER + instead)
        if isinstance(answer, Approve) and answer.updated_input is not None:
            parsed = self.reparse(
                tool, answer.updated_input, "The input the user approved is not valid. "
            )
        return parsed, decision.sandbox

    async def decide_again(
        self, tool: AnyTool, before: Any, pre: PreToolUseOutcome
    ) -> PermissionDecision:
        """The chain's decision under the mode as it is now. PreToolUse hooks see the mode
        (`permission_mode`), so they are asked again: one that refuses in the new mode must
        have its say. A hook that now gives another input than the one decided on raises,
        and the question stays for the person."""
        if self.services.hooks is None:
            return await self.services.permissions.decide(tool, before, self.context, pre)
        now = await self.pre_hooks(HookCall(tool.name, _as_mapping(self.call.input), self.call.id))
        if now.updated_input != pre.updated_input:
            raise RuntimeError("a PreToolUse hook replaced the input differently this time")
        return await self.services.permissions.decide(tool, before, self.context, now)

    def settled_without_answer(
        self, tool: AnyTool, before: Any, decision: Allow | Deny
    ) -> tuple[Any, SandboxPolicy | None]:
        """The mode changed while the person was asked, and the chain now decides the call
        by itself: the question was withdrawn, and the record says what decided instead."""
        answer = Approve() if isinstance(decision, Allow) else Reject()
        self.services.emit(
            PermissionAnswered(answer=answer, decided_by=decision.decided_by, **self.event_fields())
        )
        if isinstance(decision, Deny):
            raise self.deny(decision.decided_by, decision.message)
        self.notice(
            "info",
            f"Allowed without an answer once the mode changed: {decision.decided_by.detail}.",
        )
        if decision.updated_input is not None:
            return self.reparse(tool, decision.updated_input, ""), decision.sandbox
        return before, decision.sandbox

    def progress(self, data: Any) -> None:
        self.services.emit(ToolProgress(data=data, **self.event_fields()))
        if self.on_progress is not None:
            self.on_progress(self.call.id, self.tool_name, data)

    def map(self, tool: AnyTool, result: ToolResult[Any]) -> ToolResultBlock:
        try:
            block = tool.result_block(result, self.call.id)
        except Exception as error:
            raise self.fail(
                f"{tool.name} ran, but its result could not be read: {_described(error)}"
            ) from None
        # Only the permission stage may open a result as a denial (core/access/call_outcome.py).
        unmistaken = unmistaken_content(block, tool.name)
        if unmistaken is not None:
            block["content"] = unmistaken
        return block

    def command_of(self, tool: AnyTool, parsed: Any) -> str | None:
        """The shell command the call runs, if its rules match commands (shown as code)."""
        try:
            target = tool.rule_target(parsed, self.context.cwd)
        except Exception:
            return None
        return target.command if isinstance(target, CommandTarget) else None

    async def preview(self, tool: AnyTool, parsed: Any) -> ChangePreview | None:
        """The change an edit would make, read off the event loop (a big file, a slow disk).
        Tools that edit no file keep the base method and need no thread hop."""
        if type(tool).change_preview is Tool.change_preview:
            return None
        try:
            return await asyncio.to_thread(tool.change_preview, parsed, self.context.cwd)
        except Exception as error:  # the question is still asked, without the diff
            self.notice("warning", f"The change {tool.name} would make could not be shown: {error}")
            return None

    def hook_response(self, tool: AnyTool, parsed: Any, result: ToolResult[Any]) -> Any:
        try:
            return tool.hook_response(parsed, result.data)
        except Exception as error:  # the hooks still run, with the data as it is
            self.notice("error", f"{tool.name}'s result could not be shaped for hooks: {error}")
            return result.data

    async def post_hooks(
        self, hook_call: HookCall, response: Any, error: str | None
    ) -> PostToolUseOutcome:
        """PostToolUse with the tool's `response`, or PostToolUseFailure with `error`."""
        hooks = self.services.hooks
        assert hooks is not None
        try:
            if error is None:
                outcome = await hooks.post_tool_use(hook_call, response)
            else:
                outcome = await hooks.post_tool_use_failure(hook_call, error)
        except Exception as failure:
            self.notice("error", f"A post-call hook failed and was ignored: {failure}")
            return NO_POST_OUTCOME
        for message in outcome.messages:
            self.notice("info", message)
        if outcome != NO_POST_OUTCOME:
            self.hook_ran("PostToolUse" if error is None else "PostToolUseFailure", outcome)
        return outcome

    async def bound_size(self, tool: AnyTool, block: ToolResultBlock) -> PersistedResult | None:
        """Give an empty result its placeholder and persist an oversized one, in place."""
        content = block["content"]
        if is_empty(content):
            block["content"] = empty_result_text(tool.name)
            return None
        size = content_size(content)
        text = content_text(content)
        if text is None:  # images and the like are not saved as text
            return None
        store = self.services.results
        if size > _PERSIST_IN_THREAD_ABOVE_CHARS:
            persisted = await asyncio.to_thread(persist_result, store, self.call.id, text)
        else:
            persisted = persist_result(store, self.call.id, text)
        if persisted.path is not None:
            self.services.emit(
                ResultPersisted(
                    path=persisted.path, size_chars=persisted.size_chars, **self.event_fields()
                )
            )
        else:
            self.notice(
                "warning",
                f"The full output of {tool.name} could not be saved ({persisted.error}); "
                "the model sees only its beginning.",
            )
        block["content"] = persisted.content
        return persisted

    # -- events ---------------------------------------------------------------------------

    def event_fields(self) -> dict[str, Any]:
        return tool_event_fields(
            self.call.id, self.tool_name, self.batch_id, self.services.parent_tool_use_id
        )

    def notice(self, level: Literal["info", "warning", "error"], text: str) -> None:
        self.services.emit(ToolNotice(level=level, text=text, **self.event_fields()))


def needs_bounding(tool: AnyTool, block: ToolResultBlock) -> bool:
    """Whether the result is empty or over its tool's persistence threshold."""
    content = block["content"]
    threshold = persistence_threshold(tool.max_result_size_chars)
    return is_empty(content) or content_size(content) > threshold


def _with_hooks(
    outcome: ToolCallOutcome, pre: PreToolUseOutcome, post: PostToolUseOutcome
) -> ToolCallOutcome:
    context = (*pre.additional_context, *post.additional_context)
    stop = pre.prevent_continuation or post.prevent_continuation
    if not context and not stop:
        return outcome
    return replace(
        outcome,
        additional_context=context,
        prevent_continuation=stop,
        stop_reason=post.stop_reason or pre.stop_reason,
    )


def format_input_error(tool_name: str, error: Exception) -> str:
    """A pydantic error in words the model can act on: which parameter, what was wrong."""
    if not isinstance(error, ValidationError):
        return f"{tool_name} failed because its input is invalid: {error}"
    problems = []
    for item in error.errors(include_url=False):
        where = ".".join(str(part) for part in item["loc"])
        kind = item["type"]
        if not where:
            got = type(item.get("input")).__name__
            problems.append(f"the input must be a JSON object of parameters, not {got}")
        elif kind == "missing":
            problems.append(f"the required parameter `{where}` is missing")
        elif kind == "extra_forbidden":
            problems.append(f"an unexpected parameter `{where}` was provided")
        else:
            got = repr(item.get("input"))
            got = got if len(got) <= 60 else got[:57] + "..."
            problems.append(f"`{where}`: {item['msg'].lower()} (got {got})")
    listed = "\n".join(f"- {problem}" for problem in problems)
    return f"{tool_name} failed because its input is invalid:\n{listed}"


def _described(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"


def _as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {"input": value}


def _text(block: ToolResultBlock) -> str:
    text = content_text(block["content"])
    return text if text is not None else "(non-text error output)"
