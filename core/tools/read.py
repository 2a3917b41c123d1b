"""Read: a file's contents for the model, numbered like `cat -n`, and bounded by itself.

Read declares no result-size limit (`max_result_size_chars = math.inf`) because persisting a
file's contents to another file, for the model to read with Read, would go round in circles.
So it bounds its own output (read_result.py). Images go back as image blocks, PDFs as text
page by page, notebooks as cells with their outputs; for those two, `offset` and `limit` count
pages and cells.

This module is the tool (its input, checks, call and rendering) and `read_file`, which looks at
the path once, reads the bytes once, and hands them to the reader for their kind:
read_text.py, read_media.py (images and PDFs) or read_notebook.py. Errors that are not about
one kind (no such file, a directory, too large) are worded here.

Every read is recorded (modification time and range) in the session's read-file state, which
is what lets Write and Edit tell a file the model has seen from one it has not. The time is
taken from the open file before its bytes are read, so a change made during the read still
counts as a change.

The work runs in a thread: a large file or a PDF's text extraction must not stall the event
loop the other tools and the UI share.
"""

from __future__ import annotations

import asyncio
import difflib
import math
import os
import shlex
import stat
from pathlib import Path

from pydantic import Field

from ..access.paths import absolute
from ..access.targets import PathTarget
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
from .files import file_key, not_regular_text, os_error_text, relative_path_problem
from .read_media import (
    IMAGE_EXTENSIONS,
    MAX_IMAGE_BYTES,
    MAX_PDF_BYTES,
    MAX_PDF_PAGES,
    read_image,
    read_pdf,
)
from .read_notebook import MAX_NOTEBOOK_BYTES, read_notebook
from .read_result import MAX_OUTPUT_CHARS, FileRead
from .read_text import DEFAULT_LINE_LIMIT, MAX_TEXT_BYTES, read_text


class ReadInput(ToolInput):
    file_path: str = Field(description="The absolute path of the file to read.")
    offset: int | None = Field(
        default=None,
        ge=0,
        description=(
            "The line number to start reading from (1 is the first line). For a PDF, the first "
            "page to read; for a notebook, the first cell. Leave it out to start at the "
            "beginning."
        ),
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=(
            f"How many lines to read (default {DEFAULT_LINE_LIMIT}). For a PDF, how many "
            f"pages (at most {MAX_PDF_PAGES}); for a notebook, how many cells."
        ),
    )


_PROMPT = f"""Reads a file from the local filesystem and shows its contents.

Usage:
- file_path must be an absolute path. Any file on the machine can be read (the user may be \
asked first for files outside the working directories). Reading a file that does not exist \
just returns an error.
- Text comes back numbered like `cat -n`: spaces, the line number, a tab, then the line \
exactly as it is in the file. The number and the tab are not part of the file: never copy \
them into an edit.
- Up to {DEFAULT_LINE_LIMIT} lines are shown from the start of the file. For long files, \
offset (the first line) and limit (how many lines) read a part; otherwise read the whole file.
- Lines longer than 2000 characters are cut, and the output stops at {MAX_OUTPUT_CHARS:,} \
characters; a note says which offset to continue from.
- Images (PNG, JPEG, GIF, WebP) are shown to you as images, so screenshots can be read too.
- PDFs come back as text, page by page (up to {MAX_PDF_PAGES} pages per call; offset and \
limit count pages). Scanned pages may have no text.
- Jupyter notebooks (.ipynb) come back as their cells with outputs (offset and limit count \
cells).
- Only files can be read. For a directory, use Glob or `ls` with the Bash tool.
- An empty file gives a short notice instead of contents.
- Read before you edit: Write and Edit refuse a file you have not read, or that changed since.
- Several reads that may be useful can be made at once, in parallel."""


