"""Edit: replace an exact string in a file the model has read, and nothing else.

The one rule is "fail rather than guess". `old_string` must occur exactly once (or
`replace_all` says every occurrence is meant): no match means the model's idea of the file is
wrong, several mean it has not said which one, and either way it is told and nothing changes.

Two forgivable differences are bridged, because the model cannot see them: Read shows lines
without the CR of CRLF, so in a CRLF file the strings' line breaks become CRLF; and models
often type straight quotes for the file's curly ones (or the reverse), so when nothing matches
literally, quotes are compared loosely. The span found is replaced in the original, so every
character outside it stays the file's own, and the replacement takes the file's quote style.

The whole edit is planned (read, match, encode) before the permission prompt, so the user is
never asked about an edit that cannot apply; it is planned again after, against the file as it
then is, and written atomically in its own encoding and BOM.
"""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from ..access.paths import absolute
from ..access.targets import PathTarget
from ..file_state import ReadFileState
from ..ports import ChangePreview
from ..results import format_size
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
    FileChange,
    TextEncoding,
    change_text,
    decode_text,
    edit_preview,
    encode_text,
    freshness_problem,
    not_regular_text,
    numbered_line,
    os_error_text,
    record_current,
    relative_path_problem,
    split_lines,
    structured_patch,
    to_line_ending,
    unencodable_text,
    unified_diff,
    write_atomically,
)

MAX_EDIT_BYTES = 32 * 1024 * 1024
SNIPPET_CONTEXT_LINES = 4
MAX_SNIPPET_LINES = 40

_QUOTES = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"'})


class EditInput(ToolInput):
    file_path: str = Field(description="The absolute path of the file to change.")
    old_string: str = Field(
        description=(
            "The exact text to replace, as it is in the file (without Read's line-number "
            "prefixes). It must occur exactly once unless replace_all is true."
        )
    )
    new_string: str = Field(
        description="The text to put in its place (must differ from old_string)."
    )
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence of old_string, not just one (default false).",
    )


_PROMPT = """Replaces exact text in a file.

Usage:
- Read the file with the Read tool first: an edit of a file you have not read, or that \
changed on disk since you read it, is refused.
- old_string must be the file's text exactly, with its indentation (tabs or spaces) as it \
appears after the line-number prefix of Read's output. The prefix (spaces, the number, a tab) \
is not part of the file: never put it in old_string or new_string.
- The edit fails if old_string occurs more than once: add surrounding lines to make it \
unique, or set replace_all to replace every occurrence (handy for renaming a variable).
- new_string must differ from old_string. An empty new_string deletes old_string.
- Prefer editing existing files to creating new ones, and keep to the changes the task needs.
- The file keeps its encoding and line endings."""


@dataclass(frozen=True, slots=True)
class EditPlan:
    """An edit worked out against the file as it is, ready to write."""

    old_text: str
    new_text: str
    data: bytes
    encoding: TextEncoding
    replacements: int
    first_line: int
    """Line (from 1) where the first replacement starts in the new text."""
    changed_lines: int
    loose_quotes: bool


class Edit(Tool[EditInput, FileChange]):
    name = "Edit"
    headline_field = "file_path"
    search_hint = "replace exact text in a file, modify code"
    input_model = EditInput
    description = "Replaces exact text in a file already read."

    instructions = _PROMPT

    def rule_target(self, input: EditInput, cwd: Path) -> PathTarget:
        return PathTarget(absolute(input.file_path, cwd), "edit")

    async def validate_input(self, input: EditInput, context: ToolContext) -> ValidationResult:
        problem = _input_problem(input, context.cwd)
        if problem is None:
            planned = await asyncio.to_thread(plan_edit, input, context.read_file_state)
            problem = planned if isinstance(planned, str) else None
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: EditInput, context: ToolContext, progress: Progress
    ) -> ToolResult[FileChange]:
        problem = _input_problem(input, context.cwd)
        if problem:
            return failure(problem)
        change = await asyncio.to_thread(edit_file, input, context.read_file_state)
        return failure(change) if isinstance(change, str) else ToolResult(data=change)

    def change_preview(self, input: EditInput, cwd: Path) -> ChangePreview | None:
        return edit_preview(
            input.file_path, input.old_string, input.new_string, input.replace_all, cwd
        )

    def hook_response(self, input: EditInput, data: Any) -> Any:
        if not isinstance(data, FileChange):
            return data
        return {
            "filePath": str(data.path),
            "oldString": input.old_string,
            "newString": input.new_string,
            "originalFile": data.original,
            "structuredPatch": structured_patch(data.diff),
            "userModified": False,
            "replaceAll": input.replace_all,
        }

    def render(self, output: FileChange) -> ToolContent:
        return change_text(output)


def _input_problem(input: EditInput, cwd: Path) -> str | None:
    problem = relative_path_problem(input.file_path, cwd)
    if problem:
        return problem
    if input.old_string == input.new_string:
        return (
            "old_string and new_string are the same, so the edit would change nothing. "
            "Give the new text in new_string."
        )
    if not input.old_string:
        return (
            "old_string is empty. Give the text to replace; to add text, include the line "
            "next to where it goes and repeat it in new_string. To create a file, use Write."
        )
    return None


def edit_file(input: EditInput, state: ReadFileState) -> FileChange | str:
    """Plan the edit against the file as it is now, write it, record it (blocking)."""
    planned = plan_edit(input, state)
    if isinstance(planned, str):
        return planned
    path = Path(os.path.normpath(input.file_path))
    try:
        write_atomically(path, planned.data)
    except OSError as error:
        return os_error_text(path, error, "written")
    record_current(path, state)
    diff, added, removed = unified_diff(path, planned.old_text, planned.new_text, "update")
    note = (
        "(old_string matched once curly and straight quotes were treated alike; the file's "
        "own quote characters were kept.)"
        if planned.loose_quotes
        else ""
    )
    return FileChange(
        path,
        "update",
        diff,
        added,
        removed,
        planned.encoding.label,
        replacements=planned.replacements,
        note=note,
        snippet=_snippet(planned),
        original=planned.old_text,
    )


