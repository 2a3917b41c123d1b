"""Settings files turned into one plain, immutable `Settings` value.

Sources, highest first: CLI flags (`--allow/--deny/--ask`), the `--settings FILE`
("flag-settings"), `.proctor/settings.local.json` ("local"), `.proctor/settings.json`
("project"), a project's `.claude/settings.local.json` and `.claude/settings.json`
("claude-local", "claude-project"), and `settings.json` in the user config directory ("user").

Why it is shaped this way:

- Startup and `proctor check` call `load_settings` every time, so the happy path is plain
  `json.loads` per file. Line and column are computed only when there is a problem to report
  (`_locate` re-scans the text of that one file).
- A bad file never stops proctor. A JSON syntax error (or a file that cannot be read) ignores
  that whole file; a known key of the wrong type skips just that key (or that list element);
  a bad rule skips just that rule. Each is a `SettingsProblem` naming file, line and column.
  Unknown keys are ignored so newer files work with older proctors, except inside the
  `sandbox` section: a sandbox setting that is misspelt or unsupported would quietly leave
  commands less fenced than the user meant, so it is reported.
- Rules from every source are kept, each remembering its source and file: the decision chain
  makes a deny anywhere beat an allow anywhere, so nothing here may drop a rule.
- Scalars (`defaultMode`, `modeCycle`, `readClaudeSettings`) come from the highest source
  that sets them;
  `mcpServers` merge by name, the higher source winning a name.
- `additionalDirectories` resolve against the directory of the file declaring them
  (`~` expands), so a file means the same thing whichever directory proctor starts in.
- `.claude` files are read unless `"readClaudeSettings": false` is set in a proctor file
  (user, project, local or the `--settings` file; highest wins) or the environment has
  `PROCTOR_NO_CLAUDE_SETTINGS` set to 1/true/yes/on.
- Only `<cwd>` is searched for `.proctor/` and `.claude/` (no walk up to parents): the
  project is the directory proctor runs in, and `remember_allow_rule` writes exactly there.
- An empty (whitespace-only) file counts as `{}`: editors and `touch` create them.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal, cast, get_args

from .access.context import PERMISSION_MODES, PermissionMode, PermissionRule, RuleBehavior
from .access.modes import parse_cycle
from .access.rules import RuleSyntaxError, parse_rule, rule_problem
from .config_dir import user_config_dir as user_config_dir
from .hooks import HOOK_EVENTS, HookEvent
from .sandbox.config import (
    FILESYSTEM_KEYS,
    LIST_KEYS,
    SCALAR_KEYS,
    UNSUPPORTED_KEYS,
    SandboxLayer,
)

SettingsSource = Literal[
    "cli", "flag-settings", "local", "project", "claude-local", "claude-project", "user"
]
SETTINGS_SOURCES: tuple[SettingsSource, ...] = get_args(SettingsSource)

PROJECT_SOURCES: frozenset[str] = frozenset({"local", "project", "claude-local", "claude-project"})
"""Sources a cloned repository controls: their hooks run only in a trusted project."""

DEFAULT_HOOK_TIMEOUT_S = 60.0
_BEHAVIORS: tuple[RuleBehavior, ...] = ("allow", "deny", "ask")
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class SettingsProblem:
    path: Path | None
    """None for CLI flags."""
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        if self.path is None:
            return f"command line: {self.message}"
        where = str(self.path)
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class HookCommand:
    command: str
    timeout_s: float = DEFAULT_HOOK_TIMEOUT_S
    source: SettingsSource = "user"
    path: Path | None = None
    args: tuple[str, ...] | None = None
    """The exec form: `command` is a program run with these arguments, no shell between."""
    unreadable: str | None = None
    """Why this hook cannot be run as written (fields proctor does not understand): a
    PreToolUse hook like that makes the calls it matches ask instead of running unguarded."""

    def describe(self) -> str:
        """hook `./check.sh` from /p/.proctor/settings.json, for messages and the audit trail."""
        where = f" from {self.path}" if self.path else f" ({self.source})"
        return f"hook `{self.command}`{where}"


@dataclass(frozen=True, slots=True)
class HookEntry:
    event: HookEvent
    matcher: str | None
    """None, "" or "*" = every tool; a name, `A|B` names, or a regular expression."""
    hooks: tuple[HookCommand, ...]


@dataclass(frozen=True, slots=True)
class Settings:
    rules: tuple[PermissionRule, ...] = ()
    default_mode: PermissionMode | None = None
    additional_directories: tuple[Path, ...] = ()
    hooks: tuple[HookEntry, ...] = ()
    mcp_servers: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    files: tuple[Path, ...] = ()
    problems: tuple[SettingsProblem, ...] = ()
    file_sources: tuple[SettingsSource, ...] = ()
    """The source of each of `files`, in the same order."""
    default_mode_source: SettingsSource | None = None
    """Which source set `default_mode` (a cloned project may not widen it untrusted)."""
    directory_sources: tuple[SettingsSource, ...] = ()
    """The source of each of `additional_directories`, in the same order."""
    mode_cycle: tuple[PermissionMode, ...] | None = None
    """`permissions.modeCycle`: the modes the mode key steps through, if not the usual."""
    model: str | None = None
    """`model`: the model to use unless `--model` says otherwise."""
    sandbox_layers: tuple[SandboxLayer, ...] = ()
    """Each file's `sandbox` section, highest source first (merged once trust is known:
    `core.sandbox.config.merge`)."""

    @property
    def has_project_hooks_or_settings(self) -> bool:
        return any(source in PROJECT_SOURCES for source in self.file_sources)


class SettingsWriteError(Exception):
    """A settings file could not be updated; the message names the file (and line)."""


def settings_paths(cwd: Path) -> dict[SettingsSource, Path]:
    """Where each file source lives for a project, highest first."""
    return {
        "local": cwd / ".proctor" / "settings.local.json",
        "project": cwd / ".proctor" / "settings.json",
        "claude-local": cwd / ".claude" / "settings.local.json",
        "claude-project": cwd / ".claude" / "settings.json",
        "user": user_config_dir() / "settings.json",
    }


# --- reading ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _Layer:
    """What one source contributed, before merging."""

    source: SettingsSource
    path: Path | None
    rules: list[PermissionRule] = field(default_factory=list)
    default_mode: PermissionMode | None = None
    mode_cycle: tuple[PermissionMode, ...] | None = None
    model: str | None = None
    directories: list[Path] = field(default_factory=list)
    hooks: list[HookEntry] = field(default_factory=list)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    read_claude: bool | None = None
    sandbox: dict[str, Any] = field(default_factory=dict)


class _FileParser:
    """Reads the known keys of one parsed file into a `_Layer`, reporting bad ones."""

    def __init__(self, layer: _Layer, text: str, problems: list[SettingsProblem]) -> None:
        self.layer = layer
        self.text = text
        self.problems = problems

    def problem(self, at: JsonPath, message: str) -> None:
        line = column = None
        offset = _locate(self.text, at)
        if offset is not None:
            line, column = _line_column(self.text, offset)
        self.problems.append(
            SettingsProblem(self.layer.path, line, column, f"{_dotted(at)}: {message}")
        )

    def parse(self, data: dict[str, Any]) -> None:
        permissions = data.get("permissions")
        if permissions is not None:
            if isinstance(permissions, dict):
                self.permissions(permissions)
            else:
                self.problem(("permissions",), f"must be an object, not {_kind(permissions)}")
        if "hooks" in data:
            self.hooks(data["hooks"])
        if "model" in data:
            model = data["model"]
            if isinstance(model, str) and model.strip():
                self.layer.model = model.strip()
            else:
                self.problem(("model",), f"must be a model name, not {_kind(model)}")
        if "mcpServers" in data:
            servers = data["mcpServers"]
            if isinstance(servers, dict):
                self.layer.mcp_servers = servers
            else:
                self.problem(("mcpServers",), f"must be an object, not {_kind(servers)}")
        if "sandbox" in data:
            self.sandbox(data["sandbox"])
        if "readClaudeSettings" in data:
            value = data["readClaudeSettings"]
            if isinstance(value, bool):
                self.layer.read_claude = value
            else:
                self.problem(("readClaudeSettings",), f"must be true or false, not {_kind(value)}")

    def permissions(self, permissions: dict[str, Any]) -> None:
        for behavior in _BEHAVIORS:
            if behavior not in permissions:
                continue
            at: JsonPath = ("permissions", behavior)
            for index, text in self.strings(at, permissions[behavior], "rule strings"):
                try:
                    rule = parse_rule(
                        text, behavior, source=self.layer.source, path=self.layer.path
                    )
                except RuleSyntaxError as error:
                    self.problem((*at, index), f"{error}; this rule is ignored")
                else:
                    self.layer.rules.append(rule)
                    if (why := rule_problem(rule)) is not None:
                        self.problem((*at, index), f"{rule}: {why}")
        if "defaultMode" in permissions:
            mode = permissions["defaultMode"]
            if isinstance(mode, str) and mode in PERMISSION_MODES:
                self.layer.default_mode = mode
            else:
                valid = ", ".join(PERMISSION_MODES)
                shown = repr(mode) if isinstance(mode, str) else _kind(mode)
                self.problem(
                    ("permissions", "defaultMode"), f"{shown} is not a mode; use one of {valid}"
                )
        if "modeCycle" in permissions:
            at = ("permissions", "modeCycle")
            names = [text for _, text in self.strings(at, permissions["modeCycle"], "mode names")]
            try:
                self.layer.mode_cycle = parse_cycle(names)
            except ValueError as error:
                self.problem(at, f"{error}; the usual cycle is used")
        if "additionalDirectories" in permissions:
            at = ("permissions", "additionalDirectories")
            base = self.layer.path.parent if self.layer.path else Path.cwd()
            for index, text in self.strings(at, permissions["additionalDirectories"], "paths"):
                try:
                    directory = (base / os.path.expanduser(text)).resolve()
                except (OSError, RuntimeError) as error:  # a symlink loop, say
                    self.problem((*at, index), f"cannot be resolved ({error}); ignored")
                else:
                    self.layer.directories.append(directory)

    def sandbox(self, section: Any) -> None:
        if not isinstance(section, dict):
            self.problem(("sandbox",), f"must be an object, not {_kind(section)}; ignored")
            return
        values = self.layer.sandbox
        for key, value in section.items():
            at: JsonPath = ("sandbox", key)
            if key in SCALAR_KEYS:
                if isinstance(value, bool):
                    values[SCALAR_KEYS[key]] = value
                else:
                    self.problem(at, f"must be true or false, not {_kind(value)}; ignored")
            elif key in LIST_KEYS:
                values[LIST_KEYS[key]] = [text for _, text in self.strings(at, value, "strings")]
            elif key == "filesystem":
                self.sandbox_filesystem(value)
            elif key in UNSUPPORTED_KEYS:
                self.problem(at, f"is not supported ({UNSUPPORTED_KEYS[key]}); ignored")
            else:
                known = ", ".join([*SCALAR_KEYS, *LIST_KEYS, "filesystem"])
                self.problem(at, f"is not a sandbox setting (known: {known}); ignored")

    def sandbox_filesystem(self, section: Any) -> None:
        if not isinstance(section, dict):
            at: JsonPath = ("sandbox", "filesystem")
            self.problem(at, f"must be an object, not {_kind(section)}; ignored")
            return
        for key, value in section.items():
            at = ("sandbox", "filesystem", key)
            if key in FILESYSTEM_KEYS:
                paths = [text for _, text in self.strings(at, value, "paths") if text.strip()]
                self.layer.sandbox[FILESYSTEM_KEYS[key]] = paths
            else:
                known = ", ".join(FILESYSTEM_KEYS)
                self.problem(at, f"is not a filesystem setting (known: {known}); ignored")

    def strings(self, at: JsonPath, value: Any, what: str) -> list[tuple[int, str]]:
        """The string elements of a list, each bad element (or a non-list) reported."""
        if not isinstance(value, list):
            self.problem(at, f"must be a list of {what}, not {_kind(value)}; ignored")
            return []
        good: list[tuple[int, str]] = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                good.append((index, item))
            else:
                self.problem((*at, index), f"must be a string, not {_kind(item)}; ignored")
        return good

    def hooks(self, hooks: Any) -> None:
        if not isinstance(hooks, dict):
            self.problem(("hooks",), f"must be an object, not {_kind(hooks)}")
            return
        for event, entries in hooks.items():
            if event not in HOOK_EVENTS:
                supported = ", ".join(HOOK_EVENTS)
                self.problem(
                    ("hooks", event),
                    f"proctor does not support {event!r} hooks yet (it runs: {supported}); "
                    "these hooks do not run",
                )
                continue
            at: JsonPath = ("hooks", event)
            if not isinstance(entries, list):
                self.problem(at, f"must be a list of {{matcher, hooks}}, not {_kind(entries)}")
                continue
            for index, entry in enumerate(entries):
                parsed = self.hook_entry((*at, index), cast(HookEvent, event), entry)
                if parsed is not None:
                    self.layer.hooks.append(parsed)

    def hook_entry(self, at: JsonPath, event: HookEvent, entry: Any) -> HookEntry | None:
        if not isinstance(entry, dict):
            self.problem(at, f"must be an object {{matcher, hooks}}, not {_kind(entry)}")
            return None
        strange = sorted(set(entry) - {"matcher", "hooks"})
        if strange:
            self.problem(at, f"has fields proctor does not understand: {', '.join(strange)}")
        matcher = entry.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            self.problem((*at, "matcher"), f"must be a string, not {_kind(matcher)}; ignored")
            return None
        commands = entry.get("hooks")
        if not isinstance(commands, list):
            self.problem(at, 'needs a list of hooks under "hooks"; ignored')
            return None
        found: list[HookCommand] = []
        for index, command in enumerate(commands):
            parsed = self.hook_command((*at, "hooks", index), command)
            if parsed is not None:
                found.append(parsed)
        if strange and event == "PreToolUse":
            # What the unknown fields meant is not known; the calls it guards ask.
            found = [replace(hook, unreadable=f"fields {', '.join(strange)}") for hook in found]
            if not found:
                found = [HookCommand("", 1, self.layer.source, self.layer.path, None, "no hooks")]
        return HookEntry(event, matcher, tuple(found)) if found else None

    def hook_command(self, at: JsonPath, hook: Any) -> HookCommand | None:
        if not isinstance(hook, dict):
            self.problem(at, f"must be an object {{type, command}}, not {_kind(hook)}")
            return None
        if hook.get("type", "command") != "command":
            self.problem(at, f'type {hook.get("type")!r} is not supported (only "command")')
            return None
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            self.problem(at, 'needs a non-empty "command" string; ignored')
            return None
        timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT_S)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            self.problem((*at, "timeout"), "must be a positive number of seconds; ignored")
            return None
        args = hook.get("args")
        if args is not None and (
            not isinstance(args, list) or not all(isinstance(a, str) for a in args)
        ):
            self.problem((*at, "args"), "must be a list of strings; this hook is ignored")
            return None
        strange = sorted(set(hook) - {"type", "command", "timeout", "args"})
        unreadable = None
        if strange:
            self.problem(at, f"has fields proctor does not understand: {', '.join(strange)}")
            unreadable = f"fields {', '.join(strange)}"
        return HookCommand(
            command,
            float(timeout),
            self.layer.source,
            self.layer.path,
            tuple(args) if args is not None else None,
            unreadable,
        )


def _read_json_object(
    path: Path, problems: list[SettingsProblem], *, must_exist: bool = False
) -> tuple[dict[str, Any], str] | None:
    """The file's object and text; None when missing (silently) or unusable (reported)."""
    try:
        raw = path.read_bytes()
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
    if not isinstance(data, dict):
        message = f"must hold a JSON object {{...}}, not {_kind(data)}; ignored"
        problems.append(SettingsProblem(path, 1, 1, message))
        return None
    return data, text


