"""Write: create a file, or replace one the model has read, with the content given.

Replacing is the dangerous half, so it needs the same proof as Edit: the file was read in this
session and has not changed on disk since. That is checked before the permission prompt (no
point asking about a write that will be refused) and again just before writing, because the
user may take minutes to answer and the file may change meanwhile.

An existing file keeps its conventions: its encoding (and BOM), and CRLF line endings when the
new content has none, since Read shows lines without their CR and the model cannot know they
were there. Only when its encoding cannot hold the new content is the file written as UTF-8,
and the model is told. The write itself is atomic (files.write_atomically) and the result is a
diff for the UI, with a one-line confirmation for the model.
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path
from typing import Any

from pydantic import Field

from ..access.paths import absolute
from ..access.targets import PathTarget
from ..file_state import ReadFileState
from ..ports import ChangePreview
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
    failure,
)
from .files import (
    UTF8,
    ChangeKind,
    FileChange,
    change_text,
    decode_text,
    encode_text,
    freshness_problem,
    not_regular_text,
    os_error_text,
    record_current,
    relative_path_problem,
    structured_patch,
    to_line_ending,
    unencodable_text,
    unified_diff,
    write_atomically,
    write_preview,
)

MAX_EXISTING_BYTES = 64 * 1024 * 1024
"""Above this an existing file is not read back for the diff (the write still happens)."""


class WriteInput(ToolInput):
    file_path: str = Field(
        description=(
            "The absolute path of the file to write. Missing parent directories are created; "
            "an existing file is replaced."
        )
    )
    content: str = Field(description="The complete content the file should have.")


_PROMPT = """Writes a file to the local filesystem, creating it or replacing it whole.

Usage:
- file_path must be an absolute path. Missing parent directories are created.
- An existing file is overwritten. You must have read it with the Read tool first, and it must \
not have changed since; otherwise the write is refused and you are told to read it (again).
- To change part of an existing file, prefer the Edit tool: it sends only the change.
- Do not create files the task does not need, and in particular do not create documentation \
files (*.md, README) unless the user asks for them.
- An existing file keeps its encoding and its CRLF line endings."""


class Write(Tool[WriteInput, FileChange]):
    name = "Write"
    headline_field = "file_path"
    search_hint = "create or overwrite a file with new content"
    input_model = WriteInput
    description = "Creates a file, or replaces a file already read, with the given content."

    instructions = _PROMPT

    def rule_target(self, input: WriteInput, cwd: Path) -> PathTarget:
        return PathTarget(absolute(input.file_path, cwd), "edit")

    async def validate_input(self, input: WriteInput, context: ToolContext) -> ValidationResult:
        problem = relative_path_problem(input.file_path, context.cwd)
        if problem is None:
            path = Path(input.file_path)
            problem = await asyncio.to_thread(_target_problem, path, context.read_file_state)
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: WriteInput, context: ToolContext, progress: Progress
    ) -> ToolResult[FileChange]:
        problem = relative_path_problem(input.file_path, context.cwd)
        if problem:
            return failure(problem)
        change = await asyncio.to_thread(
            write_file, Path(input.file_path), input.content, context.read_file_state
        )
        return failure(change) if isinstance(change, str) else ToolResult(data=change)

    def change_preview(self, input: WriteInput, cwd: Path) -> ChangePreview | None:
        return write_preview(input.file_path, input.content, cwd)

    def hook_response(self, input: WriteInput, data: Any) -> Any:
        if not isinstance(data, FileChange):
            return data
        return {
            "type": data.kind,
            "filePath": str(data.path),
            "content": input.content,
            "structuredPatch": structured_patch(data.diff),
            "originalFile": data.original,
        }

    def render(self, output: FileChange) -> ToolContent:
        return change_text(output)


def _target_problem(path: Path, state: ReadFileState) -> str | None:
    """Why the file at `path` may not be written now, or None (blocking)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as error:
        return _error_text(path, error, "checked")
    if stat.S_ISDIR(mode):
        return f"{path} is a directory. Give the path of a file inside it."
    if not stat.S_ISREG(mode):
        return not_regular_text(path, mode)
    return freshness_problem(path, state, "write")


def write_file(path: Path, content: str, state: ReadFileState) -> FileChange | str:
    """Write `content` to `path` and record the new state; the change, or what went wrong."""
    path = Path(os.path.normpath(path))
    problem = _target_problem(path, state)
    if problem:
        return problem
    existed = path.exists()
    old_text = ""
    original: str | None = None  # the old text, when it was text
    encoding = UTF8
    note = ""
    if existed:
        try:
            with open(path, "rb") as file:
                old = file.read(MAX_EXISTING_BYTES + 1)
        except OSError as error:
            return os_error_text(path, error, "read")
        decoded = decode_text(old) if len(old) <= MAX_EXISTING_BYTES else None
        if decoded is not None:
            old_text, encoding = decoded.text, decoded.encoding
            original = old_text
            if decoded.line_ending == "\r\n" and "\r\n" not in content:
                content = to_line_ending(content, "\r\n")
        else:
            note = "(It replaced a binary or very large file; the diff does not show the old one.)"
    bad = unencodable_text(content, encoding)
    if bad is not None and encoding != UTF8:
        note = f"It was written as UTF-8: its old encoding ({encoding.label}) cannot hold {bad}."
        encoding = UTF8
        bad = unencodable_text(content, encoding)
    if bad is not None:
        return (
            f"The content cannot be written as UTF-8: it holds {bad}, which is not valid "
            "Unicode text (a lone surrogate). Remove those characters and write again."
        )
    try:
        write_atomically(path, encode_text(content, encoding))
    except OSError as error:
        return _error_text(path, error, "written")
    record_current(path, state)
    kind: ChangeKind = "update" if existed else "create"
    diff, added, removed = unified_diff(path, old_text, content, kind)
    original = old_text if existed else None
    return FileChange(
        path, kind, diff, added, removed, encoding.label, note=note, original=original
    )


def _error_text(path: Path, error: OSError | ValueError, doing: str) -> str:
    if isinstance(error, ValueError):  # an embedded NUL, say
        return f"{path!r} is not a usable path: {error}."
    if isinstance(error, NotADirectoryError):
        return (
            f"{path} could not be {doing}: a part of its directory path is a file, not a directory."
        )
    return os_error_text(path, error, doing)
