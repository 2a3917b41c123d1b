"""One settings file's object read key by key into a `Layer`, every bad part reported.

A bad file never stops proctor, and a bad part of a file costs only that part: a known key of
the wrong type skips just that key (or that list element), a bad rule skips just that rule, and
each is a `SettingsProblem` naming file, line and column. A key proctor does not act on costs
only itself too, and is reported once, so nobody believes it works: another agent's setting
with why proctor does not have it (foreign.py; `defaultMode: "auto"` is used as the default
mode), an unknown one as unknown; newer files still work with older proctors. A project's
`.mcp.json` is read for its `mcpServers` alone: its other keys belong to the tools that wrote
it, and must not add hooks or rules. Each server entry is read by
`mcp_servers.read_servers`.

`additionalDirectories` resolve against the directory of the file declaring them (`~`
expands), so a file means the same thing whichever directory proctor starts in. Merging the
layers of every source is the reader's job (`read.py`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from ..access.context import PERMISSION_MODES, PermissionMode, PermissionRule, RuleBehavior
from ..access.modes import parse_cycle
from ..access.rules import RuleSyntaxError, parse_rule, rule_problem
from ..hooks import HOOK_EVENTS, HookEvent
from . import foreign
from .compact_setting import MAX_THRESHOLD_PERCENT, MIN_THRESHOLD_PERCENT
from .mcp_servers import McpServerConfig, read_servers
from .problems import JsonPath, SettingsProblem, dotted, kind_of, line_column, locate
from .sandbox import FILESYSTEM_KEYS, LIST_KEYS, SCALAR_KEYS, UNSUPPORTED_KEYS, stricter
from .values import DEFAULT_HOOK_TIMEOUT_S, HookCommand, HookEntry, SettingsSource

_BEHAVIORS: tuple[RuleBehavior, ...] = ("allow", "deny", "ask")
_TOP_KEYS = frozenset(
    {"permissions", "hooks", "model", "mcpServers", "sandbox", "readClaudeSettings"}
    | {"alwaysThinkingEnabled", "autoCompact"}
    | {"disabledMcpjsonServers", "enabledMcpjsonServers"}
)
_PERMISSION_KEYS = frozenset(
    {*_BEHAVIORS, "defaultMode", "modeCycle", "additionalDirectories"}
    | {"disableBypassPermissionsMode"}
)
_UNKNOWN = "is not a setting proctor knows (misspelt, or another tool's?); ignored"


_UNKNOWN_RULES = "is not a setting proctor knows (meant deny, or ask?); "


_RULE_TOOL = re.compile(r"(mcp__[\w-]+|[A-Z][A-Za-z]*)")


def _rule_list(value: Any, tool_names: Collection[str] | None) -> bool:
    """What reads as a list of rules (`["Bash(rm:*)", "WebFetch"]`), under a key proctor
    does not know: each names a tool as tools are named (one this build has, when known)."""

    def names_a_tool(text: Any) -> bool:
        if not isinstance(text, str):
            return False
        tool = text.split("(", 1)[0].strip()
        if not _RULE_TOOL.fullmatch(tool):
            return False
        return tool_names is None or tool in tool_names or tool.startswith("mcp__")

    return isinstance(value, list) and bool(value) and all(map(names_a_tool, value))


@dataclass(slots=True)
class Layer:
    """What one source contributed, before merging."""

    source: SettingsSource
    path: Path | None
    rules: list[PermissionRule] = field(default_factory=list)
    default_mode: PermissionMode | None = None
    mode_cycle: tuple[PermissionMode, ...] | None = None
    model: str | None = None
    thinking: bool | None = None
    """`alwaysThinkingEnabled`: false asks for no thinking."""
    directories: list[Path] = field(default_factory=list)
    hooks: list[HookEntry] = field(default_factory=list)
    mcp_servers: dict[str, McpServerConfig | None] = field(default_factory=dict)
    """By name; None for a server reported and not started (it still claims its name)."""
    read_claude: bool | None = None
    auto_compact: bool | int | None = None
    """`autoCompact`: on, off, or the percentage of the context window to compact at."""
    sandbox: dict[str, Any] = field(default_factory=dict)
    bypass_disabled: bool = False
    """`permissions.disableBypassPermissionsMode: "disable"`."""
    disabled_mcp_json: list[str] = field(default_factory=list)
    """`disabledMcpjsonServers`: servers of the project's `.mcp.json` not to start."""
    enabled_mcp_json: list[str] | None = None
    """`enabledMcpjsonServers`: the only servers of the project's `.mcp.json` to start."""


