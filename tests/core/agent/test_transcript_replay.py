"""The past rebuilt from transcript records: in the order it was seen, results back on their
calls, a crash's unfinished calls ended, and only the last turns drawn."""

from __future__ import annotations

from typing import Any

from core.agent.events import AssistantMessage, TextDelta, TurnEnded, UsageUpdated
from core.agent.transcript_replay import PastPrompt, past_events
from core.agent.transcript_resume import INTERRUPTED_RESULT
from core.events import ToolCancelled, ToolCompleted, ToolQueued, ToolStarted

AT = 1_800_000_000.0


def message(role: str, *content: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "message", "at": AT, "role": role, "content": list(content), **extra}


def tool_event(kind: str, call: str, **fields: Any) -> dict[str, Any]:
    return {
        "type": "tool_event",
        "at": AT,
        "kind": kind,
        "tool_use_id": call,
        "name": "Bash",
        "batch_id": "b1",
        "parent_tool_use_id": None,
        **fields,
    }


def usage(request: str, input_tokens: int, output_tokens: int) -> dict[str, Any]:
    return {
        "type": "engine_event",
        "at": AT,
        "kind": "usage",
        "request_id": request,
        "model": "claude-sonnet-4-5",
        "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
    }


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def one_turn(prompt: str, call: str, *, ended: bool = True) -> list[dict[str, Any]]:
    records = [
        message("user", text(prompt)),
        usage(f"msg-{call}", 100, 1),
        tool_event("queued", call, input={"command": "ls"}, summary="ls", concurrency_safe=True),
        tool_event("started", call),
    ]
    if not ended:
        return records
    return [
        *records,
        tool_event("completed", call, duration_s=0.5, is_error=False, sandbox="read-only"),
        usage(f"msg-{call}", 100, 20),
        message(
            "assistant",
            text("Listing first."),
            {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "ls"}},
            text("Then more."),
            usage={"input_tokens": 100, "output_tokens": 20},
            stop_reason="tool_use",
        ),
        message("user", {"type": "tool_result", "tool_use_id": call, "content": "a.txt\nb.txt"}),
        message("assistant", text("Done."), stop_reason="end_turn"),
        {"type": "turn", "at": AT, "number": 2, "stop_reason": "end_turn", "usage": {}},
    ]


def shape(events: list[Any]) -> list[str]:
    words = []
    for event in events:
        match event:
            case PastPrompt():
                words.append(f"prompt {event.text}")
            case TextDelta():
                words.append(f"text {event.text.strip()}")
            case ToolQueued() | ToolStarted() | ToolCompleted() | ToolCancelled():
                words.append(f"{event.kind} {event.tool_use_id}")
            case TurnEnded():
                words.append(f"turn ended {event.stop_reason}")
            case AssistantMessage() | UsageUpdated():
                pass
    return words


def test_text_is_drawn_before_the_calls_that_followed_it_and_results_come_back():
    past = past_events([{"type": "start", "at": AT}, *one_turn("list it", "c1")])
    assert shape(past.events) == [
        "prompt list it",
        "text Listing first.",
        "queued c1",
        "started c1",
        "completed c1",
        "text Then more.",
        "text Done.",
        "turn ended end_turn",
    ]
    (done,) = [e for e in past.events if isinstance(e, ToolCompleted)]
    assert done.content == "a.txt\nb.txt" and done.sandbox == "read-only"
    assert (past.turns, past.hidden_turns) == (1, 0)


def test_a_crashed_turn_ends_its_running_calls_instead_of_leaving_them_running():
    records = [
        {"type": "start", "at": AT},
        *one_turn("first", "c1", ended=False),
        {"type": "start", "at": AT + 60, "resumed": True},  # the next process
        *one_turn("second", "c2"),
    ]
    words = shape(past_events(records).events)
    assert words[:5] == [
        "prompt first",
        "queued c1",
        "started c1",
        "cancelled c1",
        "turn ended session_ended",
    ]
    (cut,) = [e for e in past_events(records).events if isinstance(e, ToolCancelled)]
    assert cut.message == INTERRUPTED_RESULT
    assert words[5] == "prompt second"


def test_only_the_last_turns_are_drawn_but_every_request_s_usage_counts():
    records = [{"type": "start", "at": AT}]
    for n in range(5):
        records += one_turn(f"prompt {n}", f"c{n}")
    past = past_events(records, turns=2)
    assert (past.turns, past.hidden_turns) == (5, 3)
    prompts = [e.text for e in past.events if isinstance(e, PastPrompt)]
    assert prompts == ["prompt 3", "prompt 4"]
    requests = {e.request_id for e in past.events if isinstance(e, UsageUpdated)}
    assert requests == {f"msg-c{n}" for n in range(5)}


def test_garbled_records_are_skipped_not_fatal():
    records: list[dict[str, Any]] = [
        {"type": "start"},
        {"type": "message", "role": "user", "content": 7},
        {"type": "tool_event", "kind": "completed"},  # no call id
        {"type": "tool_event", "kind": "queued", "tool_use_id": "x", "at": "soon"},
        {"type": "engine_event", "kind": "usage"},  # no request id
        {"type": "engine_event", "kind": "mode", "mode": 3},
        {"type": "nonsense"},
    ]
    words = shape(past_events(records).events)
    assert words == ["prompt ", "queued x", "cancelled x", "turn ended session_ended"]


def test_a_transcript_from_before_usage_streamed_counts_each_message_s_own_usage():
    records = [
        {"type": "start", "at": AT},
        message("user", text("hi")),
        message(
            "assistant",
            text("Hello."),
            model="claude-sonnet-4-5",
            usage={"input_tokens": 40, "output_tokens": 7, "service_tier": "standard"},
        ),
        {"type": "turn", "at": AT, "number": 1, "stop_reason": "end_turn", "usage": {}},
    ]
    (counted,) = [e for e in past_events(records).events if isinstance(e, UsageUpdated)]
    assert counted.model == "claude-sonnet-4-5"
    assert counted.usage == {"input_tokens": 40, "output_tokens": 7}
