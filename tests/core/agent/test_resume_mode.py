"""Resuming carries on in the mode a session was left in, but never in a mode this run has
not made available: bypassPermissions left on in an earlier run (started with --allow-bypass)
does not come back without the flag, and a widened mode that does come back is said."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from engine_helpers import HANG_BOUND_S

from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import EventRecorder


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


def two_turns(project: Path, outside: Path) -> Path:
    """A hello, then a command that writes outside the project."""
    touch = {"type": "tool_use", "name": "Bash", "input": {"command": f"touch {outside}"}}
    scenario = project / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "two",
                "description": "a hello, then a write outside",
                "workspace": "cwd",
                "turns": [
                    [{"type": "text", "text": "Hello."}],
                    [touch],
                    [{"type": "text", "text": "Done."}],
                ],
            }
        )
    )
    return scenario


async def left_in(project: Path, scenario: Path, mode: str) -> str:
    """A first run started with --allow-bypass, where the person switches to `mode`."""
    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, allow_bypass=True
    )
    prepared = prepare_session(options)
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        await asyncio.wait_for(live.send("hi"), HANG_BOUND_S)
        assert live.set_mode(mode) == mode  # type: ignore[arg-type]
    finally:
        await live.close()
    return prepared.session.id


async def test_bypass_left_on_does_not_come_back_without_the_flag(
    tmp_path: Path, isolated_dirs: None
):
    project, outside = tmp_path / "project", tmp_path / "outside.txt"
    project.mkdir()
    scenario = two_turns(project, outside)
    session_id = await left_in(project, scenario, "bypassPermissions")

    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=session_id
    )
    live = await open_session(prepare_session(options), sink=EventRecorder(), trusted=True)
    try:
        assert live.mode == "default"
        assert not live.context.permission_context.bypass_available
        assert any("left in bypassPermissions" in note for note in live.notes)
        await asyncio.wait_for(live.send("go on"), HANG_BOUND_S)  # headless: nobody to ask
    finally:
        await live.close()
    assert not outside.exists()


async def test_bypass_comes_back_when_this_run_allows_it(tmp_path: Path, isolated_dirs: None):
    project = tmp_path / "project"
    project.mkdir()
    scenario = two_turns(project, tmp_path / "outside.txt")
    session_id = await left_in(project, scenario, "bypassPermissions")

    options = SessionOptions(
        cwd=project,
        demo=True,
        scenario=str(scenario),
        demo_speed=0,
        resume=session_id,
        allow_bypass=True,
    )
    live = await open_session(prepare_session(options), sink=EventRecorder(), trusted=True)
    try:
        assert live.mode == "bypassPermissions"
    finally:
        await live.close()


async def test_a_resumed_accept_edits_is_said(tmp_path: Path, isolated_dirs: None):
    project = tmp_path / "project"
    project.mkdir()
    scenario = two_turns(project, tmp_path / "outside.txt")
    session_id = await left_in(project, scenario, "acceptEdits")

    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=session_id
    )
    live = await open_session(prepare_session(options), sink=EventRecorder(), trusted=True)
    try:
        assert live.mode == "acceptEdits"
        assert "resuming in acceptEdits mode, the mode this session was left in" in live.notes
    finally:
        await live.close()
