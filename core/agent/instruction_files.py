"""Reading instruction files: one file, its text made ready, and the files it `@imports`.

instructions.py decides which files and in what order; this module reads one of them the way
every caller needs it read: once however it is reached, never a FIFO or a binary, cut short
past `MAX_FILE_BYTES`, HTML comments out and a rule's scope taken from its front matter
(instruction_rules.py), its imports followed to `MAX_IMPORT_DEPTH` and never round a cycle.
Problems are collected as sentences, never raised: one bad file must not cost the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from .instruction_rules import rule_applies, rule_files, rule_scope, strip_html_comments

InstructionSource = Literal["user", "project", "rules", "local", "agents"]
"""Whose file it is: the user's own, the project's (checked in), the project's rules
(`.claude/rules`), the user's private one for this project (CLAUDE.local.md), or the
project's AGENTS.md."""

SOURCE_LABELS: dict[InstructionSource, str] = {
    "user": "user's private instructions for all projects",
    "project": "project instructions, checked into the codebase",
    "rules": "project rules (.claude/rules), checked into the codebase",
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
    applies_to: tuple[str, ...] = ()
    """A rule's `paths:` patterns: it applies only to files matching them (none: to all)."""
    scope_base: Path | None = None
    """What `applies_to` is relative to: the directory holding the rule's `.claude`."""

    def describe(self) -> str:
        """`Contents of /p/CLAUDE.md (project instructions, checked into the codebase):`."""
        how = SOURCE_LABELS[self.source]
        if self.imported_from is not None:
            how += f", imported by {self.imported_from}"
        if self.applies_to:
            how += f", for files matching {', '.join(self.applies_to)}"
        return f"Contents of {self.path} ({how}):"

    def covers(self, path: Path) -> bool:
        """Whether this scoped rule applies to the file at `path` (resolved)."""
        base = self.scope_base
        return base is not None and rule_applies(self.applies_to, base, path)


@dataclass(slots=True)
class Reader:
    """Reads files and their imports once each, collecting problems instead of raising."""

    files: list[LoadedInstruction] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)

    def read_directory(self, directory: Path, *, found_on_read: Path | None = None) -> None:
        """One directory's files, in order: its CLAUDE.md files, its rules, the rest."""
        for name, source in PER_DIRECTORY:
            self.read(directory / name, source, found_on_read=found_on_read)
            if name == ".claude/CLAUDE.md":
                self.read_rules(
                    directory / ".claude" / "rules",
                    "rules",
                    base=directory,
                    found_on_read=found_on_read,
                )

    def read_rules(
        self,
        rules: Path,
        source: InstructionSource,
        *,
        base: Path,
        found_on_read: Path | None = None,
    ) -> None:
        for path in rule_files(rules):
            self.read(path, source, found_on_read=found_on_read, rule_base=base)

    def read(
        self,
        path: Path,
        source: InstructionSource,
        *,
        chain: tuple[Path, ...] = (),
        importer: Path | None = None,
        found_on_read: Path | None = None,
        rule_base: Path | None = None,
        applies_to: tuple[str, ...] = (),
        scope_base: Path | None = None,
    ) -> None:
        """Read `path` and what it imports; an import names its `importer` and `chain` holds
        every file above it (resolved), to tell a cycle from a file imported twice. A file
        read as a rule (`rule_base`) may be scoped by its front matter; what a scoped rule
        imports is scoped with it."""
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
        text = strip_html_comments(text)
        if rule_base is not None:
            applies_to, text, problem = rule_scope(text, path)
            scope_base = rule_base if applies_to else None
            if problem is not None:
                self.problems.append(problem)
        self.files.append(
            LoadedInstruction(
                path=path,
                source=source,
                text=text,
                imported_from=importer,
                found_on_read=found_on_read,
                applies_to=applies_to,
                scope_base=scope_base,
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
                target,
                source,
                chain=(*chain, key),
                importer=path,
                found_on_read=found_on_read,
                applies_to=applies_to,
                scope_base=scope_base,
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
