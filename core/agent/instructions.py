"""The project's own instructions for the agent: CLAUDE.md, AGENTS.md and their `@imports`.

People bring these files from the seeds' system and from Codex and expect them to work
unchanged, so the order follows theirs, most general first; a file shown later wins where two
disagree, and the prompt says so:

1. the user's `CLAUDE.md` in the seeds' system's folder (`CLAUDE_CONFIG_DIR`, else `~/.claude`);
2. for each directory from the repository root down to the working directory: `CLAUDE.md`,
   `.claude/CLAUDE.md`, `CLAUDE.local.md` (private, not checked in), `AGENTS.md` (Codex's name).

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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..settings.paths import claude_user_dir

InstructionSource = Literal["user", "project", "local", "agents"]
"""Whose file it is: the user's own, the project's (checked in), the user's private one for
this project (CLAUDE.local.md), or the project's AGENTS.md."""

SOURCE_LABELS: dict[InstructionSource, str] = {
    "user": "user's private instructions for all projects",
    "project": "project instructions, checked into the codebase",
    "local": "user's private project instructions, not checked in",
    "agents": "project instructions for coding agents (AGENTS.md)",
}

PER_DIRECTORY: tuple[tuple[str, InstructionSource], ...] = (
    ("CLAUDE.md", "project"),
    (".claude/CLAUDE.md", "project"),
    ("CLAUDE.local.md", "local"),
    ("AGENTS.md", "agents"),
)

MAX_IMPORT_DEPTH = 5
"""How deep `@imports` nest (the seeds' system's limit): a file imported by a file imported
by ... five times over is read; one level further is reported, not read."""

MAX_FILE_BYTES = 256 * 1024
"""Past this a file is cut short (and the cut reported): an instruction file this large is
almost certainly not one, and the stable prompt goes out with every request."""

PROMPT_HEADING = """\
# Project instructions

Codebase and user instructions are shown below. Follow them: they take precedence over your \
default behaviour. Where two disagree, the one shown later wins (it is closer to the working \
directory, or private to this user)."""

