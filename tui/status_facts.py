"""What the status screen shows, gathered from the session as plain values.

Why it is apart from the screen: the facts come from four places (the prepared session, the
live one, the call book's MCP board, the status bar's figures) and each may be missing while
the session starts or if it failed to; gathering them here, once, into one frozen value keeps
the screen a drawing of that value, and lets a test say what the person should read without
laying anything out. Nothing here waits: the sandbox line is what is known now, the context
figure the last one measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from core.agent.instructions import LoadedInstruction

    from .app_base import AppBase

STATUS_KEY = "f3"
"""Opens the status screen (and closes it); free everywhere else in the app."""

InstructionOrigin = Literal[
    "user", "project", "rules", "local", "AGENTS.md", "subdirectory", "import"
]
"""Where an instruction file came from, in one word a person can scan down a column."""

SETTINGS_WORDS: dict[str, str] = {
    "flag-settings": "--settings",
    "local": "project, local",
    "project": "project",
    "claude-local": "project's Claude, local",
    "claude-project": "project's Claude",
    "mcp-json": "project's MCP servers",
    "user": "you",
    "claude-user": "your Claude settings",
}
"""A settings file's source in a person's words (the sources are core/settings/values.py's)."""

PROJECT_SETTINGS = frozenset({"local", "project", "claude-local", "claude-project", "mcp-json"})


@dataclass(frozen=True, slots=True)
class InstructionRow:
    path: Path
    origin: InstructionOrigin
    detail: str = ""
    """How it was reached: by which import, which read, for which files."""


@dataclass(frozen=True, slots=True)
class SettingsRow:
    path: Path
    source: str
    in_force: bool
    """False: a project's file set aside because the project is not trusted."""


@dataclass(frozen=True, slots=True)
class StatusFacts:
    session_id: str = ""
    session_dir: Path | None = None
    project: Path | None = None
    model: str = ""
    mode: str = ""
    context: str = ""
    """`context 62%`, or "" before the first response is measured."""
    context_tokens: tuple[int, int] = (0, 0)
    """Tokens in the conversation and the model's window, as the loop last measured them."""
    instructions: tuple[InstructionRow, ...] = ()
    instruction_problems: tuple[str, ...] = ()
    settings: tuple[SettingsRow, ...] = ()
    claude_settings_read: bool = True
    sandbox: str = ""
    mcp: str = ""
    hooks: int = 0
    """Hook commands that run in this session."""
    hooks_set_aside: int = 0
    """A project's hook commands that do not run: it is not trusted."""
    starting: bool = False
    """The session is not open yet (or failed to open): most facts are not known."""
    unwritten: tuple[str, ...] = ()
    """The session's records (audit log, transcript) that could not be written, and why."""


def instruction_origin(file: LoadedInstruction) -> InstructionRow:
    """One instruction file as the status screen lists it."""
    origin: InstructionOrigin
    detail = ""
    if file.imported_from is not None:
        origin, detail = "import", f"by {file.imported_from.name}"
    elif file.found_on_read is not None and not file.applies_to:
        origin, detail = "subdirectory", f"found reading {file.found_on_read.name}"
    else:
        origin = "AGENTS.md" if file.source == "agents" else file.source
    if file.applies_to:
        scope = f"for {', '.join(file.applies_to)}"
        detail = f"{detail}; {scope}" if detail else scope
    return InstructionRow(file.path, origin, detail)


def status_facts(app: AppBase) -> StatusFacts:
    prepared, live = app.prepared, app.live
    if prepared is None or live is None:
        return StatusFacts(
            session_id=prepared.session.id if prepared is not None else "",
            project=prepared.cwd if prepared is not None else None,
            starting=True,
        )
    settings = prepared.settings
    trusted = live.trusted
    rows = tuple(
        SettingsRow(path, source, trusted or source not in PROJECT_SETTINGS)
        for path, source in zip(settings.files, settings.file_sources, strict=True)
    )
    instructions = live.instructions
    compactor = live.loop.compactor
    hooks = [hook for entry in settings.hooks for hook in entry.hooks]
    return StatusFacts(
        session_id=prepared.session.id,
        session_dir=prepared.session.directory,
        project=prepared.cwd,
        model=live.model.model,
        mode=live.mode,
        context=app.status_bar.context,
        context_tokens=(compactor.tokens, compactor.window),
        instructions=tuple(instruction_origin(f) for f in instructions.loaded())
        if instructions is not None
        else (),
        instruction_problems=instructions.problems if instructions is not None else (),
        settings=rows,
        claude_settings_read=settings.read_claude,
        sandbox=live.sandbox.status(),
        mcp=app.book.servers.summary(),
        hooks=sum(trusted or hook.source not in PROJECT_SETTINGS for hook in hooks),
        hooks_set_aside=sum(not trusted and hook.source in PROJECT_SETTINGS for hook in hooks),
        unwritten=tuple(error for error in (live.audit.error, live.transcript.error) if error),
    )
