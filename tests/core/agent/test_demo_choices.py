"""Scenario turns chosen by what happened to the previous turn's calls, through the real SDK.

The demo model learns what happened only from the tool_results it is sent, as a real model
does; these tests send it results that say "ran", "denied" or "failed" and check what it plays.
The last tests walk every alternative of every shipped scenario.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.access.call_outcome import denial_message
from core.agent.demo import END_OF_SCRIPT_REPLY, DemoModel
from core.agent.scenario import (
    Choice,
    Scenario,
    ScenarioError,
    ToolUseBlock,
    Turn,
    TurnOutcome,
    list_scenarios,
    load_scenario,
    parse_scenario,
    step_turns,
)

PROMPT = [{"role": "user", "content": "go"}]
OUTCOMES: tuple[TurnOutcome, ...] = ("all_ran", "denied", "failed")


def text(words: str) -> dict[str, Any]:
    return {"type": "text", "text": words}


def call(name: str = "Read", **input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": input}


def choice(all_ran: Any, denied: Any, failed: Any) -> dict[str, Any]:
    return {"when": {"all_ran": all_ran, "denied": denied, "failed": failed}}


def result(tool_use_id: str, outcome: str) -> dict[str, Any]:
    """A tool_result as the engine writes it for a call that ran, was denied or failed."""
    if outcome == "ran":
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": "ok"}
    words = denial_message("Nobody approved it.") if outcome == "denied" else "It broke."
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": f"<tool_use_error>{words}</tool_use_error>",
        "is_error": True,
    }


async def reply(model: DemoModel, messages: list[dict[str, Any]]) -> Any:
    client = model.client(max_retries=0)
    async with client.messages.stream(
        model="claude-demo", max_tokens=1000, messages=messages
    ) as response:
        return await response.get_final_message()


def answered(
    messages: list[dict[str, Any]], final: Any, outcomes: list[str]
) -> list[dict[str, Any]]:
    """The conversation with `final` and, for its calls in order, results with `outcomes`."""
    calls = [block for block in final.content if block.type == "tool_use"]
    assert len(calls) == len(outcomes)
    results = [result(block.id, outcome) for block, outcome in zip(calls, outcomes, strict=True)]
    assistant = {"role": "assistant", "content": [block.to_dict() for block in final.content]}
    return [*messages, assistant, {"role": "user", "content": results or "next"}]


def said(final: Any) -> str:
    return "".join(block.text for block in final.content if block.type == "text")


TWO_CALLS_THEN_A_CHOICE = Scenario.model_validate(
    {
        "name": "t",
        "turns": [
            [text("Two reads."), call(file_path="/a"), call(file_path="/b")],
            choice(
                [text("Both ran."), call(file_path="/c")],
                {"blocks": [text("You said no.")], "end": True},
                [text("One broke."), call(file_path="/c")],
            ),
            [text("Carrying on.")],
        ],
    }
)


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["ran", "ran"], "Both ran."),
        (["ran", "denied"], "You said no."),
        (["failed", "ran"], "One broke."),
        (["failed", "denied"], "You said no."),  # denied outranks failed
    ],
)
async def test_the_next_turn_follows_what_happened_to_the_calls(
    tmp_path: Path, outcomes: list[str], expected: str
):
    model = DemoModel(TWO_CALLS_THEN_A_CHOICE, workspace=tmp_path, speed=0)
    first = await reply(model, PROMPT)
    messages = answered(PROMPT, first, outcomes)
    assert said(await reply(model, messages)) == expected
    assert said(await reply(model, messages)) == expected, "a retried request gets the same"
    assert (
        model.served[-1].chose
        == {"Both": "all_ran", "You": "denied", "One": "failed"}[expected.split()[0]]
    )


async def test_a_call_without_a_result_counts_as_failed(tmp_path: Path):
    model = DemoModel(TWO_CALLS_THEN_A_CHOICE, workspace=tmp_path, speed=0)
    first = await reply(model, PROMPT)
    messages = answered(PROMPT, first, ["ran", "ran"])
    messages[-1]["content"] = messages[-1]["content"][:1]
    assert said(await reply(model, messages)) == "One broke."


async def test_a_turn_that_ends_the_script_ends_it_whatever_is_said_next(tmp_path: Path):
    model = DemoModel(TWO_CALLS_THEN_A_CHOICE, workspace=tmp_path, speed=0)
    first = await reply(model, PROMPT)
    messages = answered(PROMPT, first, ["denied", "ran"])
    stopped = await reply(model, messages)
    assert stopped.stop_reason == "end_turn"
    later = await reply(model, answered(messages, stopped, []))
    assert said(later) == END_OF_SCRIPT_REPLY
    assert model.served[-1].outcome == "past_end"

    # On the path where everything ran, the script carries on past that turn.
    going = answered(PROMPT, first, ["ran", "ran"])
    second = await reply(model, going)
    assert said(await reply(model, answered(going, second, ["ran"]))) == "Carrying on."


async def test_a_sub_agent_script_chooses_by_its_own_calls(tmp_path: Path):
    task = call("Task", description="d", prompt="Look around.", subagent_type="Explore")
    task["agent_turns"] = [
        [call("Grep", pattern="x")],
        choice([text("Found it.")], [text("Not allowed to search.")], [text("Search broke.")]),
    ]
    model = DemoModel(
        Scenario.model_validate({"name": "t", "turns": [[task], [text("Main.")]]}),
        workspace=tmp_path,
        speed=0,
    )
    start = [{"role": "user", "content": "Look around."}]
    grep = await reply(model, start)
    assert said(await reply(model, answered(start, grep, ["denied"]))) == "Not allowed to search."


# -- validation ------------------------------------------------------------------------------


def problem(turns: list[Any]) -> str:
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(json.dumps({"name": "x", "turns": turns}), source="tour.json")
    return str(caught.value)


def test_a_choice_needs_all_three_outcomes_and_no_others():
    said = problem([[call()], {"when": {"all_ran": [text("a")], "denied": [text("b")]}}])
    assert said.startswith("tour.json: invalid scenario") and "turns[1].when.failed" in said
    assert "Field required" in said
    extra = choice([text("a")], [text("b")], [text("c")])
    extra["when"]["refused"] = [text("d")]
    said = problem([[call()], extra])
    assert "turns[1].when.refused: Extra inputs are not permitted" in said


def test_a_choice_needs_calls_before_it():
    said = problem([choice([text("a")], [text("b")], [text("c")])])
    assert "turns[0].when: the first turn has no earlier calls to choose by" in said
    said = problem([[text("hi")], choice([text("a")], [text("b")], [text("c")])])
    assert "turns[1].when: turn 0 makes no calls, so there is nothing to choose by" in said
    talk_then_choose = [
        [call()],
        choice(
            [call()],
            [text("no calls, and the script goes on")],
            {"blocks": [text("x")], "end": True},
        ),
        choice([text("a")], [text("b")], [text("c")]),
    ]
    said = problem(talk_then_choose)
    assert "turns[1].when.denied: it makes no calls, so the choice after it" in said
    nested = call("Task", prompt="p")
    nested["agent_turns"] = [choice([text("a")], [text("b")], [text("c")])]
    said = problem([[nested]])
    assert "turns[0].blocks[0].agent_turns[0].when: the first turn has no earlier calls" in said


def test_alternatives_are_checked_like_turns():
    said = problem([[call()], choice([text("a")], [{"type": "txt"}], [text("c")])])
    assert "turns[1].when.denied.blocks[0].type: Input tag 'txt'" in said
    said = problem([[call()], choice([text("a")], {"blocks": [call()], "end": True}, [text("c")])])
    assert "turns[1].when.denied: a turn with `end` cannot make calls" in said
    said = problem([[call()], choice([text("a")], {"blocks": [text("b")], "end": "yes"}, [])])
    assert "turns[1].when.denied.end: Input should be a valid boolean" in said
    assert "turns[1].when.failed.blocks: List should have at least 1 item" in said
    said = problem([[call()], {**choice([text("a")], [text("b")], [text("c")]), "end": True}])
    assert "turns[1].end: Extra inputs are not permitted" in said


# -- every shipped scenario, every alternative -----------------------------------------------

# Words that only an alternative for that outcome may use, and the claims none of them may make.
OWNS_UP = {
    "denied": (
        "wasn't allowed",
        "wasn't approved",
        "not all of that was allowed",
        "not every",
        "keep planning",
        "declined",
        "denied",
    ),
    "failed": ("fail", "did not pass", "didn't go through", "could", "no answer", "refused"),
}
NEVER_AFTER_A_REFUSAL = ("All 13 tests pass", "all 13 pass", "ran for real", "you approved")


def choices_in(steps: list[Turn | Choice]) -> list[Choice]:
    """Every choice in the script and its sub-agents' scripts (each sub-agent's once, though
    its Task call may be written in several alternatives)."""
    found = [step for step in steps if isinstance(step, Choice)]
    for agent_steps in agent_scripts(steps).values():
        found += [step for step in agent_steps if isinstance(step, Choice)]
    return found


def agent_scripts(steps: list[Turn | Choice]) -> dict[str, list[Turn | Choice]]:
    """Every sub-agent's script, nested ones too, by the prompt of its Task call."""
    scripts: dict[str, list[Turn | Choice]] = {}
    for turn in (turn for step in steps for turn in step_turns(step)):
        for block in turn.blocks:
            if isinstance(block, ToolUseBlock) and block.agent_turns:
                scripts[block.input["prompt"]] = block.agent_turns
                scripts.update(agent_scripts(block.agent_turns))
    return scripts