# `@path` at the start of a line or after whitespace; an e-mail address has no space before @.
_IMPORT = re.compile(r"(?:^|(?<=\s))@((?:[^\s\\]|\\ )+)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"`+[^`]*`+")
_TRAILING = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class LoadedInstruction:
    """One instruction file as read: where it is, whose it is, and how it was reached."""

    path: Path
    source: InstructionSource
    text: str
    imported_from: Path | None = None
    """The file whose `@import` brought it in (None: found where such files are looked for)."""
    found_on_read: Path | None = None
    """The file whose first read below its directory brought it in (None: read at start)."""

    def describe(self) -> str:
        """`Contents of /p/CLAUDE.md (project instructions, checked into the codebase):`."""
        how = SOURCE_LABELS[self.source]
        if self.imported_from is not None:
            how += f", imported by {self.imported_from}"
        return f"Contents of {self.path} ({how}):"


@dataclass(frozen=True, slots=True)
class Instructions:
    """What was read at start, in order (later wins), and what could not be read."""

    files: tuple[LoadedInstruction, ...] = ()
    problems: tuple[str, ...] = ()

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
        )

    @property
    def project_files(self) -> tuple[LoadedInstruction, ...]:
        return tuple(f for f in self.files if f.source != "user")


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


def load_instructions(cwd: Path) -> Instructions:
    """Every instruction file that applies in `cwd` at start, in precedence order."""
    reader = _Reader()
    reader.read(claude_user_dir() / "CLAUDE.md", "user")
    for directory in project_directories(cwd.resolve()):
        for name, source in PER_DIRECTORY:
            reader.read(directory / name, source)
    return Instructions(files=tuple(reader.files), problems=tuple(reader.problems))


@dataclass(slots=True)
class _Reader:
    """Reads files and their imports once each, collecting problems instead of raising."""

    files: list[LoadedInstruction] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)

    def read(
        self,
        path: Path,
        source: InstructionSource,
        *,
        chain: tuple[Path, ...] = (),
        importer: Path | None = None,
        found_on_read: Path | None = None,
    ) -> None:
        """Read `path` and what it imports; an import names its `importer` and `chain` holds
        every file above it (resolved), to tell a cycle from a file imported twice."""
        try:
            key = path.resolve()
        except (OSError, RuntimeError):
            key = path
        if key in chain and importer is not None:
            self.problems.append(
                f"{importer}: @{_written(path, importer)} imports a file that imports it "
                "(a cycle); not read again"
            )
            return
        if key in self.seen:
            return  # read already: one copy in the prompt
        text = self._text(path, importer=importer)
        if text is None:
            return
        self.seen.add(key)
        self.files.append(
            LoadedInstruction(
                path=path,
                source=source,
                text=text,
                imported_from=importer,
                found_on_read=found_on_read,
            )
        )
        targets = import_targets(text, path.parent)
        if targets and len(chain) >= MAX_IMPORT_DEPTH:
            self.problems.append(
                f"{path}: imports nested more than {MAX_IMPORT_DEPTH} deep are not followed "
                f"({', '.join('@' + _written(t, path) for t in targets)})"
            )
            return
        for target in targets:
            self.read(
                target, source, chain=(*chain, key), importer=path, found_on_read=found_on_read
            )

    def _text(self, path: Path, *, importer: Path | None) -> str | None:
        try:
            if path.exists() and not path.is_file() and not path.is_dir():
                # A FIFO or a device would block or never end: a project could hang start-up.
                self.problems.append(f"{path}: not a regular file; not read")
                return None
            with path.open("rb") as file:
                raw = file.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            if importer is not None:
                self.problems.append(
                    f"{importer}: @{_written(path, importer)} does not exist; not imported"
                )
            return None
        except IsADirectoryError:
            if importer is not None:
                self.problems.append(
                    f"{importer}: @{_written(path, importer)} is a directory, not a file"
                )
            return None
        except OSError as error:
            self.problems.append(f"{path}: could not be read ({error.strerror or error})")
            return None
        if len(raw) > MAX_FILE_BYTES:
            self.problems.append(f"{path}: longer than {MAX_FILE_BYTES // 1024} KiB; cut short")
            raw = raw[:MAX_FILE_BYTES]
        if b"\0" in raw:
            self.problems.append(f"{path}: not a text file; not read")
            return None
        return raw.decode("utf-8", errors="replace")


def _written(target: Path, importer: Path) -> str:
    """An import as short as its importer wrote it, for a problem's message."""
    try:
        return target.relative_to(importer.parent).as_posix()
    except ValueError:
        return str(target)


def import_targets(text: str, base: Path) -> list[Path]:
    """The files `text` imports with `@path`, outside fenced and inline code, in order."""
    targets: list[Path] = []
    fence: str | None = None
    for line in text.splitlines():
        opened = _FENCE.match(line)
        if opened is not None:
            marker = opened.group(1)
            if fence is None:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = None
            continue
        if fence is not None or "@" not in line:
            continue
        for match in _IMPORT.finditer(_INLINE_CODE.sub(" ", line)):
            written = match.group(1).replace("\\ ", " ").rstrip(_TRAILING)
            if not written or written.startswith("@"):
                continue
            target = Path(written).expanduser()
            targets.append(target if target.is_absolute() else base / target)
    return targets


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
        self._seen: set[Path] = {_resolved(f.path) for f in start.files}
        # A resumed conversation already carries the reminders it was given.
        self._seen |= set(reminded_paths(history))

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
            if file.found_on_read is not None:
                how += f"; found when {file.found_on_read} was read"
            rows.append((file.path, how))
        return rows

    def on_read(self, path: Path) -> list[LoadedInstruction]:
        if not self.follow_subdirectories:
            return []
        target = path if path.is_absolute() else self.cwd / path
        try:
            below = target.resolve().parent.relative_to(self.cwd).parts
        except (ValueError, OSError, RuntimeError):
            return []  # outside the project: not its instructions
        reader = _Reader(seen=set(self._seen))
        for depth in range(1, len(below) + 1):
            directory = self.cwd.joinpath(*below[:depth])
            if directory in self._looked_at:
                continue
            self._looked_at.add(directory)
            for name, source in PER_DIRECTORY:
                reader.read(directory / name, source, found_on_read=target)
        self._seen |= reader.seen
        found = reader.files
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
