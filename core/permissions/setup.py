"""From settings to the permission context a session starts with.

Two things are decided here rather than in the settings reader, because they are about
trust, not about files:

- A project the user has not trusted yet may restrict but never widen: its allow rules, its
  extra directories and a `defaultMode` looser than default are set aside (deny and ask rules
  always apply), with a note saying so. A cloned repository cannot grant itself permissions.
- bypassPermissions is only reachable when the session starts with it
  (`--permission-mode bypassPermissions` or `--allow-bypass`); a `defaultMode` of bypass from
  any settings file without that starts in default mode, with a note. A settings file's
  `disableBypassPermissionsMode: "disable"` takes it away even then, with a note.
- A resumed session carries on in the mode it was left in (`resumed_mode`), said in a note;
  but the mode of an earlier run is no flag of this one: bypassPermissions comes back only
  when this run makes it available, like a `defaultMode` of bypass.
"""

from __future__ import annotations

from pathlib import Path

from ..access.context import PermissionMode, ToolPermissionContext
from ..settings.values import PROJECT_SOURCES, Settings

_WIDENING_MODES = frozenset({"acceptEdits", "bypassPermissions"})


def permission_context_from(
    settings: Settings,
    *,
    mode: PermissionMode | None = None,
    resumed_mode: PermissionMode | None = None,
    allow_bypass: bool = False,
    trusted: bool = True,
    avoid_prompts: bool = False,
    plan_file: Path | None = None,
    protected_files: tuple[Path, ...] = (),
) -> tuple[ToolPermissionContext, tuple[str, ...]]:
    """The starting context, and notes for the user about what was set aside and why.

    `mode` is this run's own choice (--permission-mode); `resumed_mode` the mode a resumed
    session was left in, used when this run chooses none."""
    notes: list[str] = []
    rules = settings.rules
    directories = tuple(
        zip(settings.additional_directories, settings.directory_sources, strict=True)
    )
    default_mode = settings.default_mode
    if not trusted:
        untrusted_allows = [
            r for r in rules if r.behavior == "allow" and r.source in PROJECT_SOURCES
        ]
        if untrusted_allows:
            rules = tuple(r for r in rules if r not in untrusted_allows)
            notes.append(
                f"{_count(len(untrusted_allows), 'allow rule')} from this project's "
                "settings are set aside until you trust the project"
            )
        kept = tuple(d for d in directories if d[1] not in PROJECT_SOURCES)
        if len(kept) != len(directories):
            notes.append(
                "extra working directories from this project's settings are set aside "
                "until you trust the project"
            )
            directories = kept
        if default_mode in _WIDENING_MODES and settings.default_mode_source in PROJECT_SOURCES:
            notes.append(
                f"this project's defaultMode {default_mode} is set aside until you "
                "trust the project"
            )
            default_mode = None
    bypass_available = allow_bypass or mode == "bypassPermissions"
    chosen: PermissionMode = mode or resumed_mode or default_mode or "default"
    resumed = mode is None and resumed_mode is not None
    if resumed and chosen == "bypassPermissions" and not bypass_available:
        notes.append(
            "this session was left in bypassPermissions, which needs --allow-bypass (or "
            "--permission-mode bypassPermissions) in this run too; resuming in default mode"
        )
        chosen = "default"
    elif resumed and chosen != "default":
        notes.append(f"resuming in {chosen} mode, the mode this session was left in")
    if bypass_available and settings.bypass_disabled_in is not None:
        notes.append(
            "bypassPermissions is turned off by disableBypassPermissionsMode in "
            f"{settings.bypass_disabled_in}"
            + ("; starting in default mode" if chosen == "bypassPermissions" else "")
        )
        bypass_available = False
        if chosen == "bypassPermissions":
            chosen = "default"
    if chosen == "bypassPermissions" and not bypass_available:
        notes.append(
            "defaultMode bypassPermissions needs --allow-bypass (or --permission-mode "
            "bypassPermissions); starting in default mode"
        )
        chosen = "default"
    context = ToolPermissionContext(
        mode=chosen,
        additional_working_directories=tuple(d for d, _ in directories),
        rules=rules,
        bypass_available=bypass_available,
        avoid_prompts=avoid_prompts,
        plan_file=plan_file,
        protected_files=protected_files,
    )
    return context, tuple(notes)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