@pytest.mark.parametrize("name", list_scenarios())
def test_every_alternative_owns_up_to_what_happened(name: str):
    for step in choices_in(load_scenario(name).turns):
        for outcome in ("denied", "failed"):
            words = " ".join(
                block.text for block in step.turn_for(outcome).blocks if block.type == "text"
            )
            assert any(phrase in words.lower() for phrase in OWNS_UP[outcome]), (outcome, words)
            for claim in NEVER_AFTER_A_REFUSAL:
                assert claim not in words, (outcome, words)
    assert "Everything above ran for real" not in json.dumps(load_scenario(name).model_dump())


async def walk(
    model: DemoModel, messages: list[dict[str, Any]], seen: set[tuple[str, int, str]], depth: int
) -> None:
    """Play the conversation down every outcome of every turn with calls, to its end."""
    assert depth < 40, "a path through the script never ends"
    final = await reply(model, messages)
    served = model.served[-1]
    if served.outcome == "past_end":
        return
    if served.chose is not None:
        seen.add((served.conversation, served.turn, served.chose))
    calls = [block for block in final.content if block.type == "tool_use"]
    if not calls:
        await walk(model, answered(messages, final, []), seen, depth + 1)
        return
    for outcome in ("ran", "denied", "failed"):
        outcomes = [outcome] + ["ran"] * (len(calls) - 1)
        await walk(model, answered(messages, final, outcomes), seen, depth + 1)


