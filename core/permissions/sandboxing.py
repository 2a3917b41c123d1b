"""Which sandbox a shell command runs in: the last step of the decision chain.

The chain decides whether to ask; this step decides how what runs will run, and the two
travel together on the decision (`Allow.sandbox`, and for an `Ask` the policy a "yes" will
get), so the dialog, the audit log and the Bash tool all see the same policy.

- Allowed because the analysis judged it read-only (any mode but bypass): `ReadOnly`.
- Allowed by the mode's own say (acceptEdits' file commands): `Workspace`.
- Allowed by a person (an allow rule, a hook, "yes", a session grant): outside the sandbox,
  or `Workspace` when `sandbox.sandboxApproved` is set. bypassPermissions: outside.
- It would ask, and `sandbox.autoAllowBashIfSandboxed` is on: it runs in `Workspace`
  without asking, unless a rule, a hook or the tool itself asked (those always ask).
- `dangerously_disable_sandbox` always asks (bypass aside), and is refused when
  `sandbox.allowUnsandboxedCommands` is false.
- A command in `sandbox.excludedCommands` never runs sandboxed, so the analysis alone can no
  longer let it run: it asks.
- No sandbox here: today's behaviour with `Unsandboxed` saying why, unless
  `sandbox.failIfUnavailable`, which refuses every command.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..access.decision import (
    BY_ACCEPT_EDITS,
    BY_BYPASS,
    BY_READ_ONLY,
    Allow,
    Ask,
    DecidedBy,
    Deny,
    PermissionDecision,
)
from ..access.sandbox_policy import ReadOnly, SandboxPolicy, Unsandboxed, Workspace
from ..bash import unwrap
from ..sandbox.support import SandboxSupport
from ..settings.sandbox import SandboxSettings
from .match import command_matches

if TYPE_CHECKING:
    from .call import Call

_LEAVE = DecidedBy("sandbox", "the command asks to run without the sandbox")
_AUTO = DecidedBy("sandbox", "sandbox.autoAllowBashIfSandboxed (it runs in the workspace sandbox)")
_REQUIRED = DecidedBy("sandbox", "sandbox.failIfUnavailable")
_NO_LEAVING = DecidedBy("sandbox", "sandbox.allowUnsandboxedCommands is false")
_PERSON_KINDS = frozenset({"rule", "hook", "tool", "user"})


@dataclass(frozen=True, slots=True)
class SandboxView:
    """What the chain needs to know about the session's sandbox."""

    settings: SandboxSettings
    support: SandboxSupport

    @property
    def on(self) -> bool:
        return self.settings.enabled and self.support.available

    def why_off(self) -> str:
        if not self.settings.enabled:
            return "the sandbox is switched off in settings (sandbox.enabled)"
        return f"no sandbox here: {self.support.problem}"


def choose_sandbox(
    call: Call, decision: PermissionDecision, view: SandboxView | None
) -> PermissionDecision:
    """The decision with the sandbox policy it runs (or would run) under."""
    if not call.tool.sandboxable:
        return decision
    if isinstance(decision, Deny):
        return _unasked(call, decision, view)
    if view is None:
        return _with(decision, Unsandboxed("this session has no sandbox"))
    settings, mode = view.settings, call.permissions.mode
    if settings.enabled and settings.fail_if_unavailable and not view.support.available:
        return Deny(
            _REQUIRED,
            "Commands cannot run here: the settings require the sandbox "
            f"(sandbox.failIfUnavailable) and it is unavailable ({view.support.problem}).",
        )
    if not view.on:
        judged = isinstance(decision, Allow) and decision.decided_by == BY_READ_ONLY
        return _with(decision, Unsandboxed(view.why_off(), judged_read_only=judged))
    if _leaves_sandbox(call.input):
        return _leaving(decision, view, mode)
    excluded = _excluded(call, settings)
    if isinstance(decision, Allow):
        return _allowed(decision, settings, excluded, call)
    if (
        settings.auto_allow_bash_if_sandboxed
        and mode not in ("plan", "bypassPermissions")
        and not excluded
        and decision.decided_by.kind not in _PERSON_KINDS
    ):
        return Allow(_AUTO, decision.updated_input, sandbox=Workspace(_AUTO.detail))
    return _with(decision, _approved(settings, excluded, "once a person says yes"))


