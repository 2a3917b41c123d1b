"""What the engine asks of its front end, and the closed answers it accepts.

The engine never calls the UI. When it needs a person (a call that asks for permission), it
awaits a port: the TUI answers through a modal screen, the headless runner by policy, a test
by script. A port that fails or is missing counts as "no": nothing runs that nobody allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .permissions.decision import DecidedBy


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    tool_use_id: str
    tool_name: str
    input: Mapping[str, Any]
    summary: str
    message: str
    """Why it asks, in words."""
    decided_by: DecidedBy
    suggestions: tuple[str, ...] = ()
    agent_label: str | None = None
    """For a sub-agent's call: which sub-agent asks."""


@dataclass(frozen=True, slots=True)
class Approve:
    scope: Literal["once", "session", "always"] = "once"
    rule: str | None = None
    """For session and always: the rule to keep (one of the request's suggestions, or edited)."""
    updated_input: Mapping[str, Any] | None = None
    """The user may change the input before approving (an edited command, say)."""


@dataclass(frozen=True, slots=True)
class Reject:
    feedback: str | None = None
    """What the user wants the agent to do instead; sent to the model."""


PermissionAnswer = Approve | Reject


class PermissionPort(Protocol):
    async def request_permission(self, request: PermissionRequest) -> PermissionAnswer: ...
