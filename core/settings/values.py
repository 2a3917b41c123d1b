"""What the settings files say, as plain immutable values: `Settings` and its hook entries.

The permission layer, the hook runner, the executor and the MCP connections receive these and
never read a file themselves (a server is an `McpServerConfig`, from `mcp_servers.py`). Every
rule keeps the source and the file it came from, and rules from every source are kept: the
decision chain makes a deny anywhere beat an allow anywhere, so nothing that builds a
`Settings` may drop a rule. Each source is named (`SettingsSource`) so that what a cloned
project set (`PROJECT_SOURCES`) can be told apart from what the user set; a project's
`.mcp.json` ("mcp-json") is one of those, since the servers it names are programs it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from ..access.context import PermissionMode, PermissionRule
from ..hooks import HookEvent
from .mcp_servers import McpServerConfig
from .problems import SettingsProblem
from .sandbox import SandboxLayer

SettingsSource = Literal[
    "cli",
    "flag-settings",
    "local",
    "project",
    "claude-local",
    "claude-project",
    "mcp-json",
    "user",
    "claude-user",
]
SETTINGS_SOURCES: tuple[SettingsSource, ...] = get_args(SettingsSource)

PROJECT_SOURCES: frozenset[str] = frozenset(
    {"local", "project", "claude-local", "claude-project", "mcp-json"}
)
"""Sources a cloned repository controls: their hooks run and their MCP servers start only in a
trusted project."""

DEFAULT_HOOK_TIMEOUT_S = 60.0


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
    mcp_servers: tuple[McpServerConfig, ...] = ()
    """Every usable server, sorted by name; a name is the highest source's that declares it."""
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
    thinking: bool | None = None
    """`alwaysThinkingEnabled`: false turns thinking off; true or unset asks for it where
    the model takes it."""
    auto_compact: bool | int | None = None
    """`autoCompact`: true/false, or the percentage of the window to compact at (None: unset,
    which is on at the default)."""
    sandbox_layers: tuple[SandboxLayer, ...] = ()
    """Each file's `sandbox` section, highest source first (merged once trust is known:
    `core.settings.sandbox.merge`)."""
    read_claude: bool = True
    """Whether the user's own Claude folder is read (`readClaudeSettings` in the user's or
    the `--settings` file, and `PROCTOR_NO_CLAUDE_SETTINGS` in the environment): false keeps
    out `~/.claude/settings.json`, its instructions (`~/.claude/CLAUDE.md`, `rules/`), its
    commands and skills (`~/.claude/commands`, `skills/`). A project's own `.proctor` file can
    switch off only the project's `.claude` files."""
    bypass_disabled_in: str | None = None
    """The file that set `permissions.disableBypassPermissionsMode: "disable"` (any file
    may: it only takes a mode away); None when none did."""

    @property
    def has_project_hooks_or_settings(self) -> bool:
        return any(source in PROJECT_SOURCES for source in self.file_sources)