def _file_layer(
    source: SettingsSource, path: Path, problems: list[SettingsProblem]
) -> _Layer | None:
    # A file named on the command line was asked for: its absence is worth saying.
    found = _read_json_object(path, problems, must_exist=source == "flag-settings")
    if found is None:
        return None
    layer = _Layer(source, path)
    _FileParser(layer, found[1], problems).parse(found[0])
    return layer


def _cli_layer(
    allow: Sequence[str], deny: Sequence[str], ask: Sequence[str], problems: list[SettingsProblem]
) -> _Layer:
    layer = _Layer("cli", None)
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
) -> Settings:
    """Every source merged; never raises for bad files (see `Settings.problems`).

    `isolated` reads no file at all, not even `settings_file`: only the CLI rules count.
    """
    problems: list[SettingsProblem] = []
    layers = [_cli_layer(allow, deny, ask, problems)]
    if not isolated:
        paths = settings_paths(cwd)
        file_layers: dict[SettingsSource, _Layer] = {}
        proctor_files: list[tuple[SettingsSource, Path]] = []
        if settings_file is not None:
            proctor_files.append(("flag-settings", settings_file))
        proctor_files += [(source, paths[source]) for source in ("local", "project", "user")]
        for source, path in proctor_files:
            layer = _file_layer(source, path, problems)
            if layer is not None:
                file_layers[source] = layer
        read_claude = next(
            (layer.read_claude for layer in file_layers.values() if layer.read_claude is not None),
            True,
        )
        if read_claude and not _claude_disabled_by_env():
            for source in ("claude-local", "claude-project"):
                layer = _file_layer(source, paths[source], problems)
                if layer is not None:
                    file_layers[source] = layer
        layers += [file_layers[s] for s in SETTINGS_SOURCES if s in file_layers]
    return _merge(layers, problems)


