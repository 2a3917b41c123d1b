"""Read's images and PDFs: the files that are not text on disk but are shown to the model.

Images go back as image blocks. Their media type comes from their bytes, not their name (an
extension may lie), and they are at most MAX_IMAGE_BYTES, which base64 turns into the 5 MB the
API accepts. PDFs come back as text page by page (pypdf, imported only when a PDF is read: it
is slow to import and most reads are text); `offset` and `limit` count pages, at most
MAX_PDF_PAGES a call.
"""

from __future__ import annotations

import io
import shlex
from pathlib import Path
from typing import Any

from .read_result import MAX_OUTPUT_CHARS, FileRead

MAX_IMAGE_BYTES = 3_750_000
"""Raw bytes; base64 makes that the 5 MB the API accepts for one image."""
MAX_PDF_BYTES = 32 * 1024 * 1024
MAX_PDF_PAGES = 100

IMAGE_EXTENSIONS = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})


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


def read_image(path: Path, data: bytes, mtime_ns: int, suffix: str) -> FileRead | str:
    media_type = image_media_type(data)
    if media_type is None:
        return (
            f"{path} has a {suffix} name but is not a PNG, JPEG, GIF or WebP image, so it cannot "
            f"be shown. Run `file {shlex.quote(str(path))}` with the Bash tool to see what it is."
        )
    return FileRead(path, "image", [image_block(media_type, data)], mtime_ns, len(data))


# -- PDFs -----------------------------------------------------------------------------------


def read_pdf(
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
