"""What a project's own settings files would do once trusted, as lines for the trust dialog.

Why it is a separate, pure module: it reads only the `Settings` value the engine already
loaded (no files, no Textual), so it can be tested without a screen and reused by a
headless front end. It lists exactly what trust changes: hooks and MCP servers (they run
programs; a server is shown with the command or URL it would start, after `${VAR}`s are filled
in, since that is what would run), allow rules, extra directories and a default mode (set
aside while untrusted); deny and ask rules are listed too because people like to know they are
there, though they always apply. Your own stdio MCP servers are listed too, when they would
start in the project's directory: until you trust it they start elsewhere, since its files
could change what they run (`npx` finds its `node_modules`, `python -m x` its `x.py`). The
project's instruction files (CLAUDE.md, AGENTS.md, their imports) and skills are listed as
well: they steer the agent, so they are shown before they are used. An empty list means nothing here
depends on trust: nothing to ask about.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from core.agent.instructions import Instructions
from core.settings.values import PROJECT_SOURCES, Settings


def _count(number: int, word: str, plural: str | None = None) -> str:
    return f"{number} {word if number == 1 else (plural or word + 's')}"


def _shown(path: Path, project: Path) -> str:
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        try:
            return path.resolve().relative_to(project.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):
            return str(path)


def trust_findings(
    settings: Settings,
    project: Path,
    instructions: Instructions | None = None,
    skills: Sequence[Path] = (),
) -> list[str]:
    """One line per project settings file: `.proctor/settings.json: 2 hooks (PreToolUse, ...`,
    then one per project instruction file: `CLAUDE.md: instructions for the agent (12 lines)`."""
    lines: list[str] = []
    for path, source in zip(settings.files, settings.file_sources, strict=True):
        if source not in PROJECT_SOURCES:
            continue
        parts: list[str] = []
        commands = [
            (entry.event, hook)
            for entry in settings.hooks
            for hook in entry.hooks
            if hook.path == path
        ]
        if commands:
            events = list(dict.fromkeys(event for event, _ in commands))
            parts.append(f"{_count(len(commands), 'hook')} ({', '.join(events)})")
        servers = [server for server in settings.mcp_servers if server.path == path]
        if servers:
            shown = "; ".join(f"{server.name}: {server.target}" for server in servers)
            parts.append(f"{_count(len(servers), 'MCP server')} ({shown})")
        for behavior in ("allow", "deny", "ask"):
            rules = [r for r in settings.rules if r.path == path and r.behavior == behavior]
            if rules:
                shown = ", ".join(str(r) for r in rules[:3]) + (", ..." if len(rules) > 3 else "")
                parts.append(f"{_count(len(rules), f'{behavior} rule')} ({shown})")
        directories = [
            d
            for d, s in zip(
                settings.additional_directories, settings.directory_sources, strict=True
            )
            if s == source
        ]
        if directories:
            parts.append(_count(len(directories), "additional directory", "additional directories"))
        if settings.default_mode is not None and settings.default_mode_source == source:
            parts.append(f"default mode {settings.default_mode}")
        empty = "no MCP servers" if source == "mcp-json" else "settings (no hooks or rules)"
        summary = ", ".join(parts) if parts else empty
        lines.append(f"{_shown(path, project)}: {summary}")
    yours = [
        server
        for server in settings.mcp_servers
        if server.source not in PROJECT_SOURCES and server.transport == "stdio" and not server.cwd
    ]
    if yours:
        shown = "; ".join(f"{server.name}: {server.target}" for server in yours)
        lines.append(
            f"your {_count(len(yours), 'MCP server')} would start in this folder, where its files "
            f"can change what runs ({shown}); untrusted, they start beside your settings"
        )
    for file in instructions.project_files if instructions is not None else ():
        count = len(file.text.splitlines())
        via = (
            f", imported by {_shown(file.imported_from, project)}"
            if file.imported_from is not None
            else ""
        )
        lines.append(
            f"{_shown(file.path, project)}: instructions for the agent "
            f"({_count(count, 'line')}{via})"
        )
    for skill in skills:  # announced to the model by name and description once trusted
        lines.append(f"{_shown(skill, project)}: a skill offered to the agent")
    return lines
