"""The `sandbox` section of the settings files, merged into one `SandboxSettings`.

The keys are those users already keep for the seeds' system (`enabled`,
`autoAllowBashIfSandboxed`, `excludedCommands`, `allowUnsandboxedCommands`,
`failIfUnavailable`, `filesystem.denyRead/allowWrite/denyWrite`) plus proctor's own
`sandboxApproved` and `filesystem.allowRead`. The settings reader checks types and reports
problems; this module only merges what it read.

Merging follows the rest of the settings: a scalar comes from the highest source that sets
it, lists from every source are kept. A project nobody has trusted yet may make the sandbox
stricter but never looser: its values that would loosen it (switching it off, auto-allowing,
excluding commands, more readable or writable paths) are set aside with a note, as its allow
rules are.

It lives with the settings, not with the kernel fence in `core/sandbox/`: the settings reader
needs its key tables, and only the permission layer and above use the merged value. It takes
the project sources as a parameter because `values.py`, which names them, imports this
module for `SandboxLayer`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SCALAR_KEYS: Mapping[str, str] = {
    "enabled": "enabled",
    "autoAllowBashIfSandboxed": "auto_allow_bash_if_sandboxed",
    "sandboxApproved": "sandbox_approved",
    "allowUnsandboxedCommands": "allow_unsandboxed_commands",
    "failIfUnavailable": "fail_if_unavailable",
}
LIST_KEYS: Mapping[str, str] = {"excludedCommands": "excluded_commands"}
FILESYSTEM_KEYS: Mapping[str, str] = {
    "denyRead": "deny_read",
    "allowRead": "allow_read",
    "allowWrite": "allow_write",
    "denyWrite": "deny_write",
}
UNSUPPORTED_KEYS: Mapping[str, str] = {
    "network": "proctor's sandbox allows no network at all, so there is nothing to configure",
    "enableWeakerNestedSandbox": "proctor's sandbox works nested without weakening",
    "ignoreViolations": "proctor reports every refusal to the model instead",
}

# For a project nobody has trusted: the value of each scalar that makes the sandbox stricter.
_STRICT: Mapping[str, bool] = {
    "enabled": True,
    "auto_allow_bash_if_sandboxed": False,
    "sandbox_approved": True,
    "allow_unsandboxed_commands": False,
    "fail_if_unavailable": True,
}
_LOOSENING_LISTS = ("excluded_commands", "allow_read", "allow_write")


def stricter(name: str) -> bool:
    """The value of the scalar `name` (`allow_unsandboxed_commands`) that fences more."""
    return _STRICT[name]


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    enabled: bool = True
    auto_allow_bash_if_sandboxed: bool = False
    sandbox_approved: bool = False
    allow_unsandboxed_commands: bool = True
    fail_if_unavailable: bool = False
    excluded_commands: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()
    """Paths as written (`~/x`, `/abs`, `rel` from the project; globs allowed)."""
    allow_read: tuple[str, ...] = ()
    allow_write: tuple[str, ...] = ()
    deny_write: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SandboxLayer:
    """What one settings source said, already type-checked, keyed by field name."""

    source: str
    values: Mapping[str, Any]


def merge(
    layers: Iterable[SandboxLayer], *, trusted: bool, project_sources: frozenset[str]
) -> tuple[SandboxSettings, tuple[str, ...]]:
    """Layers highest first. Returns the settings and notes about what was set aside."""
    scalars: dict[str, bool] = {}
    lists: dict[str, list[str]] = {
        name: [] for name in (*LIST_KEYS.values(), *FILESYSTEM_KEYS.values())
    }
    set_aside: list[str] = []
    for layer in layers:
        untrusted = not trusted and layer.source in project_sources
        for name, value in layer.values.items():
            if name in _STRICT:
                if name in scalars:
                    continue
                if untrusted and value != _STRICT[name]:
                    set_aside.append(name)
                    continue
                scalars[name] = value
            elif name in lists:
                if untrusted and name in _LOOSENING_LISTS and value:
                    set_aside.append(name)
                    continue
                lists[name] += [item for item in value if item not in lists[name]]
    notes: tuple[str, ...] = ()
    if set_aside:
        keys = ", ".join(sorted(set(set_aside)))
        notes = (
            f"this project's sandbox settings that loosen it ({keys}) are set aside until "
            "you trust the project",
        )
    fields: dict[str, Any] = {**scalars, **{name: tuple(v) for name, v in lists.items()}}
    settings = SandboxSettings(**fields)
    return settings, notes
