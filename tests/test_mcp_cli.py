"""`proctor mcp list` and `proctor check` on MCP tools, run as a user runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "core" / "mcp_servers" / "fixture_server.py"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PROCTOR_CONFIG_DIR": str(tmp_path / "config"),
        "PROCTOR_DATA_DIR": str(tmp_path / "data"),
    }


def project(tmp_path: Path, env: dict[str, str], *, trusted: bool, **servers: str) -> Path:
    where = tmp_path / "project"
    where.mkdir()
    config = {
        name: {"command": sys.executable, "args": [str(FIXTURE), manner]}
        for name, manner in servers.items()
    }
    (where / ".mcp.json").write_text(json.dumps({"mcpServers": config}))
    if trusted:
        store = Path(env["PROCTOR_CONFIG_DIR"]) / "trusted-projects.json"
        store.parent.mkdir(parents=True)
        store.write_text(json.dumps({"trusted": [str(where.resolve())]}))
    return where


def proctor(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tui", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_mcp_list_starts_each_server_and_shows_its_tools_or_why_not(
    tmp_path: Path, env: dict[str, str]
) -> None:
    where = project(tmp_path, env, trusted=True, fx="normal", broken="exit")
    result = proctor(env, "mcp", "list", "--cwd", str(where), "--json")
    assert result.returncode == 1, result.stderr  # one server is not ready
    servers = {s["name"]: s for s in map(json.loads, result.stdout.splitlines())}
    assert servers["fx"]["state"] == "ready"
    tools = {tool["name"]: tool for tool in servers["fx"]["tools"]}
    assert tools["mcp__fx__add"]["read_only"] and tools["mcp__fx__wipe"]["destructive"]
    assert servers["fx"]["file"] == str(where / ".mcp.json")
    assert servers["broken"]["state"] == "failed"
    assert "cannot find its configuration" in servers["broken"]["detail"]

    text = proctor(env, "mcp", "list", "--cwd", str(where))
    assert "fx: ready, 10 tools" in text.stdout
    assert "fx › add [read-only]" in text.stdout
    assert "broken: failed" in text.stdout


def test_mcp_list_does_not_start_an_untrusted_project_s_servers(
    tmp_path: Path, env: dict[str, str]
) -> None:
    where = project(tmp_path, env, trusted=False, fx="normal")
    result = proctor(env, "mcp", "list", "--cwd", str(where))
    assert result.returncode == 1
    assert "fx: not started" in result.stdout and "not trusted" in result.stdout


def test_mcp_list_without_servers_says_how_to_add_one(tmp_path: Path, env: dict[str, str]) -> None:
    result = proctor(env, "mcp", "list", "--cwd", str(tmp_path))
    assert result.returncode == 0
    assert "No MCP servers" in result.stdout and ".mcp.json" in result.stdout


def test_check_applies_mcp_rules_without_starting_the_server(
    tmp_path: Path, env: dict[str, str]
) -> None:
    where = project(tmp_path, env, trusted=True, fx="normal")
    allowed = proctor(
        env, "check", "--cwd", str(where), "--allow", "mcp__fx", "--json",
        "mcp__fx__echo", '{"text": "hi"}',
    )  # fmt: skip
    answer = json.loads(allowed.stdout)
    assert answer["behavior"] == "allow", answer
    assert any("was not started" in note for note in answer["notes"])
    denied = proctor(
        env, "check", "--cwd", str(where), "--allow", "mcp__fx", "--deny", "mcp__fx__wipe",
        "--json", "mcp__fx__wipe", '{"target": "x"}',
    )  # fmt: skip
    assert json.loads(denied.stdout)["behavior"] == "deny"
    asked = proctor(env, "check", "--cwd", str(where), "--json", "mcp__fx__echo", "{}")
    assert json.loads(asked.stdout)["behavior"] == "ask"
    unknown = proctor(env, "check", "--cwd", str(where), "mcp__nope__x", "{}")
    assert unknown.returncode == 2
    assert "no MCP server named 'nope'" in unknown.stderr and "fx" in unknown.stderr