def _merge(layers: list[_Layer], problems: list[SettingsProblem]) -> Settings:
    """Layers come highest first: the first scalar wins, lists keep every item in order."""
    directories: dict[Path, SettingsSource] = {}
    servers: dict[str, Any] = {}
    for layer in layers:
        for directory in layer.directories:
            directories.setdefault(directory, layer.source)
        for name, server in layer.mcp_servers.items():
            servers.setdefault(name, server)
    mode_layer = next((layer for layer in layers if layer.default_mode), None)
    with_files = [layer for layer in layers if layer.path is not None]
    return Settings(
        rules=tuple(rule for layer in layers for rule in layer.rules),
        default_mode=mode_layer.default_mode if mode_layer else None,
        default_mode_source=mode_layer.source if mode_layer else None,
        mode_cycle=next((lay.mode_cycle for lay in layers if lay.mode_cycle), None),
        model=next((lay.model for lay in layers if lay.model), None),
        sandbox_layers=tuple(
            SandboxLayer(layer.source, MappingProxyType(layer.sandbox))
            for layer in layers
            if layer.sandbox
        ),
        additional_directories=tuple(directories),
        directory_sources=tuple(directories.values()),
        hooks=tuple(entry for layer in layers for entry in layer.hooks),
        mcp_servers=MappingProxyType(servers),
        files=tuple(cast(Path, layer.path) for layer in with_files),
        problems=tuple(problems),
        file_sources=tuple(layer.source for layer in with_files),
    )


