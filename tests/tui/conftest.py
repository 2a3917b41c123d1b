"""Pilot presses keys the moment a dialog appears; a person cannot. The dialogs refuse
approvals for half a second after they appear (so a key typed for the prompt cannot approve
anything), which these tests switch off, except the one test that checks the guard.

The app also freezes the garbage collector's view of the process once its session opens;
each test gets a process that is not frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

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


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions, settings and home in the test's own folder, for the tests that run the
    whole app (their modules use it with `pytestmark`)."""
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
