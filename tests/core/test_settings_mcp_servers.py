"""MCP servers from settings files and `.mcp.json`: typed, merged by name, every bad part named.

Each test writes real files and reads them the way a session does; what it checks is what a
user would notice: whether a server is there to start, and what the problem says and where.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType

import pytest

from core.settings.mcp_servers import McpServerConfig
from core.settings.read import load_settings
from core.settings.values import Settings


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


def lines(*text: str) -> str:
    """A file written line by line, so a test can say which line a problem is on."""
    return "\n".join(text) + "\n"


def servers(value: dict[str, object]) -> dict[str, object]:
    return {"mcpServers": value}


def by_name(settings: Settings) -> dict[str, McpServerConfig]:
    return {server.name: server for server in settings.mcp_servers}


GITHUB = {"command": "npx", "args": ["-y", "server-github"], "env": {"LEVEL": "debug"}}
DOCS = {"type": "http", "url": "https://docs.example/mcp", "headers": {"X-Team": "core"}}


def test_mcp_json_servers_are_read_as_typed_values(project: Path) -> None:
    path = write(project / ".mcp.json", servers({"github": GITHUB, "docs": DOCS}))
    settings = load_settings(project)
    assert settings.problems == ()
    assert settings.mcp_servers == (
        McpServerConfig(
            "docs",
            "http",
            "mcp-json",
            path,
            url="https://docs.example/mcp",
            headers=MappingProxyType({"X-Team": "core"}),
        ),
        McpServerConfig(
            "github",
            "stdio",
            "mcp-json",
            path,
            command="npx",
            args=("-y", "server-github"),
            env=MappingProxyType({"LEVEL": "debug"}),
        ),
    )
    assert settings.mcp_servers[1].describe() == f"github (npx -y server-github, from {path})"


def test_a_project_with_only_mcp_json_asks_for_trust(project: Path) -> None:
    path = write(project / ".mcp.json", servers({"github": GITHUB}))
    settings = load_settings(project)
    assert settings.files == (path,)
    assert settings.file_sources == ("mcp-json",)
    assert settings.has_project_hooks_or_settings


def test_settings_files_declare_servers_too(project: Path, home: Path) -> None:
    proj = write(project / ".proctor/settings.json", servers({"github": GITHUB}))
    user = write(home / "settings.json", servers({"docs": {**DOCS, "type": "streamable-http"}}))
    found = by_name(load_settings(project))
    assert (found["github"].source, found["github"].path) == ("project", proj)
    assert found["github"].command == "npx" and found["github"].transport == "stdio"
    assert (found["docs"].source, found["docs"].path) == ("user", user)
    assert found["docs"].transport == "http" and found["docs"].url == "https://docs.example/mcp"


def test_only_mcp_servers_count_in_mcp_json(project: Path) -> None:
    """A `.mcp.json` may carry other tools' keys; they must not add rules, hooks or a mode."""
    hook = {"hooks": [{"command": "./evil.sh"}]}
    write(
        project / ".mcp.json",
        {
            "mcpServers": {"github": GITHUB},
            "permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"},
            "hooks": {"PreToolUse": [hook], "NotAnEvent": 1},
            "sandbox": {"nonsense": True},
            "model": 7,
        },
    )
    settings = load_settings(project)
    assert settings.problems == ()
    assert (settings.rules, settings.hooks, settings.default_mode) == ((), (), None)
    assert settings.sandbox_layers == () and settings.model is None
    assert [server.name for server in settings.mcp_servers] == ["github"]


def test_mcp_json_without_servers_is_silent(project: Path) -> None:
    write(project / ".mcp.json", {"something": "else"})
    settings = load_settings(project)
    assert settings.problems == () and settings.mcp_servers == ()


def test_mcp_json_is_read_when_claude_files_are_not(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project / ".proctor/settings.json", {"readClaudeSettings": False})
    write(project / ".claude/settings.json", servers({"claude": GITHUB}))
    write(project / ".mcp.json", servers({"github": GITHUB}))
    assert [s.name for s in load_settings(project).mcp_servers] == ["github"]
    monkeypatch.setenv("PROCTOR_NO_CLAUDE_SETTINGS", "1")
    assert [s.name for s in load_settings(project).mcp_servers] == ["github"]
    assert load_settings(project, isolated=True).mcp_servers == ()


def test_a_higher_source_wins_a_name(project: Path, home: Path) -> None:
    write(home / "settings.json", servers({"github": {"command": "user"}, "zed": GITHUB}))
    write(project / ".mcp.json", servers({"github": {"command": "mcp-json"}, "alpha": DOCS}))
    write(project / ".claude/settings.json", servers({"github": {"command": "claude"}}))
    local = write(project / ".proctor/settings.local.json", servers({"github": {"command": "l"}}))
    settings = load_settings(project)
    assert [server.name for server in settings.mcp_servers] == ["alpha", "github", "zed"]
    github = by_name(settings)["github"]
    assert (github.command, github.source, github.path) == ("l", "local", local)
    assert [by_name(settings)[name].source for name in ("alpha", "zed")] == ["mcp-json", "user"]


