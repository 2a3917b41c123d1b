"""Settings files: precedence, merging, problems that name file and line, and writing back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from unreadable import locked

from core.config_dir import user_config_dir
from core.registry import all_base_tools, known_tool_names
from core.settings.problems import SettingsProblem
from core.settings.read import load_settings
from core.settings.values import HookCommand, HookEntry
from core.settings.write import SettingsWriteError, add_rule, remember_allow_rule, remove_rule


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user config dir, isolated from the real one."""
    config = tmp_path / "config"
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(config))
    monkeypatch.delenv("PROCTOR_NO_CLAUDE_SETTINGS", raising=False)
    return config


@pytest.fixture
def project(tmp_path: Path, home: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    return root


def write(path: Path, value: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2))
    return path


def perms(**permissions: object) -> dict[str, object]:
    return {"permissions": permissions}


def rule_strings(settings: object, behavior: str) -> list[tuple[str, str]]:
    rules = settings.rules  # type: ignore[attr-defined]
    return [(str(rule), rule.source) for rule in rules if rule.behavior == behavior]


def test_user_config_dir_honours_the_environment(home: Path) -> None:
    assert user_config_dir() == home


def test_no_files_no_problems(project: Path) -> None:
    settings = load_settings(project)
    assert settings.rules == ()
    assert settings.problems == ()
    assert settings.files == ()
    assert settings.default_mode is None
    assert not settings.has_project_hooks_or_settings


def test_every_source_contributes_highest_first(project: Path, home: Path) -> None:
    flag = write(project / "extra.json", perms(allow=["Grep(flag)"]))
    local = write(project / ".proctor/settings.local.json", perms(allow=["Grep(local)"]))
    proj = write(project / ".proctor/settings.json", perms(allow=["Grep(project)"], deny=["Bash"]))
    claude_local = write(
        project / ".claude/settings.local.json", perms(allow=["Grep(claudelocal)"])
    )
    claude = write(project / ".claude/settings.json", perms(allow=["Grep(claude)"]))
    mcp_json = write(project / ".mcp.json", {"mcpServers": {"github": {"command": "npx"}}})
    user = write(home / "settings.json", perms(allow=["Grep(user)"], ask=["Write"]))

    settings = load_settings(project, allow=["Grep(cli)"], settings_file=flag)

    assert rule_strings(settings, "allow") == [
        ("Grep(cli)", "cli"),
        ("Grep(flag)", "flag-settings"),
        ("Grep(local)", "local"),
        ("Grep(project)", "project"),
        ("Grep(claudelocal)", "claude-local"),
        ("Grep(claude)", "claude-project"),
        ("Grep(user)", "user"),
    ]
    assert rule_strings(settings, "deny") == [("Bash", "project")]
    assert rule_strings(settings, "ask") == [("Write", "user")]
    assert settings.files == (flag, local, proj, claude_local, claude, mcp_json, user)
    assert settings.file_sources == (
        "flag-settings",
        "local",
        "project",
        "claude-local",
        "claude-project",
        "mcp-json",
        "user",
    )
    by_path = {rule.path for rule in settings.rules}
    assert by_path == {None, flag, local, proj, claude_local, claude, user}
    assert settings.problems == ()
    assert settings.has_project_hooks_or_settings


def test_a_deny_anywhere_is_kept_beside_an_allow(project: Path, home: Path) -> None:
    write(home / "settings.json", perms(deny=["Bash(rm:*)"]))
    write(project / ".proctor/settings.local.json", perms(allow=["Bash(rm:*)"]))
    settings = load_settings(project)
    assert rule_strings(settings, "deny") == [("Bash(rm:*)", "user")]
    assert rule_strings(settings, "allow") == [("Bash(rm:*)", "local")]


def test_default_mode_highest_source_wins(project: Path, home: Path) -> None:
    write(home / "settings.json", perms(defaultMode="plan"))
    assert load_settings(project).default_mode == "plan"
    write(project / ".proctor/settings.json", perms(defaultMode="acceptEdits"))
    assert load_settings(project).default_mode == "acceptEdits"


def test_user_only_files_do_not_ask_for_trust(project: Path, home: Path) -> None:
    write(home / "settings.json", perms(allow=["Read"]))
    assert not load_settings(project).has_project_hooks_or_settings


