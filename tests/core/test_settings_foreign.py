"""Settings files users bring from other agents: what proctor does with each key.

Implemented keys work; keys of other agents that proctor does not have are reported once,
with their line and why, and the rest of the file counts; nonsense is an error as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.permissions.setup import permission_context_from
from core.settings.foreign import UNSUPPORTED_KEYS
from core.settings.read import load_settings


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("PROCTOR_NO_CLAUDE_SETTINGS", raising=False)
    root = tmp_path / "project"
    root.mkdir()
    return root


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def test_a_claude_settings_file_works_and_says_once_what_proctor_does_not_do(
    project: Path,
) -> None:
    path = write(
        project / ".claude/settings.json",
        {
            "$schema": "https://json.schemastore.org/claude-code-settings.json",
            "permissions": {"allow": ["Bash(npm test:*)"], "defaultMode": "auto"},
            "env": {"FOO": "bar"},
            "statusLine": {"type": "command", "command": "status.sh"},
            "model": "claude-sonnet-4-5",
        },
    )
    settings = load_settings(project)
    assert [str(rule) for rule in settings.rules] == ["Bash(npm test:*)"]
    assert settings.model == "claude-sonnet-4-5"
    assert settings.default_mode is None
    said = {p.message.split(":")[0]: (p.path, p.line, p.message) for p in settings.problems}
    assert sorted(said) == ["env", "permissions.defaultMode", "statusLine"]
    _, line, mode = said["permissions.defaultMode"]
    assert line == 7
    assert "'auto' is not supported by proctor" in mode
    assert mode.endswith("using the default mode instead")
    _, line, env = said["env"]
    why = UNSUPPORTED_KEYS["env"]
    assert (line, env) == (9, f"env: is not supported by proctor ({why}); ignored")
    assert all(where == path for where, _, _ in said.values())


def test_a_mode_nobody_has_is_still_an_error(project: Path) -> None:
    write(project / ".proctor/settings.json", {"permissions": {"defaultMode": "yolo"}})
    (problem,) = load_settings(project).problems
    assert "'yolo' is not a mode; use one of default, acceptEdits" in problem.message


def test_a_misspelt_key_is_reported_as_unknown(project: Path) -> None:
    write(project / ".proctor/settings.json", {"permisions": {"allow": ["Read"]}})
    (problem,) = load_settings(project).problems
    assert problem.line == 2
    assert problem.message.startswith("permisions: is not a setting proctor knows")


def test_disable_bypass_takes_bypass_away_even_when_asked_for(project: Path) -> None:
    path = write(
        project / ".proctor/settings.local.json",
        {"permissions": {"disableBypassPermissionsMode": "disable"}},
    )
    settings = load_settings(project)
    assert settings.problems == () and settings.bypass_disabled_in == str(path)
    context, notes = permission_context_from(settings, mode="bypassPermissions")
    assert context.mode == "default" and not context.bypass_available
    assert any(f"disableBypassPermissionsMode in {path}" in note for note in notes)
    allowed, _ = permission_context_from(settings, allow_bypass=True, mode="plan")
    assert allowed.mode == "plan" and not allowed.bypass_available


def test_a_wrong_disable_bypass_value_is_reported_and_still_disables(project: Path) -> None:
    path = write(
        project / ".proctor/settings.json", {"permissions": {"disableBypassPermissionsMode": 1}}
    )
    settings = load_settings(project)
    (problem,) = settings.problems
    assert 'must be "disable", not a number (1); read as "disable"' in problem.message
    assert settings.bypass_disabled_in == str(path)  # the key was written to take bypass away
    context, _ = permission_context_from(settings, allow_bypass=True)
    assert not context.bypass_available


def test_disable_bypass_false_leaves_bypass_alone(project: Path) -> None:
    write(
        project / ".proctor/settings.json",
        {"permissions": {"disableBypassPermissionsMode": False}},
    )
    settings = load_settings(project)
    assert settings.problems == () and settings.bypass_disabled_in is None


def test_disabled_mcp_json_servers_do_not_start_and_others_do(project: Path) -> None:
    server = {"command": "python3", "args": ["-m", "server"]}
    write(project / ".mcp.json", {"mcpServers": {"kept": server, "unwanted": server}})
    write(project / ".proctor/settings.local.json", {"disabledMcpjsonServers": ["unwanted"]})
    settings = load_settings(project)
    assert settings.problems == ()
    assert [s.name for s in settings.mcp_servers] == ["kept"]


def test_enabled_mcp_json_servers_are_the_only_ones_of_the_file_that_start(
    project: Path,
) -> None:
    server = {"command": "python3", "args": ["-m", "server"]}
    write(project / ".mcp.json", {"mcpServers": {"approved": server, "newcomer": server}})
    write(project / ".claude/settings.local.json", {"enabledMcpjsonServers": ["approved"]})
    write(project.parent / "config" / "settings.json", {"mcpServers": {"own": server}})
    settings = load_settings(project)
    assert settings.problems == ()  # a setting proctor acts on: nothing to report
    assert [s.name for s in settings.mcp_servers] == ["approved", "own"]


def test_disabled_mcp_json_servers_leave_your_own_servers_alone(project: Path) -> None:
    own = {"mcpServers": {"docs": {"command": "docs-server"}}}
    write(project.parent / "config" / "settings.json", own)
    write(project / ".proctor/settings.json", {"disabledMcpjsonServers": ["docs"]})
    (server,) = load_settings(project).mcp_servers
    assert (server.name, server.source) == ("docs", "user")


def test_a_model_alias_is_reported_and_not_sent_to_the_api(project: Path) -> None:
    write(project.parent / "config" / "settings.json", {"model": "claude-user-choice"})
    write(project / ".claude/settings.json", {"model": "opus"})
    write(project / ".proctor/settings.json", {"model": "sonnet[1m]"})
    settings = load_settings(project)
    assert settings.model == "claude-user-choice"
    said = sorted(problem.message for problem in settings.problems)
    assert said[0].startswith("model: 'opus' is not supported by proctor (proctor does not")
    assert said[1].startswith("model: 'sonnet[1m]' is not supported by proctor")
    assert all(message.endswith("this file's model is ignored") for message in said)


def test_a_restriction_that_cannot_be_read_asks_instead_of_vanishing(project: Path) -> None:
    write(
        project / ".claude/settings.json",
        {
            "permissions": {
                "deny": ["Bash(rm:*", "Write(./secret/**)"],
                "ask": "WebFetch",
                "Deny": ["Read(./.env)"],
                "disallowedTools": ["mcp__github"],
                "allow": ["Bash(ls"],
                "blockedPaths": ["secrets/**"],  # no rules: reported as unknown, as before
            },
            "deny": ["Bash(curl:*)"],  # outside permissions
        },
    )
    settings = load_settings(project)
    kept = {(str(rule), rule.behavior) for rule in settings.rules}
    assert kept == {
        ("Write(./secret/**)", "deny"),
        ("Bash", "ask"),  # the unreadable deny: every command asks, none is let through
        ("WebFetch", "ask"),  # one rule where a list was due
        ("Read(./.env)", "ask"),  # a misspelt deny list asks
        ("mcp__github", "ask"),
        ("Bash(curl:*)", "ask"),
    }
    said = {p.message.split(":")[0]: p.message for p in settings.problems}
    assert "kept as the ask rule Bash, so those calls ask" in said["permissions.deny[0]"]
    assert "meant deny, or ask?" in said["permissions.Deny[0]"]
    assert "kept as the ask rule mcp__github" in said["permissions.disallowedTools[0]"]
    assert "kept as the ask rule Bash(curl:*)" in said["deny[0]"]
    assert said["permissions.blockedPaths"].endswith("(misspelt, or another tool's?); ignored")
    assert said["permissions.allow[0]"].endswith("this rule is ignored")  # allowing less is safe
