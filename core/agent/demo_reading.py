"""What the demo model reads in a request: the path its script took, and the plan file.

The demo model keeps no cursor (demo.py says why): everything it needs is in the
conversation a request carries. Which turn to play is the count of assistant messages; which
alternative of a choice, what happened to the previous message's calls, read from the
tool_results sent back after it (`core/access/call_outcome.py`); whether the path already
ended, the same reading replayed from the start. After a compaction, the count goes on from
the number the demo's own summary carries.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..access.call_outcome import call_outcome
from .compaction import SUMMARY_PROMPT_START
from .scenario import Choice, Turn, TurnOutcome


def role(message: Any) -> str | None:
    return message.get("role") if isinstance(message, dict) else None


def text_of(message: Any) -> str:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_block_text(block) for block in content)
    return ""


def _block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    content = block.get("text", block.get("content", ""))
    if isinstance(content, list):
        return "\n".join(_block_text(inner) for inner in content)
    return content if isinstance(content, str) else ""


_PLAN_PATH = re.compile(r"((?:[A-Za-z]:)?[\\/][^\s()'\"`]+\.md)\b")


def plan_file_from(messages: list[Any]) -> Path | None:
    """The plan file EnterPlanMode named in its result, if the conversation has one."""
    ids = {
        block.get("id")
        for message in messages
        if role(message) == "assistant" and isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict)
        and block.get("type") == "tool_use"
        and block.get("name") == "EnterPlanMode"
    }
    found: Path | None = None
    for message in messages:
        if role(message) != "user" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("tool_use_id") in ids:
                match = _PLAN_PATH.search(_block_text(block))
                found = Path(match.group(1)) if match else found
    return found


def turn_to_play(
    steps: list[Turn | Choice], messages: list[Any], turn_index: int, *, earlier: int = 0
) -> tuple[Turn, TurnOutcome | None] | None:
    """The turn that answers a conversation holding `turn_index` assistant messages, and the
    alternative chosen for it; None past the end of the script or of a path that ended.

    The earlier choices are replayed from the same messages, so the path is the one the
    conversation took, and a retried request gets the same turn again."""
    assistants = [i for i, message in enumerate(messages) if role(message) == "assistant"]
    for index, step in enumerate(steps[: turn_index + 1]):
        chose: TurnOutcome | None = None
        if isinstance(step, Choice) and index - 1 < earlier:
            # Its calls were compacted away: a path through them can no longer be read,
            # and a scenario that compacts keeps its choices after the summary.
            chose = "all_ran"
            turn = step.turn_for(chose)
        elif isinstance(step, Choice):
            chose = outcome_of(messages, assistants[index - 1 - earlier])
            turn = step.turn_for(chose)
        else:
            turn = step
        if index == turn_index:
            return turn, chose
        if turn.end:
            return None
    return None


def outcome_of(messages: list[Any], at: int) -> TurnOutcome:
    """What happened to the calls of the assistant message at `at`, read from the results
    sent back after it; a call with no result counts as failed."""
    content = messages[at].get("content")
    calls = {
        str(block.get("id")): str(block.get("name"))
        for block in (content if isinstance(content, list) else [])
        if isinstance(block, dict) and block.get("type") == "tool_use"
    }
    results: dict[str, dict[str, Any]] = {}
    for message in messages[at + 1 :]:
        if role(message) == "assistant":
            break
        answer = message.get("content") if isinstance(message, dict) else None
        for block in answer if isinstance(answer, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = block
    seen = {call_outcome(results.get(call_id), name) for call_id, name in calls.items()}
    if "denied" in seen:
        return "denied"
    return "failed" if "failed" in seen else "all_ran"


_SUMMARY_MARK = re.compile(r"\[demo: (\d+) turns before this summary\]")


def summary_mark(turns: int) -> str:
    """What the demo's summary ends with: how many turns the script had played."""
    return f"[demo: {turns} turns before this summary]"


def turns_before_summary(messages: list[Any]) -> int:
    """Turns played before the summary a compacted conversation opens with (else 0)."""
    if not messages or role(messages[0]) != "user":
        return 0
    found = _SUMMARY_MARK.search(text_of(messages[0]))
    return int(found.group(1)) if found else 0


def is_summary_request(messages: list[Any]) -> bool:
    """Whether the request asks for compaction's summary (its last user text is the ask)."""
    last = messages[-1] if messages else None
    if role(last) != "user":
        return False
    content = last.get("content") if isinstance(last, dict) else None
    blocks = content if isinstance(content, list) else []
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    return bool(texts) and str(texts[-1]).startswith(SUMMARY_PROMPT_START)
