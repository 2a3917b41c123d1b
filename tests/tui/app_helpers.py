"""Driving the real app on a scripted model, as a person would, for the Pilot tests.

Each test writes a small scenario (the offline demo model's script) for a scratch project,
starts the real app on it (real engine, real tools, real files) and waits for what the
person would wait for. Waiting polls a condition with short pauses, bounded generously:
real subprocesses take real time, and a shared machine may be slow.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from core.agent.live import SessionOptions, prepare_session
from core.events import OutputProgress
from tui.app import LaunchOptions, ProctorApp

SIZE = (120, 40)


def write_scenario(project: Path, turns: Sequence[Any], prompt: str = "go") -> Path:
    path = project / ".scenario.json"
    path.write_text(
        json.dumps(
            {
                "name": "test",
                "description": "a test's script",
                "prompt": prompt,
                "workspace": "cwd",
                "turns": list(turns),
            }
        )
    )
    return path


def make_app(
    project: Path,
    turns: Sequence[Any],
    *,
    prompt: str | None = "go",
    allow: Sequence[str] = (),
    mode: Any = None,
    trust: bool = True,
    allow_bypass: bool = False,
) -> ProctorApp:
    scenario = write_scenario(project, turns, prompt or "go")
    prepared = prepare_session(
        SessionOptions(
            cwd=project,
            demo=True,
            scenario=str(scenario),
            demo_speed=0,
            allow=tuple(allow),
            mode=mode,
            allow_bypass=allow_bypass,
        )
    )
    return ProctorApp(LaunchOptions(prepared, trust=trust, first_prompt=prompt))


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


async def until(pilot: Pilot[Any], condition: Callable[[], object], what: str = "") -> None:
    """Let the app run until `condition()` holds (at most about 30 s)."""
    for _ in range(1500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"gave up waiting for {what or condition}")


def turn_over(app: ProctorApp) -> bool:
    turn = app.book.current_turn
    return turn is not None and turn.finished and app.bridge.pending == 0


def output(text: str) -> OutputProgress:
    """A running command's progress, as Bash reports it."""
    return OutputProgress(
        text=text, total_bytes=len(text), elapsed_s=0.0, spool=Path("/tmp/spool.txt")
    )