class Read(Tool[ReadInput, FileRead]):
    name = "Read"
    headline_field = "file_path"
    subagents = "every"
    search_hint = "read file contents lines image pdf notebook"
    input_model = ReadInput
    description = "Reads a file: text with line numbers, images, PDFs and notebooks."
    max_result_size_chars = math.inf

    instructions = _PROMPT

    def is_read_only(self, input: ReadInput) -> bool:
        return True

    def is_concurrency_safe(self, input: ReadInput) -> bool:
        return True

    def rule_target(self, input: ReadInput, cwd: Path) -> PathTarget:
        return PathTarget(absolute(input.file_path, cwd), "read")

    async def validate_input(self, input: ReadInput, context: ToolContext) -> ValidationResult:
        problem = relative_path_problem(input.file_path, context.cwd)
        return ValidationResult.failed(problem) if problem else ValidationResult.passed()

    async def call(
        self, input: ReadInput, context: ToolContext, progress: Progress
    ) -> ToolResult[FileRead]:
        problem = relative_path_problem(input.file_path, context.cwd)
        if problem:
            return failure(problem)
        result, key = await asyncio.to_thread(
            _read_with_key, input.file_path, input.offset, input.limit, context.cwd
        )
        if isinstance(result, str):
            return failure(result)
        if result.partial:
            context.read_file_state.record(key, result.mtime_ns, result.start, result.shown)
        else:
            context.read_file_state.record(key, result.mtime_ns)
        return ToolResult(data=result)

    def render(self, output: FileRead) -> ToolContent:
        return output.content


def _read_with_key(
    file_path: str, offset: int | None, limit: int | None, cwd: Path
) -> tuple[FileRead | str, Path]:
    path = Path(os.path.normpath(file_path))
    return read_file(path, offset, limit, cwd), file_key(path)


def read_file(path: Path, offset: int | None, limit: int | None, cwd: Path) -> FileRead | str:
    """The file's contents as the model sees them, or what went wrong (blocking)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return _not_found(path, cwd)
    except (OSError, ValueError) as error:
        return _error_text(path, error)
    if stat.S_ISDIR(info.st_mode):
        quoted = shlex.quote(str(path))
        return (
            f"{path} is a directory, not a file. To see what it holds, use Glob with a pattern "
            f"such as '{path}/*', or run `ls -la {quoted}` with the Bash tool."
        )
    if not stat.S_ISREG(info.st_mode):
        return not_regular_text(path, info.st_mode)
    suffix = path.suffix.lower()
    limit_bytes = {
        ".pdf": MAX_PDF_BYTES,
        ".ipynb": MAX_NOTEBOOK_BYTES,
    }.get(suffix, MAX_IMAGE_BYTES if suffix in IMAGE_EXTENSIONS else MAX_TEXT_BYTES)
    if info.st_size > limit_bytes:
        return _too_large(path, info.st_size, limit_bytes, suffix)
    try:
        # Non-blocking so that a file turned into a pipe since the stat cannot hang the read.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as file:
            mtime_ns = os.fstat(file.fileno()).st_mtime_ns
            data = file.read(limit_bytes + 1)
    except OSError as error:
        return _error_text(path, error)
    if len(data) > limit_bytes:
        return _too_large(path, len(data), limit_bytes, suffix)
    if suffix in IMAGE_EXTENSIONS:
        return read_image(path, data, mtime_ns, suffix)
    if suffix == ".pdf":
        return read_pdf(path, data, mtime_ns, offset, limit)
    if suffix == ".ipynb":
        return read_notebook(path, data, mtime_ns, offset, limit)
    return read_text(path, data, mtime_ns, offset, limit)


# -- errors ---------------------------------------------------------------------------------


def _not_found(path: Path, cwd: Path) -> str:
    message = f"File does not exist: {path}. The working directory is {cwd}."
    try:
        names = sorted(os.listdir(path.parent))[:2000] if path.parent.is_dir() else []
    except OSError:
        names = []
    close = difflib.get_close_matches(path.name, names, n=3, cutoff=0.6)
    if close:
        message += " Did you mean " + " or ".join(str(path.parent / n) for n in close) + "?"
    return message


def _error_text(path: Path, error: OSError | ValueError) -> str:
    if isinstance(error, ValueError):  # an embedded NUL, say
        return f"{path!r} is not a usable path: {error}."
    return os_error_text(path, error, "read")


def _too_large(path: Path, size: int, limit: int, suffix: str) -> str:
    quoted = shlex.quote(str(path))
    if suffix in IMAGE_EXTENSIONS:
        advice = (
            "Make a smaller copy with the Bash tool (for example "
            f"`convert {quoted} -resize 50% /tmp/smaller{suffix}`) and read that."
        )
    elif suffix == ".pdf":
        advice = f"Extract its text with the Bash tool (`pdftotext {quoted} -`) instead."
    else:
        advice = (
            f"Look at parts of it with the Bash tool (`head -n 200 {quoted}`, "
            f"`sed -n '1000,1200p' {quoted}`) or search it with Grep."
        )
    return f"{path} is {format_size(size)}, more than Read reads ({format_size(limit)}). {advice}"
