"""Read: a file's contents for the model, numbered like `cat -n`, and bounded by itself.

Read declares no result-size limit (`max_result_size_chars = math.inf`) because persisting a
file's contents to another file, for the model to read with Read, would go round in circles.
So it bounds its own output: 2,000 lines by default, 2,000 characters per line, and 100,000
characters in all, always cut at a whole line (or page, or cell) with a note saying which
offset continues. Images go back as image blocks, PDFs as text page by page, notebooks as
cells with their outputs; for those two, `offset` and `limit` count pages and cells.

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
import io
import json
import math
import os
import re
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

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
from .files import (
    decode_text,
    file_key,
    not_regular_text,
    numbered_line,
    os_error_text,
    relative_path_problem,
    split_lines,
)

DEFAULT_LINE_LIMIT = 2000
MAX_OUTPUT_CHARS = 100_000
MAX_TEXT_BYTES = 32 * 1024 * 1024
MAX_IMAGE_BYTES = 3_750_000
"""Raw bytes; base64 makes that the 5 MB the API accepts for one image."""
MAX_PDF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 100
MAX_NOTEBOOK_BYTES = 32 * 1024 * 1024
MAX_NOTEBOOK_IMAGES = 10
MAX_CELL_OUTPUT_CHARS = 10_000

ReadKind = Literal["text", "image", "pdf", "notebook"]

_IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})


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


@dataclass(frozen=True, slots=True)
class FileRead:
    """What one Read returned: the content for the model, and what of the file it covers."""

    path: Path
    kind: ReadKind
    content: str | list[dict[str, Any]]
    mtime_ns: int
    size: int
    start: int = 1
    """First line (page, cell) shown, from 1."""
    shown: int = 0
    total: int = 0
    """Lines (pages, cells) in the file; 0 for an image."""

    @property
    def partial(self) -> bool:
        return self.start > 1 or self.start - 1 + self.shown < self.total


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
    }.get(suffix, MAX_IMAGE_BYTES if suffix in _IMAGE_EXTENSIONS else MAX_TEXT_BYTES)
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
    if suffix in _IMAGE_EXTENSIONS:
        return _image(path, data, mtime_ns, suffix)
    if suffix == ".pdf":
        return _pdf(path, data, mtime_ns, offset, limit)
    if suffix == ".ipynb":
        return _notebook(path, data, mtime_ns, offset, limit)
    return _text(path, data, mtime_ns, offset, limit)


def _text(
    path: Path, data: bytes, mtime_ns: int, offset: int | None, limit: int | None
) -> FileRead | str:
    decoded = decode_text(data)
    if decoded is None:
        media_type = image_media_type(data)
        if media_type is not None and len(data) <= MAX_IMAGE_BYTES:
            return FileRead(path, "image", [image_block(media_type, data)], mtime_ns, len(data))
        quoted = shlex.quote(str(path))
        return (
            f"{path} is a binary file ({format_size(len(data))}), which Read cannot show as "
            f"text. To find out what it is, run `file {quoted}` with the Bash tool; to see its "
            f"bytes, `xxd {quoted} | head -n 50`."
        )
    lines = split_lines(decoded.text)
    total = len(lines)
    if total == 0:
        notice = f"(The file {path} exists but is empty: there is nothing to show.)"
        return FileRead(path, "text", notice, mtime_ns, len(data))
    start = max(offset or 1, 1)
    if start > total:
        notice = (
            f"(The file {path} has {total} line{'s' if total != 1 else ''}, so there is nothing "
            f"at offset {start}. Read from an offset between 1 and {total}.)"
        )
        return FileRead(path, "text", notice, mtime_ns, len(data), start, 0, total)
    end = min(total, start - 1 + (limit or DEFAULT_LINE_LIMIT))
    out: list[str] = []
    size = 0
    for number in range(start, end + 1):
        line = numbered_line(number, lines[number - 1])
        if out and size + len(line) + 1 > MAX_OUTPUT_CHARS:
            break
        out.append(line)
        size += len(line) + 1
    last = start - 1 + len(out)
    if last < end:
        out.append(
            f"\n(Output stopped after line {last} to stay under {MAX_OUTPUT_CHARS:,} characters; "
            f"the file has {total} lines. To read on, call Read with offset={last + 1}.)"
        )
    elif last < total:
        out.append(
            f"\n(Showing lines {start}-{last} of {total}. To read more, call Read with "
            f"offset={last + 1}.)"
        )
    return FileRead(
        path, "text", "\n".join(out), mtime_ns, len(data), start, last - start + 1, total
    )


# -- images ---------------------------------------------------------------------------------


def image_media_type(data: bytes) -> str | None:
    """The media type the bytes really are (the extension may lie), if a supported image."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_block(media_type: str, data: bytes) -> dict[str, Any]:
    import base64

    encoded = base64.b64encode(data).decode("ascii")
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": media_type, "data": encoded},
    }


