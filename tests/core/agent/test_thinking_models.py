"""Thinking as each model takes it, read from the request body the in-process transport got:
adaptive for the newer models, a budget below `max_tokens` for the older ones, none for
those that do not think; MAX_THINKING_TOKENS and `alwaysThinkingEnabled` honoured; a
sub-agent's thinking streamed and kept; redacted thinking sent back as it came."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_loop import rig, text, tool

from core.agent.demo_thinking import redacted_data, signature_of
from core.agent.events import ThinkingDelta, TurnEnded, TurnError
from core.agent.model import ModelClient, thinking_budget, thinking_env

# The SDK warns of the older models it asks for; they are asked for on purpose here.
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")

THOUGHT = "Two files to read; the README first."


def thinking(value: str = THOUGHT) -> dict[str, Any]:
    return {"type": "thinking", "thinking": value}


def ask_as(made: Any, model: str, **kwargs: Any) -> ModelClient:
    """The rig's loop asks as a client for `model` would (the demo plays any model)."""
    made.loop.model = ModelClient(made.loop.model.client, model=model, **kwargs)
    return made.loop.model  # type: ignore[no-any-return]


@pytest.mark.parametrize(
    ("model", "max_tokens", "expected"),
    [
        ("claude-opus-5-5", 128_000, {"type": "adaptive"}),
        ("claude-sonnet-4-6", 64_000, {"type": "adaptive"}),
        ("claude-sonnet-4-5-20250929", 64_000, {"type": "enabled", "budget_tokens": 31_999}),
        ("claude-haiku-4-5", 64_000, {"type": "enabled", "budget_tokens": 31_999}),
        ("claude-opus-4-1-20250805", 32_000, {"type": "enabled", "budget_tokens": 24_000}),
        ("claude-3-7-sonnet-latest", 64_000, {"type": "enabled", "budget_tokens": 31_999}),
        ("claude-3-5-haiku-latest", 8_192, None),
        ("my-gateway-model", 32_000, None),
    ],
)
async def test_each_model_is_asked_to_think_the_way_it_can(
    tmp_path: Path, model: str, max_tokens: int, expected: dict[str, Any] | None
) -> None:
    made = rig(
        tmp_path,
        [thinking(), text("Reading."), tool("Read", file_path="{workspace}/README.md")],
        [thinking("Read it; done."), text("Done.")],
    )
    ask_as(made, model)
    ended = await made.loop.send("look")
    # The demo model refuses what the API refuses (a budget of max_tokens or more, below
    # 1024, an unknown type) and an altered thought: both requests were played.
    assert ended.stop_reason == "end_turn", made.of(TurnError)
    assert made.outcomes() == ["played", "played"]
    for body in made.requests:
        assert body["model"] == model and body["max_tokens"] == max_tokens
        assert body.get("thinking") == expected
    kinds = [b["type"] for b in made.loop.messages[1]["content"]]
    if expected is None:  # not asked, so the model did not think
        assert kinds == ["text", "tool_use"] and not made.of(ThinkingDelta)
    else:  # thought, and the thought went back signed across the tool turn
        assert kinds == ["thinking", "text", "tool_use"]
        assert made.requests[1]["messages"][1]["content"][0]["signature"] == signature_of(THOUGHT)


def test_the_budget_leaves_the_answer_room_and_respects_the_apis_minimum() -> None:
    assert thinking_budget(64_000) == 31_999  # the seeds' system's default
    assert thinking_budget(32_000) == 24_000  # a quarter kept for the answer and its calls
    assert thinking_budget(64_000, 8_000) == 8_000
    assert thinking_budget(64_000, 500_000) == 48_000  # never max_tokens or more
    assert thinking_budget(64_000, 10) == 1_024  # the API refuses less
    assert thinking_budget(1_300) is None  # not even the minimum fits: no thinking
    for max_tokens in (1_366, 1_367, 4_096, 8_192, 32_000, 64_000):
        budget = thinking_budget(max_tokens)
        assert budget is not None and 1_024 <= budget < max_tokens


def test_max_thinking_tokens_is_read_the_seeds_systems_way() -> None:
    assert thinking_env({}) == thinking_env({"MAX_THINKING_TOKENS": " "})
    assert thinking_env({}).budget is None and not thinking_env({}).off
    assert thinking_env({"MAX_THINKING_TOKENS": "0"}).off
    assert thinking_env({"MAX_THINKING_TOKENS": "8000"}).budget == 8_000
    # "²" and "١٠٠٠" are digits to str.isdigit (the first once made int() raise as the
    # session opened), and five thousand 9s more than int() reads: each is said, not used.
    for bad in ("-1", "8k", "1.5", "lots", "²", "١٠٠٠", "9" * 5000):
        said = thinking_env({"MAX_THINKING_TOKENS": bad})
        assert said.budget is None and not said.off
        assert said.problem is not None and repr(bad) in said.problem
        assert "whole number of tokens" in said.problem


@pytest.mark.parametrize(
    ("model", "value", "expected"),
    [
        ("claude-sonnet-4-5", "8000", {"type": "enabled", "budget_tokens": 8_000}),
        ("claude-sonnet-4-5", "0", None),
        ("claude-opus-5-5", "0", None),
        # An adaptive model decides how much to think: a number does not change that.
        ("claude-opus-5-5", "8000", {"type": "adaptive"}),
        ("claude-sonnet-4-5", "nope", {"type": "enabled", "budget_tokens": 31_999}),
    ],
)
async def test_max_thinking_tokens_reaches_the_request(
    tmp_path: Path, model: str, value: str, expected: dict[str, Any] | None
) -> None:
    made = rig(tmp_path, [thinking(), text("Hi.")])
    env = {"ANTHROPIC_API_KEY": "k", "MAX_THINKING_TOKENS": value}
    from_env = ModelClient.from_env(model, env=env)
    ask_as(made, model, thinking=from_env.thinking, thinking_budget=from_env.thinking_budget)
    await made.loop.send("hi")
    assert made.requests[0].get("thinking") == expected