# --- writing ---------------------------------------------------------------------------------


def remember_allow_rule(cwd: Path, rule: str) -> Path:
    """Add `rule` to permissions.allow of the local settings file, atomically.

    Every other key, value and the key order are kept; a rule already there (as written, or
    meaning the same) is not added twice. A file that is not a JSON object, or whose
    `permissions`/`allow` have the wrong type, is never overwritten: `SettingsWriteError`.
    """
    path = settings_paths(cwd)["local"]
    try:
        wanted = parse_rule(rule, "allow")
    except RuleSyntaxError as error:
        raise SettingsWriteError(f"cannot remember {rule!r} in {path}: {error}") from None
    data = _read_for_update(path)
    permissions = data.setdefault("permissions", {})
    if not isinstance(permissions, dict):
        raise SettingsWriteError(f'{path}: "permissions" is not an object; not changed')
    allowed = permissions.setdefault("allow", [])
    if not isinstance(allowed, list):
        raise SettingsWriteError(f'{path}: "permissions.allow" is not a list; not changed')
    if not any(_same_rule(existing, wanted) for existing in allowed):
        allowed.append(str(wanted))
        _write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    return path


def _same_rule(existing: Any, wanted: PermissionRule) -> bool:
    if not isinstance(existing, str):
        return False
    try:
        parsed = parse_rule(existing, "allow")
    except RuleSyntaxError:
        return False
    return (parsed.tool_name, parsed.content) == (wanted.tool_name, wanted.content)