def test_additional_directories_resolve_against_their_file(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write(project / ".proctor/settings.json", perms(additionalDirectories=["../shared", "/abs"]))
    write(home / "settings.json", perms(additionalDirectories=["notes", "~/docs", "/abs"]))
    settings = load_settings(project)
    assert settings.additional_directories == (
        (project / "shared").resolve(),
        Path("/abs").resolve(),
        (home / "notes").resolve(),
        (Path.home() / "docs").resolve(),
    )


def test_hooks_are_read_with_their_source(project: Path, home: Path) -> None:
    path = write(
        project / ".proctor/settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "Bash", "hooks": [{"type": "command", "command": "./a.sh"}]},
                    {"hooks": [{"type": "command", "command": "./b.sh", "timeout": 5}]},
                ],
                "Stop": [{"hooks": [{"command": "./stop.sh", "timeout": 1.5}]}],
                "SomeFutureEvent": [{"hooks": [{"command": "x"}]}],
            }
        },
    )
    settings = load_settings(project)
    assert settings.hooks == (
        HookEntry("PreToolUse", "Bash", (HookCommand("./a.sh", 60.0, "project", path),)),
        HookEntry("PreToolUse", None, (HookCommand("./b.sh", 5.0, "project", path),)),
        HookEntry("Stop", None, (HookCommand("./stop.sh", 1.5, "project", path),)),
    )
    [problem] = settings.problems
    assert "does not support 'SomeFutureEvent' hooks yet" in str(problem)


def test_bad_hooks_are_reported_and_skipped(project: Path) -> None:
    write(
        project / ".proctor/settings.json",
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": 3, "hooks": [{"command": "a"}]},
                    {"hooks": [{"type": "prompt", "prompt": "?"}, {"command": "ok"}]},
                    {"hooks": [{"command": "slow", "timeout": -1}, {"command": ""}]},
                ],
                "Stop": "nope",
            }
        },
    )
    settings = load_settings(project)
    assert [hook.command for entry in settings.hooks for hook in entry.hooks] == ["ok"]
    messages = [p.message for p in settings.problems]
    assert messages == [
        "hooks.PreToolUse[0].matcher: must be a string, not a number (3); ignored",
        "hooks.PreToolUse[1].hooks[0]: type 'prompt' is not supported (only \"command\")",
        "hooks.PreToolUse[2].hooks[0].timeout: must be a positive number of seconds; ignored",
        'hooks.PreToolUse[2].hooks[1]: needs a non-empty "command" string; ignored',
        "hooks.Stop: must be a list of {matcher, hooks}, not a string ('nope')",
    ]
    assert all(p.line is not None for p in settings.problems)


def test_malformed_json_names_file_line_and_column_and_is_ignored(
    project: Path, home: Path
) -> None:
    bad = write(project / ".proctor/settings.json", '{\n  "permissions": {\n    "allow": [,]\n')
    write(home / "settings.json", perms(allow=["Read"]))
    settings = load_settings(project)
    (problem,) = settings.problems
    assert (problem.path, problem.line, problem.column) == (bad, 3, 15)
    assert str(problem).startswith(f"{bad}:3:15: not valid JSON (Expecting value)")
    assert "whole file is ignored" in problem.message
    assert rule_strings(settings, "allow") == [("Read", "user")]
    assert bad not in settings.files


@pytest.mark.parametrize(
    "name", [".claude/settings.json", ".proctor/settings.local.json", ".mcp.json"]
)
def test_json_nested_past_pythons_depth_is_reported_not_a_crash(
    project: Path, home: Path, name: str
) -> None:
    """A cloned repository's settings file of `[[[[…` a hundred thousand deep once made
    proctor raise RecursionError while opening the folder, before anything could be said."""
    bad = write(project / name, "[" * 100_000)
    write(home / "settings.json", perms(allow=["Read"]))
    settings = load_settings(project)
    (problem,) = [p for p in settings.problems if p.path == bad]
    assert "nested too deep" in problem.message and "ignored" in problem.message
    assert rule_strings(settings, "allow") == [("Read", "user")]


