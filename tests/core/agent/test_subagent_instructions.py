"""A sub-agent's own find of a subdirectory's instructions is shown under its Task call:
headless (text and stream-json), and kept by the transcript for a resumed session."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from core.agent import scenario as scenarios
from core.agent.events import InstructionsJoined
from core.agent.headless import HeadlessOptions, run_headless
from core.agent.scenario import parse_scenario
from core.agent.transcript_replay import past_events
from core.events import SubAgentEvent
from core.trust import trust

JOINED = "instructions from lib/AGENTS.md now apply (found reading lib/gen.py)"


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-user"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "lib").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "CLAUDE.md").write_text("Run `make check`.\n")
    (root / "lib" / "AGENTS.md").write_text("lib/ is generated: never edit it by hand.\n")
    (root / "lib" / "gen.py").write_text("x = 1\n")
    (root / ".proctor").mkdir()
    (root / ".proctor" / "settings.json").write_text('{"permissions": {"allow": ["Read", "Task"]}}')
    trust(root)
    return root


def sub_agent_script() -> dict[str, Any]:
    read = {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/lib/gen.py"}}
    task = {
        "type": "tool_use",
        "name": "Task",
        "input": {"description": "look", "prompt": "Read lib.", "subagent_type": "Explore"},
        "agent_turns": [[read], [{"type": "text", "text": "lib is generated."}]],
    }
    return {
        "name": "t",
        "prompt": "look at lib",
        "workspace": "cwd",
        "turns": [[task], [{"type": "text", "text": "done"}]],
    }


async def run(project: Path, monkeypatch: pytest.MonkeyPatch, output_format: str) -> str:
    script = sub_agent_script()
    monkeypatch.setattr(scenarios, "load_scenario", lambda name: parse_scenario(json.dumps(script)))
    screen = io.StringIO()
    monkeypatch.setattr(sys, "stderr", screen)
    options = HeadlessOptions(
        prompt=None,
        cwd=project,
        output_format=output_format,  # type: ignore[arg-type]
        demo=True,
        scenario="t",
        demo_speed=0.0,
    )
    assert await run_headless(options, screen) == 0
    return screen.getvalue()


async def test_headless_text_says_it_under_the_task_line(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = (await run(project, monkeypatch, "text")).splitlines()
    task = next(i for i, line in enumerate(lines) if line.startswith("  Task("))
    under = lines[task + 1 :]
    assert f"    {JOINED}" in under
    # Said under the Task, not as the main agent's own notice.
    assert f"proctor: {JOINED}" not in lines


async def test_stream_json_and_the_transcript_keep_it_as_the_sub_agents(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    said = await run(project, monkeypatch, "stream-json")
    records = [json.loads(line) for line in said.splitlines() if line.startswith("{")]
    task_id = next(
        b["id"]
        for r in records
        if r.get("type") == "assistant"
        for b in r["message"]["content"]
        if b.get("name") == "Task"
    )
    [joined] = [r for r in records if r.get("event_kind") == "instructions_joined"]
    assert joined["kind"] == "subagent" and joined["agent_id"] == task_id
    assert joined["event"]["paths"] == [str(project / "lib" / "AGENTS.md")]
    assert joined["event"]["found_by"] == str(project / "lib" / "gen.py")
    # A resumed session draws it again, under the same Task.
    [transcript] = list((project.parent / "data").rglob("transcript.jsonl"))
    from core.agent.transcript import Transcript

    replayed = past_events(Transcript(transcript).records())
    again = [
        e
        for e in replayed.events
        if isinstance(e, SubAgentEvent) and isinstance(e.event, InstructionsJoined)
    ]
    assert [(e.agent_id, e.event.describe()) for e in again] == [(task_id, JOINED)]
