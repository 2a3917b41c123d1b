"""Read's text files: numbered like `cat -n`, from `offset`, at most `limit` lines.

2,000 lines by default, each cut at 2,000 characters (files.numbered_line), and the whole under
MAX_OUTPUT_CHARS, with a note saying which offset continues. Decoding is the one Write and
Edit share (files.decode_text), so a file reads as it will be edited. Bytes that do not decode
as text but are an image go back as an image (the name may lie); any other binary file gets
advice on how to look at it instead of garbage.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..results import format_size
from .files import decode_text, numbered_line, split_lines
from .read_media import MAX_IMAGE_BYTES, image_block, image_media_type
from .read_result import MAX_OUTPUT_CHARS, FileRead

DEFAULT_LINE_LIMIT = 2000
MAX_TEXT_BYTES = 32 * 1024 * 1024


def read_text(
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