def test_a_broken_entry_still_claims_its_name(project: Path, home: Path) -> None:
    """The problem says the server is not started: a lower source's one must not start instead."""
    write(home / "settings.json", servers({"github": GITHUB}))
    write(project / ".mcp.json", servers({"github": {"command": "npx", "args": "-y"}}))
    settings = load_settings(project)
    assert settings.mcp_servers == ()
    (problem,) = settings.problems
    assert problem.path == project / ".mcp.json"
    assert problem.message == (
        "mcpServers.github.args: must be a list of strings, not a string ('-y'); "
        "this server is not started"
    )


def test_every_bad_entry_is_named_with_its_place_and_only_it_is_skipped(project: Path) -> None:
    path = write(
        project / ".mcp.json",
        lines(
            "{",
            '  "mcpServers": {',
            '    "first": {"command": "ok-1"},',
            '    "list": ["npx"],',
            '    "old": {"type": "sse", "url": "https://old.example/sse"},',
            '    "odd": {"type": "websocket", "url": "wss://x"},',
            '    "nothing": {"args": ["x"]},',
            '    "blank": {"command": "  "},',
            '    "both": {"command": "npx", "url": "https://x.example"},',
            '    "untyped": {"url": "https://x.example"},',
            '    "ftp": {"type": "http", "url": "ftp://x.example"},',
            '    "nourl": {"type": "http"},',
            '    "args": {"command": "npx", "args": ["a", "b", 3]},',
            '    "env": {"command": "npx", "env": {"A": "1", "PORT": 8080}},',
            '    "head": {"type": "http", "url": "https://x.example", "headers": ["a"]},',
            '    "where": {"command": "npx", "cwd": false},',
            '    "has.dot": {"command": "npx"},',
            '    "has__sep": {"command": "npx"},',
            f'    "{"n" * 60}": {{"command": "npx"}},',
            '    "last": {"command": "ok-2", "future": {"anything": 1}}',
            "  }",
            "}",
        ),
    )
    settings = load_settings(project)
    assert [server.name for server in settings.mcp_servers] == ["first", "last"]
    assert all(problem.path == path for problem in settings.problems)
    where = [
        f"{p.line}:{p.column}: {p.message.removesuffix('; this server is not started')}"
        for p in settings.problems
    ]
    long_name = "n" * 60
    assert where == [
        '4:5: mcpServers.list: must be an object {"command": ...} or '
        '{"type": "http", "url": ...}, not a list',
        '5:13: mcpServers.old.type: "sse" is not supported: proctor connects to stdio and '
        "streamable HTTP servers",
        '6:13: mcpServers.odd.type: \'websocket\' is not a server type; use "stdio" or "http"',
        '7:5: mcpServers.nothing: needs a non-empty "command" string',
        '8:15: mcpServers.blank.command: must be a non-empty "command" string, '
        "not a string ('  ')",
        '9:5: mcpServers.both: gives both "command" and "url", and a server is one or the other',
        '10:5: mcpServers.untyped: has a "url" but no "type": add "type": "http"',
        "11:29: mcpServers.ftp.url: 'ftp://x.example' is not an http:// or https:// URL",
        '12:5: mcpServers.nourl: needs a "url" string (http:// or https://)',
        "13:51: mcpServers.args.args[2]: must be a string, not a number (3)",
        "14:49: mcpServers.env.env.PORT: must be a string, not a number (8080)",
        "15:58: mcpServers.head.headers: must be an object of strings, not a list",
        "16:33: mcpServers.where.cwd: must be a directory path, not false",
        "17:5: mcpServers.has.dot: the server name 'has.dot' cannot be part of a tool name: "
        "use letters, digits, `_` and `-`",
        "18:5: mcpServers.has__sep: the server name 'has__sep' holds `__`, which separates a "
        "server from its tool",
        f"19:5: mcpServers.{long_name}: the server name {long_name!r} is too long for its "
        "tools' names (64 at most)",
    ]
    assert all(p.message.endswith("; this server is not started") for p in settings.problems)
    assert str(settings.problems[0]).startswith(f"{path}:4:5: mcpServers.list: ")