def _image(path: Path, data: bytes, mtime_ns: int, suffix: str) -> FileRead | str:
    media_type = image_media_type(data)
    if media_type is None:
        return (
            f"{path} has a {suffix} name but is not a PNG, JPEG, GIF or WebP image, so it cannot "
            f"be shown. Run `file {shlex.quote(str(path))}` with the Bash tool to see what it is."
        )
    return FileRead(path, "image", [image_block(media_type, data)], mtime_ns, len(data))


# -- PDFs -----------------------------------------------------------------------------------


def _pdf(
    path: Path, data: bytes, mtime_ns: int, offset: int | None, limit: int | None
) -> FileRead | str:
    from pypdf import PdfReader  # lazily: it takes a while to import, and most reads are text

    quoted = shlex.quote(str(path))
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return f"{path} is a password-protected PDF, which Read cannot open."
        total = len(reader.pages)
    except Exception as error:  # pypdf raises many kinds for a damaged file
        return (
            f"{path} could not be read as a PDF ({type(error).__name__}: {error}). Run "
            f"`file {quoted}` with the Bash tool to see what it is."
        )
    if total == 0:
        return FileRead(path, "pdf", f"(The PDF {path} has no pages.)", mtime_ns, len(data))
    start = max(offset or 1, 1)
    if start > total:
        notice = f"(The PDF {path} has {total} pages, so there is no page {start}.)"
        return FileRead(path, "pdf", notice, mtime_ns, len(data), start, 0, total)
    end = min(total, start - 1 + min(limit or MAX_PDF_PAGES, MAX_PDF_PAGES))
    parts: list[str] = []
    size = 0
    for number in range(start, end + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as error:
            text = f"(The text of this page could not be extracted: {error}.)"
        text = text.strip() or "(No text on this page: it may be a scanned image.)"
        page = f"--- Page {number} of {total} ---\n{text}"
        if parts and size + len(page) + 2 > MAX_OUTPUT_CHARS:
            break
        if len(page) > MAX_OUTPUT_CHARS:
            page = page[:MAX_OUTPUT_CHARS] + "\n(The rest of this page was cut.)"
        parts.append(page)
        size += len(page) + 2
    last = start - 1 + len(parts)
    if last < total:
        parts.append(
            f"(Showing pages {start}-{last} of {total}. To read more, call Read with "
            f"offset={last + 1}: for a PDF, offset and limit count pages.)"
        )
    text = "\n\n".join(parts)
    return FileRead(path, "pdf", text, mtime_ns, len(data), start, last - start + 1, total)


# -- notebooks ------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_IMAGE_OUTPUT_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_OUTPUT_TYPES = ("text/plain", "text/markdown", "application/json", "text/html")

Item = str | dict[str, Any]
"""A piece of notebook output: text, or an image block."""


class _BadNotebook(Exception):
    pass


def _notebook(
    path: Path, data: bytes, mtime_ns: int, offset: int | None, limit: int | None
) -> FileRead | str:
    quoted = shlex.quote(str(path))
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
        if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
            raise _BadNotebook("it has no list of cells")
        cells: list[Any] = notebook["cells"]
        total = len(cells)
        start = max(offset or 1, 1)
        end = min(total, start - 1 + (limit or total))
        language = _language(notebook)
        images = [0]
        rendered: list[list[Item]] = []
        size = 0
        for index in range(start, end + 1):
            items = _cell(index, cells[index - 1], language, images)
            cell_size = sum(len(item) for item in items if isinstance(item, str))
            if rendered and size + cell_size > MAX_OUTPUT_CHARS:
                break
            rendered.append(items)
            size += cell_size
    except (UnicodeDecodeError, json.JSONDecodeError, _BadNotebook) as error:
        return (
            f"{path} is not a valid Jupyter notebook ({error}). To see its raw text, run "
            f"`cat {quoted}` with the Bash tool."
        )
    if total == 0:
        return FileRead(
            path, "notebook", f"(The notebook {path} has no cells.)", mtime_ns, len(data)
        )
    if start > total:
        notice = f"(The notebook {path} has {total} cells, so there is no cell {start}.)"
        return FileRead(path, "notebook", notice, mtime_ns, len(data), start, 0, total)
    last = start - 1 + len(rendered)
    flat = [item for items in rendered for item in items]
    if last < total:
        flat.append(
            f"\n(Showing cells {start}-{last} of {total}. To read more, call Read with "
            f"offset={last + 1}: for a notebook, offset and limit count cells.)"
        )
    content = _blocks(flat)
    return FileRead(path, "notebook", content, mtime_ns, len(data), start, last - start + 1, total)


def _language(notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata")
    if isinstance(metadata, dict):
        for key in ("kernelspec", "language_info"):
            section = metadata.get(key)
            name = (
                section.get("language" if key == "kernelspec" else "name")
                if isinstance(section, dict)
                else None
            )
            if isinstance(name, str) and name:
                return name
    return "python"


def _cell(index: int, cell: Any, language: str, images: list[int]) -> list[Item]:
    if not isinstance(cell, dict):
        raise _BadNotebook(f"cell {index} is not an object")
    kind = cell.get("cell_type")
    if not isinstance(kind, str):
        raise _BadNotebook(f"cell {index} has no cell_type")
    source = _joined(cell.get("source", ""), f"the source of cell {index}")
    cell_id = cell.get("id")
    head = f'<cell index="{index}"'
    head += f' id="{cell_id}"' if isinstance(cell_id, str) else ""
    head += f' type="{kind}"' + (f' language="{language}"' if kind == "code" else "") + ">"
    items: list[Item] = [f"{head}\n{_cut(source)}\n"]
    outputs = cell.get("outputs") if kind == "code" else None
    for output in outputs if isinstance(outputs, list) else []:
        items.extend(_output(index, output, images))
    items.append("</cell>\n")
    return items


def _output(index: int, output: Any, images: list[int]) -> list[Item]:
    if not isinstance(output, dict):
        raise _BadNotebook(f"an output of cell {index} is not an object")
    kind = output.get("output_type")
    where = f"an output of cell {index}"
    if kind == "stream":
        name = output.get("name", "stdout")
        text = _joined(output.get("text", ""), where)
        return [f'<output type="stream" name="{name}">\n{_cut(text)}\n</output>\n']
    if kind == "error":
        trace = output.get("traceback")
        lines = trace if isinstance(trace, list) else []
        text = (
            "\n".join(str(line) for line in lines)
            or f"{output.get('ename')}: {output.get('evalue')}"
        )
        return [f'<output type="error">\n{_cut(_ANSI.sub("", text))}\n</output>\n']
    data = output.get("data")
    if kind not in ("execute_result", "display_data") or not isinstance(data, dict):
        return [f'<output type="{kind}"/>\n']
    items: list[Item] = []
    for media_type in _IMAGE_OUTPUT_TYPES:
        if media_type in data:
            encoded = "".join(_joined(data[media_type], where).split())
            if images[0] >= MAX_NOTEBOOK_IMAGES or len(encoded) > MAX_IMAGE_BYTES * 4 // 3:
                items.append(f"[{media_type} output not shown: too many or too large images]\n")
            else:
                images[0] += 1
                source = {"type": "base64", "media_type": media_type, "data": encoded}
                items.append({"type": "image", "source": source})
            break
    for media_type in _TEXT_OUTPUT_TYPES:
        if media_type in data:
            value = data[media_type]
            if isinstance(value, (str, list)):
                text = _joined(value, where)
            else:  # application/json holds the object itself
                text = json.dumps(value, ensure_ascii=False, indent=1)
            items.insert(
                0, f'<output type="{kind}" mime="{media_type}">\n{_cut(text)}\n</output>\n'
            )
            break
    return items or [f'<output type="{kind}"/>\n']


def _joined(value: Any, what: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return "".join(value)
    raise _BadNotebook(f"{what} is neither text nor a list of text")


def _cut(text: str) -> str:
    text = text.rstrip("\n")
    if len(text) <= MAX_CELL_OUTPUT_CHARS:
        return text
    left = len(text) - MAX_CELL_OUTPUT_CHARS
    return f"{text[:MAX_CELL_OUTPUT_CHARS]}\n[… {left:,} more characters cut]"


def _blocks(items: list[Item]) -> str | list[dict[str, Any]]:
    """One string when there are no images; else text and image blocks, in order."""
    if all(isinstance(item, str) for item in items):
        return "".join(item for item in items if isinstance(item, str)).rstrip("\n")
    blocks: list[dict[str, Any]] = []
    text: list[str] = []
    for item in items:
        if isinstance(item, str):
            text.append(item)
            continue
        if text:
            blocks.append({"type": "text", "text": "".join(text)})
            text = []
        blocks.append(item)
    if text:
        blocks.append({"type": "text", "text": "".join(text)})
    return blocks


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
    if suffix in _IMAGE_EXTENSIONS:
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