async def test_switching_model_switches_how_thinking_is_asked_and_off_stays_off(
    tmp_path: Path,
) -> None:
    made = rig(tmp_path, [text("a")], [text("b")], [text("c")])
    client = ask_as(made, "claude-opus-5-5")
    await made.loop.send("one")
    client.use_model("claude-sonnet-4-5")
    await made.loop.send("two")
    client.use_model("claude-3-5-haiku")
    await made.loop.send("three")
    asked = [(b["model"], b["max_tokens"], b.get("thinking")) for b in made.requests]
    assert asked == [
        ("claude-opus-5-5", 128_000, {"type": "adaptive"}),
        ("claude-sonnet-4-5", 64_000, {"type": "enabled", "budget_tokens": 31_999}),
        ("claude-3-5-haiku", 8_192, None),
    ]
    # Thinking turned off (alwaysThinkingEnabled: false) stays off on a budget model.
    off = ModelClient(made.loop.model.client, model="claude-opus-5-5", thinking="off")
    off.use_model("claude-sonnet-4-5")
    assert off.thinking == "off" and off.thinking_field() is None


async def test_a_session_reports_a_bad_max_thinking_tokens_and_honours_zero(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.agent.live import SessionOptions, open_session, prepare_session
    from core.events import EventRecorder

    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    project = tmp_path / "project"
    project.mkdir()
    scenario = project / "s.json"
    scenario.write_text(
        json.dumps({"name": "s", "workspace": "cwd", "turns": [[thinking(), text("Hi.")]]})
    )
    options = SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    for value, thinks, note in (("32k", True, True), ("0", False, False)):
        monkeypatch.setenv("MAX_THINKING_TOKENS", value)
        prepared = prepare_session(options)
        said = [n for n in prepared.notes if "MAX_THINKING_TOKENS" in n]
        assert bool(said) == note, prepared.notes
        live = await open_session(prepared, sink=EventRecorder(), trusted=True)
        try:
            await live.send("hi")
            kinds = [b["type"] for b in live.loop.messages[1]["content"]]
        finally:
            await live.close()
        assert kinds == (["thinking", "text"] if thinks else ["text"])


async def test_a_redacted_block_goes_back_byte_for_byte_between_tool_turns(
    tmp_path: Path,
) -> None:
    made = rig(
        tmp_path,
        [{"type": "redacted_thinking"}, thinking(), tool("Glob", pattern="*.md")],
        [text("One file.")],
    )
    ask_as(made, "claude-sonnet-4-5")
    ended = await made.loop.send("count")
    assert ended.stop_reason == "end_turn", made.of(TurnError)
    first = made.loop.messages[1]["content"][0]
    assert first == {"type": "redacted_thinking", "data": redacted_data("toolu_demo_0_0")}
    # The second request carried it first, exactly as it came, and the demo model (which
    # checks its data's hash, as the API checks its own) accepted it.
    assert made.requests[1]["messages"][1]["content"][0] == first
    redacted = [e for e in made.of(ThinkingDelta) if e.redacted]
    assert len(redacted) == 1 and redacted[0].text == ""
    # An altered one is refused, as the API refuses it.
    made.loop.messages[1]["content"][0] = {**first, "data": first["data"][:-4] + "AAAA"}
    ended = await made.loop.send("again")
    assert ended.stop_reason == "error"
    assert "Invalid `data` in `redacted_thinking` block" in made.of(TurnError)[-1].message
    assert isinstance(made.of(TurnEnded)[-1], TurnEnded)


@pytest.mark.parametrize(
    ("thinking_asked", "refusal"),
    [
        ({"type": "enabled", "budget_tokens": 4_000}, "must be greater than"),  # = max_tokens
        ({"type": "enabled", "budget_tokens": 1_000}, "greater than or equal to 1024"),
        ({"type": "enabled"}, "budget_tokens: Field required"),
        ({"type": "sometimes"}, "thinking.type"),
    ],
)
async def test_the_demo_model_refuses_a_thinking_the_api_refuses(
    tmp_path: Path, thinking_asked: dict[str, Any], refusal: str
) -> None:
    import anthropic

    made = rig(tmp_path, [text("Hi.")])
    client = made.loop.model.client
    with pytest.raises(anthropic.BadRequestError) as refused:
        async with client.messages.stream(
            model="claude-sonnet-4-5",
            max_tokens=4_000,
            messages=[{"role": "user", "content": "hi"}],
            thinking=thinking_asked,  # type: ignore[arg-type]
        ) as stream:
            await stream.get_final_message()
    assert refused.value.status_code == 400 and refusal in str(refused.value)
    # Just below max_tokens is fine, as with the API.
    async with client.messages.stream(
        model="claude-sonnet-4-5",
        max_tokens=4_000,
        messages=[{"role": "user", "content": "hi"}],
        thinking={"type": "enabled", "budget_tokens": 3_999},
    ) as stream:
        assert (await stream.get_final_message()).content[0].type == "text"
