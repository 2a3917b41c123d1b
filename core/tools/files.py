"""What Read, Write and Edit share: paths, text decoding, read-before-edit, atomic writes, diffs.

The three tools must agree on every one of these, or the guarantees break at the seams: a file
Read decodes one way and Edit another would be corrupted by an edit; a read recorded under one
spelling of a path and looked up under another would refuse a legitimate edit. So each rule
lives here once.

- Paths must be absolute; the read-file state is keyed by the real path (symlinks followed), so
  a file read through a link may be edited through its target and the other way round.
- Text is UTF-8 unless a BOM says otherwise (UTF-8, UTF-16, UTF-32). Bytes that are not UTF-8
  but look like text (no NUL, few control characters) are Windows-1252, else Latin-1, both of
  which round-trip, so an edit never changes the bytes it does not touch. Anything else is
  binary and refused.
- Read-before-edit is optimistic locking on the modification time (`st_mtime_ns`).
- Writes go to a temporary file beside the target, then `os.replace`: a reader sees the old
  file or the new one, never half of either, and the mode (and owner, where allowed) is kept.
"""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import re
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ..file_state import ReadFileState
from ..ports import ChangePreview

LineEnding = Literal["\n", "\r\n"]
ChangeKind = Literal["create", "update"]

BINARY_SNIFF_BYTES = 8192
MAX_LINE_CHARS = 2000
"""Longer lines are cut when shown to the model (Read output, edit snippets)."""

# Longest first: the UTF-32 LE BOM begins with the UTF-16 LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Control characters that text files do contain: tab, newlines, form feed, backspace, escape.
_TEXT_CONTROLS = frozenset(b"\t\n\r\x0b\x0c\x08\x1b")
_MAX_CONTROL_SHARE = 0.02


# -- paths ----------------------------------------------------------------------------------


def relative_path_problem(file_path: str, cwd: Path) -> str | None:
    """Why `file_path` is not usable as given (it must be absolute), or None."""
    if os.path.isabs(file_path):
        return None
    if not file_path.strip():
        return "file_path is empty. Give the absolute path of the file."
    if file_path.startswith("~"):
        suggestion = os.path.expanduser(file_path)
    else:
        suggestion = os.path.normpath(os.path.join(cwd, file_path))
    return (
        f"file_path must be an absolute path, but {file_path!r} is relative. "
        f"Call again with the absolute path, e.g. {suggestion!r}."
    )


def file_key(path: str | Path) -> Path:
    """The key of a file in the read-file state: its real path."""
    return Path(os.path.realpath(path))


def os_error_text(path: str | Path, error: OSError, doing: str) -> str:
    """An OSError in words: what could not be done to which path, and why."""
    if isinstance(error, FileNotFoundError):
        return f"File does not exist: {path}."
    if isinstance(error, PermissionError):
        return (
            f"{path} could not be {doing}: permission denied. Choose another path, or ask the "
            "user to change the permissions."
        )
    if isinstance(error, IsADirectoryError):
        return f"{path} is a directory, not a file."
    reason = error.strerror or str(error)
    return f"{path} could not be {doing}: {reason}."


def not_regular_text(path: str | Path, mode: int) -> str:
    if stat.S_ISDIR(mode):
        return f"{path} is a directory, not a file."
    kind = (
        "a named pipe"
        if stat.S_ISFIFO(mode)
        else "a socket"
        if stat.S_ISSOCK(mode)
        else "a device"
        if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
        else "not a regular file"
    )
    return f"{path} is {kind}; these tools only work on regular files."


# -- text -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextEncoding:
    codec: str
    bom: bytes = b""

    @property
    def label(self) -> str:
        return self.codec + (" with BOM" if self.bom else "")


UTF8 = TextEncoding("utf-8")


@dataclass(frozen=True, slots=True)
class DecodedText:
    text: str
    encoding: TextEncoding
    line_ending: LineEnding


