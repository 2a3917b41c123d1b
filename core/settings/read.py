"""Every settings source read and merged into one `Settings`: `load_settings`.

Sources, highest first: CLI flags (`--allow/--deny/--ask`), the `--settings FILE`
("flag-settings"), `.proctor/settings.local.json` ("local"), `.proctor/settings.json`
("project"), a project's `.claude/settings.local.json` and `.claude/settings.json`
("claude-local", "claude-project"), the project's `.mcp.json` ("mcp-json": its `mcpServers`
only), `settings.json` in the user config directory ("user"), and the user's own Claude
settings, `~/.claude/settings.json` or in `CLAUDE_CONFIG_DIR` ("claude-user").

- Startup and `proctor check` call `load_settings` every time, so the happy path is plain
  `json.loads` per file; line and column are found only for a problem (`problems.py`).
- A JSON syntax error (or a file that cannot be read) ignores that whole file, reported; a
  missing file is silent unless it was named with `--settings`. A front end calls
  `require_settings_file` first: a file the user named and proctor cannot read stops the
  start (the run would otherwise go ahead without the rules the user meant it to have). An
  empty (whitespace-only) file counts as `{}`: editors and `touch` create them.
- Scalars (`defaultMode`, `modeCycle`, `readClaudeSettings`, `model`,
  `alwaysThinkingEnabled`, `autoCompact`) come from the highest
  source that sets them; `mcpServers` merge by name, the higher source winning a name (even
  with an entry too broken to start: the server is then not started at all); rules, hooks and
  directories from every source are kept, in order (a directory once). What only takes
  something away counts from any file: `disableBypassPermissionsMode`, the
  `disabledMcpjsonServers` that keep `.mcp.json` servers from starting, and
  `enabledMcpjsonServers`, which (when any file has it) are the only ones that start.
- `.claude` files (the project's and the user's) are read unless `"readClaudeSettings":
  false` is set in a proctor file (user, project, local or the `--settings` file; highest
  wins; a project's or local file switches off only the project's `.claude` files, so a
  cloned repository cannot drop the deny rules of your `~/.claude`) or the environment has
  `PROCTOR_NO_CLAUDE_SETTINGS` set to 1/true/yes/on. `.mcp.json` is read either way: it is
  the shared MCP file of several tools, not Claude's settings. The same switch keeps the
  user's Claude folder's instructions (`~/.claude/CLAUDE.md`, `~/.claude/rules/`) out of the
  prompt (`Settings.read_claude`; core/agent/instructions.py); a project's CLAUDE.md is its
  own and is read either way.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from ..access.context import RuleBehavior
from ..access.rules import RuleSyntaxError, parse_rule
from .mcp_servers import McpServerConfig
from .parse import FileParser, Layer
from .paths import settings_paths
from .problems import SettingsProblem, kind_of
from .sandbox import SandboxLayer
from .values import SETTINGS_SOURCES, Settings, SettingsSource

_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})


class SettingsFileError(Exception):
    """The `--settings` file is missing or cannot be read; the message says which and why."""


def require_settings_file(path: Path) -> None:
    """Raise `SettingsFileError` unless `path` is a file proctor can read.

    What is inside is not judged here: a bad key or broken JSON is a problem reported with
    its line, as in every other file."""
    if path.as_posix().lstrip().startswith("{"):
        raise SettingsFileError(
            "--settings takes a file; inline JSON is not supported: put it in a file and "
            "pass that file's path"
        )
    try:
        with path.open("rb"):
            pass
    except FileNotFoundError:
        raise SettingsFileError(f"--settings {path}: there is no such file") from None
    except IsADirectoryError:
        raise SettingsFileError(f"--settings {path}: is a directory, not a file") from None
    except OSError as error:
        reason = error.strerror or str(error)
        raise SettingsFileError(f"--settings {path}: cannot be read ({reason})") from None


MAX_SETTINGS_BYTES = 4 * 1024 * 1024
"""A settings file is a few hundred bytes; one larger than this is not read."""


def read_settings_bytes(path: Path) -> bytes:
    """The file's bytes; FileNotFoundError when it is missing, OSError saying why it is not
    read otherwise. Only a regular file of a sane size is read: a cloned `.claude/settings.json`
    may be a link to /dev/zero (git keeps links), which would be read until memory ran out,
    and opening a FIFO would block proctor as it opens the folder."""
    if not stat.S_ISREG(path.stat().st_mode):  # links followed
        raise OSError("it is not a regular file")
    with path.open("rb") as file:
        raw = file.read(MAX_SETTINGS_BYTES + 1)
    if len(raw) > MAX_SETTINGS_BYTES:
        raise OSError(f"it is larger than {MAX_SETTINGS_BYTES // (1024 * 1024)} MB")
    return raw


def _read_json_object(
    path: Path, problems: list[SettingsProblem], *, must_exist: bool = False
) -> tuple[dict[str, Any], str] | None:
    """The file's object and text; None when missing (silently) or unusable (reported)."""
    try:
        raw = read_settings_bytes(path)
    except FileNotFoundError:
        if must_exist:
            problems.append(SettingsProblem(path, None, None, "does not exist"))
        return None
    except OSError as error:
        reason = error.strerror or str(error)
        problems.append(SettingsProblem(path, None, None, f"cannot be read ({reason}); ignored"))
        return None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        problems.append(SettingsProblem(path, line, None, "is not UTF-8 text; ignored"))
        return None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        message = f"not valid JSON ({error.msg}); the whole file is ignored"
        problems.append(SettingsProblem(path, error.lineno, error.colno, message))
        return None
    except RecursionError:  # `[[[[…` deeper than Python parses: a cloned file must not crash
        message = "not valid JSON (nested too deep to read); the whole file is ignored"
        problems.append(SettingsProblem(path, None, None, message))
        return None
    if not isinstance(data, dict):
        message = f"must hold a JSON object {{...}}, not {kind_of(data)}; ignored"
        problems.append(SettingsProblem(path, 1, 1, message))
        return None
    return data, text


