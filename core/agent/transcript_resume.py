"""Reading a transcript back: the conversation and the state a resumed session starts from.

Resuming takes the records (`Transcript.records()`) and rebuilds two things from them:
`messages_from`, the API message list, repaired where a crash left it in a state the API
refuses; and `restored_state`, the last permission mode and todo list. They only read
records, so they live apart from the file and from the builders that made them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .compaction import context_tokens

INTERRUPTED_RESULT = "the session ended before this call finished"
"""The result `messages_from` gives a tool call that a crash left without one."""


def messages_from(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The API message list a session had reached, valid to send again.

    A crash can leave the conversation in a state the API refuses: an assistant message
    whose tool_use blocks never got their tool_result, or a new prompt right after it. Each
    such call gets an error result saying the session ended first; results answering no
    call are dropped; consecutive messages of one role are merged. Valid conversations come
    out unchanged (same strings, same blocks), so a resumed session repeats its history byte
    for byte and keeps the prompt cache. A compaction record replaces everything before it
    with the conversation it holds (the summary), as the session itself did.
    """
    merged: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") == "clear":  # /clear: the conversation starts again here
            merged = []
            continue
        if record.get("type") == "compaction" and isinstance(record.get("messages"), list):
            # What came before was replaced by the summary: start again from it.
            merged = []
            for kept in record["messages"]:
                if isinstance(kept, Mapping) and kept.get("role") in ("user", "assistant"):
                    _append_merged(merged, {"role": kept["role"], "content": kept["content"]})
            continue
        if record.get("type") != "message" or record.get("role") not in ("user", "assistant"):
            continue
        message = {"role": record["role"], "content": record.get("content", "")}
        _append_merged(merged, message)

    out: list[dict[str, Any]] = []
    for message in merged:
        if message["role"] == "assistant":
            _append_merged(out, message)
            continue
        previous = out[-1] if out and out[-1]["role"] == "assistant" else None
        fixed = _answer_calls(_tool_uses(previous), message)
        if fixed is not None:
            _append_merged(out, fixed)
    if out and out[-1]["role"] == "assistant":
        dangling = _tool_uses(out[-1])
        if dangling:
            out.append({"role": "user", "content": [_interrupted(i) for i in dangling]})
    return out


@dataclass(frozen=True, slots=True)
class RestoredState:
    """What a session had when it stopped, beyond its conversation."""

    mode: str | None = None
    todos: tuple[Mapping[str, Any], ...] = ()
    context_tokens: int | None = None
    """How many tokens the conversation held when it stopped, as last measured (the last
    response's usage, or the count after a compaction or /clear); None: never measured."""


def restored_state(records: Iterable[Mapping[str, Any]]) -> RestoredState:
    """The last permission mode, the main agent's last todo list and the last context
    measure in the records (the modes a session may not start in, like bypass without its
    flag, are refused later by the permission setup, as they would be from the command line)."""
    mode: str | None = None
    todos: tuple[Mapping[str, Any], ...] = ()
    tokens: int | None = None
    for record in records:
        kind = record.get("type")
        if kind == "clear":
            tokens = 0
        elif kind == "compaction":
            tokens = None  # measured again right after (a "context" event), else unknown
        elif kind == "message" and record.get("role") == "assistant":
            tokens = _context_tokens(record.get("usage"), tokens)
        if kind != "engine_event":
            continue
        if record.get("kind") == "context" and record.get("agent_id") is None:
            measured = record.get("tokens")
            tokens = measured if isinstance(measured, int) and measured >= 0 else tokens
        elif record.get("kind") == "mode" and isinstance(record.get("mode"), str):
            mode = record["mode"]
        elif record.get("kind") == "todos" and record.get("agent_id") is None:
            items = record.get("todos")
            if isinstance(items, list):
                todos = tuple(
                    item
                    for item in items
                    if isinstance(item, dict)
                    and {"content", "status", "active_form"} <= set(item)
                    and item["status"] in ("pending", "in_progress", "completed")
                )
    return RestoredState(mode, todos, tokens)


def _context_tokens(usage: Any, before: int | None) -> int | None:
    return context_tokens(usage) if isinstance(usage, Mapping) else before


def _answer_calls(calls: list[str], message: dict[str, Any]) -> dict[str, Any] | None:
    """A user message answering exactly `calls`; None when nothing is left of it."""
    content = message["content"]
    blocks: list[Any] = content if isinstance(content, list) else []
    results = [b for b in blocks if _is_result(b)]
    if [r.get("tool_use_id") for r in results] == calls and all(
        _is_result(b) for b in blocks[: len(results)]
    ):
        # Already valid (the usual case): keep the message exactly as written.
        return message if content else None
    kept: list[Any] = []
    for call in calls:
        # The first result for each call, in the order of the calls; orphans are dropped.
        answers = [r for r in results if r.get("tool_use_id") == call]
        kept.append(answers[0] if answers else _interrupted(call))
    others = [b for b in blocks if not _is_result(b)]
    if isinstance(content, str) and content:
        others = [{"type": "text", "text": content}]
    # The API wants a user message's tool_result blocks before anything else in it.
    new_content = kept + others
    return {"role": "user", "content": new_content} if new_content else None


def _append_merged(messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
    if messages and messages[-1]["role"] == message["role"]:
        last = messages[-1]
        messages[-1] = {
            "role": last["role"],
            "content": _blocks(last["content"]) + _blocks(message["content"]),
        }
    else:
        messages.append(message)


def _blocks(content: Any) -> list[Any]:
    if isinstance(content, list):
        return list(content)
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    return []


def _tool_uses(message: Mapping[str, Any] | None) -> list[str]:
    if message is None or not isinstance(message.get("content"), list):
        return []
    return [
        str(block["id"])
        for block in message["content"]
        if isinstance(block, Mapping) and block.get("type") == "tool_use" and "id" in block
    ]


def _is_result(block: Any) -> bool:
    return isinstance(block, Mapping) and block.get("type") == "tool_result"


def _interrupted(tool_use_id: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": INTERRUPTED_RESULT,
        "is_error": True,
    }