def decode_text(data: bytes) -> DecodedText | None:
    """The file's text and how it was stored, or None when the bytes are not text."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom) :].decode(codec)
            except UnicodeDecodeError:
                return None
            return DecodedText(text, TextEncoding(codec, bom), line_ending_of(text))
    sample = data[:BINARY_SNIFF_BYTES]
    if b"\x00" in sample:
        return None
    try:
        text = data.decode("utf-8")
        encoding = UTF8
    except UnicodeDecodeError:
        if _control_share(sample) > _MAX_CONTROL_SHARE:
            return None
        try:
            text, encoding = data.decode("cp1252"), TextEncoding("cp1252")
        except UnicodeDecodeError:
            text, encoding = data.decode("latin-1"), TextEncoding("latin-1")
    return DecodedText(text, encoding, line_ending_of(text))


def _control_share(sample: bytes) -> float:
    if not sample:
        return 0.0
    controls = sum(1 for b in sample if (b < 0x20 or b == 0x7F) and b not in _TEXT_CONTROLS)
    return controls / len(sample)


def encode_text(text: str, encoding: TextEncoding) -> bytes:
    """Raises UnicodeEncodeError when the encoding cannot hold the text."""
    return encoding.bom + text.encode(encoding.codec)


def unencodable_text(text: str, encoding: TextEncoding) -> str | None:
    """The first characters `encoding` cannot hold, quoted, or None when it holds them all."""
    try:
        text.encode(encoding.codec)
    except UnicodeEncodeError as error:
        return repr(error.object[error.start : min(error.end, error.start + 10)])
    return None


def line_ending_of(text: str) -> LineEnding:
    """CRLF when most line breaks are CRLF, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def to_line_ending(text: str, ending: LineEnding) -> str:
    unix = text.replace("\r\n", "\n")
    return unix if ending == "\n" else unix.replace("\n", "\r\n")


def split_lines(text: str) -> list[str]:
    """Lines as an editor counts them: split at LF only, CR of CRLF dropped, no last empty line.

    Not `str.splitlines`, which also splits at form feeds and Unicode separators and so would
    number lines differently from every editor and from `sed -n`."""
    if not text:
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def numbered_line(number: int, line: str) -> str:
    """One line as `cat -n` shows it, cut at MAX_LINE_CHARS with a note of what was left out."""
    if len(line) > MAX_LINE_CHARS:
        line = (
            f"{line[:MAX_LINE_CHARS]}… [line cut: {len(line) - MAX_LINE_CHARS:,} more characters]"
        )
    return f"{number:>6}\t{line}"


# -- read-before-edit -----------------------------------------------------------------------


def freshness_problem(path: Path, state: ReadFileState, action: str) -> str | None:
    """Why an existing file may not be changed now (never read, or changed since), or None.

    A file that does not exist has nothing to protect: None."""
    try:
        mtime_ns = os.stat(path).st_mtime_ns
    except FileNotFoundError:
        return None
    except OSError as error:
        return os_error_text(path, error, "checked")
    record = state.get(file_key(path))
    if record is None:
        return (
            f"{path} has not been read yet in this session. Read it first with the Read tool, "
            f"then {action} it."
        )
    if record.mtime_ns != mtime_ns:
        return (
            f"{path} changed on disk since you read it (the user, a formatter or another "
            f"process modified it). Read it again with the Read tool, then {action} it."
        )
    return None


def record_current(path: Path, state: ReadFileState) -> None:
    """After a write: the whole file as it now is counts as read, so edits can follow."""
    with contextlib.suppress(OSError):
        state.record(file_key(path), os.stat(path).st_mtime_ns)


# -- writing --------------------------------------------------------------------------------


def write_atomically(path: Path, data: bytes) -> None:
    """Replace (or create) the file at `path` with `data`; raises OSError.

    Through a symlink the target is written, so the link stays a link. The temporary file is
    removed on any failure, leaving the original untouched."""
    target = Path(os.path.realpath(path))
    try:
        before: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        before = None
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        # mkstemp makes the file 0600: give it the old file's mode, or what a new file gets.
        os.chmod(temp, stat.S_IMODE(before.st_mode) if before else 0o666 & ~_umask())
        if before is not None and hasattr(os, "chown"):
            with contextlib.suppress(OSError):
                os.chown(temp, before.st_uid, before.st_gid)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    # Reading it from /proc avoids setting it, which would race other threads creating files.
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# -- what changed ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileChange:
    """A Write or Edit that happened: `ToolResult.data`, kept by the outcome for the UI."""

    path: Path
    kind: ChangeKind
    diff: str
    """Unified diff, LF line endings, `\\ No newline at end of file` where it applies."""
    added: int
    removed: int
    encoding: str
    replacements: int = 0
    """For Edit: how many occurrences of old_string were replaced."""
    note: str = ""
    """Anything the model should know beyond "it worked" (quotes matched loosely, say)."""
    snippet: str = ""
    """Numbered lines around the change, for the model to check it without reading again."""
    original: str | None = field(default=None, repr=False)
    """The text before the change (None for a new file, or one that was not text): hooks
    written for the seeds' system read it as `originalFile`."""