class FileParser:
    """Reads the known keys of one parsed file into a `Layer`, reporting bad ones."""

    def __init__(
        self,
        layer: Layer,
        text: str,
        problems: list[SettingsProblem],
        tool_names: Collection[str] | None = None,
    ) -> None:
        self.layer = layer
        self.text = text
        self.problems = problems
        self.tool_names = tool_names
        """The tools this build has, to report rules naming another (None: not checked)."""

    def problem(self, at: JsonPath, message: str) -> None:
        line = column = None
        offset = locate(self.text, at)
        if offset is not None:
            line, column = line_column(self.text, offset)
        self.problems.append(
            SettingsProblem(self.layer.path, line, column, f"{dotted(at)}: {message}")
        )

    def parse(self, data: dict[str, Any]) -> None:
        if self.layer.source == "mcp-json":
            self.mcp_servers(data.get("mcpServers", {}))
            return
        permissions = data.get("permissions")
        if permissions is not None:
            if isinstance(permissions, dict):
                self.permissions(permissions)
            else:
                self.problem(("permissions",), f"must be an object, not {kind_of(permissions)}")
        if "hooks" in data:
            self.hooks(data["hooks"])
        if "model" in data:
            model = data["model"]
            if isinstance(model, str) and (why := foreign.unsupported_model(model.strip())):
                self.problem(
                    ("model",),
                    f"{model!r} is not supported by proctor ({why}); this file's model is ignored",
                )
            elif isinstance(model, str) and model.strip():
                self.layer.model = model.strip()
            else:
                self.problem(("model",), f"must be a model name, not {kind_of(model)}")
        if "alwaysThinkingEnabled" in data:
            value = data["alwaysThinkingEnabled"]
            if isinstance(value, bool):
                self.layer.thinking = value
            else:
                self.problem(
                    ("alwaysThinkingEnabled",), f"must be true or false, not {kind_of(value)}"
                )
        if "mcpServers" in data:
            self.mcp_servers(data["mcpServers"])
        if "sandbox" in data:
            self.sandbox(data["sandbox"])
        if "readClaudeSettings" in data:
            value = data["readClaudeSettings"]
            if isinstance(value, bool):
                self.layer.read_claude = value
            else:
                self.problem(
                    ("readClaudeSettings",), f"must be true or false, not {kind_of(value)}"
                )
        if "autoCompact" in data:
            self.auto_compact(data["autoCompact"])
        if "disabledMcpjsonServers" in data:
            at: JsonPath = ("disabledMcpjsonServers",)
            names = self.strings(at, data["disabledMcpjsonServers"], "server names")
            self.layer.disabled_mcp_json = [name for _, name in names]
        if "enabledMcpjsonServers" in data:
            at = ("enabledMcpjsonServers",)
            names = self.strings(at, data["enabledMcpjsonServers"], "server names")
            self.layer.enabled_mcp_json = [name for _, name in names]
        self.foreign_keys((), data, _TOP_KEYS | foreign.SILENT_KEYS, foreign.UNSUPPORTED_KEYS)

    def auto_compact(self, value: Any) -> None:
        low, high = MIN_THRESHOLD_PERCENT, MAX_THRESHOLD_PERCENT
        if isinstance(value, bool) or (isinstance(value, int) and low <= value <= high):
            self.layer.auto_compact = value
        else:
            self.problem(
                ("autoCompact",),
                f"must be true, false or a percentage of the context window from {low} to "
                f"{high}, not {value!r}; compaction stays at its default",
            )

    def foreign_keys(
        self, at: JsonPath, section: dict[str, Any], known: Collection[str], why: Mapping[str, str]
    ) -> None:
        """Report each key of `section` proctor does not act on: another agent's (with
        `why[key]`) or one nobody knows. The rest of the file counts either way."""
        for key, value in section.items():
            if key in known:
                continue
            if key not in why and _rule_list(
                value, self.tool_names
            ):  # `Deny`, `disallowedTools`, a stray `deny`
                for index, text in enumerate(value):
                    self.asking_instead((*at, key, index), text, None)
                continue
            if key in why:
                self.problem((*at, key), f"is not supported by proctor ({why[key]}); ignored")
            else:
                self.problem((*at, key), _UNKNOWN)

    def mcp_servers(self, servers: Any) -> None:
        if not isinstance(servers, dict):
            self.problem(("mcpServers",), f"must be an object, not {kind_of(servers)}")
            return
        layer = self.layer
        layer.mcp_servers = read_servers(servers, layer.source, layer.path, self.problem)

    def permissions(self, permissions: dict[str, Any]) -> None:
        for behavior in _BEHAVIORS:
            if behavior not in permissions:
                continue
            at: JsonPath = ("permissions", behavior)
            rules = permissions[behavior]
            if behavior != "allow" and isinstance(rules, str):  # one rule, not in a list
                self.problem(at, "must be a list of rule strings; read as a list of one")
                rules = [rules]
            for index, text in self.strings(at, rules, "rule strings"):
                try:
                    rule = parse_rule(
                        text, behavior, source=self.layer.source, path=self.layer.path
                    )
                except RuleSyntaxError as error:
                    if behavior == "allow":
                        self.problem((*at, index), f"{error}; this rule is ignored")
                    else:  # a restriction nobody can read must not become no restriction
                        self.asking_instead((*at, index), text, str(error))
                else:
                    self.layer.rules.append(rule)
                    if (why := rule_problem(rule, self.tool_names)) is not None:
                        self.problem((*at, index), f"{rule}: {why}")
        if "defaultMode" in permissions:
            mode = permissions["defaultMode"]
            if isinstance(mode, str) and mode in PERMISSION_MODES:
                self.layer.default_mode = mode
            elif isinstance(mode, str) and mode in foreign.UNSUPPORTED_MODES:
                self.problem(
                    ("permissions", "defaultMode"),
                    f"{mode!r} is not supported by proctor ({foreign.UNSUPPORTED_MODES[mode]}); "
                    "using the default mode instead",
                )
            else:
                valid = ", ".join(PERMISSION_MODES)
                shown = repr(mode) if isinstance(mode, str) else kind_of(mode)
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
        if "disableBypassPermissionsMode" in permissions:
            value = permissions["disableBypassPermissionsMode"]
            # Whoever wrote the key meant to take bypass away: only a plain "no" leaves it.
            self.layer.bypass_disabled = value not in (False, None)
            if value not in ("disable", False, None):
                self.problem(
                    ("permissions", "disableBypassPermissionsMode"),
                    f'must be "disable", not {kind_of(value)}; read as "disable"',
                )
        self.foreign_keys(
            ("permissions",), permissions, _PERMISSION_KEYS, foreign.UNSUPPORTED_PERMISSION_KEYS
        )

    def asking_instead(self, at: JsonPath, text: str, error: str | None) -> None:
        """A rule that may restrict but cannot be applied as written, kept as an ask rule
        for what it names, and said. `error`: why a deny or ask rule cannot be read (the
        ask is then for its whole tool); None: the rule sits under a key proctor does not
        know (`Deny`, `disallowedTools`), where a misspelt deny list left out would allow
        what the file meant to refuse, so it asks, whatever the key meant."""
        whole_tool = text.split("(", 1)[0]
        candidates: tuple[str, ...] = (whole_tool,) if error else (text, whole_tool)
        why = f"{error}; " if error else _UNKNOWN_RULES
        for candidate in candidates:
            try:
                rule = parse_rule(candidate, "ask", source=self.layer.source, path=self.layer.path)
            except RuleSyntaxError:
                continue
            self.layer.rules.append(rule)
            self.problem(at, f"{why}kept as the ask rule {rule}, so those calls ask")
            return
        self.problem(at, f"{why}it names no tool proctor can read; ignored")

    def sandbox(self, section: Any) -> None:
        if not isinstance(section, dict):
            self.problem(("sandbox",), f"must be an object, not {kind_of(section)}; ignored")
            return
        values = self.layer.sandbox
        for key, value in section.items():
            at: JsonPath = ("sandbox", key)
            if key in SCALAR_KEYS:
                if isinstance(value, bool):
                    values[SCALAR_KEYS[key]] = value
                else:  # unreadable: the reading that fences more, never the default
                    meant = str(value).strip().lower() if isinstance(value, str) else None
                    read = meant == "true" if meant in ("true", "false") else None
                    read = stricter(SCALAR_KEYS[key]) if read is None else read
                    values[SCALAR_KEYS[key]] = read
                    wrong = f"must be true or false, not {kind_of(value)}"
                    self.problem(at, f"{wrong}; read as {str(read).lower()}")
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
            self.problem(at, f"must be an object, not {kind_of(section)}; ignored")
            return
        for key, value in section.items():
            at = ("sandbox", "filesystem", key)
            if key in FILESYSTEM_KEYS:
                if key.startswith("deny") and isinstance(value, str):  # a restriction
                    self.problem(at, "must be a list of paths; read as a list of one")
                    value = [value]
                paths = [text for _, text in self.strings(at, value, "paths") if text.strip()]
                self.layer.sandbox[FILESYSTEM_KEYS[key]] = paths
            else:
                known = ", ".join(FILESYSTEM_KEYS)
                self.problem(at, f"is not a filesystem setting (known: {known}); ignored")

    def strings(self, at: JsonPath, value: Any, what: str) -> list[tuple[int, str]]:
        """The string elements of a list, each bad element (or a non-list) reported."""
        if not isinstance(value, list):
            self.problem(at, f"must be a list of {what}, not {kind_of(value)}; ignored")
            return []
        good: list[tuple[int, str]] = []
        for index, item in enumerate(value):
            if isinstance(item, str):
                good.append((index, item))
            else:
                self.problem((*at, index), f"must be a string, not {kind_of(item)}; ignored")
        return good

    def hooks(self, hooks: Any) -> None:
        if not isinstance(hooks, dict):
            self.problem(("hooks",), f"must be an object, not {kind_of(hooks)}")
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
                self.problem(at, f"must be a list of {{matcher, hooks}}, not {kind_of(entries)}")
                continue
            for index, entry in enumerate(entries):
                parsed = self.hook_entry((*at, index), cast(HookEvent, event), entry)
                if parsed is not None:
                    self.layer.hooks.append(parsed)

    def hook_entry(self, at: JsonPath, event: HookEvent, entry: Any) -> HookEntry | None:
        if not isinstance(entry, dict):
            self.problem(at, f"must be an object {{matcher, hooks}}, not {kind_of(entry)}")
            return None
        strange = sorted(set(entry) - {"matcher", "hooks"})
        if strange:
            self.problem(at, f"has fields proctor does not understand: {', '.join(strange)}")
        matcher = entry.get("matcher")
        if matcher is not None and not isinstance(matcher, str):
            self.problem((*at, "matcher"), f"must be a string, not {kind_of(matcher)}; ignored")
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
            self.problem(at, f"must be an object {{type, command}}, not {kind_of(hook)}")
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