def _read_for_update(path: Path) -> dict[str, Any]:
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as error:
        raise SettingsWriteError(f"{path} cannot be read ({error}); not changed") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise SettingsWriteError(
            f"{path}:{error.lineno}:{error.colno}: not valid JSON ({error.msg}); "
            "fix it by hand, it was not changed"
        ) from None
    if not isinstance(data, dict):
        raise SettingsWriteError(f"{path}: holds {_kind(data)}, not an object; not changed")
    return data


def write_json_atomically(path: Path, value: Any) -> None:
    """Replace `path` with `value` as JSON in one step (also used by the trust store)."""
    _write_atomically(path, json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _write_atomically(path: Path, text: str) -> None:
    """A reader sees the old file or the new one, never half of one."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = path.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = 0o644
        handle, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as error:
        raise SettingsWriteError(f"cannot write {path}: {error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temp_name, mode)
        os.replace(temp_name, path)
    except OSError as error:
        Path(temp_name).unlink(missing_ok=True)
        raise SettingsWriteError(f"cannot write {path}: {error}") from None
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


# --- locating a problem in the text (only ever on the error path) ------------------------------

_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null|NaN|-?Infinity")


def _locate(text: str, at: JsonPath) -> int | None:
    """Offset of the key (for an object member) or the element at `at`; None if lost."""
    try:
        return _locate_in(text, at)
    except (IndexError, ValueError):
        return None


def _locate_in(text: str, at: JsonPath) -> int | None:
    pos = _skip_space(text, 0)
    found = pos
    for step in at:
        opener, closer = ("{", "}") if isinstance(step, str) else ("[", "]")
        if text[pos] != opener:
            return None
        pos = _skip_space(text, pos + 1)
        target: tuple[int, int] | None = None
        index = 0
        while text[pos] != closer:
            member_at = pos
            if isinstance(step, str):
                key, pos = json.decoder.scanstring(text, pos + 1)  # type: ignore[attr-defined]
                pos = _skip_space(text, _skip_space(text, pos) + 1)  # past the ':'
                if key == step:
                    target = (member_at, pos)  # json.loads keeps the last duplicate too
            elif index == step:
                target = (member_at, pos)
                break
            pos = _skip_space(text, _skip_value(text, pos))
            if text[pos] == ",":
                pos = _skip_space(text, pos + 1)
            index += 1
        if target is None:
            return None
        found, pos = target
    return found


def _skip_space(text: str, pos: int) -> int:
    match = _SPACE.match(text, pos)
    return match.end() if match else pos


def _skip_value(text: str, pos: int) -> int:
    char = text[pos]
    if char == '"':
        end: int = json.decoder.scanstring(text, pos + 1)[1]  # type: ignore[attr-defined]
        return end
    if char in "{[":
        closer = "}" if char == "{" else "]"
        pos = _skip_space(text, pos + 1)
        while text[pos] != closer:
            pos = _skip_space(text, _skip_value(text, pos))
            if text[pos] in ",:":
                pos = _skip_space(text, pos + 1)
        return pos + 1
    match = _SCALAR.match(text, pos)
    if match is None:
        raise ValueError(f"unexpected {char!r} at {pos}")
    return match.end()


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _dotted(at: JsonPath) -> str:
    out = ""
    for step in at:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"a string ({value!r})" if len(value) < 40 else "a string"
    if isinstance(value, int | float):
        return f"a number ({value})"
    return "a list" if isinstance(value, list) else "an object"
