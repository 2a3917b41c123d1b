"""The demo model's thinking: signed when streamed, checked when sent back.

The API signs each thinking block and refuses a conversation that sends one back altered or
without its signature (it must come back exactly as received across tool turns). The demo
model does the same, so the offline demo and the tests catch a client that drops, edits or
re-orders thinking: a block's signature is a keyed hash of its text, a redacted block's data
carries a hash of its own. Both are opaque to the client, as the real ones are.

Thinking is streamed only to a request that asks for it (`thinking` of type `adaptive` or
`enabled`), as a real model thinks only when asked; a turn's thinking blocks are left out
otherwise. A `thinking` the API would refuse (an unknown type, a `budget_tokens` below 1024
or not below `max_tokens`) is refused here too, in the API's words, so a budget worked out
wrong fails a test instead of a person's first request. Kept apart from demo.py so the
stream builder stays one thing.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import Any

from .scenario import RedactedThinkingBlock, ThinkingBlock, Turn

_KEY = b"proctor-demo-thinking"


def _digest(text: str) -> str:
    digest = hashlib.sha256(_KEY + text.encode("utf-8")).digest()
    return base64.b64encode(digest).decode("ascii")


def signature_of(thinking: str) -> str:
    """The signature the demo gives a thinking block with this text."""
    return _digest("thinking:" + thinking)


def redacted_data(turn_key: str) -> str:
    """A redacted block's opaque data: a payload and its own hash."""
    payload = base64.b64encode(f"redacted:{turn_key}".encode()).decode("ascii")
    return f"{payload}.{_digest(payload)}"


def asks_for_thinking(body: Mapping[str, Any]) -> bool:
    thinking = body.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("adaptive", "enabled")


def thinking_config_problem(body: Mapping[str, Any]) -> str | None:
    """What the API would say of the request's `thinking` field; None when it is fine."""
    if "thinking" not in body:
        return None
    thinking = body["thinking"]
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind in ("adaptive", "disabled"):
        return None
    if kind != "enabled":
        return f"thinking.type: Input should be 'enabled', 'disabled' or 'adaptive', not {kind!r}"
    budget, max_tokens = thinking.get("budget_tokens"), body.get("max_tokens")
    if not isinstance(budget, int) or isinstance(budget, bool):
        return "thinking.enabled.budget_tokens: Field required"
    if budget < 1024:
        return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
    if isinstance(max_tokens, int) and budget >= max_tokens:
        return "`max_tokens` must be greater than `thinking.budget_tokens`"
    return None


def without_thinking(turn: Turn) -> Turn:
    """The turn as a model not asked to think plays it."""
    blocks = [b for b in turn.blocks if not isinstance(b, ThinkingBlock | RedactedThinkingBlock)]
    if len(blocks) == len(turn.blocks):
        return turn
    return turn.model_copy(update={"blocks": blocks})


def thinking_problem(messages: list[Any]) -> str | None:
    """What is wrong with the thinking blocks a conversation sends back, in the API's words;
    None when every one is intact."""
    for m, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            kind = block.get("type") if isinstance(block, dict) else None
            where = f"messages.{m}.content.{b}"
            if kind in ("thinking", "redacted_thinking") and message.get("role") != "assistant":
                return f"{where}: `{kind}` blocks may only appear in assistant messages"
            if kind == "thinking":
                text, signature = block.get("thinking"), block.get("signature")
                if not isinstance(text, str) or not isinstance(signature, str) or not signature:
                    return f"{where}.thinking.signature: Field required"
                if signature != signature_of(text):
                    return f"{where}: Invalid `signature` in `thinking` block"
            elif kind == "redacted_thinking":
                data = block.get("data")
                payload, _, digest = data.partition(".") if isinstance(data, str) else ("", "", "")
                if not digest or digest != _digest(payload):
                    return f"{where}: Invalid `data` in `redacted_thinking` block"
    return None