def test_a_bad_rule_names_the_rule_and_the_others_load(project: Path) -> None:
    path = write(
        project / ".proctor/settings.json",
        '{\n  "permissions": {\n    "allow": [\n      "Read",\n      "Bash(ls",\n'
        '      "Grep"\n    ]\n  }\n}\n',
    )
    settings = load_settings(project)
    assert rule_strings(settings, "allow") == [("Read", "project"), ("Grep", "project")]
    (problem,) = settings.problems
    assert (problem.path, problem.line, problem.column) == (path, 5, 7)
    assert str(problem) == (
        f"{path}:5:7: permissions.allow[1]: 'Bash(ls' must end with ')' to close the "
        "specifier; this rule is ignored"
    )


def test_a_bad_default_mode_names_the_valid_ones(project: Path) -> None:
    write(project / ".proctor/settings.json", perms(defaultMode="yolo", allow=["Read"]))
    settings = load_settings(project)
    assert settings.default_mode is None
    (problem,) = settings.problems
    assert problem.line == 3
    assert "'yolo' is not a mode" in problem.message
    assert "default, acceptEdits, plan, bypassPermissions, dontAsk" in problem.message
    assert rule_strings(settings, "allow") == [("Read", "project")]


def test_a_wrong_type_skips_only_that_key(project: Path) -> None:
    path = write(
        project / ".proctor/settings.json",
        '{\n  "permissions": {\n    "allow": "Bash",\n    "deny": ["Write", 7],\n'
        '    "ask": ["Edit"]\n  },\n  "readClaudeSettings": "no",\n  "mcpServers": []\n}\n',
    )
    settings = load_settings(project)
    assert rule_strings(settings, "deny") == [("Write", "project")]
    assert rule_strings(settings, "ask") == [("Edit", "project")]
    assert [str(p) for p in settings.problems] == [
        f"{path}:3:5: permissions.allow: must be a list of rule strings, not a string ('Bash');"
        " ignored",
        f"{path}:4:23: permissions.deny[1]: must be a string, not a number (7); ignored",
        f"{path}:8:3: mcpServers: must be an object, not a list",
        f"{path}:7:3: readClaudeSettings: must be true or false, not a string ('no')",
    ]
    assert path in settings.files


def test_permissions_of_the_wrong_type(project: Path) -> None:
    write(project / ".proctor/settings.json", '{"permissions": ["Bash"]}')
    (problem,) = load_settings(project).problems
    assert (problem.line, problem.column) == (1, 2)
    assert problem.message == "permissions: must be an object, not a list"


def test_a_file_that_is_not_an_object(project: Path) -> None:
    path = write(project / ".proctor/settings.json", '["Bash"]')
    (problem,) = load_settings(project).problems
    assert problem.path == path
    assert "must hold a JSON object" in problem.message


def test_an_empty_file_is_no_settings(project: Path) -> None:
    path = write(project / ".proctor/settings.json", "  \n")
    settings = load_settings(project)
    assert settings.problems == ()
    assert settings.files == (path,)


def test_unknown_keys_are_reported_and_the_rest_of_the_file_counts(project: Path) -> None:
    path = write(
        project / ".proctor/settings.json",
        {"future": 1, "permissions": {"later": [1], "allow": ["Grep"]}},
    )
    settings = load_settings(project)
    assert [(p.path, p.line, p.message.split(":")[0]) for p in settings.problems] == [
        (path, 4, "permissions.later"),
        (path, 2, "future"),
    ]
    assert all("is not a setting proctor knows" in p.message for p in settings.problems)
    assert rule_strings(settings, "allow") == [("Grep", "project")]


def test_an_unreadable_file_is_a_problem_and_proctor_goes_on(project: Path, home: Path) -> None:
    (project / ".proctor/settings.json").mkdir(parents=True)
    write(home / "settings.json", perms(allow=["Read"]))
    settings = load_settings(project)
    (problem,) = settings.problems
    assert problem.path == project / ".proctor/settings.json"
    assert "cannot be read" in problem.message
    assert rule_strings(settings, "allow") == [("Read", "user")]