def plan_edit(input: EditInput, state: ReadFileState) -> EditPlan | str:
    """The edit as it would apply to the file now, or why it cannot (blocking)."""
    path = Path(os.path.normpath(input.file_path))
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return f"File does not exist: {path}. To create a file, use the Write tool."
    except OSError as error:
        return os_error_text(path, error, "checked")
    except ValueError as error:  # an embedded NUL, say
        return f"{input.file_path!r} is not a usable path: {error}."
    if not stat.S_ISREG(info.st_mode):
        return not_regular_text(path, info.st_mode)
    problem = freshness_problem(path, state, "edit")
    if problem:
        return problem
    if info.st_size > MAX_EDIT_BYTES:
        return (
            f"{path} is {format_size(info.st_size)}, more than Edit changes "
            f"({format_size(MAX_EDIT_BYTES)}). Change it with a command through the Bash tool "
            "(sed, say) instead."
        )
    try:
        with open(path, "rb") as file:
            decoded = decode_text(file.read())
    except OSError as error:
        return os_error_text(path, error, "read")
    if decoded is None:
        return f"{path} is not a text file; Edit only changes text."
    text, ending = decoded.text, decoded.line_ending
    new_string = to_line_ending(input.new_string, ending) if ending == "\r\n" else input.new_string
    match = _find(text, input.old_string, ending)
    if match is None:
        return (
            f"old_string was not found in {path} (not even with curly and straight quotes "
            "treated alike). Read the file again and copy the text exactly as it is now, "
            "with its indentation and without the line-number prefix."
        )
    starts, length, loose = match
    if len(starts) > 1 and not input.replace_all:
        return (
            f"old_string occurs {len(starts)} times in {path}, but replace_all is false. To "
            "change them all, set replace_all to true; to change one, add surrounding lines to "
            "old_string so that it occurs only once."
        )
    pieces: list[str] = []
    done = 0
    first_line = 0
    for start in starts:
        found = text[start : start + length]
        replacement = _quoted_like(new_string, found) if loose else new_string
        pieces += [text[done:start], replacement]
        if not first_line:
            first_line = "".join(pieces[:-1]).count("\n") + 1
        done = start + length
    pieces.append(text[done:])
    new_text = "".join(pieces)
    if new_text == text:
        return f"The edit would leave {path} unchanged. Check new_string."
    bad = unencodable_text(new_text, decoded.encoding)
    if bad is not None:
        return (
            f"{path} is stored as {decoded.encoding.label}, which cannot hold {bad} from "
            "new_string. Use characters that encoding can hold (or an escape the file's "
            "language understands)."
        )
    changed = max(len(split_lines(to_line_ending(new_string, "\n"))), 1)
    return EditPlan(
        text,
        new_text,
        encode_text(new_text, decoded.encoding),
        decoded.encoding,
        len(starts),
        first_line,
        changed,
        loose,
    )


def _find(text: str, old: str, ending: str) -> tuple[list[int], int, bool] | None:
    """Where `old` occurs (starts, length, matched loosely): literally first, then with
    quotes normalised. In a CRLF file the CRLF form of `old` is tried first."""
    candidates = [old]
    if ending == "\r\n" and "\n" in old:
        candidates.insert(0, to_line_ending(old, "\r\n"))
    for candidate in candidates:
        if starts := _occurrences(text, candidate):
            return starts, len(candidate), False
    # Each quote maps to one character, so offsets in the normalised text are offsets in
    # the file, and the file's own characters can be kept outside the replaced span.
    loose_text = text.translate(_QUOTES)
    for candidate in candidates:
        if starts := _occurrences(loose_text, candidate.translate(_QUOTES)):
            return starts, len(candidate), True
    return None


def _occurrences(text: str, needle: str) -> list[int]:
    """Non-overlapping starts, left to right (as str.count and str.replace count them)."""
    starts: list[int] = []
    index = text.find(needle)
    while index != -1:
        starts.append(index)
        index = text.find(needle, index + len(needle))
    return starts


def _quoted_like(new: str, found: str) -> str:
    """`new` with the quote style of the file's text it replaces, quote kind by quote kind."""
    for straight, left, right in (("'", "‘", "’"), ('"', "“", "”")):
        file_curly = left in found or right in found
        if file_curly and straight not in found:
            new = _curl(new, straight, left, right)
        elif straight in found and not file_curly:
            new = new.replace(left, straight).replace(right, straight)
    return new


def _curl(text: str, straight: str, left: str, right: str) -> str:
    out = []
    for index, char in enumerate(text):
        if char != straight:
            out.append(char)
            continue
        before = text[index - 1] if index else " "
        # An opening quote follows a space or an opening bracket; anything else (a letter,
        # as in an apostrophe) closes.
        out.append(left if before.isspace() or before in "([{<—–-" else right)
    return "".join(out)


def _snippet(plan: EditPlan) -> str:
    lines = split_lines(plan.new_text)
    first = max(plan.first_line - SNIPPET_CONTEXT_LINES, 1)
    last = min(plan.first_line + plan.changed_lines - 1 + SNIPPET_CONTEXT_LINES, len(lines))
    last = min(last, first + MAX_SNIPPET_LINES - 1)
    return "\n".join(numbered_line(n, lines[n - 1]) for n in range(first, last + 1))