@pytest.mark.parametrize("name", list_scenarios())
async def test_every_alternative_of_every_shipped_scenario_plays(name: str, tmp_path: Path):
    scenario = load_scenario(name)
    faultless = Scenario.model_validate(_without_faults(scenario.model_dump()))
    model = DemoModel(faultless, workspace=tmp_path, speed=0)
    seen: set[tuple[str, int, str]] = set()
    await walk(model, list(PROMPT), seen, 0)
    for prompt in agent_scripts(faultless.turns):
        await walk(model, [{"role": "user", "content": prompt}], seen, 0)
    wanted = len(choices_in(faultless.turns)) * len(OUTCOMES)
    assert len(seen) == wanted, sorted(seen)


def _without_faults(data: Any) -> Any:
    """The scenario as data with its faults taken out, so each request plays its turn."""
    if isinstance(data, dict):
        return {k: _without_faults(v) for k, v in data.items() if k != "fault"}
    if isinstance(data, list):
        return [_without_faults(item) for item in data]
    return data


async def test_the_walk_reaches_the_end_of_the_default_tour(tmp_path: Path):
    """The all-ran path of the default tour ends with the summary, then the end-of-script reply."""
    model = DemoModel(load_scenario("default"), workspace=tmp_path, speed=0)
    messages = list(PROMPT)
    for _ in range(40):
        final = await reply(model, messages)
        if model.served[-1].outcome == "past_end":
            break
        calls = [block for block in final.content if block.type == "tool_use"]
        if not calls:
            assert "you approved the plan" in said(final)
        messages = answered(messages, final, ["ran"] * len(calls))
    assert said(final) == END_OF_SCRIPT_REPLY


def test_scenario_models_round_trip_through_dump(tmp_path: Path):
    # The walk above rebuilds scenarios from model_dump(): it must be lossless.
    for name in list_scenarios():
        scenario = load_scenario(name)
        assert Scenario.model_validate(scenario.model_dump()) == scenario