def test_a_file_without_read_permission_is_a_problem(
    project: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write(project / ".proctor/settings.json", perms(allow=["Read"]))
    write(home / "settings.json", perms(allow=["Grep"]))
    with locked(path, monkeypatch):  # unreadable as root too: tests/unreadable.py
        settings = load_settings(project, tool_names=known_tool_names())
    unreadable, closed = settings.problems
    assert unreadable.path == closed.path == path
    assert "cannot be read (Permission denied)" in unreadable.message
    # It may hold deny rules: until it is fixed every call asks and bypass is off, while the
    # other files still count.
    assert "every tool call asks" in closed.message
    asks = {rule.tool_name for rule in settings.rules if rule.behavior == "ask"}
    assert asks == set(known_tool_names())
    assert settings.bypass_disabled_in == str(path)
    assert rule_strings(settings, "allow") == [("Grep", "user")]


def test_a_missing_settings_flag_file_is_a_problem(project: Path) -> None:
    missing = project / "nope.json"
    (problem,) = load_settings(project, settings_file=missing).problems
    assert str(problem) == f"{missing}: does not exist"


def test_bad_cli_rules_are_problems_without_a_path(project: Path) -> None:
    settings = load_settings(project, allow=["Read"], deny=["Bash(rm"])
    assert rule_strings(settings, "allow") == [("Read", "cli")]
    (problem,) = settings.problems
    assert problem.path is None
    assert str(problem).startswith("command line: --deny 'Bash(rm': ")


def test_claude_files_are_read(project: Path) -> None:
    write(project / ".claude/settings.json", perms(allow=["Read"]))
    settings = load_settings(project)
    assert rule_strings(settings, "allow") == [("Read", "claude-project")]
    assert settings.has_project_hooks_or_settings


@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_claude_files_turned_off_by_a_setting(project: Path, home: Path, where: str) -> None:
    target = {
        "user": home / "settings.json",
        "project": project / ".proctor/settings.json",
        "local": project / ".proctor/settings.local.json",
    }[where]
    write(target, {"readClaudeSettings": False})
    write(project / ".claude/settings.json", perms(allow=["Read"]))
    write(project / ".claude/settings.local.json", perms(allow=["Write"]))
    settings = load_settings(project)
    assert settings.rules == ()
    assert settings.files == (target,)


def test_a_higher_source_can_turn_claude_files_back_on(project: Path, home: Path) -> None:
    write(home / "settings.json", {"readClaudeSettings": False})
    write(project / ".proctor/settings.local.json", {"readClaudeSettings": True})
    write(project / ".claude/settings.json", perms(allow=["Read"]))
    assert rule_strings(load_settings(project), "allow") == [("Read", "claude-project")]


def test_claude_files_turned_off_by_the_environment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / ".claude/settings.json", perms(allow=["Read"]))
    monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")
    assert load_settings(project).rules == ()


def test_isolated_reads_no_file(project: Path, home: Path) -> None:
    write(home / "settings.json", perms(allow=["User"]))
    write(project / ".proctor/settings.json", perms(allow=["Project"]))
    flag = write(project / "flag.json", perms(allow=["Flag"]))
    settings = load_settings(project, allow=["Cli"], settings_file=flag, isolated=True)
    assert rule_strings(settings, "allow") == [("Cli", "cli")]
    assert settings.files == ()


def test_problem_str_forms() -> None:
    path = Path("/p/s.json")
    assert str(SettingsProblem(path, 3, 12, "m")) == "/p/s.json:3:12: m"
    assert str(SettingsProblem(path, 3, None, "m")) == "/p/s.json:3: m"
    assert str(SettingsProblem(path, None, None, "m")) == "/p/s.json: m"
    assert str(SettingsProblem(None, None, None, "m")) == "command line: m"


# --- remember_allow_rule ---------------------------------------------------------------------


def local_file(project: Path) -> Path:
    return project / ".proctor" / "settings.local.json"


def test_remember_creates_the_file(project: Path) -> None:
    path = remember_allow_rule(project, "Bash(npm test:*)")
    assert path == local_file(project)
    assert json.loads(path.read_text()) == {"permissions": {"allow": ["Bash(npm test:*)"]}}
    assert rule_strings(load_settings(project), "allow") == [("Bash(npm test:*)", "local")]


def test_remember_keeps_every_other_key_in_order(project: Path) -> None:
    original = {
        "zeta": {"nested": [1, 2, {"x": None}]},
        "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Read"], "defaultMode": "plan"},
        "alpha": "ünïcode",
        "hooks": {},
    }
    write(local_file(project), original)
    remember_allow_rule(project, "Write")
    data = json.loads(local_file(project).read_text())
    assert list(data) == ["zeta", "permissions", "alpha", "hooks"]
    assert list(data["permissions"]) == ["deny", "allow", "defaultMode"]
    assert data["permissions"]["allow"] == ["Read", "Write"]
    data["permissions"]["allow"] = ["Read"]
    assert data == original
    assert "ünïcode" in local_file(project).read_text()


