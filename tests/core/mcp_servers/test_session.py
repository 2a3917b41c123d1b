"""MCP servers in a whole session: configured in `.mcp.json`, started by trust, offered to
the model from the first prompt, written to the transcript, stopped with the session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import EventRecorder, McpServerChanged, ToolCompleted
from core.ports import Approve, PermissionRequest

from .helpers import FIXTURE

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


class Yes:
    def __init__(self) -> None:
        self.asked: list[PermissionRequest] = []

    async def request_permission(self, request: PermissionRequest) -> Approve:
        self.asked.append(request)
        return Approve()


def project_with_servers(tmp_path: Path, **servers: str) -> Path:
    """A project whose `.mcp.json` runs the fixture server once per name, in that manner."""
    import sys

    project = tmp_path / "project"
    project.mkdir()
    config = {
        "mcpServers": {
            name: {"command": sys.executable, "args": [str(FIXTURE), manner]}
            for name, manner in servers.items()
        }
    }
    (project / ".mcp.json").write_text(json.dumps(config, indent=2))
    return project


def scenario_calling(tmp_path: Path, name: str, arguments: dict) -> Path:
    script = {
        "name": "mcp",
        "description": "one MCP call",
        "workspace": "cwd",
        "turns": [
            [{"type": "tool_use", "name": name, "input": arguments}],
            [{"type": "text", "text": "Done."}],
        ],
    }
    path = tmp_path / "mcp-scenario.json"
    path.write_text(json.dumps(script))
    return path


async def test_a_trusted_project_s_servers_are_the_model_s_tools_from_the_first_prompt(
    tmp_path: Path,
) -> None:
    project = project_with_servers(tmp_path, fx="normal", broken="exit")
    scenario = scenario_calling(tmp_path, "mcp__fx__echo", {"text": "hello from the server"})
    options = SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    events = EventRecorder()
    port = Yes()
    live = await open_session(
        prepare_session(options), sink=events, trusted=True, permission_port=port
    )
    try:
        await live.send("go")
        assert "mcp__fx__echo" in live.tool_names
        assert not any(name.startswith("mcp__broken") for name in live.tool_names)
    finally:
        await live.close()
    (completed,) = [e for e in events.events if isinstance(e, ToolCompleted)]
    assert completed.content == "hello from the server" and not completed.is_error
    assert [r.tool_name for r in port.asked] == ["mcp__fx__echo"]
    changes = [e for e in events.events if isinstance(e, McpServerChanged)]
    assert [(e.server, e.state) for e in changes if e.server == "fx"] == [
        ("fx", "connecting"),
        ("fx", "ready"),
        ("fx", "closed"),
    ]
    # Why the broken server failed is in the session's transcript, in its own words.
    transcript = live.session.transcript_path.read_text()
    failed = [
        json.loads(line)
        for line in transcript.splitlines()
        if '"mcp_server"' in line and '"failed"' in line
    ]
    assert failed and "cannot find its configuration" in failed[0]["detail"]


async def test_an_untrusted_project_s_servers_do_not_start(tmp_path: Path) -> None:
    project = project_with_servers(tmp_path, fx="normal")
    scenario = scenario_calling(tmp_path, "mcp__fx__echo", {"text": "should not run"})
    options = SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    events = EventRecorder()
    live = await open_session(
        prepare_session(options), sink=events, trusted=False, permission_port=Yes()
    )
    try:
        await live.send("go")
    finally:
        await live.close()
    assert any("fx" in note and "not trusted" in note for note in live.notes)
    skipped = [e for e in events.events if isinstance(e, McpServerChanged)]
    assert [(e.server, e.state) for e in skipped] == [("fx", "skipped")]
    (completed,) = [e for e in events.events if isinstance(e, ToolCompleted)]
    assert completed.is_error and "should not run" not in str(completed.content)


async def test_the_demo_s_sample_project_brings_its_own_server(tmp_path: Path) -> None:
    options = SessionOptions(cwd=tmp_path, demo=True, scenario="default", demo_speed=0)
    prepared = prepare_session(options)
    assert prepared.previously_trusted  # proctor's own sample, copied for the demo
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        await live.offer_mcp_tools()
        assert {"mcp__changelog__add_entry", "mcp__changelog__list_entries"} <= set(live.tool_names)
    finally:
        await live.close()