def _file_layer(
    source: SettingsSource,
    path: Path,
    problems: list[SettingsProblem],
    tool_names: Collection[str] | None = None,
) -> Layer | None:
    # A file named on the command line was asked for: its absence is worth saying.
    reported = len(problems)
    found = _read_json_object(path, problems, must_exist=source == "flag-settings")
    if found is None:
        if len(problems) > reported and source != "mcp-json":
            return _unreadable_layer(source, path, problems, tool_names)
        return None
    layer = Layer(source, path)
    FileParser(layer, found[1], problems, tool_names).parse(found[0])
    return layer


def _unreadable_layer(
    source: SettingsSource,
    path: Path,
    problems: list[SettingsProblem],
    tool_names: Collection[str] | None,
) -> Layer | None:
    """Fail closed for a settings file that is there but cannot be read: its deny and ask
    rules (and a `disableBypassPermissionsMode`) may be in it, so until it is fixed every
    built-in tool asks and bypass is off, rather than running what it would have refused.
    (An unreadable `.mcp.json` only starts no servers, which is closed already.)"""
    if not tool_names:
        return None
    layer = Layer(source, path, bypass_disabled=True)
    layer.rules = [parse_rule(name, "ask", source=source, path=path) for name in sorted(tool_names)]
    message = "until it is fixed, every tool call asks and bypass mode is off"
    problems.append(SettingsProblem(path, None, None, message))
    return layer


def _cli_layer(
    allow: Sequence[str], deny: Sequence[str], ask: Sequence[str], problems: list[SettingsProblem]
) -> Layer:
    layer = Layer("cli", None)
    flags: tuple[tuple[RuleBehavior, Sequence[str]], ...] = (
        ("allow", allow),
        ("deny", deny),
        ("ask", ask),
    )
    for behavior, texts in flags:
        for text in texts:
            try:
                layer.rules.append(parse_rule(text, behavior, source="cli"))
            except RuleSyntaxError as error:
                message = f"--{behavior} {text!r}: {error}; this rule is ignored"
                problems.append(SettingsProblem(None, None, None, message))
    return layer


def _claude_disabled_by_env() -> bool:
    return os.environ.get("PROCTOR_NO_CLAUDE_SETTINGS", "").strip().lower() in _TRUE_WORDS


