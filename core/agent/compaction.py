"""Compaction: how full the context is, and the conversation that replaces a full one.

The loop asks three questions here, and the answers are plain functions so they can be
tested without a model:

- How full is the context? `context_tokens(usage)` reads the last response's usage (every
  input token, cached or not, plus what it wrote, which the next request sends back), and
  `context_window(model)` is the model family's window from a table. The offline demo's
  model has a small window of its own, so a scenario can run past it.
- When to compact? `threshold_of(setting)`: the settings' `autoCompact` (true, false or a
  percentage); on at 90% unless said otherwise.
- What replaces the conversation? `summary_request` asks the model, with the conversation as
  it stands, for a summary in fixed sections; `compacted_conversation` builds the one user
  message that starts the conversation afresh: the summary, the todos, the plan file and
  where every persisted output lives (their text is not sent again: the model reads the
  file if it needs it). The mode and the plan file live in the system prompt's volatile
  part anyway, and the tools and stable system part are untouched, so the prompt cache's
  prefix survives compaction byte for byte.

The summary request repeats the conversation's own messages unchanged (so it hits the
cache too). When the conversation is already too long for the model, `clipped` makes a
shorter copy for the summary: long tool results and texts keep their beginning only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..settings.compact_setting import DEFAULT_THRESHOLD_PERCENT

CompactTrigger = Literal["auto", "manual"]
"""Who asked: the threshold (or a refused request), or the person (`/compact`)."""

DEFAULT_WINDOW = 200_000
DEMO_WINDOW = 24_000
"""The offline demo model's window: small, so a scenario can fill it in a minute."""
CONTEXT_WINDOWS: tuple[tuple[str, int], ...] = (
    ("claude-demo", DEMO_WINDOW),
    ("claude-opus-5", 200_000),
    ("claude-sonnet-5", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-haiku-4", 200_000),
    ("claude-3", 200_000),
)
"""Model-name prefixes and their context windows (tokens); the first match wins."""


SUMMARY_PROMPT_START = "[Compaction]"
SUMMARY_PROMPT = f"""\
{SUMMARY_PROMPT_START} The conversation is about to be replaced by a summary, because it has grown \
too long for the context window. Write that summary now, for yourself: it is all you will \
have of the conversation so far. Do not call any tools. Use these sections:

1. What was asked: the user's requests, in their words where it matters.
2. What was decided: choices made and why, including what the user approved or refused.
3. What was changed: files edited or created, commands run and what they showed.
4. What is left: the work not done yet, and the very next step.
5. Files that matter: paths, and what each holds for the task.

Be specific (paths, names, numbers); leave out what no longer matters."""

COMPACTED_HEADER = (
    "[This conversation was compacted: the summary below replaces the earlier messages. "
    "The full history is in the session's transcript.]"
)
CONTINUE_LINE = "Continue the task from where it was left, without asking the user again."

_CLIP_CHARS = 2_000
_PERSISTED = re.compile(r"Full output saved to: (\S+)")


def context_window(model: str, *, override: int | None = None) -> int:
    """The context window of `model`, in tokens (`override` first: a scenario's own)."""
    if override is not None:
        return override
    for prefix, window in CONTEXT_WINDOWS:
        if model.startswith(prefix):
            return window
    return DEFAULT_WINDOW


def context_tokens(usage: Mapping[str, Any]) -> int:
    """Tokens the next request will carry at least: everything this one read and wrote."""
    keys = (
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    )
    return sum(int(v) for k in keys if isinstance(v := usage.get(k), int))


def estimated_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """A rough count (four characters a token) for what no response has measured yet."""
    return sum(len(json.dumps(m, ensure_ascii=False, default=str)) for m in messages) // 4


def threshold_of(setting: bool | int | None) -> float | None:
    """The fraction of the window past which the loop compacts; None: never by itself."""
    if setting is False:
        return None
    if setting is None or setting is True:
        return DEFAULT_THRESHOLD_PERCENT / 100
    return setting / 100


def is_too_long(error: BaseException) -> bool:
    """The API's 400 for a prompt longer than the window ("prompt is too long")."""
    status = getattr(error, "status_code", None)
    text = str(getattr(error, "message", "") or error).lower()
    return status == 400 and ("prompt is too long" in text or "too many tokens" in text)


@dataclass(frozen=True, slots=True)
class Gauge:
    """How full the context is."""

    tokens: int
    window: int

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window > 0 else 0.0

    @property
    def percent(self) -> int:
        return min(round(self.fraction * 100), 999)


def summary_request(
    messages: Sequence[Mapping[str, Any]], instructions: str = ""
) -> list[dict[str, Any]]:
    """The conversation followed by the request for a summary (a valid API conversation:
    the request joins a trailing user message rather than follow it)."""
    ask = SUMMARY_PROMPT
    if instructions.strip():
        ask += f"\n\nThe user's instructions for this summary: {instructions.strip()}"
    out = [dict(m) for m in messages]
    block = {"type": "text", "text": ask}
    if out and out[-1].get("role") == "user":
        content = out[-1]["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        out[-1] = {"role": "user", "content": [*blocks, block]}
    else:
        out.append({"role": "user", "content": [block]})
    return out


def clipped(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A shorter copy for a summary of a conversation already too long to send whole."""
    return [{**m, "content": _clip_content(m.get("content"))} for m in messages]


def _clip_content(content: Any) -> Any:
    if isinstance(content, str):
        return _clip(content)
    if not isinstance(content, list):
        return content
    out: list[Any] = []
    for block in content:
        if not isinstance(block, Mapping):
            out.append(block)
        elif block.get("type") == "text":
            out.append({**block, "text": _clip(str(block.get("text", "")))})
        elif block.get("type") == "tool_result":
            text = _text_of(block.get("content"))
            out.append({**block, "content": _clip(text)})
        else:
            out.append(block)
    return out


def _clip(text: str) -> str:
    if len(text) <= _CLIP_CHARS:
        return text
    return f"{text[:_CLIP_CHARS]}\n[... {len(text) - _CLIP_CHARS} characters left out]"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, Mapping) and "text" in b
        )
    return ""


def persisted_paths(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """Where the conversation's persisted outputs are, in order, once each."""
    found: list[str] = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                for path in _PERSISTED.findall(_text_of(block.get("content"))):
                    if path not in found:
                        found.append(path)
    return found


def files_read(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """The files the agent read (Read calls), in order, once each."""
    found: list[str] = []
    for message in messages:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                path = (block.get("input") or {}).get("file_path")
                if block.get("name") == "Read" and isinstance(path, str) and path not in found:
                    found.append(path)
    return found


def summary_text(content: Sequence[Mapping[str, Any]]) -> str:
    """The text of the model's summary message (its tool calls, if any, are ignored)."""
    return "\n".join(
        str(b.get("text", "")) for b in content if b.get("type") == "text" and b.get("text")
    ).strip()


def compacted_conversation(
    summary: str,
    *,
    replaced: Sequence[Mapping[str, Any]],
    todos: Sequence[Any] = (),
    plan_file: Path | None = None,
    pending_prompt: Sequence[Mapping[str, Any]] | None = None,
    reminders: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """The conversation after compaction: one user message holding the summary and what
    stays (todos, plan file, persisted outputs and files read, by path), then the person's
    prompt when compaction came before its first request (it is still to be answered).
    `reminders`: subdirectories' instructions the replaced messages carried, given again
    (they are found once per session, so they would not come back by themselves)."""
    parts = [COMPACTED_HEADER, summary]
    if todos:
        lines = [f"- [{_status(t)}] {_content(t)}" for t in todos]
        parts.append("Your todo list (unchanged):\n" + "\n".join(lines))
    if plan_file is not None:
        parts.append(f"The plan file: {plan_file}")
    persisted = persisted_paths(replaced)
    if persisted:
        lines = [f"- {path}" for path in persisted]
        parts.append(
            "Outputs saved to disk earlier (read them again if you need them):\n" + "\n".join(lines)
        )
    read = files_read(replaced)
    if read:
        parts.append("Files you read earlier (not repeated here):\n" + "\n".join(read))
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "\n\n".join(parts)}]
    blocks += [{"type": "text", "text": reminder} for reminder in reminders]
    if pending_prompt:
        blocks += [dict(b) for b in pending_prompt]
    else:
        blocks.append({"type": "text", "text": CONTINUE_LINE})
    return [{"role": "user", "content": blocks}]


def pending_prompt(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]] | None:
    """The person's prompt not yet answered: a last user message without tool results."""
    if not messages or messages[-1].get("role") != "user":
        return None
    content = messages[-1].get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    blocks = [dict(b) for b in content or [] if isinstance(b, Mapping)]
    if any(b.get("type") == "tool_result" for b in blocks):
        return None
    return blocks


def _status(todo: Any) -> str:
    return str(getattr(todo, "status", None) or (todo.get("status") if _is_map(todo) else ""))


def _content(todo: Any) -> str:
    return str(getattr(todo, "content", None) or (todo.get("content") if _is_map(todo) else ""))


def _is_map(value: Any) -> bool:
    return isinstance(value, Mapping)
