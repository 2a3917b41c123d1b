"""Tool results too large for the model's context: saved to disk, replaced by a preview.

Seed 002 section 4.6. Two budgets:

- per result: above min(tool.max_result_size_chars, 50,000) characters the full text goes to
  `<session dir>/tool-results/<tool_use_id>.txt` and the model gets a `<persisted-output>`
  block with the size, the path and a ~2 KB preview cut at a line break. A tool declaring
  math.inf (Read, which bounds itself) is never persisted.
- per message: all tool results of one user message together stay under 200,000 characters;
  when they do not, the largest results are persisted first until they do.

Prompt caching wants every request to repeat earlier messages byte for byte, so
`ContentReplacementState` remembers each result's fate the first time it is judged: a result
once replaced is replaced identically in every later request, and one once kept inline stays
inline even if a later budget would have replaced it.

Saving can fail (disk full, a read-only directory). The call still returns: the model gets
the preview and is told the rest could not be saved, and why.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .tool import DEFAULT_MAX_RESULT_SIZE_CHARS

MAX_TOOL_RESULTS_PER_MESSAGE_CHARS = 200_000
PREVIEW_BUDGET_BYTES = 2_000
RESULTS_DIRNAME = "tool-results"

Content = str | list[dict[str, Any]]


def persistence_threshold(max_result_size_chars: float) -> float:
    """Characters above which a tool's result is persisted; math.inf means never."""
    if math.isinf(max_result_size_chars):
        return math.inf
    return min(max_result_size_chars, DEFAULT_MAX_RESULT_SIZE_CHARS)


def empty_result_text(tool_name: str) -> str:
    # An empty tool_result can read to the model as the end of its turn.
    return f"({tool_name} completed with no output)"


def content_size(content: Content) -> int:
    """Characters of text in a tool_result's content (images do not count)."""
    if isinstance(content, str):
        return len(content)
    return sum(len(block.get("text", "")) for block in content if block.get("type") == "text")


def content_text(content: Content) -> str | None:
    """The content as one text, or None when it holds more than text (an image, say)."""
    if isinstance(content, str):
        return content
    if all(block.get("type") == "text" for block in content):
        return "\n".join(str(block.get("text", "")) for block in content)
    return None


def is_empty(content: Content) -> bool:
    """Nothing but whitespace (`isspace` stops at the first visible character)."""
    if isinstance(content, str):
        return not content or content.isspace()
    return all(block.get("type") == "text" and _blank(block.get("text", "")) for block in content)


def _blank(text: object) -> bool:
    return not text or (isinstance(text, str) and text.isspace())