def test_remember_does_not_duplicate(project: Path) -> None:
    write(local_file(project), perms(allow=["Bash(ls:*)"]))
    before = local_file(project).read_text()
    remember_allow_rule(project, "Bash(ls:*)")
    remember_allow_rule(project, " Bash( ls:* ) ")
    assert local_file(project).read_text() == before


def test_remember_refuses_to_overwrite_a_malformed_file(project: Path) -> None:
    text = '{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}\n'
    write(local_file(project), text)
    with pytest.raises(SettingsWriteError) as caught:
        remember_allow_rule(project, "Write")
    assert f"{local_file(project)}:3:" in str(caught.value)
    assert local_file(project).read_text() == text


def test_remember_refuses_wrong_shapes(project: Path) -> None:
    write(local_file(project), perms(allow="Read"))
    with pytest.raises(SettingsWriteError, match=r"permissions\.allow"):
        remember_allow_rule(project, "Write")
    with pytest.raises(SettingsWriteError, match="must end with"):
        remember_allow_rule(project, "Bash(ls")


def test_remember_is_atomic_and_leaves_no_temp_files(project: Path) -> None:
    write(local_file(project), perms(allow=["Read"]))
    local_file(project).chmod(0o640)
    for rule in ("Write", "Edit", "Bash(git status)"):
        remember_allow_rule(project, rule)
    assert sorted(p.name for p in local_file(project).parent.iterdir()) == ["settings.local.json"]
    assert local_file(project).stat().st_mode & 0o777 == 0o640
    allowed = json.loads(local_file(project).read_text())["permissions"]["allow"]
    assert allowed == ["Read", "Write", "Edit", "Bash(git status)"]


def test_the_line_finder_is_not_fooled_by_strings_and_nesting(project: Path) -> None:
    text = (
        '{"$schema": ["}", "\\"]", {"a": [1, -2.5e3, true, null]}],\n'
        ' "permissions": {"allow": ["Bash(echo \\"{[\\")", "Read", "Bash(x"],\n'
        '                 "allow": ["Write(", "Grep"]}}\n'
    )
    path = write(project / ".proctor/settings.json", text)
    settings = load_settings(project)
    # json.loads keeps the last of duplicate keys, and so does the line finder.
    assert rule_strings(settings, "allow") == [("Grep", "project")]
    (problem,) = settings.problems
    assert (problem.path, problem.line, problem.column) == (path, 3, 28)


def test_the_mode_cycle_comes_from_settings_and_a_bad_one_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    project = tmp_path / "p"
    (project / ".proctor").mkdir(parents=True)
    file = project / ".proctor" / "settings.json"
    file.write_text('{"permissions": {"modeCycle": ["default", "plan"]}}')
    assert load_settings(project).mode_cycle == ("default", "plan")
    file.write_text('{"permissions": {"modeCycle": ["default", "warp"]}}')
    settings = load_settings(project)
    assert settings.mode_cycle is None
    assert "warp" in str(settings.problems[0]) and "modeCycle" in str(settings.problems[0])


def test_the_model_comes_from_the_highest_source_and_a_bad_one_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text('{"model": "claude-user"}')
    project = tmp_path / "p"
    (project / ".proctor").mkdir(parents=True)
    assert load_settings(project).model == "claude-user"
    (project / ".proctor" / "settings.json").write_text('{"model": "claude-project"}')
    assert load_settings(project).model == "claude-project"
    (project / ".proctor" / "settings.json").write_text('{"model": 7}')
    settings = load_settings(project)
    assert settings.model == "claude-user" and "model" in str(settings.problems[0])


