"""A change to acceptEdits while a call waits lets through only what acceptEdits lets through
on its own: ask rules, a hook's ask, a command asking to leave the sandbox, and writes to
protected places (.git, settings, shell start-up files, hook scripts and MCP servers' files,
even ones that do not exist yet) keep their question for the person."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import HANG_BOUND_S, eventually
from test_waiting_asks import HeldPort

from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import EventRecorder
from core.ports import Reject


@pytest.fixture
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


async def waiting_call_after_mode(
    project: Path, call: dict[str, Any], mode: str, settings: dict[str, Any] | None = None
) -> tuple[HeldPort, list[str]]:
    """Run one scenario call; once it asks, switch to `mode`; return the port and the
    questions still open once the change has been decided on (then answered no)."""
    if settings is not None:
        (project / ".proctor").mkdir(exist_ok=True)
        (project / ".proctor" / "settings.json").write_text(json.dumps(settings))
    scenario = project / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "attack",
                "description": "one call",
                "workspace": "cwd",
                "turns": [[{"type": "tool_use", **call}], [{"type": "text", "text": "Done."}]],
            }
        )
    )
    port = HeldPort()
    prepared = prepare_session(
        SessionOptions(
            cwd=project, demo=True, scenario=str(scenario), demo_speed=0, allow_bypass=True
        )
    )
    live = await open_session(prepared, sink=EventRecorder(), trusted=True, permission_port=port)
    try:
        turn = asyncio.create_task(live.send("go"))
        await eventually(lambda: port.open(), "the question")
        assert live.set_mode(mode) == mode  # type: ignore[arg-type]
        await live.services.waiting.decided()  # what the mode change set off
        still_open = port.open()
        for tool_use_id in still_open:
            port.answer(tool_use_id, Reject())
        await asyncio.wait_for(turn, HANG_BOUND_S)
    finally:
        await live.close()
    return port, still_open


HOOK_ASKS = json.dumps(
    {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "ask"}}
)

CASES = {
    "git_config": (
        {"name": "Write", "input": {"file_path": "{workspace}/.git/config", "content": "x"}},
        None,
    ),
    "proctor_settings": (
        {
            "name": "Write",
            "input": {"file_path": "{workspace}/.proctor/settings.json", "content": "{}"},
        },
        None,
    ),
    "bashrc": (
        {"name": "Write", "input": {"file_path": "{workspace}/.bashrc", "content": "x"}},
        None,
    ),
    "ask_rule_write": (
        {"name": "Write", "input": {"file_path": "{workspace}/a.txt", "content": "x"}},
        {"permissions": {"ask": ["Write"]}},
    ),
    "ask_rule_mkdir": (
        {"name": "Bash", "input": {"command": "mkdir newdir"}},
        {"permissions": {"ask": ["Bash(mkdir:*)"]}},
    ),
    "hook_ask": (
        {"name": "Write", "input": {"file_path": "{workspace}/a.txt", "content": "x"}},
        {
            "hooks": {
                "PreToolUse": [
                    {
                        "matcher": "Write",
                        "hooks": [
                            {
                                "type": "command",
                                "command": f"echo '{HOOK_ASKS}'",
                            }
                        ],
                    }
                ]
            }
        },
    ),
    "unsandboxed_mkdir": (
        {"name": "Bash", "input": {"command": "mkdir newdir", "dangerously_disable_sandbox": True}},
        {"sandbox": {"enabled": True}},
    ),
    "hook_script": (
        {"name": "Bash", "input": {"command": "touch guard.sh"}},
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Read", "hooks": [{"type": "command", "command": "./guard.sh"}]}
                ]
            }
        },
    ),
    "mcp_program": (
        {"name": "Bash", "input": {"command": "touch server.py"}},
        {"mcpServers": {"s": {"command": "python3", "args": ["server.py"]}}},
    ),
    "missing_hook_script": (
        {
            "name": "Write",
            "input": {"file_path": "{workspace}/later.sh", "content": "touch /tmp/x"},
        },
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Read", "hooks": [{"type": "command", "command": "sh ./later.sh"}]}
                ]
            }
        },
    ),
    "missing_server_script": (
        {"name": "Write", "input": {"file_path": "{workspace}/srv/main.py", "content": "x"}},
        {"mcpServers": {"s": {"command": "python3", "args": ["srv/main.py"]}}},
    ),
    "remove_the_project": ({"name": "Bash", "input": {"command": "rm -rf ."}}, None),
    "git_hooks_mkdir": ({"name": "Bash", "input": {"command": "mkdir .git/hooks"}}, None),
}


@pytest.mark.parametrize("case", sorted(CASES))
async def test_accept_edits_keeps_asking(case: str, tmp_path: Path, isolated_dirs: None):
    project = tmp_path / "project"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    (project / "guard.sh").chmod(0o755)
    (project / "server.py").write_text("")
    call, settings = CASES[case]
    port, still_open = await waiting_call_after_mode(project, call, "acceptEdits", settings)
    assert still_open == [port.asked[0].tool_use_id], f"{case}: acceptEdits let it through"


@pytest.mark.parametrize(
    "case", ["ask_rule_write", "ask_rule_mkdir", "hook_ask", "remove_the_project"]
)
async def test_bypass_still_asks_what_a_rule_or_a_hook_asks_about(
    case: str, tmp_path: Path, isolated_dirs: None
):
    project = tmp_path / "project"
    project.mkdir()
    call, settings = CASES[case]
    port, still_open = await waiting_call_after_mode(project, call, "bypassPermissions", settings)
    assert still_open == [port.asked[0].tool_use_id], f"{case}: bypass let it through"


DENY_IN_ACCEPT_EDITS = (
    'grep -q \'"permission_mode": *"acceptEdits"\' && echo \''
    + json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": "no unreviewed edits",
            }
        }
    )
    + "' || true"
)


async def test_a_hook_that_judges_by_mode_is_asked_again_under_the_new_mode(
    tmp_path: Path, isolated_dirs: None
):
    """Hooks see the mode: one that refuses edits in acceptEdits had no say in default mode,
    and must have it when the mode changes while the edit waits."""
    project = tmp_path / "project"
    project.mkdir()
    hook = {"matcher": "Write", "hooks": [{"type": "command", "command": DENY_IN_ACCEPT_EDITS}]}
    call = {"name": "Write", "input": {"file_path": "{workspace}/a.txt", "content": "x"}}
    port, still_open = await waiting_call_after_mode(
        project, call, "acceptEdits", {"hooks": {"PreToolUse": [hook]}}
    )
    assert still_open == [] and port.withdrawn == [port.asked[0].tool_use_id]
    assert not (project / "a.txt").exists()