def preview(text: str, budget_bytes: int = PREVIEW_BUDGET_BYTES) -> tuple[str, bool]:
    """The head of `text` in at most `budget_bytes` of UTF-8, and whether anything was cut.

    The cut goes at the last line break found in the second half of the budget, so the
    preview ends on a whole line; with no break there, at the budget, but never inside a
    multi-byte character.
    """
    # A character is at least one byte, so the first budget_bytes characters are enough.
    head = text[: budget_bytes + 1].encode("utf-8")
    if len(head) <= budget_bytes and len(text) <= budget_bytes:
        return text, False
    head = head[:budget_bytes]
    newline = head.rfind(b"\n", budget_bytes // 2)
    if newline != -1:
        head = head[:newline]
    # errors="ignore" drops the partial character a byte cut may leave at the end.
    return head.decode("utf-8", errors="ignore"), True


def format_size(size_bytes: int) -> str:
    if size_bytes < 1024:
        return f"{size_bytes} bytes"
    value = size_bytes / 1024
    for unit in ("KB", "MB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} GB"


class ResultStore:
    """Where one session keeps its persisted results."""

    def __init__(self, session_dir: Path | None) -> None:
        self.directory = session_dir / RESULTS_DIRNAME if session_dir is not None else None

    def path_for(self, tool_use_id: str) -> Path:
        if self.directory is None:
            raise OSError("this run has no session directory to save results in")
        safe = _UNSAFE_FILENAME_CHARS.sub("_", tool_use_id).lstrip(".") or "result"
        return self.directory / f"{safe}.txt"

    def save(self, tool_use_id: str, data: bytes) -> Path:
        """Write atomically (a temporary file renamed into place); raises OSError."""
        path = self.path_for(tool_use_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".txt")
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        return path


_UNSAFE_FILENAME_CHARS = re.compile(r"[^A-Za-z0-9_.-]")


@dataclass(frozen=True, slots=True)
class PersistedResult:
    content: str
    """What the model gets instead of the full text."""
    size_chars: int
    path: Path | None
    """None when saving failed; `error` then says why."""
    error: str | None = None


def persist_result(store: ResultStore, tool_use_id: str, text: str) -> PersistedResult:
    data = text.encode("utf-8", errors="surrogatepass")
    size = format_size(len(data))
    head, _ = preview(text)
    try:
        path = store.save(tool_use_id, data)
    except OSError as error:
        reason = error.strerror or str(error)
        where = f" to {error.filename}" if getattr(error, "filename", None) else ""
        content = (
            f"Output too large ({size}), and the full output could not be saved{where}: "
            f"{reason}. Only the beginning is shown; the rest is lost.\n\n"
            f"Preview (first {format_size(len(head.encode()))}):\n{head}\n..."
        )
        return PersistedResult(content, len(text), None, reason)
    return PersistedResult(persisted_output(len(data), path, head), len(text), path)


def persisted_output(size_bytes: int, path: Path, head: str) -> str:
    """What the model gets for output saved to disk: where it is and how it begins. The one
    place this text is written (Bash saves its own output and says it the same way)."""
    return (
        f"<persisted-output>\nOutput too large ({format_size(size_bytes)}). Full output saved "
        f"to: {path}\n\nPreview (first {format_size(len(head.encode()))}):\n{head}\n...\n"
        "</persisted-output>"
    )


@dataclass(slots=True)
class ContentReplacementState:
    """The fate of every tool result judged so far, kept for the life of the session."""

    replacements: dict[str, str] = field(default_factory=dict)
    judged: set[str] = field(default_factory=set)


def enforce_tool_result_budget(
    messages: Sequence[Mapping[str, Any]],
    state: ContentReplacementState,
    store: ResultStore,
    budget: int = MAX_TOOL_RESULTS_PER_MESSAGE_CHARS,
) -> tuple[list[Mapping[str, Any]], list[tuple[str, PersistedResult]]]:
    """Apply the per-message budget to a request's messages.

    Returns the messages to send (inputs are not modified) and the results newly persisted
    here, as (tool_use_id, result) pairs, so that the caller can tell the user.
    """
    newly: list[tuple[str, PersistedResult]] = []
    out: list[Mapping[str, Any]] = []
    for message in messages:
        blocks = message.get("content")
        if message.get("role") != "user" or not isinstance(blocks, list):
            out.append(message)
            continue
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if not results:
            out.append(message)
            continue
        replaced = {
            id(b): state.replacements[b["tool_use_id"]]
            for b in results
            if b["tool_use_id"] in state.replacements
        }
        total = sum(
            len(replaced[id(b)]) if id(b) in replaced else content_size(b.get("content", ""))
            for b in results
        )
        if total > budget:
            fresh = [b for b in results if b["tool_use_id"] not in state.judged]
            fresh.sort(key=lambda b: content_size(b.get("content", "")), reverse=True)
            for block in fresh:
                if total <= budget:
                    break
                text = content_text(block.get("content", ""))
                if text is None:
                    continue
                persisted = persist_result(store, block["tool_use_id"], text)
                state.replacements[block["tool_use_id"]] = persisted.content
                replaced[id(block)] = persisted.content
                total -= content_size(block.get("content", "")) - len(persisted.content)
                newly.append((block["tool_use_id"], persisted))
        state.judged.update(b["tool_use_id"] for b in results)
        if replaced:
            new_blocks = [
                {**b, "content": replaced[id(b)]} if id(b) in replaced else b for b in blocks
            ]
            out.append({**message, "content": new_blocks})
        else:
            out.append(message)
    return out, newly
