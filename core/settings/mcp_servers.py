"""MCP server entries (`mcpServers`) as typed values: what a session starts, and how.

The format is the one users already keep in `.mcp.json` and in settings files:

    {"mcpServers": {"github": {"command": "npx", "args": ["-y", "server-github"],
                                "env": {"TOKEN": "${GITHUB_TOKEN}"}},
                    "docs": {"type": "http", "url": "https://example.com/mcp",
                             "headers": {"Authorization": "Bearer ${DOCS_KEY}"}}}}

An entry is a stdio server (`command`, optional `args`, `env`, `cwd`; `"type": "stdio"` may
be given or left out) or a streamable HTTP server (`"type": "http"` or `"streamable-http"`
and a `url`; `headers` optional). `${VAR}` and `${VAR:-default}` in any of those strings
expand from the environment when the file is read, as they do for the tools users bring
these files from (the default is used when the variable is not set; `$VAR` is left as it
is). Other keys of an entry are ignored, so newer files still work.

A bad entry costs only that entry: every bad part is reported as a `SettingsProblem` (file,
line, column) and that server is not started. Running it with part of its arguments, or
without a token its header needed, would be worse than not running it. A server name must be
usable inside a tool name the API accepts (`mcp__<server>__<tool>`: letters, digits, `_` and
`-`), and may not hold `__`, which separates the server from the tool, nor end in `_` (the
first `__` after `mcp__` must be where the server's name ends): `server_name_problem`, in
`core.access.mcp_names` beside the other rules for these names.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from ..access.mcp_names import server_name_problem
from .problems import JsonPath, kind_of

McpTransport = Literal["stdio", "http"]

_TRANSPORTS: Mapping[str, McpTransport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
}
_VARIABLE = re.compile(r"\$\{([^}:]+)(?::-([^}]*))?\}")
_NOT_STARTED = "this server is not started"

Problem = Callable[[JsonPath, str], None]
"""Reports one bad part: the JSON path to it from the file's top, and what is wrong."""


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One server as configured: a stdio command or an HTTP URL, and where it was said."""

    name: str
    transport: McpTransport
    source: str
    """The settings source (`SettingsSource`) that declared it: "user", "project",
    "mcp-json"... Servers from project sources start only in a trusted project."""
    path: Path | None = None
    """The file that declared it (None for servers given in code or on the command line)."""
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    """Set on top of proctor's own environment for the server's process."""
    cwd: Path | None = None
    """Where the command runs (relative paths resolve against the declaring file's
    directory); None: the project directory."""
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def target(self) -> str:
        """What it starts or reaches: `npx -y server-github`, or the URL."""
        return self.url if self.transport == "http" else " ".join((self.command, *self.args))

    def describe(self) -> str:
        """`github` (`npx -y server-github`, from /p/.mcp.json), for messages and lists."""
        where = f"from {self.path}" if self.path else self.source
        return f"{self.name} ({self.target}, {where})"


def read_servers(
    servers: Mapping[str, Any], source: str, path: Path | None, problem: Problem
) -> dict[str, McpServerConfig | None]:
    """Every entry of an `mcpServers` object by name; None for one reported and not started.

    A bad entry still claims its name, so that a lower source's server of that name does not
    quietly start in its place: the problem says this server is not started, and none is.
    """
    return {
        name: _EntryReader(name, source, path, problem).read(entry)
        for name, entry in servers.items()
    }


class _EntryReader:
    """One entry checked part by part; every bad part is reported before the entry is
    refused, so the user can fix them all in one go."""

    def __init__(self, name: str, source: str, path: Path | None, problem: Problem) -> None:
        self.name = name
        self.source = source
        self.path = path
        self.report = problem
        self.bad = False

    def problem(self, at: JsonPath, message: str) -> None:
        self.bad = True
        self.report(("mcpServers", self.name, *at), f"{message}; {_NOT_STARTED}")

    def read(self, entry: Any) -> McpServerConfig | None:
        why = server_name_problem(self.name)
        if why is not None:
            self.problem((), why)
            return None
        if not isinstance(entry, dict):
            shape = '{"command": ...} or {"type": "http", "url": ...}'
            self.problem((), f"must be an object {shape}, not {kind_of(entry)}")
            return None
        transport = self.transport(entry)
        if transport is None:
            return None
        config = self.stdio(entry) if transport == "stdio" else self.http(entry)
        return None if self.bad else config

    def transport(self, entry: dict[str, Any]) -> McpTransport | None:
        if "command" in entry and "url" in entry:
            self.problem((), 'gives both "command" and "url", and a server is one or the other')
            return None
        kind = entry.get("type")
        if kind is None:
            if "url" in entry:
                self.problem((), 'has a "url" but no "type": add "type": "http"')
                return None
            return "stdio"
        if isinstance(kind, str) and kind in _TRANSPORTS:
            return _TRANSPORTS[kind]
        if kind == "sse":
            message = (
                '"sse" is not supported: proctor connects to stdio and streamable HTTP servers'
            )
        else:
            shown = repr(kind) if isinstance(kind, str) else kind_of(kind)
            message = f'{shown} is not a server type; use "stdio" or "http"'
        self.problem(("type",), message)
        return None

    def stdio(self, entry: dict[str, Any]) -> McpServerConfig:
        return McpServerConfig(
            self.name,
            "stdio",
            self.source,
            self.path,
            command=self.required(entry, "command", 'a non-empty "command" string'),
            args=self.strings(("args",), entry["args"]) if "args" in entry else (),
            env=self.mapping(("env",), entry["env"]) if "env" in entry else MappingProxyType({}),
            cwd=self.cwd(entry["cwd"]) if "cwd" in entry else None,
        )

    def http(self, entry: dict[str, Any]) -> McpServerConfig:
        url = self.required(entry, "url", 'a "url" string (http:// or https://)')
        if url and url.partition("://")[0].lower() not in ("http", "https"):
            self.problem(("url",), f"{url!r} is not an http:// or https:// URL")
        return McpServerConfig(
            self.name,
            "http",
            self.source,
            self.path,
            url=url,
            headers=(
                self.mapping(("headers",), entry["headers"])
                if "headers" in entry
                else MappingProxyType({})
            ),
        )

    def required(self, entry: dict[str, Any], key: str, what: str) -> str:
        """The expanded string under `key`; "" (reported) when missing, empty or not one."""
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            if key in entry:
                self.problem((key,), f"must be {what}, not {kind_of(value)}")
            else:
                self.problem((), f"needs {what}")
            return ""
        expanded = self.expand((key,), value)
        if expanded is None:
            return ""
        if not expanded.strip():
            self.problem((key,), f"is empty once {value!r} is expanded")
            return ""
        return expanded

    def strings(self, at: JsonPath, value: Any) -> tuple[str, ...]:
        if not isinstance(value, list):
            self.problem(at, f"must be a list of strings, not {kind_of(value)}")
            return ()
        found: list[str] = []
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.problem((*at, index), f"must be a string, not {kind_of(item)}")
            elif (expanded := self.expand((*at, index), item)) is not None:
                found.append(expanded)
        return tuple(found)

    def mapping(self, at: JsonPath, value: Any) -> Mapping[str, str]:
        if not isinstance(value, dict):
            self.problem(at, f"must be an object of strings, not {kind_of(value)}")
            return MappingProxyType({})
        found: dict[str, str] = {}
        for key, item in value.items():
            if not isinstance(item, str):
                self.problem((*at, key), f"must be a string, not {kind_of(item)}")
            elif (expanded := self.expand((*at, key), item)) is not None:
                found[key] = expanded
        return MappingProxyType(found)

    def cwd(self, value: Any) -> Path | None:
        if not isinstance(value, str):
            self.problem(("cwd",), f"must be a directory path, not {kind_of(value)}")
            return None
        text = self.expand(("cwd",), value)
        if text is None:
            return None
        base = self.path.parent if self.path else Path.cwd()
        try:
            return (base / os.path.expanduser(text)).resolve()
        except (OSError, RuntimeError) as error:  # a symlink loop, say
            self.problem(("cwd",), f"cannot be resolved ({error})")
            return None

    def expand(self, at: JsonPath, text: str) -> str | None:
        """`text` with `${VAR}` and `${VAR:-default}` filled in; None (reported) when a
        variable without a default is not set."""
        missing: list[str] = []

        def value(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            if name in os.environ:
                return os.environ[name]
            if default is not None:
                return default
            missing.append(name)
            return match.group(0)

        expanded = _VARIABLE.sub(value, text)
        for name in dict.fromkeys(missing):
            self.problem(at, f"uses ${{{name}}}, which is not set")
        return None if missing else expanded
