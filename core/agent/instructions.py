"""The project's own instructions for the agent: CLAUDE.md, AGENTS.md and their `@imports`.

People bring these files from the seeds' system and from Codex and expect them to work
unchanged, so the order follows theirs, most general first; a file shown later wins where two
disagree, and the prompt says so:

1. the user's `CLAUDE.md` and `rules/**/*.md` in the seeds' system's folder
   (`CLAUDE_CONFIG_DIR`, else `~/.claude`), unless the person turned that folder off
   (`readClaudeSettings: false`, `PROCTOR_NO_CLAUDE_SETTINGS`: `load_instructions(user=False)`);
2. for each directory from the repository root down to the working directory: `CLAUDE.md`,
   `.claude/CLAUDE.md`, `.claude/rules/**/*.md`, `CLAUDE.local.md` (private, not checked in),
   `AGENTS.md` (Codex's name).

HTML comments are taken out and a rule may apply to some files only (instruction_rules.py).

Outside a git repository only the working directory is searched: its parents are not the
project. A file is read once however it is reached (a symlinked `AGENTS.md`, two imports of
one file). `@path` in a file's text (outside code) imports another file, relative to the
importing file (`~/` is the home directory); an import appears right after its importer.
Imports nest at most `MAX_IMPORT_DEPTH` deep and never in a cycle; a missing or unreadable
file is a problem to report, never a reason to stop.

Files in subdirectories are not read at start: `InstructionSet.on_read` finds them when the
agent first reads a file below them, and the loop hands them to the model as a reminder beside
that tool result (as the seeds' system does with its "system reminder"s).

Only plain values here and no I/O beyond reading the files: the front ends list what was
loaded (`InstructionSet.loaded`, for the status screen and `/memory`), trust decides whether
the project's files are used at all (`Instructions.user_only`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..settings.paths import claude_user_dir
from .instruction_files import MAX_FILE_BYTES as MAX_FILE_BYTES
from .instruction_files import MAX_IMPORT_DEPTH as MAX_IMPORT_DEPTH
from .instruction_files import PER_DIRECTORY as PER_DIRECTORY
from .instruction_files import SOURCE_LABELS as SOURCE_LABELS
from .instruction_files import InstructionSource as InstructionSource
from .instruction_files import LoadedInstruction as LoadedInstruction
from .instruction_files import Reader
from .instruction_files import import_targets as import_targets

PROMPT_HEADING = """\
# Project instructions

Codebase and user instructions are shown below. Follow them: they take precedence over your \
default behaviour. Where two disagree, the one shown later wins (it is closer to the working \
directory, or private to this user)."""


@dataclass(frozen=True, slots=True)
class Instructions:
    """What was read at start, in order (later wins), and what could not be read."""

    files: tuple[LoadedInstruction, ...] = ()
    problems: tuple[str, ...] = ()
    scoped: tuple[LoadedInstruction, ...] = ()
    """Rules with `paths:`: not in the prompt; each joins when a file it covers is read."""

    def prompt_text(self) -> str:
        """The section of the stable system prompt; "" when there is nothing to say."""
        if not self.files:
            return ""
        parts = [PROMPT_HEADING]
        parts += [f"{file.describe()}\n\n{file.text.strip()}" for file in self.files]
        return "\n\n".join(parts)

    def user_only(self) -> Instructions:
        """What applies in a project that is not trusted: the user's own files."""
        return Instructions(
            files=tuple(f for f in self.files if f.source == "user"),
            problems=tuple(p for p in self.problems if _is_users(p)),
            scoped=tuple(f for f in self.scoped if f.source == "user"),
        )

    @property
    def project_files(self) -> tuple[LoadedInstruction, ...]:
        return tuple(f for f in (*self.files, *self.scoped) if f.source != "user")


def _is_users(problem: str) -> bool:
    return problem.startswith(str(claude_user_dir()))


def repository_root(cwd: Path) -> Path | None:
    """The nearest directory at or above `cwd` holding `.git` (a directory or a worktree's
    file), or None outside a repository."""
    for directory in (cwd, *cwd.parents):
        if (directory / ".git").exists():
            return directory
    return None


def project_directories(cwd: Path) -> list[Path]:
    """Where project files are looked for at start: repository root down to `cwd`."""
    root = repository_root(cwd)
    if root is None:
        return [cwd]
    below = cwd.relative_to(root).parts
    return [root.joinpath(*below[:depth]) for depth in range(len(below) + 1)]


def load_instructions(cwd: Path, *, user: bool = True) -> Instructions:
    """Every instruction file that applies in `cwd` at start, in precedence order; `user`
    False leaves out the user's Claude folder (the person turned it off)."""
    reader = Reader()
    directories = project_directories(cwd.resolve())
    if user:
        reader.read(claude_user_dir() / "CLAUDE.md", "user")
        # The user's rules are scoped to the project's files, as the project's top rules are.
        reader.read_rules(claude_user_dir() / "rules", "user", base=directories[0])
    for directory in directories:
        reader.read_directory(directory)
    return Instructions(
        files=tuple(f for f in reader.files if not f.applies_to),
        problems=tuple(reader.problems),
        scoped=tuple(f for f in reader.files if f.applies_to),
    )


