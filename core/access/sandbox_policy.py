"""The sandbox policies the decision chain chooses and the Bash tool applies.

A closed set of three values, so that every place that shows or applies a policy handles
each one: `ReadOnly` (a command allowed because the analysis judged it read-only), `Workspace`
(allowed by the mode, or by `autoAllowBashIfSandboxed`) and `Unsandboxed` (a person allowed
it: "yes", a session grant, an allow rule; or bypassPermissions). Each says why it was
chosen, in words for the dialog, the queue and the audit log.

This module is vocabulary only (no kernel calls), so the lowest layers may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

SandboxKind = Literal["read-only", "workspace", "none"]


@dataclass(frozen=True, slots=True)
class ReadOnly:
    """No writes anywhere (a private scratch directory aside), no network, reads limited to
    the project, the extra working directories and the system's programs."""

    why: str
    kind: ClassVar[SandboxKind] = "read-only"

    def describe(self) -> str:
        return "in the read-only sandbox (no writes, no network)"


@dataclass(frozen=True, slots=True)
class Workspace:
    """Writes inside the project and the extra working directories, protected paths
    excepted; no network; reads as for `ReadOnly`."""

    why: str
    kind: ClassVar[SandboxKind] = "workspace"

    def describe(self) -> str:
        return "in the workspace sandbox (writes only inside the project, no network)"


@dataclass(frozen=True, slots=True)
class Unsandboxed:
    """Runs as the user runs anything: whatever the user can do, it can."""

    why: str
    judged_read_only: bool = False
    """Allowed only because the analysis judged it read-only (there is no sandbox here):
    it still runs with what can be switched off switched off (a repository's programs)."""
    kind: ClassVar[SandboxKind] = "none"

    def describe(self) -> str:
        return "outside the sandbox"


SandboxPolicy = ReadOnly | Workspace | Unsandboxed
