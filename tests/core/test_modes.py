"""Permission modes: the mode key's cycle, plan mode's memory, bypass availability."""

from __future__ import annotations

import pytest

from core.access.context import ToolPermissionContext
from core.access.modes import (
    MODE_LABELS,
    ModeUnavailable,
    cycle_mode,
    next_mode,
    parse_cycle,
    parse_mode,
    switch_mode,
)


def walk(context: ToolPermissionContext, steps: int, cycle=None) -> list[str]:
    seen = []
    for _ in range(steps):
        context = cycle_mode(context) if cycle is None else cycle_mode(context, cycle)
        seen.append(context.mode)
    return seen


def test_the_key_cycles_default_accept_edits_plan_and_back():
    assert walk(ToolPermissionContext(), 4) == ["acceptEdits", "plan", "default", "acceptEdits"]


def test_bypass_joins_the_cycle_only_when_available():
    context = ToolPermissionContext(bypass_available=True)
    assert walk(context, 4) == ["acceptEdits", "plan", "bypassPermissions", "default"]


def test_bypass_cannot_be_entered_unless_the_session_started_with_it():
    with pytest.raises(ModeUnavailable, match="--allow-bypass"):
        switch_mode(ToolPermissionContext(), "bypassPermissions")


def test_plan_remembers_the_mode_it_came_from_and_leaving_forgets_it():
    context = switch_mode(ToolPermissionContext(mode="acceptEdits"), "plan")
    assert context.mode == "plan" and context.pre_plan_mode == "acceptEdits"
    context = switch_mode(context, "default")
    assert context.pre_plan_mode is None


def test_a_mode_outside_the_cycle_goes_to_the_start_of_it():
    assert next_mode(ToolPermissionContext(mode="dontAsk")) == "default"


def test_settings_may_change_the_cycle():
    cycle = parse_cycle(["default", "plan"])
    assert walk(ToolPermissionContext(), 3, cycle) == ["plan", "default", "plan"]
    with pytest.raises(ValueError, match="at least two"):
        parse_cycle(["plan", "plan"])


def test_mode_names_are_checked_and_every_mode_has_words():
    assert parse_mode("acceptEdits") == "acceptEdits"
    with pytest.raises(ValueError, match="acceptEdits"):
        parse_mode("yolo")
    assert MODE_LABELS["plan"] == "plan mode"
    assert MODE_LABELS["bypassPermissions"] == "bypass permissions"