class InstructionSet:
    """The session's instructions: those read at start and those found later below `cwd`.

    `on_read(path)` is called for each file the agent reads; it returns the instruction files
    of the directories between `cwd` and that file not looked at before (each directory is
    looked at once, the first time a file below it is read)."""

    def __init__(
        self,
        cwd: Path,
        start: Instructions,
        *,
        follow_subdirectories: bool = True,
        history: Sequence[Mapping[str, Any]] = (),
        refusal: Callable[[LoadedInstruction], str | None] | None = None,
    ) -> None:
        self.cwd = cwd.resolve()
        self.refusal = refusal
        """Why a file found later must not reach the model (instruction_access.py)."""
        self.start = start
        self.follow_subdirectories = follow_subdirectories
        self._found: list[LoadedInstruction] = []
        self._problems: list[str] = []
        self._looked_at: set[Path] = set()
        self._seen: set[Path] = {_resolved(f.path) for f in (*start.files, *start.scoped)}
        # A resumed conversation already carries the reminders it was given.
        reminded = set(reminded_paths(history))
        self._seen |= reminded
        self._waiting: list[LoadedInstruction] = [
            f for f in start.scoped if _resolved(f.path) not in reminded
        ]
        """Scoped rules not given yet: each waits for a read of a file it covers."""

    def fork(self) -> InstructionSet:
        """The instructions as a sub-agent starts with them: every file in use now, read
        again from nothing, as its own start (its system prompt), and its own record of
        what it has found since, so a directory it reads first is still news to the main
        agent when that one reads there."""
        forked = InstructionSet(
            self.cwd,
            Instructions(files=self.loaded(), scoped=tuple(self._waiting)),
            follow_subdirectories=self.follow_subdirectories,
            refusal=self.refusal,
        )
        forked._looked_at = set(self._looked_at)
        return forked

    def loaded(self) -> tuple[LoadedInstruction, ...]:
        """Every file in use, with where it came from: for `/memory` and the status screen."""
        return (*self.start.files, *self._found)

    @property
    def problems(self) -> tuple[str, ...]:
        return (*self.start.problems, *self._problems)

    def listing(self) -> list[tuple[Path, str]]:
        """Each file in use and where it came from, in words: what `/memory` shows."""
        rows: list[tuple[Path, str]] = []
        for file in self.loaded():
            how = SOURCE_LABELS[file.source]
            if file.imported_from is not None:
                how += f"; imported by {file.imported_from}"
            if file.applies_to:
                how += f"; for files matching {', '.join(file.applies_to)}"
            if file.found_on_read is not None:
                how += f"; found when {file.found_on_read} was read"
            rows.append((file.path, how))
        return rows

    def on_read(self, path: Path) -> list[LoadedInstruction]:
        target = path if path.is_absolute() else self.cwd / path
        resolved = _resolved(target)
        found: list[LoadedInstruction] = []
        reader = Reader(seen=set(self._seen))
        try:
            below = resolved.parent.relative_to(self.cwd).parts
        except ValueError:
            below = ()  # outside the project: no directories of its to look in
        if self.follow_subdirectories:
            for depth in range(1, len(below) + 1):
                directory = self.cwd.joinpath(*below[:depth])
                if directory in self._looked_at:
                    continue
                self._looked_at.add(directory)
                reader.read_directory(directory, found_on_read=target)
        self._seen |= reader.seen
        self._waiting += [f for f in reader.files if f.applies_to]
        found += [f for f in reader.files if not f.applies_to]
        due = [f for f in self._waiting if f.covers(resolved)]
        self._waiting = [f for f in self._waiting if f not in due]
        found += [replace(f, found_on_read=target) for f in due]
        if self.refusal is not None:
            refusals = [(f, self.refusal(f)) for f in found]
            found = [f for f, why in refusals if why is None]
            reader.problems += [why for _, why in refusals if why is not None]
        self._found += found
        self._problems += reader.problems
        return found


def reminder_text(files: Iterable[LoadedInstruction]) -> str:
    """The text given to the model beside the tool result that found `files`."""
    parts = [f"{file.describe()}\n\n{file.text.strip()}" for file in files]
    return (
        "<system-reminder>\nThe directories of the file just read have instructions of "
        "their own; follow them for the files there.\n\n"
        + "\n\n".join(parts)
        + "\n</system-reminder>"
    )


_REMINDED = re.compile(r"^Contents of (/\S.*?) \(", re.MULTILINE)


def reminded_paths(messages: Sequence[Mapping[str, Any]]) -> list[Path]:
    """The files a conversation's reminders already gave the model."""
    paths: list[Path] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for block in content:
            text = block.get("text") if isinstance(block, dict) else None
            if isinstance(text, str) and text.startswith("<system-reminder>"):
                paths += [_resolved(Path(p)) for p in _REMINDED.findall(text)]
    return paths


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
