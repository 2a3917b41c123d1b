"""Settings other agents' files hold that proctor reads past: each with why it does nothing.

Users bring their `.claude/settings.json` and the files they keep beside it, and those hold
keys for things proctor does not have (a login, plugins, a status line, telemetry). Such a key
is not an error: the rest of the file still counts. But quietly ignoring it would leave the
user believing it works, so each one is reported once, with its line, saying that it is not
supported and why. A key proctor has never heard of is reported too (a typo reads the same
as a key for another tool). This module is data: the parser (parse.py) walks the file and
looks keys up here, so the list can grow without touching the walk.

Keys whose absence would make proctor less safe than the user meant are not here but
implemented (`permissions.disableBypassPermissionsMode`, `disabledMcpjsonServers`, and
`enabledMcpjsonServers`, read as the only `.mcp.json` servers to start); the
ones left that restrict something (`deniedMcpServers`, `allowManagedHooksOnly`) belong to an
administrator's managed settings, which proctor does not have, and are reported as such.
"""

from __future__ import annotations

from collections.abc import Mapping

_MANAGED = "proctor has no managed (administrator) settings"
_LOOK = "proctor's look is its theme (--theme) and its own status bar"
_NO_PLUGINS = "proctor has no plugins or marketplaces"
_NO_LOGIN = "proctor has no login; it uses ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"
_PROJECT_SERVERS = "a project's MCP servers start once you trust the project"

UNSUPPORTED_KEYS: Mapping[str, str] = {
    "apiKeyHelper": _NO_LOGIN,
    "awsAuthRefresh": "proctor talks to the Anthropic API only",
    "awsCredentialExport": "proctor talks to the Anthropic API only",
    "forceLoginMethod": _NO_LOGIN,
    "forceLoginOrgUUID": _NO_LOGIN,
    "otelHeadersHelper": "proctor sends no telemetry",
    "env": "proctor does not set environment variables from settings; export them first",
    "cleanupPeriodDays": "proctor keeps sessions until you delete them",
    "companyAnnouncements": _MANAGED,
    "allowManagedHooksOnly": _MANAGED,
    "allowManagedPermissionRulesOnly": _MANAGED,
    "allowManagedMcpServersOnly": _MANAGED,
    "allowedMcpServers": _MANAGED,
    "deniedMcpServers": f"{_MANAGED}; to keep a server from starting, remove it",
    "availableModels": "proctor does not restrict --model",
    "includeCoAuthoredBy": "proctor adds no byline to commits",
    "attribution": "proctor adds no byline to commits",
    "includeGitInstructions": "proctor's system prompt is its own",
    "outputStyle": "proctor's system prompt is its own",
    "language": "proctor's system prompt is its own",
    "disableAllHooks": "proctor runs every hook the files declare; remove a hook to stop it",
    "enableAllProjectMcpServers": _PROJECT_SERVERS,
    "enabledPlugins": _NO_PLUGINS,
    "extraKnownMarketplaces": _NO_PLUGINS,
    "strictKnownMarketplaces": _NO_PLUGINS,
    "effortLevel": "proctor does not set the model's effort (it asks for adaptive thinking)",
    "statusLine": _LOOK,
    "spinnerTipsEnabled": _LOOK,
    "spinnerTipsOverride": _LOOK,
    "spinnerVerbs": _LOOK,
    "terminalProgressBarEnabled": _LOOK,
    "showTurnDuration": _LOOK,
    "prefersReducedMotion": _LOOK,
    "theme": _LOOK,
    "editorMode": _LOOK,
    "preferredNotifChannel": _LOOK,
    "fileSuggestion": "proctor has no @-file picker",
    "respectGitignore": "proctor has no @-file picker",
    "autoUpdatesChannel": "proctor does not update itself",
    "plansDirectory": "proctor keeps a session's plan in the session's directory",
    "skipDangerousModePermissionPrompt": "proctor has no such prompt: --allow-bypass says it",
}
"""Top-level keys of other agents' settings that proctor does not act on, and why."""

SILENT_KEYS = frozenset({"$schema"})
"""Keys for editors, not for any agent: nothing to report."""

UNSUPPORTED_PERMISSION_KEYS: Mapping[str, str] = {
    "disableAutoMode": "proctor has no auto mode",
}
"""Keys of `permissions` that proctor does not act on, and why."""

UNSUPPORTED_MODES: Mapping[str, str] = {
    "auto": "proctor has no auto mode: a person, not a classifier, approves calls",
    "delegate": "proctor has no delegate mode",
}
"""`defaultMode` values other agents accept that proctor does not have, and why."""

MODEL_ALIASES = frozenset({"default", "sonnet", "opus", "haiku", "opusplan"})
"""`model` values other agents resolve to a model themselves; proctor sends `model` to the
API as it is, where an alias is no model at all, so it is reported and not used."""


def unsupported_model(name: str) -> str | None:
    """Why proctor cannot use `name` from a settings file as given, or None if it can."""
    if name.lower() in MODEL_ALIASES:
        return "proctor does not resolve model aliases: give a model id such as claude-sonnet-5-5"
    if name.endswith("]") and "[" in name:  # `sonnet[1m]`: another agent's context-size flag
        return f"proctor does not read the {name[name.index('[') :]} suffix: give a model id"
    return None
