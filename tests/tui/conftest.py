"""Pilot presses keys the moment a dialog appears; a person cannot. The dialogs refuse
approvals for half a second after they appear (so a key typed for the prompt cannot approve
anything), which these tests switch off, except the one test that checks the guard.

The app also freezes the garbage collector's view of the process once its session opens;
each test gets a process that is not frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tui.screens.permission import PermissionScreen
from tui.screens.plan import PlanScreen


@pytest.fixture(autouse=True)
def approvals_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PermissionScreen, "approve_delay_s", 0.0)
    monkeypatch.setattr(PlanScreen, "approve_delay_s", 0.0)


@pytest.fixture(autouse=True)
def collector_unfrozen() -> Iterator[None]:
    """The app freezes what is alive once its session opens (tui/collector.py), for the whole
    process: in a test run that would keep every earlier test's leftovers for good."""
    yield
    gc.unfreeze()
    gc.enable()
