"""Hooks around a tool call: their outcomes as closed types, and the runner interface.

The lifecycle calls `pre_tool_use` before the permission decision and `post_tool_use` (or
`post_tool_use_failure`) after the call. What a hook may do is fixed here: decide allow, deny
or ask (an allow never beats a deny or ask rule: the chain checks the rules after it), replace
the input, add context for the model, show a message to the user, or stop the agent after this
call. A hook that crashes is the runner's problem to report as a message, not the call's.

The runner for command hooks from settings files is `core/hook_runner.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, get_args

HookPermission = Literal["allow", "deny", "ask"]
HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SessionStart",
    "Stop",
    "PreCompact",
]
HOOK_EVENTS: tuple[HookEvent, ...] = get_args(HookEvent)


@dataclass(frozen=True, slots=True)
class HookCall:
    """What a hook is told about the call."""

    tool_name: str
    tool_input: Mapping[str, Any]
    tool_use_id: str


@dataclass(frozen=True, slots=True)
class PreToolUseOutcome:
    permission: HookPermission | None = None
    reason: str | None = None
    """Why: given to the model on deny, shown to the user on ask."""
    source: str = "hook"
    """Which hook decided (its command), for the audit trail."""
    updated_input: Mapping[str, Any] | None = None
    additional_context: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    """Shown to the user (systemMessage, non-blocking errors)."""
    prevent_continuation: bool = False
    stop_reason: str | None = None


@dataclass(frozen=True, slots=True)
class PostToolUseOutcome:
    additional_context: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    prevent_continuation: bool = False
    stop_reason: str | None = None
    updated_output: Any = None
    """MCP tools only: replaces the tool's output before it reaches the model."""


NO_PRE_OUTCOME = PreToolUseOutcome()
NO_POST_OUTCOME = PostToolUseOutcome()


class HookRunner(Protocol):
    """Runs the configured hooks. A session without hooks has no runner at all (None)."""

    async def pre_tool_use(self, call: HookCall) -> PreToolUseOutcome: ...

    async def post_tool_use(self, call: HookCall, response: Any) -> PostToolUseOutcome: ...

    async def post_tool_use_failure(self, call: HookCall, error: str) -> PostToolUseOutcome: ...


@dataclass(frozen=True, slots=True)
class EventHookOutcome:
    """What UserPromptSubmit, SessionStart and Stop hooks said.

    `blocked`: UserPromptSubmit: the prompt is not sent (reason shown to the user); Stop: the
    agent does not stop yet (reason given to the model). SessionStart cannot block.
    """

    blocked: bool = False
    reason: str | None = None
    additional_context: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()
    prevent_continuation: bool = False
    stop_reason: str | None = None


NO_EVENT_OUTCOME = EventHookOutcome()
