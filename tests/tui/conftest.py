"""Pilot presses keys the moment a dialog appears; a person cannot. The dialogs refuse
approvals for half a second after they appear (so a key typed for the prompt cannot approve
anything), which these tests switch off, except the one test that checks the guard."""

from __future__ import annotations

import pytest

from tui.screens.permission import PermissionScreen
from tui.screens.plan import PlanScreen


@pytest.fixture(autouse=True)
def approvals_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(PermissionScreen, "approve_delay_s", 0.0)
    monkeypatch.setattr(PlanScreen, "approve_delay_s", 0.0)
