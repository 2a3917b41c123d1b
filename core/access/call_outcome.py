"""What happened to a call, read back from the tool_result the model was sent.

A denial and a failure both reach the model as an `is_error` tool_result, and the model (a
live one, or the offline demo's script) must still tell "you were not allowed" from "it
broke": one is answered with "nothing changed, what now?", the other with "it failed". So
the engine writes every permission denial with one opening, `DENIED_OPENING`
(`denial_message`), and `call_outcome` reads it back. A tool's own error that happens to open
that way is made to name the tool first (`unmistaken_content`), so the opening means a
denial and nothing else. The two tools that put something
before the person (ExitPlanMode, AskUserQuestion) write their "no" answers with the
openings defined here too, so the words and their reading cannot drift apart.

The reading is closed (`CallOutcome`) and fails closed: an error result that is not a
recognised denial is "failed", as is a call whose result is missing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

CallOutcome = Literal["ran", "denied", "failed"]
"""ran: the call went ahead (an approved plan, an answered question). denied: it was not
allowed to (a rule, a hook, the mode, the person, or nobody there to approve it), or the
person said no to what it asked (kept planning, declined the questions). failed: anything
else that is an error, a cancelled call included, and a question nobody could answer."""

DENIED_OPENING = "Permission denied: "
"""How the engine opens every permission denial it sends to the model."""

PLAN_KEPT_OPENING = "The user did not approve the plan yet"
"""How ExitPlanMode opens its result when the person chose to keep planning."""

QUESTIONS_DECLINED_OPENING = "The user declined to answer the questions."
"""How AskUserQuestion opens its result when the person dismissed the questions."""

QUESTIONS_UNASKED_OPENING = "Nobody can answer questions in this session"
"""How AskUserQuestion opens its result when no person could be asked."""

_ERROR_OPEN, _ERROR_CLOSE = "<tool_use_error>", "</tool_use_error>"


def denial_message(reason: str) -> str:
    """`reason` as the model reads a denial: opened so that `call_outcome` recognises it."""
    return reason if reason.startswith(DENIED_OPENING) else DENIED_OPENING + reason


def unmistaken_content(block: Mapping[str, Any], tool_name: str) -> Any | None:
    """For a tool's own error result that opens like a denial ("Permission denied: /etc",
    say, from the system or an MCP server): the content to send instead, which names the
    tool first so it cannot be read as a denial. None for every other result."""
    if not block.get("is_error") or not result_text(block).startswith(DENIED_OPENING):
        return None
    lead = f"{tool_name} reported: "
    content = block.get("content", "")
    if isinstance(content, str):
        at = content.find(DENIED_OPENING)
        return content[:at] + lead + content[at:]
    return [{"type": "text", "text": lead.strip()}, *content]


def call_outcome(block: Mapping[str, Any] | None, tool_name: str | None = None) -> CallOutcome:
    """Read a tool_result block (None: the call got no result) for the call of `tool_name`."""
    if block is None:
        return "failed"
    text = result_text(block)
    if tool_name == "AskUserQuestion" and text.startswith(QUESTIONS_DECLINED_OPENING):
        return "denied"  # not an error, as nothing failed (an older transcript may hold one)
    if block.get("is_error"):
        if text.startswith(DENIED_OPENING):
            return "denied"
        return "failed"
    if tool_name == "ExitPlanMode" and text.startswith(PLAN_KEPT_OPENING):
        return "denied"
    if tool_name == "AskUserQuestion" and text.startswith(QUESTIONS_UNASKED_OPENING):
        return "failed"
    return "ran"


def result_text(block: Mapping[str, Any]) -> str:
    """The result's text as the tool wrote it: its text blocks joined, the error mark gone."""
    content = block.get("content", "")
    if isinstance(content, list):
        content = "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    text = str(content).strip()
    if text.startswith(_ERROR_OPEN) and text.endswith(_ERROR_CLOSE):
        text = text[len(_ERROR_OPEN) : -len(_ERROR_CLOSE)].strip()
    return text
