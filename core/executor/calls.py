"""The values the executor works with: a call, its outcome, and the ways a call can end.

Every tool_use the model sends becomes a `ToolCall` and ends as exactly one
`ToolCallOutcome`, whose `block` is the `tool_result` the model receives. An outcome that is
an error says at which lifecycle stage it failed (`Stage`), who denied it (`denied_by`), or
why it was cancelled (`CancelReason`), so the UI can tell "denied" from "crashed" from
"cancelled".

Outcomes and updates are built for every call: they are values by convention, not `frozen`
(which would triple what they cost to build; see bench/ executor_overhead_us).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import ValidationError

from ..access.decision import DecidedBy
from ..access.sandbox_policy import SandboxKind
from ..events import CancelReason, Outcome, SavedResult, Stage
from ..tool import ContextModifier, ToolResultBlock, shorten

if TYPE_CHECKING:
    from ..results import PersistedResult
    from ..tool import AnyTool, ToolContext, ToolPool


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool_use block: its id, the tool name the model used, and the raw input."""

    id: str
    name: str
    input: Any


@dataclass(slots=True)
class ToolCallOutcome:
    call: ToolCall
    block: ToolResultBlock
    failed_stage: Stage | None = None
    cancelled: CancelReason | None = None
    new_messages: tuple[Any, ...] = ()
    context_modifier: ContextModifier | None = None
    additional_context: tuple[str, ...] = ()
    """Extra text for the model from hooks, sent alongside the tool_result."""
    prevent_continuation: bool = False
    stop_reason: str | None = None
    persisted: PersistedResult | None = None
    saved: SavedResult | None = None
    """Where the full output is, if it was saved: by the engine (`persisted`) or the tool."""
    data: Any = None
    """The tool's own result (`ToolResult.data`), for front ends: an edit's diff, say."""
    sandbox: SandboxKind | None = None
    """For a command that ran: the sandbox it ran in ("none": outside)."""
    denied_by: DecidedBy | None = None
    """For a call that was not allowed to run: who said no (`user`: the person)."""
    waited_s: float = 0.0
    """Seconds the call waited for a person's answer (not part of its own duration)."""

    @property
    def tool_use_id(self) -> str:
        return self.call.id

    @property
    def is_error(self) -> bool:
        return bool(self.block.get("is_error", False))

    @property
    def outcome(self) -> Outcome:
        """How the call ended, for a call that was not cancelled."""
        if self.denied_by is not None:
            return "denied"
        return "failed" if self.is_error else "succeeded"


@dataclass(frozen=True, slots=True)
class ProgressUpdate:
    tool_use_id: str
    tool_name: str
    data: Any


@dataclass(slots=True)
class ResultUpdate:
    outcome: ToolCallOutcome
    context: ToolContext
    """The context after every modifier due by now; later calls of the turn use it."""


ExecutorUpdate = ProgressUpdate | ResultUpdate


def error_block(tool_use_id: str, message: str) -> ToolResultBlock:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": f"<tool_use_error>{message}</tool_use_error>",
        "is_error": True,
    }


def error_outcome(call: ToolCall, stage: Stage, message: str) -> ToolCallOutcome:
    return ToolCallOutcome(call, error_block(call.id, message), failed_stage=stage)


def denied_outcome(call: ToolCall, decided_by: DecidedBy, message: str) -> ToolCallOutcome:
    """A call that did not run because it was not allowed to: the model gets an error
    result (it must not assume the call ran), people read "denied", not "failed"."""
    outcome = error_outcome(call, "permission", message)
    outcome.denied_by = decided_by
    return outcome


CANCEL_MESSAGES: dict[CancelReason, str] = {
    "sibling_error": (
        "Cancelled: a sibling command failed ({sibling}), so this call was not completed. "
        "Fix that failure first, then run this again if it is still needed."
    ),
    "user_interrupted": (
        "Cancelled: the user interrupted, so this call was not completed and nothing it would "
        "have done can be assumed done. Wait for the user's next instruction."
    ),
    "streaming_fallback": (
        "Cancelled: the response stream failed and is being retried, so this call did not "
        "run to completion."
    ),
    "cut_off": (
        "This call was not run: the response hit the output token limit (max_tokens) while "
        "its input was being written, so the input is incomplete. Make the call again with "
        "the complete input; if it is large, split the work into smaller calls."
    ),
}


def cancel_message(reason: CancelReason, sibling: str | None = None) -> str:
    return CANCEL_MESSAGES[reason].format(sibling=sibling or "another command")


def cancelled_outcome(call: ToolCall, reason: CancelReason, message: str) -> ToolCallOutcome:
    return ToolCallOutcome(call, error_block(call.id, message), cancelled=reason)


class Classified(NamedTuple):
    """A call looked up and schema-checked once, before it is scheduled."""

    tool: AnyTool | None
    parsed: Any
    """The validated input model, or None when the input failed its schema."""
    concurrency_safe: bool


def classify(call: ToolCall, tools: ToolPool | None) -> Classified:
    """Look the tool up and decide whether the call may run beside others.

    Fails closed: an unknown tool, input that fails its schema, or an `is_concurrency_safe`
    that raises all mean "not safe", so the call runs alone.
    """
    tool = tools.find(call.name) if tools is not None else None
    if tool is None:
        return Classified(None, None, False)
    try:
        parsed = tool.parse_input(call.input)
    except (ValidationError, ValueError, TypeError):
        return Classified(tool, None, False)
    try:
        safe = bool(tool.is_concurrency_safe(parsed))
    except Exception:
        safe = False
    return Classified(tool, parsed, safe)


def describe_call(tool: AnyTool | None, call: ToolCall, parsed: Any) -> str:
    """`Bash(npm test)`: how a call is named in messages to the model and the user."""
    if tool is not None and parsed is not None:
        try:
            return f"{tool.name}({tool.summarize_input(parsed)})"
        except Exception:
            pass
    return call.name


def tool_event_fields(
    tool_use_id: str, tool_name: str, batch_id: str, parent_tool_use_id: str | None
) -> dict[str, Any]:
    """The fields every event about one call carries (both executor modules emit them)."""
    return {
        "tool_use_id": tool_use_id,
        "tool_name": tool_name,
        "batch_id": batch_id,
        "parent_tool_use_id": parent_tool_use_id,
    }


def call_summary(tool: Any, parsed: Any, raw_input: Any) -> str:
    """One line for people about a call: the tool's own summary of its input, or the raw
    input shortened when the tool cannot give one."""
    if tool is not None and parsed is not None:
        try:
            return str(tool.summarize_input(parsed))
        except Exception:
            pass
    return shorten(repr(raw_input), 80)