def test_every_bad_part_of_one_entry_is_named_at_once(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """So the user fixes the entry in one go, not one problem per start."""
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    write(
        project / ".proctor/settings.json",
        servers({"github": {"command": "npx", "args": [1], "env": {"A": "${NOT_SET_ANYWHERE}"}}}),
    )
    settings = load_settings(project)
    assert settings.mcp_servers == ()
    assert [problem.message.split(":")[0] for problem in settings.problems] == [
        "mcpServers.github.args[0]",
        "mcpServers.github.env.A",
    ]


def test_mcp_servers_of_the_wrong_type(project: Path, home: Path) -> None:
    path = write(project / ".mcp.json", lines("{", '  "mcpServers": ["github"]', "}"))
    write(home / "settings.json", servers({"docs": DOCS}))
    settings = load_settings(project)
    (problem,) = settings.problems
    assert str(problem) == f"{path}:2:3: mcpServers: must be an object, not a list"
    assert [server.name for server in settings.mcp_servers] == ["docs"]


def test_bad_json_in_mcp_json_is_reported_and_the_rest_is_read(project: Path, home: Path) -> None:
    bad = write(project / ".mcp.json", lines("{", '  "mcpServers": {', '    "a": {,}', "  }", "}"))
    write(project / ".proctor/settings.json", {"permissions": {"allow": ["Read"]}})
    write(home / "settings.json", servers({"docs": DOCS}))
    settings = load_settings(project)
    (problem,) = settings.problems
    assert (problem.path, problem.line, problem.column) == (bad, 3, 11)
    assert str(problem).startswith(f"{bad}:3:11: not valid JSON (")
    assert "whole file is ignored" in problem.message
    assert [str(rule) for rule in settings.rules] == ["Read"]
    assert [server.name for server in settings.mcp_servers] == ["docs"]
    assert bad not in settings.files


def test_an_mcp_json_that_is_not_an_object(project: Path) -> None:
    path = write(project / ".mcp.json", '["github"]')
    settings = load_settings(project)
    (problem,) = settings.problems
    assert (problem.path, problem.line, problem.column) == (path, 1, 1)
    assert "must hold a JSON object" in problem.message


def test_variables_expand_from_the_environment(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("TOOLS", "/opt/tools")
    monkeypatch.setenv("DOCS_HOST", "docs.example")
    monkeypatch.setenv("EMPTY", "")
    monkeypatch.delenv("NOT_SET_ANYWHERE", raising=False)
    write(
        project / ".mcp.json",
        servers(
            {
                "github": {
                    "command": "${TOOLS}/bin/github-mcp",
                    "args": ["--level=${NOT_SET_ANYWHERE:-info}", "$TOOLS", "${EMPTY:-x}"],
                    "env": {"TOKEN": "${GITHUB_TOKEN}", "MODE": "${GITHUB_TOKEN:-unused}"},
                    "cwd": "${TOOLS}/work",
                },
                "docs": {
                    "type": "http",
                    "url": "https://${DOCS_HOST}/mcp",
                    "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
                },
            }
        ),
    )
    settings = load_settings(project)
    assert settings.problems == ()
    github, docs = by_name(settings)["github"], by_name(settings)["docs"]
    assert github.command == "/opt/tools/bin/github-mcp"
    assert github.args == ("--level=info", "$TOOLS", "")
    assert dict(github.env) == {"TOKEN": "ghp-secret", "MODE": "ghp-secret"}
    assert github.cwd == Path("/opt/tools/work")
    assert docs.url == "https://docs.example/mcp"
    assert dict(docs.headers) == {"Authorization": "Bearer ghp-secret"}


def test_a_variable_that_is_not_set_skips_its_server(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    monkeypatch.delenv("DOCS_KEY", raising=False)
    path = write(
        project / ".mcp.json",
        lines(
            '{"mcpServers": {',
            '  "github": {"command": "npx", "env": {"TOKEN": "${GITHUB_TOKEN}"}},',
            '  "docs": {"type": "http", "url": "https://d.example",',
            '           "headers": {"Authorization": "Bearer ${DOCS_KEY} ${DOCS_KEY}"}},',
            '  "fine": {"command": "npx", "args": ["${GITHUB_TOKEN:-anonymous}"]}',
            "}}",
        ),
    )
    settings = load_settings(project)
    assert [(s.name, s.args) for s in settings.mcp_servers] == [("fine", ("anonymous",))]
    assert [str(problem) for problem in settings.problems] == [
        f"{path}:2:40: mcpServers.github.env.TOKEN: uses ${{GITHUB_TOKEN}}, which is not set; "
        "this server is not started",
        f"{path}:4:24: mcpServers.docs.headers.Authorization: uses ${{DOCS_KEY}}, which is not "
        "set; this server is not started",
    ]


def test_cwd_resolves_against_the_declaring_file(
    project: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    write(project / ".proctor/settings.json", servers({"a": {"command": "x", "cwd": "../tools"}}))
    write(project / ".mcp.json", servers({"b": {"command": "x", "cwd": "sub"}}))
    write(home / "settings.json", servers({"c": {"command": "x", "cwd": "~/work"}, "d": GITHUB}))
    found = by_name(load_settings(project))
    assert found["a"].cwd == (project / "tools").resolve()
    assert found["b"].cwd == (project / "sub").resolve()
    assert found["c"].cwd == (tmp_path / "me" / "work").resolve()
    assert found["d"].cwd is None
