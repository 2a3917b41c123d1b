"""A sub-agent's thinking: asked for as the main agent's is, streamed to the front end
wrapped as the sub-agent's (never as the main agent's), kept signed across its tool turns,
and written with its messages, through the real SDK and the demo model's signed blocks."""

from __future__ import annotations

from pathlib import Path

from test_task_tool import rig, task, text, tool

from core.agent.demo_thinking import signature_of
from core.agent.events import AssistantMessage, ThinkingDelta
from core.agent.transcript_records import event_record
from core.events import SubAgentEvent

FIRST = "Only markdown files matter; a Glob finds them."
SECOND = "One file came back: that is the answer."


async def test_a_sub_agents_thinking_streams_under_its_task_and_goes_back_signed(
    tmp_path: Path,
) -> None:
    r = rig(
        tmp_path,
        [
            text("Asking an explorer."),
            task(
                "Find the README.",
                [
                    [{"type": "thinking", "thinking": FIRST}, tool("Glob", pattern="*.md")],
                    [
                        {"type": "thinking", "thinking": SECOND},
                        {"type": "redacted_thinking"},
                        text("README.md."),
                    ],
                ],
            ),
        ],
        [text("Done.")],
    )
    r.loop.model.thinking = "adaptive"  # the session's client, which sub-agents share
    ended = await r.loop.send("explore")
    assert ended.stop_reason == "end_turn"
    task_id = "toolu_demo_0_1"
    # Both of the sub-agent's requests were played: the second carried the first thought
    # back signed (the demo model, as the API, refuses it altered or missing).
    sub_served = [s.outcome for s in r.demo.served if s.conversation == task_id]
    assert sub_served == ["played", "played"]
    assert r.result_of(task_id)["content"].startswith("README.md.")

    wrapped = [e for e in r.recorder.events if isinstance(e, SubAgentEvent)]
    thoughts = [e for e in wrapped if isinstance(e.event, ThinkingDelta)]
    assert {e.agent_id for e in thoughts} == {task_id}
    assert "".join(e.event.text for e in thoughts) == FIRST + SECOND
    assert [e.event.redacted for e in thoughts][-1]  # the redacted block said so
    # None of it is the main agent's.
    assert not [e for e in r.recorder.events if isinstance(e, ThinkingDelta)]

    # The sub-agent's messages hold the blocks whole, signatures intact, in order.
    messages = [e.event for e in wrapped if isinstance(e.event, AssistantMessage)]
    first, second = (m.content for m in messages)
    assert first[0] == {"type": "thinking", "thinking": FIRST, "signature": signature_of(FIRST)}
    assert [b["type"] for b in second] == ["thinking", "redacted_thinking", "text"]
    # As stream-json prints them and the transcript keeps them: the thinking included.
    record = event_record(next(e for e in wrapped if isinstance(e.event, AssistantMessage)))
    assert record["event"]["content"][0]["signature"] == signature_of(FIRST)