_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def structured_patch(diff: str) -> list[dict[str, Any]]:
    """A unified diff as the hunks hooks expect (`oldStart`, `oldLines`, `newStart`,
    `newLines`, `lines`), the shape of the seeds' system's `structuredPatch`."""
    hunks: list[dict[str, Any]] = []
    for line in diff.split("\n"):
        match = _HUNK.match(line)
        if match is not None:
            old_start, old_lines, new_start, new_lines = match.groups()
            hunks.append(
                {
                    "oldStart": int(old_start),
                    "oldLines": int(old_lines) if old_lines is not None else 1,
                    "newStart": int(new_start),
                    "newLines": int(new_lines) if new_lines is not None else 1,
                    "lines": [],
                }
            )
        elif hunks and line[:1] in (" ", "+", "-", "\\"):
            hunks[-1]["lines"].append(line)
    return hunks


def unified_diff(path: Path, old: str, new: str, kind: ChangeKind) -> tuple[str, int, int]:
    """The diff from `old` to `new` (LF line endings), and how many lines it adds and removes."""
    old_name = "/dev/null" if kind == "create" else f"a{path}"
    out: list[str] = []
    added = removed = 0
    for line in difflib.unified_diff(_diff_lines(old), _diff_lines(new), old_name, f"b{path}"):
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return "".join(out).rstrip("\n"), added, removed


def _diff_lines(text: str) -> list[str]:
    parts = text.replace("\r\n", "\n").split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def change_text(change: FileChange) -> str:
    """The model's view of a Write or Edit: a short confirmation."""
    if change.kind == "create":
        text = f"File created successfully at: {change.path}"
    elif change.replacements > 1:
        text = (
            f"The file {change.path} has been updated. All {change.replacements} occurrences "
            "were replaced."
        )
    else:
        text = f"The file {change.path} has been updated."
    if change.note:
        text += f" {change.note}"
    if change.snippet:
        text += f"\nHere is the changed part, numbered as by `cat -n`:\n{change.snippet}"
    return text


PREVIEW_MAX_BYTES = 2 * 1024 * 1024


def shown_path(path: str, cwd: Path) -> str:
    """A path relative to the project when inside it: shorter, and the same on every machine."""
    absolute = (cwd / path) if not Path(path).is_absolute() else Path(path)
    try:
        return absolute.relative_to(cwd).as_posix()
    except ValueError:
        return path


def _preview_text(path: Path) -> str | None:
    try:
        if path.stat().st_size > PREVIEW_MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError):
        return None


def preview_diff(before: str, after: str, name: str) -> tuple[str, ...]:
    """The unified diff (3 lines of context) the permission dialog shows for a change."""
    return tuple(
        difflib.unified_diff(before.splitlines(), after.splitlines(), name, name, lineterm="", n=3)
    )


def edit_preview(file_path: str, old: str, new: str, replace_all: bool, cwd: Path) -> ChangePreview:
    """The file after the replacement, as a unified diff; old vs new strings if unreadable."""
    name = shown_path(file_path, cwd)
    current = _preview_text(cwd / file_path) if file_path else None
    if current is not None and old and old in current:
        count = -1 if replace_all else 1
        after = current.replace(old, new, count)
        return ChangePreview("", preview_diff(current, after, name), name)
    return ChangePreview("", preview_diff(old, new, name), name)


def write_preview(file_path: str, content: str, cwd: Path) -> ChangePreview:
    """A note ("new file, 3 lines" or "replaces the file") and the diff against the file."""
    name = shown_path(file_path, cwd)
    current = _preview_text(cwd / file_path) if file_path else None
    if current is None:
        count = len(content.splitlines())
        note = f"new file, {count} line{'s' if count != 1 else ''}"
        return ChangePreview(note, preview_diff("", content, name), name)
    return ChangePreview("replaces the file", preview_diff(current, content, name), name)
