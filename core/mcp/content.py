"""An MCP tool result's content, as the model reads it.

MCP content blocks (text, image, audio, an embedded resource, a link to one) arrive as JSON
objects in the wire's camelCase; the Messages API takes text and image blocks. Text stays
text; an image the API can show becomes an image block; an embedded resource becomes its text
(or its image, for an image blob); what the model cannot take (audio, other binary data) is
named in a line of text so it knows something was there. A result of only text is one string,
which is what the size budget and the saved-output browser measure.

Pure functions over plain JSON: a PostToolUse hook's `updatedMCPToolOutput` is mapped the same
way as the server's own content.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from typing import Any

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types the API accepts in an image block."""


def render_content(blocks: Iterable[Any], structured: Any = None) -> str | list[dict[str, Any]]:
    """The tool_result content for MCP content blocks (and structured content, when the
    server sent nothing else)."""
    mapped: list[dict[str, Any]] = []
    for block in blocks:
        mapped.extend(_block(block))
    if not mapped and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    if all(block["type"] == "text" for block in mapped):
        return "\n".join(block["text"] for block in mapped)
    return mapped


def content_text(blocks: Iterable[Any]) -> str:
    """The blocks as text only (an error's message; what a person reads in a list)."""
    rendered = render_content(blocks)
    if isinstance(rendered, str):
        return rendered
    return "\n".join(b["text"] if b["type"] == "text" else "[image]" for b in rendered)


def _block(block: Any) -> list[dict[str, Any]]:
    if isinstance(block, str):
        return [_text(block)]
    if not isinstance(block, Mapping):
        return [_text(json.dumps(block, ensure_ascii=False, default=str))]
    kind = block.get("type")
    if kind == "text":
        return [_text(str(block.get("text", "")))]
    if kind == "image":
        return [_image_or_note(block.get("data"), block.get("mimeType"), "image")]
    if kind == "audio":
        return [_text(f"[audio ({block.get('mimeType', 'unknown type')}): not shown]")]
    if kind == "resource":
        return _resource(block.get("resource"))
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        return [_text(f"[resource link: {name} {block.get('uri', '')}]".replace("  ", " "))]
    return [_text(json.dumps(block, ensure_ascii=False, default=str))]


def _resource(resource: Any) -> list[dict[str, Any]]:
    if not isinstance(resource, Mapping):
        return [_text("[a resource without contents]")]
    uri = resource.get("uri", "")
    if "text" in resource:
        return [_text(f"[resource {uri}]\n{resource['text']}")]
    mime = resource.get("mimeType")
    return [_image_or_note(resource.get("blob"), mime, f"resource {uri}")]


def _image_or_note(data: Any, mime: Any, what: str) -> dict[str, Any]:
    if isinstance(data, str) and mime in IMAGE_TYPES and _is_base64(data):
        return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}
    size = len(data) * 3 // 4 if isinstance(data, str) else 0
    return _text(f"[{what} ({mime or 'unknown type'}, about {size} bytes): not shown]")


def _is_base64(data: str) -> bool:
    try:
        base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}
