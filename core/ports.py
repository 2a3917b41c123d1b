"""What the engine asks of its front end, and the closed answers it accepts.

The engine never calls the UI. When it needs a person (a call that asks for permission), it
awaits a port: the TUI answers through a modal screen, the headless runner by policy, a test
by script. A port that fails or is missing counts as "no": nothing runs that nobody allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from .access.context import PermissionMode
from .access.decision import DecidedBy


@dataclass(frozen=True, slots=True)
class ChangePreview:
    """What a file edit would do, worked out by the tool before anyone is asked: a short
    note ("new file, 3 lines") and a unified diff of the file as it would be."""

    note: str
    lines: tuple[str, ...]
    path: str = ""
    """The file, as people read it (relative to the project when inside it)."""


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
    sandbox: str | None = None
    """For a command: how it will run if approved, in words ("outside the sandbox")."""
    risk: Literal["medium", "high"] = "medium"
    """How much the call may do beyond the ordinary (the decision's own `risk`)."""
    preview: ChangePreview | None = None
    """For a file edit: the diff it would make, read by the engine (never by the UI)."""
    command: str | None = None
    """For a call that runs a shell command (its rule target is a command): the command."""


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


@dataclass(frozen=True, slots=True)
class QuestionOption:
    label: str
    description: str = ""


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    header: str
    """A short tag for the question (a few words), shown as its title."""
    options: tuple[QuestionOption, ...]
    multi_select: bool = False


@dataclass(frozen=True, slots=True)
class QuestionRequest:
    tool_use_id: str
    questions: tuple[Question, ...]
    agent_label: str | None = None


@dataclass(frozen=True, slots=True)
class Answers:
    answers: Mapping[str, str]
    """Question text → the chosen label (labels joined with ", " for multi-select), or the
    user's own words when none of the options fit."""


@dataclass(frozen=True, slots=True)
class AllowedPrompt:
    """A kind of action a plan says it will need ("run tests"), granted when it is approved."""

    tool: str
    prompt: str


@dataclass(frozen=True, slots=True)
class PlanRequest:
    tool_use_id: str
    plan: str
    plan_path: Path
    allowed_prompts: tuple[AllowedPrompt, ...] = ()
    agent_label: str | None = None


@dataclass(frozen=True, slots=True)
class PlanApproved:
    mode: PermissionMode = "default"
    """The mode to continue in: acceptEdits (edits run) or default (each edit asks)."""


@dataclass(frozen=True, slots=True)
class KeepPlanning:
    feedback: str = ""


PlanAnswer = PlanApproved | KeepPlanning


class UserPort(Protocol):
    """Questions only a person can answer. None in ToolOptions means nobody is there."""

    async def ask_questions(self, request: QuestionRequest) -> Answers | None:
        """The answers, or None if the user dismissed the questions."""
        ...

    async def review_plan(self, request: PlanRequest) -> PlanAnswer: ...
