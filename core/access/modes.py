"""Permission modes: what each one allows by itself, and how the mode key moves between them.

- default: read-only calls inside the working directories run; everything else asks unless a
  rule allows it.
- acceptEdits: also edits and writes inside the working directories (protected paths
  excepted) and the filesystem commands mkdir, touch, mv, cp, rm, rmdir when every path they
  touch is inside.
- plan: read-only work only; changes are refused with a message asking for a plan (the plan
  file itself stays writable). Entering plan remembers the mode it came from.
- bypassPermissions: everything runs except what deny rules, explicit ask rules or the
  removal of a critical path stop. Reachable only when the session started with it available.
- dontAsk: for unattended runs; anything that would ask is refused instead.

The mode key cycles default → acceptEdits → plan → (bypassPermissions when available) →
default; settings may give another cycle. Modes are values in the permission context, so a
switch is one replacement of that value and the very next decision follows it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .context import PERMISSION_MODES, PermissionMode, ToolPermissionContext

MODE_LABELS: dict[PermissionMode, str] = {
    "default": "default",
    "acceptEdits": "accept edits",
    "plan": "plan mode",
    "bypassPermissions": "bypass permissions",
    "dontAsk": "don't ask",
}

DEFAULT_CYCLE: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")


class ModeUnavailable(ValueError):
    """The mode cannot be entered in this session; the message says why."""


def parse_mode(text: str) -> PermissionMode:
    """A mode by its name (`acceptEdits`); the error lists the valid names."""
    for mode in PERMISSION_MODES:
        if text == mode:
            return mode
    raise ValueError(
        f"unknown permission mode {text!r}; choose one of {', '.join(PERMISSION_MODES)}"
    )


def parse_cycle(names: Sequence[str]) -> tuple[PermissionMode, ...]:
    """A cycle from settings: known modes, no repeats, at least two."""
    cycle: list[PermissionMode] = []
    for name in names:
        mode = parse_mode(name)
        if mode not in cycle:
            cycle.append(mode)
    if len(cycle) < 2:
        raise ValueError("a mode cycle needs at least two different modes")
    return tuple(cycle)


def next_mode(
    context: ToolPermissionContext, cycle: Sequence[PermissionMode] = DEFAULT_CYCLE
) -> PermissionMode:
    """The mode after the current one, skipping bypassPermissions when it is not available.

    From a mode outside the cycle (say dontAsk), the key goes to the cycle's first mode."""
    usable = [m for m in cycle if m != "bypassPermissions" or context.bypass_available]
    if not usable:
        return context.mode
    if context.mode not in usable:
        return usable[0]
    return usable[(usable.index(context.mode) + 1) % len(usable)]


def switch_mode(context: ToolPermissionContext, mode: PermissionMode) -> ToolPermissionContext:
    """The context in `mode`. Entering plan remembers where it came from; leaving it forgets."""
    if mode == "bypassPermissions" and not context.bypass_available:
        raise ModeUnavailable(
            "bypass permissions is only available when the session starts with it "
            "(--permission-mode bypassPermissions or --allow-bypass)"
        )
    if mode == context.mode:
        return context
    if mode == "plan":
        return replace(context, mode="plan", pre_plan_mode=context.mode)
    return replace(context, mode=mode, pre_plan_mode=None)


def cycle_mode(
    context: ToolPermissionContext, cycle: Sequence[PermissionMode] = DEFAULT_CYCLE
) -> ToolPermissionContext:
    """What the mode key does."""
    return switch_mode(context, next_mode(context, cycle))