def test_auto_compact_is_on_off_or_a_percentage_and_a_bad_one_is_reported(tmp_path, monkeypatch):
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text('{"autoCompact": false}')
    project = tmp_path / "p"
    (project / ".proctor").mkdir(parents=True)
    assert load_settings(project).auto_compact is False
    (project / ".proctor" / "settings.json").write_text('{"autoCompact": 80}')
    settings = load_settings(project)
    assert settings.auto_compact == 80 and not settings.problems
    for bad in ('"yes"', "120", "0.9"):
        (project / ".proctor" / "settings.json").write_text(f'{{"autoCompact": {bad}}}')
        settings = load_settings(project)
        # The bad value is reported and the next source's (the user's) stands.
        assert settings.auto_compact is False, bad
        [problem] = settings.problems
        assert "autoCompact" in str(problem) and "50 to 99" in str(problem)


def test_rules_that_cannot_mean_what_they_say_are_reported(project: Path, home: Path) -> None:
    path = write(
        project / ".proctor/settings.json",
        perms(allow=["WebSearch", "Bash(npm *:*)", "mcp__github", "Bash(npm test:*)", "MultiEdit"]),
    )
    settings = load_settings(project, tool_names=known_tool_names())
    problems = [str(problem) for problem in settings.problems]
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"{path}:") and "no tool named 'WebSearch'" in problems[0]
    assert "can never match" in problems[1] and "Bash(npm:*)" in problems[1]
    # Reported, and still kept: a deny for a tool a later proctor may have must not vanish.
    assert len(settings.rules) == 5


def test_the_tools_rules_may_name_are_the_registry_s_own() -> None:
    """Adding a tool is its module and one registration: no list of names to keep in step."""
    names = known_tool_names()
    assert {tool.name for tool in all_base_tools()} <= names
    assert "Task" in names and "WebSearch" not in names


def test_the_users_own_claude_settings_count_below_everything_else(
    project: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude = tmp_path / "dot-claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    write(claude / "settings.json", {**perms(deny=["Bash(curl:*)"]), "model": "from-claude"})
    write(home / "settings.json", {"model": "from-proctor"})
    settings = load_settings(project)
    assert rule_strings(settings, "deny") == [("Bash(curl:*)", "claude-user")]
    assert settings.model == "from-proctor"  # the lowest source: any other file wins a scalar
    assert claude / "settings.json" in settings.files
    # The same switch that turns off a project's .claude files turns off the user's.
    write(home / "settings.json", {"readClaudeSettings": False})
    assert rule_strings(load_settings(project), "deny") == []


def test_a_broken_claude_user_file_makes_every_call_ask(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "dot-claude"))
    write(tmp_path / "dot-claude" / "settings.json", '{"permissions": {"deny": ["Bash"],}}')
    settings = load_settings(project, tool_names=known_tool_names())
    asks = {rule.tool_name for rule in settings.rules if rule.behavior == "ask"}
    assert asks == set(known_tool_names())
    assert settings.bypass_disabled_in == str(tmp_path / "dot-claude" / "settings.json")
    assert any("every tool call asks" in problem.message for problem in settings.problems)


# --- add_rule / remove_rule (/permissions ... --local|--project|--user) ------------------------


def test_add_and_remove_a_rule_of_one_kind_keep_the_rest_of_the_file(project: Path) -> None:
    original = {"model": "x", "permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(rm:*)"]}}
    write(local_file(project), original)
    assert add_rule(local_file(project), "ask", "WebFetch(domain:example.com)")
    assert not add_rule(local_file(project), "ask", " WebFetch(domain:example.com) ")
    data = json.loads(local_file(project).read_text())
    assert list(data["permissions"]) == ["deny", "allow", "ask"] and data["model"] == "x"
    # The kind counts: removing the deny leaves the allow of the same text alone.
    assert remove_rule(local_file(project), "deny", "Bash(rm:*)")
    assert not remove_rule(local_file(project), "deny", "Bash(rm:*)")
    data = json.loads(local_file(project).read_text())
    assert data["permissions"] == {
        "deny": [],
        "allow": ["Bash(rm:*)"],
        "ask": ["WebFetch(domain:example.com)"],
    }
    assert rule_strings(load_settings(project), "allow") == [("Bash(rm:*)", "local")]
    assert rule_strings(load_settings(project), "deny") == []


def test_remove_from_a_missing_file_changes_nothing(project: Path) -> None:
    assert not remove_rule(local_file(project), "allow", "Read")
    assert not local_file(project).exists()


