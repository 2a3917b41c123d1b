"""`proctor check`: what would happen to a tool call, without running it.

Users test their rules with it, one call at a time or as JSON lines through `--batch`. It
runs the real decision chain on the real tools, reading the same settings a session would
(unless `--isolated`), and says in plain words which rule from which file, which mode, or
which part of a command decided. Hooks are not run: they are programs with effects, and
check never runs anything.

Settings are read once per working directory and rule set, so a batch of thousands of
requests against one project reads its files once.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from .access.context import PermissionMode, ToolPermissionContext
from .access.decision import Ask, DecidedBy, Deny, PermissionDecision
from .access.mcp_names import split_tool_name
from .access.modes import MODE_LABELS, parse_mode
from .access.sandbox_policy import SandboxKind
from .app_state import AppState, AppStateStore
from .executor.calls import ToolCall, classify
from .executor.lifecycle import format_input_error
from .hooks import NO_PRE_OUTCOME
from .mcp.tool import configured_tool
from .permissions.call import prepare
from .permissions.decide import evaluate
from .permissions.sandboxing import SandboxView
from .permissions.session_sandbox import program_files
from .permissions.setup import permission_context_from
from .registry import known_tool_names
from .sandbox.support import SandboxSupport, probe
from .settings import sandbox as sandbox_config
from .settings.mcp_servers import McpServerConfig
from .settings.read import load_settings
from .settings.sandbox import SandboxSettings
from .settings.values import PROJECT_SOURCES, Settings
from .tool import AnyTool, ToolContext, ToolOptions, ToolPool
from .trust import is_trusted

Behavior = Literal["allow", "ask", "deny"]
SANDBOX_WORDS: dict[SandboxKind, str] = {
    "read-only": "in the read-only sandbox",
    "workspace": "in the workspace sandbox",
    "none": "outside the sandbox",
}


@dataclass(frozen=True, slots=True)
class CheckRequest:
    tool: str
    input: Any
    mode: PermissionMode | None = None
    cwd: Path | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CheckResult:
    tool: str
    behavior: Behavior
    reason: str
    decided_by: DecidedBy
    read_only: bool
    concurrency_safe: bool
    mode: PermissionMode
    notes: tuple[str, ...] = field(default=())
    sandbox: SandboxKind | None = None
    """For a command that would run (or run once approved): its sandbox ("none": outside)."""
    problems: tuple[str, ...] = ()
    """Problems in the settings files the decision was made with (file, line, what)."""
    sandbox_reason: str = ""
    suggestions: tuple[str, ...] = ()
    """The rule "yes, and don't ask again" would keep, when the call asks."""

    def as_json(self) -> dict[str, Any]:
        return {
            "behavior": self.behavior,
            "reason": self.reason,
            "read_only": self.read_only,
            "concurrency_safe": self.concurrency_safe,
            "decided_by": {"kind": self.decided_by.kind, "detail": self.decided_by.detail},
            "mode": self.mode,
            **(
                {"sandbox": self.sandbox, "sandbox_reason": self.sandbox_reason}
                if self.sandbox is not None
                else {}
            ),
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"suggestions": list(self.suggestions)} if self.suggestions else {}),
            **({"settings_problems": list(self.problems)} if self.problems else {}),
        }

    def as_text(self, summary: str) -> str:
        lines = [
            f"{self.behavior}: {self.tool}({summary})",
            f"  why: {self.reason}",
            f"  decided by: {explain(self.decided_by)}",
            f"  mode: {MODE_LABELS[self.mode]} · read-only: {_yes(self.read_only)} · "
            f"may run beside other calls: {_yes(self.concurrency_safe)}",
        ]
        if self.sandbox is not None:
            where = "runs" if self.behavior == "allow" else "would run, if approved,"
            lines.append(
                f"  sandbox: {where} {SANDBOX_WORDS[self.sandbox]} ({self.sandbox_reason})"
            )
        if self.suggestions:
            lines.append(f"  don't ask again would keep: {', '.join(self.suggestions)}")
        lines += [f"  settings problem: {problem}" for problem in self.problems]
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


class CheckError(ValueError):
    """A request that cannot be checked; the message says why and what to give instead."""


def explain(decided_by: DecidedBy) -> str:
    kind, detail = decided_by.kind, decided_by.detail
    return {
        "rule": detail,
        "hook": f"a hook: {detail}",
        "mode": f"the mode: {detail}",
        "tool": detail,
        "user": f"the user: {detail}",
        "analysis": "the command analysis (tree-sitter-bash)",
        "sandbox": f"the sandbox: {detail}",
        "default": f"the default: {detail}",
        "skill": f"a running skill: {detail}",
    }[kind]


class Checker:
    def __init__(
        self,
        tools: ToolPool,
        *,
        cwd: Path,
        isolated: bool = False,
        settings_file: Path | None = None,
    ) -> None:
        """`settings_file` is `--settings FILE`, read as a session would (check it exists
        with `require_settings_file` first)."""
        self.tools = tools
        self.cwd = cwd
        self.isolated = isolated
        self.settings_file = settings_file
        self._contexts: dict[
            tuple[Any, ...], tuple[ToolPermissionContext, tuple[str, ...], tuple[str, ...]]
        ] = {}
        self._servers: dict[Path, tuple[McpServerConfig, ...]] = {}
        self._sandbox_settings: dict[Path, SandboxSettings] = {}
        self._support: SandboxSupport | None = None

    def sandbox_view(self, cwd: Path) -> SandboxView:
        """What a session in `cwd` would know about its sandbox (the kernel probed once)."""
        if cwd not in self._sandbox_settings:
            settings = load_settings(cwd, isolated=self.isolated, settings_file=self.settings_file)
            self._remember_sandbox(cwd, settings, self.isolated or is_trusted(cwd))
        if self._support is None:
            self._support = probe()  # only once a command is checked
        return SandboxView(self._sandbox_settings[cwd], self._support)

    def _remember_sandbox(self, cwd: Path, settings: Settings, trusted: bool) -> None:
        if cwd not in self._sandbox_settings:
            merged, _ = sandbox_config.merge(
                settings.sandbox_layers, trusted=trusted, project_sources=PROJECT_SOURCES
            )
            self._sandbox_settings[cwd] = merged

    def permission_context(
        self, request: CheckRequest
    ) -> tuple[ToolPermissionContext, tuple[str, ...], tuple[str, ...]]:
        """The context a session would start with, its settings problems, and notes."""
        cwd = (request.cwd or self.cwd).resolve()
        key = (cwd, request.mode, request.allow, request.deny, request.ask)
        if key not in self._contexts:
            settings = load_settings(
                cwd,
                allow=request.allow,
                deny=request.deny,
                ask=request.ask,
                isolated=self.isolated,
                settings_file=self.settings_file,
                tool_names=known_tool_names(),
            )
            trusted = self.isolated or is_trusted(cwd)
            context, notes = permission_context_from(
                settings,
                mode=request.mode,
                allow_bypass=request.mode == "bypassPermissions",
                trusted=trusted,
                protected_files=program_files(settings, cwd),
            )
            # The same files say what the sandbox is and which MCP servers there are.
            self._remember_sandbox(cwd, settings, trusted)
            self._servers.setdefault(cwd, settings.mcp_servers)
            problems = tuple(str(problem) for problem in settings.problems)
            if not trusted and settings.has_project_hooks_or_settings:
                notes += ("this project is not trusted yet, as a new session would see it",)
            self._contexts[key] = (context, problems, notes)
        return self._contexts[key]

    def find_tool(self, request: CheckRequest) -> tuple[AnyTool, tuple[str, ...]]:
        """The tool the request names, and notes about it. An MCP tool is made from the
        configuration alone: check starts no server."""
        tool = self.tools.find(request.tool)
        if tool is not None:
            return tool, ()
        parts = split_tool_name(request.tool)
        if parts is None:
            raise CheckError(
                f"unknown tool {request.tool!r}; the tools are: {', '.join(self.tools.names)}"
            )
        self.permission_context(request)
        servers = self._servers[(request.cwd or self.cwd).resolve()]
        config = next((c for c in servers if c.name == parts[0]), None)
        if config is None:
            known = ", ".join(c.name for c in servers) or "none"
            raise CheckError(
                f"no MCP server named {parts[0]!r} is configured here (configured: {known})"
            )
        note = (
            f"the MCP server `{config.name}` was not started: check does not know its schema "
            "or its hints, so any input is taken and the tool counts as not read-only"
        )
        return configured_tool(config, parts[1]), (note,)

    async def check(self, request: CheckRequest) -> CheckResult:
        tool, tool_notes = self.find_tool(request)
        raw = coerce_input(tool.input_json_schema(), request.input)
        try:
            parsed = tool.parse_input(raw)
        except (ValidationError, ValueError, TypeError) as error:
            raise CheckError(format_input_error(tool.name, error)) from None
        permissions, problems, notes = self.permission_context(request)
        notes = (*notes, *tool_notes)
        cwd = (request.cwd or self.cwd).resolve()
        context = ToolContext(
            cwd=cwd,
            app_state=AppStateStore(AppState(permission_context=permissions)),
            options=ToolOptions(tools=self.tools),
        )
        own = await tool.check_permissions(parsed, context)
        view = self.sandbox_view(cwd) if tool.sandboxable else None
        decision: PermissionDecision = evaluate(
            prepare(tool, parsed, cwd, permissions), NO_PRE_OUTCOME, own, view
        )
        policy = None if isinstance(decision, Deny) else decision.sandbox
        safe = classify(ToolCall("check", tool.name, raw), self.tools.extended([tool]))
        safe_together = safe.concurrency_safe
        try:
            read_only = bool(tool.is_read_only(parsed))
        except Exception:
            read_only = False
        reason = getattr(decision, "message", "") or f"allowed by {explain(decision.decided_by)}"
        return CheckResult(
            tool.name,
            decision.behavior,
            reason,
            decision.decided_by,
            read_only,
            safe_together,
            permissions.mode,
            notes,
            sandbox=policy.kind if policy is not None else None,
            sandbox_reason=policy.why if policy is not None else "",
            problems=problems,
            suggestions=decision.suggestions if isinstance(decision, Ask) else (),
        )


def coerce_input(schema: Mapping[str, Any], given: Any) -> Any:
    """The input as a JSON object. Plain text is accepted for a tool with one required text
    field (`proctor check Bash 'git status'`)."""
    if isinstance(given, str):
        text = given.strip()
        if text.startswith("{"):
            try:
                return json.loads(text)
            except json.JSONDecodeError as error:
                raise CheckError(f"the input looks like JSON but is not valid: {error}") from None
        required = schema.get("required", [])
        properties = schema.get("properties", {})
        if len(required) == 1 and properties.get(required[0], {}).get("type") == "string":
            return {required[0]: given}
        fields = ", ".join(sorted(properties))
        raise CheckError(f"give the input as a JSON object with the fields: {fields}")
    return given


def request_from_json(line: Mapping[str, Any], cwd: Path) -> CheckRequest:
    """One `--batch` request: {"tool", "input", "mode"?, "cwd"?, "rules"?: {allow, deny, ask}}."""
    if not isinstance(line, Mapping):
        raise CheckError("each line must be a JSON object")
    tool = line.get("tool")
    if not isinstance(tool, str):
        raise CheckError('"tool" must be the name of a tool')
    if "input" not in line:
        raise CheckError('"input" is missing')
    rules = line.get("rules") or {}
    if not isinstance(rules, Mapping):
        raise CheckError('"rules" must be an object with "allow", "deny" and "ask" lists')
    lists = {}
    for behavior in ("allow", "deny", "ask"):
        value = rules.get(behavior, [])
        if not isinstance(value, list) or not all(isinstance(r, str) for r in value):
            raise CheckError(f'"rules.{behavior}" must be a list of rule strings')
        lists[behavior] = tuple(value)
    mode = line.get("mode")
    where = line.get("cwd")
    if where is not None and not isinstance(where, str):
        raise CheckError('"cwd" must be a path')
    return CheckRequest(
        tool=tool,
        input=line["input"],
        mode=parse_mode(mode) if isinstance(mode, str) else None,
        cwd=(cwd / where) if where else None,
        **lists,
    )


async def check_batch(
    checker: Checker, lines: Iterable[str], cwd: Path
) -> AsyncIterator[dict[str, Any]]:
    """Yield one JSON-ready answer per input line, in order; a bad line gets {"error"}."""
    for line in lines:
        if not line.strip():
            continue
        try:
            request = request_from_json(json.loads(line), cwd)
            yield (await checker.check(request)).as_json()
        except (CheckError, ValueError) as error:
            yield {"error": str(error)}


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"
