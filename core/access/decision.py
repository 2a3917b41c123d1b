"""Closed result types of the decision chain.

A decision is one of three values, `Allow`, `Ask` or `Deny`, and always says what decided it
(`DecidedBy`: a rule and its file, a hook, the mode, the tool's own check, the user, ...), so
that "why was this allowed?" has an answer in the UI, in `proctor check` and in the audit log.

A decision is made for every call, so `Allow`, `Ask` and `Deny` are plain slotted dataclasses:
treat them as values (`frozen` would triple what they cost to build).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .sandbox_policy import SandboxPolicy

DeciderKind = Literal[
    "rule", "hook", "mode", "tool", "user", "analysis", "sandbox", "default", "skill"
]


@dataclass(frozen=True, slots=True)
class DecidedBy:
    kind: DeciderKind
    detail: str
    """In words: `the deny rule Bash(rm:*) in ~/.config/proctor/settings.json`, `plan mode`."""


BY_BYPASS = DecidedBy("mode", "bypass permissions mode")
BY_READ_ONLY = DecidedBy("mode", "a read-only call inside the working directories")
BY_ACCEPT_EDITS = DecidedBy("mode", "accept edits mode (inside the working directories)")
"""The mode's own allows, named once: the sandbox step tells them apart by these."""


Risk = Literal["medium", "high"]


@dataclass(slots=True)
class Allow:
    decided_by: DecidedBy
    updated_input: Mapping[str, Any] | None = None
    sandbox: SandboxPolicy | None = None
    """How a command runs (core/permissions/sandboxing.py); None for tools that run none."""
    behavior: Literal["allow"] = "allow"


@dataclass(slots=True)
class Ask:
    decided_by: DecidedBy
    message: str
    """Why the user is asked, shown in the dialog."""
    suggestions: tuple[str, ...] = ()
    """Rules that would allow this call, offered as "don't ask again"."""
    updated_input: Mapping[str, Any] | None = None
    sandbox: SandboxPolicy | None = None
    """How the command will run if the user says yes."""
    risk: Risk = "medium"
    """"high" when the call reaches outside the project, touches a protected path, removes
    what may be critical, leaves the sandbox, or could not be read exactly; set where the
    decision is made, so no front end has to guess it from the message."""
    behavior: Literal["ask"] = "ask"


@dataclass(slots=True)
class Deny:
    decided_by: DecidedBy
    message: str
    """Told to the model: what was refused and, when it helps, what to do instead."""
    behavior: Literal["deny"] = "deny"


PermissionDecision = Allow | Ask | Deny


BY_NOBODY = DecidedBy("default", "nobody was there to approve it")


def nobody_to_answer(tool_name: str, asked: Ask) -> Deny:
    """What a call that would ask becomes when nobody can answer (a headless run, a
    background agent): refused, saying what it would have asked."""
    return Deny(
        BY_NOBODY,
        f"{tool_name} needs approval ({asked.message}) and nobody is here to give it, "
        "so it was not run.",
    )


def undecided(tool_name: str, error: BaseException) -> Deny:
    """A call whose permission check raised: refused (fail closed), naming the failure, so the
    chain's audit record and the executor's fallback say the same thing."""
    return Deny(
        DecidedBy("default", f"the permission check failed: {type(error).__name__}: {error}"),
        f"Permission for {tool_name} could not be decided ({error}), so it was not run.",
    )
