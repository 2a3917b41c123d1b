"""Thinking end to end, through the real SDK and the demo model's signed thinking blocks:
asked for, streamed, kept across tool turns with its signature, counted, transcribed, resumed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_loop import rig, text, tool

from core.agent.demo import DEMO_MODEL
from core.agent.demo_thinking import signature_of
from core.agent.events import AssistantMessage, TextDelta, ThinkingDelta, TurnEnded, TurnError
from core.agent.model import DEFAULT_MODEL, ModelClient, limits_for
from core.agent.transcript import Transcript
from core.agent.transcript_resume import messages_from

THOUGHT = "The tests read counts.py, so I should look there before changing anything."


def thinking(value: str = THOUGHT) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value}


def thinking_rig(tmp_path: Path, *turns: Any, **kwargs: Any) -> Any:
    made = rig(tmp_path, *turns, **kwargs)
    made.loop.model = ModelClient(
        made.loop.model.client, model=DEMO_MODEL, max_tokens=128_000, thinking="adaptive"
    )
    return made


def test_defaults_follow_the_seeds_system_and_each_model_gets_a_budget_it_accepts() -> None:
    assert DEFAULT_MODEL == "claude-opus-5-5"
    assert limits_for("claude-opus-5-5").max_tokens == 128_000
    assert limits_for("claude-opus-5-5").thinking == "adaptive"
    # Older models take less output and think within a budget (test_thinking_models.py);
    # dated ids find their family.
    assert limits_for("claude-sonnet-4-5-20250929").max_tokens == 64_000
    assert limits_for("claude-sonnet-4-5").thinking == "budget"
    assert limits_for("claude-opus-4-1-20250805").max_tokens == 32_000
    assert limits_for("claude-3-5-haiku-latest").max_tokens == 8_192
    # An id nobody knows is never asked for more than every model accepts.
    unknown = limits_for("my-gateway-model")
    assert (unknown.max_tokens, unknown.thinking) == (32_000, "off")
    # --model / settings still choose; explicit values still win.
    client = ModelClient.from_env("claude-sonnet-4-5", env={"ANTHROPIC_API_KEY": "k"})
    assert (client.model, client.max_tokens, client.thinking) == (
        "claude-sonnet-4-5",
        64_000,
        "budget",
    )
    client = ModelClient.from_env(env={"ANTHROPIC_API_KEY": "k"})
    assert (client.model, client.max_tokens, client.thinking) == (
        DEFAULT_MODEL,
        128_000,
        "adaptive",
    )


async def test_thinking_streams_and_goes_back_intact_across_tool_turns(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    made = thinking_rig(
        tmp_path,
        [thinking(), text("Reading it."), tool("Read", file_path="{workspace}/README.md")],
        [thinking("It is the README; nothing to change."), text("Done.")],
        transcript=transcript,
    )
    ended = await made.loop.send("look")
    assert ended.stop_reason == "end_turn"
    assert made.outcomes() == ["played", "played"]

    # Asked for adaptive thinking, with the budget.
    first, second = made.requests
    assert first["thinking"] == {"type": "adaptive"} and first["max_tokens"] == 128_000

    # Streamed as it came, in pieces that make the whole thought.
    streamed = "".join(e.text for e in made.of(ThinkingDelta))
    assert streamed == THOUGHT + "It is the README; nothing to change."

    # The next request carries the block first in its assistant message, signature intact
    # (the demo model, like the API, would have refused it otherwise).
    sent_back = second["messages"][1]["content"][0]
    assert sent_back == {
        "type": "thinking",
        "thinking": THOUGHT,
        "signature": signature_of(THOUGHT),
    }
    assert [b["type"] for b in second["messages"][1]["content"]] == ["thinking", "text", "tool_use"]

    # Counted: the output tokens include the thought's.
    said = made.of(AssistantMessage)[0]
    assert said.content[0]["type"] == "thinking"
    assert ended.usage["output_tokens"] >= len(THOUGHT) // 8

    # Written to the transcript, and resumed exactly.
    transcript.close()
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert not [r for r in records if r.get("kind") == "thinking"]  # deltas only stream
    assistant = [r for r in records if r.get("type") == "message" and r["role"] == "assistant"]
    assert assistant[0]["content"][0]["signature"] == signature_of(THOUGHT)
    assert messages_from(records) == made.loop.messages


async def test_a_resumed_conversation_with_thinking_is_accepted(tmp_path: Path) -> None:
    transcript = Transcript(tmp_path / "t.jsonl")
    made = thinking_rig(
        tmp_path,
        [thinking(), tool("Glob", pattern="*.md")],
        [text("One file.")],
        [thinking("Again?"), text("Still one file.")],
        transcript=transcript,
    )
    await made.loop.send("count")
    transcript.close()
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    # The conversation as read back from disk, not the loop's own list.
    made.loop.messages = messages_from(records)
    ended = await made.loop.send("and now?")
    assert ended.stop_reason == "end_turn", made.of(TurnError)
    assert made.outcomes()[-1] == "played"
    assert made.requests[-1]["messages"][1]["content"][0]["signature"] == signature_of(THOUGHT)


async def test_an_altered_thought_is_refused_as_the_api_refuses_it(tmp_path: Path) -> None:
    made = thinking_rig(tmp_path, [text("-")])
    made.loop.messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "edited", "signature": signature_of("x")}],
        },
    ]
    ended = await made.loop.send("again")
    assert ended.stop_reason == "error"
    assert "Invalid `signature` in `thinking` block" in made.of(TurnError)[0].message


@pytest.mark.parametrize("asked", ["off", "adaptive"])
async def test_a_model_not_asked_to_think_does_not(tmp_path: Path, asked: str) -> None:
    made = thinking_rig(tmp_path, [thinking(), {"type": "redacted_thinking"}, text("Hello.")])
    made.loop.model.thinking = asked  # type: ignore[assignment]
    await made.loop.send("hi")
    assert ("thinking" in made.requests[0]) == (asked == "adaptive")
    types = [b["type"] for b in made.loop.messages[1]["content"]]
    if asked == "off":
        assert types == ["text"] and not made.of(ThinkingDelta)
    else:
        assert types == ["thinking", "redacted_thinking", "text"]
        assert made.of(ThinkingDelta)[-1].redacted
        # The redacted block goes back as it came, and is accepted.
        await made.loop.send("more")
        assert made.of(TurnEnded)[-1].stop_reason == "end_turn", made.of(TurnError)


def test_always_thinking_enabled_false_turns_thinking_off_and_a_bad_value_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.settings.read import load_settings

    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    settings_file = project / ".proctor" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text('{"alwaysThinkingEnabled": false}')
    assert load_settings(project).thinking is False
    settings_file.write_text('{"alwaysThinkingEnabled": "no"}')
    settings = load_settings(project)
    assert settings.thinking is None
    assert ["must be true or false" in p.message for p in settings.problems] == [True]
    settings_file.write_text('{"alwaysThinkingEnabled": true}')
    assert load_settings(project).thinking is True and not load_settings(project).problems


async def test_a_session_asks_as_its_settings_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.agent.live import SessionOptions, open_session, prepare_session
    from core.events import EventRecorder

    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    (project / ".proctor").mkdir(parents=True)
    scenario = project / "s.json"
    scenario.write_text(
        json.dumps({"name": "s", "workspace": "cwd", "turns": [[thinking(), text("Hi.")]]})
    )
    for setting, expected in ((None, "adaptive"), (False, "off")):
        settings = {} if setting is None else {"alwaysThinkingEnabled": setting}
        (project / ".proctor" / "settings.json").write_text(json.dumps(settings))
        options = SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
        live = await open_session(prepare_session(options), sink=EventRecorder(), trusted=True)
        try:
            assert live.model.thinking == expected and live.model.max_tokens == 128_000
            await live.send("hi")
            kinds = [b["type"] for b in live.loop.messages[1]["content"]]
        finally:
            await live.close()
        assert kinds == (["thinking", "text"] if expected == "adaptive" else ["text"])


async def test_an_interrupt_after_a_thought_keeps_it_signed_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    import asyncio

    from engine_helpers import HANG_BOUND_S, eventually

    made = thinking_rig(
        tmp_path,
        [thinking(), text("Some words."), {**text("then a long wait"), "pace_ms": 600_000}],
        [text("Back.")],
        speed=0.1,  # the wait: 60 s
    )
    task = asyncio.create_task(made.loop.send("go"))
    said = lambda: "".join(e.text for e in made.of(TextDelta))  # noqa: E731
    # Text after the thought: its block (with its signature) is complete.
    await eventually(lambda: said() == "Some words.", "the words after the thought")
    made.loop.interrupt()
    ended = await asyncio.wait_for(task, HANG_BOUND_S)
    assert ended.stop_reason == "interrupted"
    kept = made.loop.messages[1]["content"]
    assert kept[0] == {"type": "thinking", "thinking": THOUGHT, "signature": signature_of(THOUGHT)}
    assert kept[1:] == [text("Some words.")]
    ended = await asyncio.wait_for(made.loop.send("go on"), HANG_BOUND_S)
    assert ended.stop_reason == "end_turn", made.of(TurnError)


async def test_thinking_counts_in_the_output_tokens(tmp_path: Path) -> None:
    turn = [thinking(THOUGHT * 4), text("Hello.")]
    used = {}
    for asked in ("off", "adaptive"):
        made = thinking_rig(tmp_path / asked, turn)
        made.loop.model.thinking = asked  # type: ignore[assignment]
        used[asked] = (await made.loop.send("hi")).usage["output_tokens"]
    # The demo counts about a token per four characters, as the API counts thinking: output.
    assert used["adaptive"] - used["off"] >= len(THOUGHT * 4) // 8