def test_add_and_remove_refuse_a_broken_file_and_leave_it_as_it_was(project: Path) -> None:
    text = '{"permissions": {"deny": ["Read",]}}'
    write(local_file(project), text)
    with pytest.raises(SettingsWriteError, match="not valid JSON"):
        add_rule(local_file(project), "deny", "Write")
    with pytest.raises(SettingsWriteError, match="not valid JSON"):
        remove_rule(local_file(project), "deny", "Read")
    assert local_file(project).read_text() == text
    write(local_file(project), perms(deny="Read"))
    with pytest.raises(SettingsWriteError, match=r"permissions\.deny"):
        remove_rule(local_file(project), "deny", "Read")


def test_a_rule_is_not_written_into_json_nested_past_pythons_depth(project: Path) -> None:
    bad = write(project / ".proctor/settings.local.json", "[" * 100_000)
    with pytest.raises(SettingsWriteError, match="nested too deep"):
        add_rule(bad, "allow", "Read")
    assert bad.read_text() == "[" * 100_000


@pytest.mark.parametrize("linked", ["folder", "file"])
def test_a_project_settings_file_linked_out_of_the_project_is_not_written(
    project: Path, tmp_path: Path, linked: str
) -> None:
    """A cloned `.proctor` that is a link to another folder (or a settings file linked to the
    user's own) would have "don't ask again" or /permissions --project write outside the
    project, or copy the user's settings into a file the repository commits."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    theirs = write(elsewhere / "settings.json", {"env": {"TOKEN": "secret"}})
    if linked == "folder":
        (project / ".proctor").symlink_to(elsewhere)
    else:
        (project / ".proctor").mkdir()
        (project / ".proctor" / "settings.local.json").symlink_to(theirs)
    before = {p.name: p.read_bytes() for p in elsewhere.iterdir()}
    with pytest.raises(SettingsWriteError, match="outside the project"):
        remember_allow_rule(project, "Bash(npm test:*)")
    with pytest.raises(SettingsWriteError, match="outside the project"):
        add_rule(project / ".proctor" / "settings.local.json", "deny", "Read", inside=project)
    assert {p.name: p.read_bytes() for p in elsewhere.iterdir()} == before


@pytest.mark.parametrize("where", ["project", "local"])
def test_a_project_cannot_switch_off_the_users_own_claude_settings(
    project: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """`readClaudeSettings: false` in a cloned `.proctor` file turns off that project's own
    `.claude` files; it once dropped the deny rules of your `~/.claude/settings.json` too."""
    claude = tmp_path / "dot-claude"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    write(claude / "settings.json", perms(deny=["Bash(rm:*)"]))
    name = "settings.json" if where == "project" else "settings.local.json"
    write(project / ".proctor" / name, {"readClaudeSettings": False})
    write(project / ".claude/settings.json", perms(allow=["Bash"]))
    settings = load_settings(project)
    assert rule_strings(settings, "deny") == [("Bash(rm:*)", "claude-user")]
    assert rule_strings(settings, "allow") == []  # the project's own .claude file is off
    assert settings.read_claude  # and ~/.claude's CLAUDE.md and rules are still read


@pytest.mark.parametrize("name", [".claude/settings.json", ".mcp.json", ".proctor/settings.json"])
@pytest.mark.parametrize("kind", ["link to /dev/zero", "fifo"])
def test_a_settings_file_that_never_ends_is_reported_not_read(
    project: Path, home: Path, name: str, kind: str
) -> None:
    """A cloned `.claude/settings.json` that is a link to /dev/zero (git keeps links) once
    made proctor read until memory ran out as it opened the folder; a FIFO blocked it."""
    import os

    path = project / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    write(home / "settings.json", perms(deny=["Bash(rm:*)"]))
    settings = load_settings(project)
    (problem,) = [p for p in settings.problems if p.path == path]
    assert "not a regular file" in problem.message and "ignored" in problem.message
    assert rule_strings(settings, "deny") == [("Bash(rm:*)", "user")]


def test_a_huge_settings_file_is_reported_not_read(project: Path) -> None:
    from core.settings.read import MAX_SETTINGS_BYTES

    big = write(project / ".proctor/settings.json", " " * MAX_SETTINGS_BYTES + "{}")
    (problem,) = load_settings(project).problems
    assert problem.path == big and "larger than" in problem.message
    with pytest.raises(SettingsWriteError, match="larger than"):
        add_rule(big, "allow", "Read")