def load_settings(
    cwd: Path,
    *,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    ask: Sequence[str] = (),
    settings_file: Path | None = None,
    isolated: bool = False,
    tool_names: Collection[str] | None = None,
) -> Settings:
    """Every source merged; never raises for bad files (see `Settings.problems`).

    `isolated` reads no file at all, not even `settings_file`: only the CLI rules count.
    `tool_names` (the registry's `known_tool_names()`) lets a rule naming a tool this
    build does not have be reported; the settings layer cannot know the tools itself.
    """
    problems: list[SettingsProblem] = []
    layers = [_cli_layer(allow, deny, ask, problems)]
    if not isolated:
        paths = settings_paths(cwd)
        file_layers: dict[SettingsSource, Layer] = {}
        proctor_files: list[tuple[SettingsSource, Path]] = []
        if settings_file is not None:
            proctor_files.append(("flag-settings", settings_file))
        proctor_files += [(source, paths[source]) for source in ("local", "project", "user")]
        for source, path in proctor_files:
            layer = _file_layer(source, path, problems, tool_names)
            if layer is not None:
                file_layers[source] = layer
        by_env = _claude_disabled_by_env()
        read_claude = _switch(file_layers, file_layers) and not by_env
        # Your own ~/.claude files (their deny rules, their instructions) are switched off
        # only by your own files or the environment: a cloned .proctor file saying false
        # turns off that project's .claude files, never the rules you keep for every project.
        read_user_claude = _switch(file_layers, ("flag-settings", "user")) and not by_env
        others: list[SettingsSource] = ["mcp-json"]
        if read_claude:
            others = ["claude-local", "claude-project", *others]
        if read_user_claude:
            others.append("claude-user")
        for source in others:
            layer = _file_layer(source, paths[source], problems, tool_names)
            if layer is not None:
                file_layers[source] = layer
        layers += [file_layers[s] for s in SETTINGS_SOURCES if s in file_layers]
        return replace(_merge(layers, problems), read_claude=read_user_claude)
    return _merge(layers, problems)


def _switch(layers: dict[SettingsSource, Layer], sources: Iterable[SettingsSource]) -> bool:
    """`readClaudeSettings` as the highest of `sources` that sets it says (unset: true)."""
    said = (layers[s].read_claude for s in sources if s in layers)
    return next((value for value in said if value is not None), True)


def _merge(layers: list[Layer], problems: list[SettingsProblem]) -> Settings:
    """Layers come highest first: the first scalar wins, lists keep every item in order."""
    directories: dict[Path, SettingsSource] = {}
    servers: dict[str, McpServerConfig | None] = {}
    for layer in layers:
        for directory in layer.directories:
            directories.setdefault(directory, layer.source)
        for name, server in layer.mcp_servers.items():
            servers.setdefault(name, server)
    disabled = {name for layer in layers for name in layer.disabled_mcp_json}
    listed = [layer.enabled_mcp_json for layer in layers if layer.enabled_mcp_json is not None]
    enabled = {name for names in listed for name in names}
    for name, server in list(servers.items()):
        if server is None or server.source != "mcp-json":
            continue
        if name in disabled or (listed and name not in enabled):
            del servers[name]
    no_bypass = next((layer for layer in layers if layer.bypass_disabled), None)
    mode_layer = next((layer for layer in layers if layer.default_mode), None)
    with_files = [layer for layer in layers if layer.path is not None]
    return Settings(
        rules=tuple(rule for layer in layers for rule in layer.rules),
        default_mode=mode_layer.default_mode if mode_layer else None,
        default_mode_source=mode_layer.source if mode_layer else None,
        mode_cycle=next((lay.mode_cycle for lay in layers if lay.mode_cycle), None),
        model=next((lay.model for lay in layers if lay.model), None),
        thinking=next((lay.thinking for lay in layers if lay.thinking is not None), None),
        auto_compact=next(
            (lay.auto_compact for lay in layers if lay.auto_compact is not None), None
        ),
        sandbox_layers=tuple(
            SandboxLayer(layer.source, MappingProxyType(layer.sandbox))
            for layer in layers
            if layer.sandbox
        ),
        additional_directories=tuple(directories),
        directory_sources=tuple(directories.values()),
        hooks=tuple(entry for layer in layers for entry in layer.hooks),
        mcp_servers=tuple(server for _, server in sorted(servers.items()) if server is not None),
        files=tuple(cast(Path, layer.path) for layer in with_files),
        problems=tuple(problems),
        file_sources=tuple(layer.source for layer in with_files),
        bypass_disabled_in=str(no_bypass.path or no_bypass.source) if no_bypass else None,
    )