def _unasked(call: Call, decision: Deny, view: SandboxView | None) -> PermissionDecision:
    """dontAsk refuses what would ask; with autoAllowBashIfSandboxed nothing would have asked
    (an unattended run that trusts the fence), so it runs in the workspace sandbox."""
    if (
        view is None
        or not view.on
        or not view.settings.auto_allow_bash_if_sandboxed
        or decision.decided_by.kind != "mode"
        or call.permissions.mode != "dontAsk"
        or _leaves_sandbox(call.input)
        or _excluded(call, view.settings) is not None
    ):
        return decision
    return Allow(_AUTO, sandbox=Workspace(_AUTO.detail))


def _allowed(
    decision: Allow, settings: SandboxSettings, excluded: str | None, call: Call
) -> PermissionDecision:
    by = decision.decided_by
    if by == BY_BYPASS:
        return _with(decision, Unsandboxed("bypass permissions mode"))
    if by.kind in _PERSON_KINDS:
        return _with(decision, _approved(settings, excluded, f"allowed by {by.detail}"))
    if excluded is not None:
        return Ask(
            DecidedBy("sandbox", f"{excluded} is in sandbox.excludedCommands"),
            f"`{excluded}` never runs in the sandbox (sandbox.excludedCommands), so it is "
            "asked about rather than run on the analysis alone.",
            sandbox=Unsandboxed("approved, and excluded from the sandbox"),
        )
    if by == BY_ACCEPT_EDITS:
        return _with(decision, Workspace("accept edits mode"))
    # The analysis judged it read-only (or anything else nobody approved): fenced hardest.
    return _with(decision, ReadOnly("judged read-only by the analysis"))


def _leaving(decision: PermissionDecision, view: SandboxView, mode: str) -> PermissionDecision:
    if not view.settings.allow_unsandboxed_commands:
        return Deny(
            _NO_LEAVING,
            "Running a command outside the sandbox is turned off here "
            "(sandbox.allowUnsandboxedCommands is false). Run it without "
            "dangerously_disable_sandbox; if the sandbox blocks it, tell the user.",
        )
    if mode == "bypassPermissions":
        return _with(decision, Unsandboxed("bypass permissions mode"))
    why = "It asks to run WITHOUT the sandbox (dangerously_disable_sandbox), which always asks."
    if isinstance(decision, Ask):
        why = f"{decision.message} {why}"
    suggestions = decision.suggestions if isinstance(decision, Ask) else ()
    return Ask(
        _LEAVE,
        why,
        suggestions=suggestions,
        sandbox=Unsandboxed("approved to leave the sandbox"),
        risk="high",
    )


def _approved(settings: SandboxSettings, excluded: str | None, how: str) -> SandboxPolicy:
    """What a person approved runs as they approved it."""
    if excluded is not None:
        return Unsandboxed(f"{how}; {excluded} is in sandbox.excludedCommands")
    if settings.sandbox_approved:
        return Workspace(f"{how}; sandbox.sandboxApproved keeps approved commands sandboxed")
    return Unsandboxed(how)


def _with(decision: PermissionDecision, policy: SandboxPolicy) -> PermissionDecision:
    if isinstance(decision, Deny):
        return decision
    return replace(decision, sandbox=policy)


def _leaves_sandbox(input: Any) -> bool:
    return bool(getattr(input, "dangerously_disable_sandbox", False))


def _excluded(call: Call, settings: SandboxSettings) -> str | None:
    """The part of the command that `sandbox.excludedCommands` names, if any."""
    if not settings.excluded_commands:
        return None
    analysis = call.analysis
    texts: list[str] = []
    if analysis is not None:
        for command in analysis.commands:
            if command.argv:
                texts.append(" ".join(command.argv))
                texts.append(" ".join(unwrap(command.argv)))  # `sudo docker`, `env X=1 npm`
            else:
                texts.append(command.text)
    elif hasattr(call.input, "command"):
        texts.append(str(call.input.command))
    for text in texts:
        for pattern in settings.excluded_commands:
            if command_matches(pattern, text) or command_matches(f"{pattern}:*", text):
                return text.split(" ", 1)[0] if " " not in pattern else pattern
    if analysis is not None and not analysis.ok:
        # Parts that could not be told may be anything, an excluded command included.
        for pattern in settings.excluded_commands:
            if pattern.split(" ", 1)[0] in call.input.command:
                return pattern
    return None
