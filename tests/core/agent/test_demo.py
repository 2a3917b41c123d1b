"""The offline demo model, seen through the real anthropic SDK, and the scenario format."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import pytest

from core.agent.demo import (
    DEMO_BASE_URL,
    END_OF_SCRIPT_REPLY,
    DemoModel,
    Served,
    copy_sample_project,
)
from core.agent.live import SessionOptions, open_session, prepare_session
from core.agent.scenario import (
    Choice,
    Scenario,
    ScenarioError,
    ToolUseBlock,
    Turn,
    list_scenarios,
    load_scenario,
    parse_scenario,
    step_turns,
)
from core.events import EventRecorder

PROMPT = [{"role": "user", "content": "go"}]


def demo_client(
    scenario: Any,
    *,
    workspace: Path,
    plan_file: Path | None = None,
    speed: float = 1.0,
    max_retries: int | None = None,
) -> Any:
    """`DemoModel(...).client()`: these tests need nothing else from the model."""
    model = DemoModel(scenario, workspace=workspace, plan_file=plan_file, speed=speed)
    return model.client(max_retries=max_retries)


def scenario(*turns: Any, **extra: Any) -> Scenario:
    return Scenario.model_validate({"name": "t", "turns": list(turns), **extra})


async def stream(client: anthropic.AsyncAnthropic, messages: list[dict[str, Any]]) -> Any:
    """Stream one turn; returns (events, final message)."""
    events = []
    async with client.messages.stream(
        model="claude-demo", max_tokens=1000, messages=messages
    ) as response:
        async for event in response:
            events.append(event)
        final = await response.get_final_message()
    return events, final


def follow_up(messages: list[dict[str, Any]], final: Any) -> list[dict[str, Any]]:
    """The conversation with `final` and a result for each of its tool calls appended."""
    results = [
        {"type": "tool_result", "tool_use_id": block.id, "content": "ok"}
        for block in final.content
        if block.type == "tool_use"
    ]
    assistant = {"role": "assistant", "content": [block.to_dict() for block in final.content]}
    return [*messages, assistant, {"role": "user", "content": results or "next"}]


TWO_TURNS = scenario(
    [
        {"type": "text", "text": "I will read the notes and look for tests, all at once now."},
        {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/notes.md"}},
        {
            "type": "tool_use",
            "name": "Glob",
            "input": {"pattern": "tests/**/*.py", "path": "{workspace}"},
        },
    ],
    [{"type": "text", "text": "Done reading."}],
)


# -- streaming through the SDK -------------------------------------------------------------


async def test_text_streams_in_several_deltas_and_adds_up(tmp_path: Path) -> None:
    client = DemoModel(TWO_TURNS, workspace=tmp_path, speed=0).client()
    events, final = await stream(client, PROMPT)
    deltas = [e.delta.text for e in events if e.type == "content_block_delta" and e.index == 0]
    assert len(deltas) >= 3
    expected = "I will read the notes and look for tests, all at once now."
    assert "".join(deltas) == expected
    assert final.content[0].text == expected


async def test_tool_inputs_are_complete_at_block_stop_with_placeholders_filled(
    tmp_path: Path,
) -> None:
    client = DemoModel(TWO_TURNS, workspace=tmp_path, speed=0).client()
    events, final = await stream(client, PROMPT)
    stops = [e.content_block for e in events if e.type == "content_block_stop"]
    tools = [block for block in stops if block.type == "tool_use"]
    assert [(t.id, t.name, t.input) for t in tools] == [
        ("toolu_demo_0_1", "Read", {"file_path": f"{tmp_path}/notes.md"}),
        ("toolu_demo_0_2", "Glob", {"pattern": "tests/**/*.py", "path": str(tmp_path)}),
    ]
    partials = [e for e in events if e.type == "content_block_delta" and e.index == 1]
    assert len(partials) >= 2, "tool JSON arrives in pieces"
    assert final.stop_reason == "tool_use"


async def test_the_next_turn_plays_once_the_tool_results_come_back(tmp_path: Path) -> None:
    model = DemoModel(TWO_TURNS, workspace=tmp_path, speed=0)
    client = model.client()
    _, first = await stream(client, PROMPT)
    messages = follow_up(PROMPT, first)
    _, second = await stream(client, messages)
    assert [block.text for block in second.content] == ["Done reading."]
    assert second.stop_reason == "end_turn"

    _, third = await stream(client, follow_up(messages, second))
    assert third.content[0].text == END_OF_SCRIPT_REPLY
    assert "ANTHROPIC_API_KEY" in third.content[0].text and third.stop_reason == "end_turn"
    assert [s.outcome for s in model.served] == ["played", "played", "past_end"]


async def test_a_retried_request_replays_its_turn(tmp_path: Path) -> None:
    client = DemoModel(TWO_TURNS, workspace=tmp_path, speed=0).client()
    _, once = await stream(client, PROMPT)
    _, again = await stream(client, PROMPT)
    assert once.content == again.content


async def test_the_wire_is_genuine_server_sent_events(tmp_path: Path) -> None:
    model = DemoModel(TWO_TURNS, workspace=tmp_path, speed=0)
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(model.handle)) as http:
        body = {"model": "m", "max_tokens": 10, "messages": PROMPT, "stream": True}
        response = await http.post(f"{DEMO_BASE_URL}/v1/messages", json=body)
    assert response.headers["content-type"] == "text/event-stream"
    frames = [frame for frame in response.text.split("\n\n") if frame]
    names = [frame.split("\n")[0].removeprefix("event: ") for frame in frames]
    assert names[:3] == ["message_start", "ping", "content_block_start"]
    assert names[-2:] == ["message_delta", "message_stop"]
    for frame in frames:
        event, data = frame.split("\n")
        assert json.loads(data.removeprefix("data: "))["type"] == event.removeprefix("event: ")
    pieces = [
        json.loads(frame.split("\n")[1][6:])["delta"]["partial_json"]
        for frame in frames
        if "input_json_delta" in frame
    ]
    assert max(len(piece) for piece in pieces) <= 40


async def test_requests_it_does_not_serve_get_api_errors(tmp_path: Path) -> None:
    client = demo_client(TWO_TURNS, workspace=tmp_path, speed=0, max_retries=0)
    with pytest.raises(anthropic.BadRequestError, match="only streams"):
        await client.messages.create(model="m", max_tokens=10, messages=PROMPT)  # type: ignore[arg-type]
    with pytest.raises(anthropic.NotFoundError):
        await client.models.list()
    counted = await client.messages.count_tokens(model="m", messages=PROMPT)  # type: ignore[arg-type]
    assert counted.input_tokens > 0


# -- faults, as the SDK surfaces them ------------------------------------------------------

FAULTS = load_scenario("faults")


def at_turn(turn: int) -> list[dict[str, Any]]:
    messages = list(PROMPT)
    for _ in range(turn):
        messages += [{"role": "assistant", "content": "..."}, {"role": "user", "content": "..."}]
    return messages


async def test_overloaded_is_a_529_without_retries(tmp_path: Path) -> None:
    client = demo_client(FAULTS, workspace=tmp_path, speed=0, max_retries=0)
    with pytest.raises(anthropic.InternalServerError) as caught:
        await stream(client, at_turn(0))
    assert caught.value.status_code == 529
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]


async def test_the_sdk_retries_529s_by_itself(tmp_path: Path) -> None:
    model = DemoModel(FAULTS, workspace=tmp_path, speed=0)
    _, final = await stream(model.client(), at_turn(0))  # the SDK's default max_retries is 2
    assert final.content[1].name == "Read"
    assert [s.outcome for s in model.served] == ["overloaded", "overloaded", "played"]


async def test_an_error_event_mid_stream_raises_after_the_blocks_before_it(
    tmp_path: Path,
) -> None:

    model = DemoModel(FAULTS, workspace=tmp_path, speed=0)
    client = model.client(max_retries=0)
    seen = []
    with pytest.raises(anthropic.APIStatusError) as caught:
        async with client.messages.stream(
            model="m", max_tokens=10, messages=at_turn(1)
        ) as response:
            async for event in response:
                seen.append(event.type)
    # The HTTP status was 200: the error came inside the stream.
    assert caught.value.status_code == 200
    assert caught.value.body["error"]["type"] == "overloaded_error"  # type: ignore[index]
    assert "content_block_stop" in seen
    # Faults apply once by default: the retry plays the turn.
    _, final = await stream(client, at_turn(1))
    assert final.stop_reason == "tool_use"
    assert [s.outcome for s in model.served] == ["error_event", "played"]


async def test_a_dropped_connection_is_a_read_error(tmp_path: Path) -> None:
    client = demo_client(FAULTS, workspace=tmp_path, speed=0)
    with pytest.raises(httpx2.ReadError):
        await stream(client, at_turn(2))


async def test_max_tokens_cuts_the_last_tool_input(tmp_path: Path) -> None:
    client = demo_client(FAULTS, workspace=tmp_path, speed=0)
    _, final = await stream(client, at_turn(3))
    assert final.stop_reason == "max_tokens"
    write = final.content[-1]
    full = FAULTS.turns[3].blocks[1]
    assert isinstance(full, ToolUseBlock)
    assert write.name == "Write"
    # The SDK parses partial JSON leniently: the unfinished string is dropped, no error.
    assert write.input.get("content") != full.input["content"]


async def test_unknown_tools_and_invalid_inputs_are_just_played(tmp_path: Path) -> None:
    client = demo_client(FAULTS, workspace=tmp_path, speed=0)
    _, unknown = await stream(client, at_turn(4))
    _, invalid = await stream(client, at_turn(5))
    assert unknown.content[1].name == "FrobnicateRepository"
    assert invalid.content[1].input == {"path": "README.md", "lines": "all"}


# -- sub-agents and the plan file ------------------------------------------------------------


async def test_sub_agents_play_their_own_script(tmp_path: Path) -> None:
    task = {
        "type": "tool_use",
        "name": "Task",
        "input": {"description": "d", "prompt": "Look around.", "subagent_type": "Explore"},
        "agent_turns": [[{"type": "text", "text": "Sub-agent here."}]],
    }
    model = DemoModel(
        scenario([task], [{"type": "text", "text": "Main again."}]), workspace=tmp_path, speed=0
    )
    client = model.client()
    _, main = await stream(client, PROMPT)
    assert main.content[0].id == "toolu_demo_0_0"
    _, agent = await stream(client, [{"role": "user", "content": "Context.\n\nLook around."}])
    assert agent.content[0].text == "Sub-agent here."
    _, main_next = await stream(client, follow_up(PROMPT, main))
    assert main_next.content[0].text == "Main again."
    assert model.served[1] == Served("toolu_demo_0_0", 0, "played")


async def test_the_plan_file_comes_from_enter_plan_mode_unless_given(tmp_path: Path) -> None:
    turns = scenario(
        [{"type": "tool_use", "name": "EnterPlanMode", "input": {}}],
        [
            {
                "type": "tool_use",
                "name": "Write",
                "input": {"file_path": "{plan_file}", "content": "x"},
            }
        ],
    )
    messages = [
        *PROMPT,
        {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "toolu_demo_0_0", "name": "EnterPlanMode", "input": {}}
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_demo_0_0",
                    "content": "Plan mode is on. Write your plan to /s/plan.md (the one file).",
                }
            ],
        },
    ]
    _, learned = await stream(demo_client(turns, workspace=tmp_path, speed=0), messages)
    assert learned.content[0].input["file_path"] == "/s/plan.md"
    given = demo_client(turns, workspace=tmp_path, plan_file=tmp_path / "p.md", speed=0)
    _, final = await stream(given, messages)
    assert final.content[0].input["file_path"] == str(tmp_path / "p.md")


# -- scenario files --------------------------------------------------------------------------


def test_shipped_scenarios_load() -> None:
    names = list_scenarios()
    assert {"default", "quick", "faults"} <= set(names)
    for name in names:
        assert load_scenario(name).name == name


def all_tool_uses(steps: list[Turn | Choice]) -> list[ToolUseBlock]:
    found = []
    for turn in (turn for step in steps for turn in step_turns(step)):
        for block in turn.blocks:
            if isinstance(block, ToolUseBlock):
                found.append(block)
                found.extend(all_tool_uses(block.agent_turns or []))
    return found


DELIBERATE_MISFITS = {
    ("faults", "FrobnicateRepository", "no such tool"),
    ("faults", "Read", "input does not fit"),
}
"""The faults scenario shows what the model's mistakes look like; nothing else may misfit."""


async def test_every_shipped_tool_call_names_a_tool_the_demo_session_offers_and_fits_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scenario that calls a tool the demo does not have, or with input it rejects, shows
    the person an error the script never meant. The tools are the demo session's own: the
    built-ins and the sample project's MCP servers, started for real."""
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    options = SessionOptions(cwd=tmp_path, demo=True, scenario="default", demo_speed=0)
    live = await open_session(prepare_session(options), sink=EventRecorder(), trusted=True)
    try:
        await live.offer_mcp_tools()
        pool = live.loop.context.options.tools
    finally:
        await live.close()
    assert pool is not None and "mcp__changelog__add_entry" in pool.names

    misfits = set()
    for name in list_scenarios():
        for block in all_tool_uses(load_scenario(name).turns):
            tool = pool.find(block.name)
            if tool is None:
                misfits.add((name, block.name, "no such tool"))
                continue
            try:
                tool.parse_input(block.input)
            except ValueError:  # pydantic's ValidationError is one
                misfits.add((name, block.name, "input does not fit"))
    assert misfits == DELIBERATE_MISFITS


def test_the_default_scenario_shows_off_the_whole_product() -> None:
    default = load_scenario("default")
    approved = [t.when.all_ran if isinstance(t, Choice) else t for t in default.turns]
    per_turn = [[b.name for b in t.blocks if isinstance(b, ToolUseBlock)] for t in approved]
    assert any(
        {"Read", "Glob", "Grep"} <= set(names) and names.count("Read") >= 2 for names in per_turn
    )
    assert any(names.count("Bash") == 2 for names in per_turn) and ["Task", "Task"] in per_turn
    flat = [name for names in per_turn for name in names]
    for name in ("Edit", "TodoWrite", "EnterPlanMode", "Write", "ExitPlanMode", "AskUserQuestion"):
        assert name in flat
    assert flat.index("EnterPlanMode") < flat.index("Write") < flat.index("ExitPlanMode")
    assert approved[-1].blocks[-1].type == "text"


def test_a_missing_name_lists_the_shipped_scenarios() -> None:
    with pytest.raises(ScenarioError, match=r"no scenario named 'nope'.*default.*faults.*quick"):
        load_scenario("nope")
    with pytest.raises(ScenarioError, match="no such scenario file"):
        load_scenario("missing/file.json")


def test_bad_json_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"name": "x",\n  "turns": [,]}\n')
    with pytest.raises(ScenarioError, match=rf"{path}:2:13: invalid JSON"):
        load_scenario(path)


def test_schema_errors_name_the_field_path(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps({"name": "x", "turns": [[{"type": "text", "text": "a"}], [{"type": "image"}]]})
    )
    with pytest.raises(ScenarioError) as caught:
        load_scenario(str(path))
    assert str(path) in str(caught.value)
    assert "turns[1].blocks[0].type: Input tag 'image'" in str(caught.value)

    with pytest.raises(ScenarioError, match=r"turns\[0\].fault.after: Extra inputs"):
        parse_scenario(
            '{"name": "x", "turns": [{"blocks": [{"type": "text", "text": "a"}],'
            ' "fault": {"kind": "drop", "after": 1}}]}'
        )
    with pytest.raises(ScenarioError, match="after_blocks is 2 but the turn has 1 block"):
        parse_scenario(
            '{"name": "x", "turns": [{"blocks": [{"type": "text", "text": "a"}],'
            ' "fault": {"kind": "error_event", "after_blocks": 2}}]}'
        )


# -- the sample project ----------------------------------------------------------------------


def test_copy_sample_project_skips_caches_and_makes_an_ignored_build_dir(tmp_path: Path) -> None:
    source = Path(__file__).parents[3] / "core" / "agent" / "sample_project"
    cache = source / "textstats" / "__pycache__"
    made_cache = not cache.exists()
    cache.mkdir(exist_ok=True)
    try:
        dest = copy_sample_project(tmp_path / "work")
    finally:
        if made_cache:
            cache.rmdir()
    assert (dest / "textstats" / "counts.py").is_file()
    assert (dest / "tests" / "test_counts.py").is_file()
    assert (dest / ".gitignore").read_text().count("build/") == 1
    assert (dest / "build" / "lib" / "textstats" / "counts.py").is_file()
    assert not list(dest.rglob("__pycache__"))
    with pytest.raises(FileExistsError):
        copy_sample_project(dest)


def run_tests(project: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-B", "-m", "unittest"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_sample_tests_pass_only_after_the_default_scenarios_edit(tmp_path: Path) -> None:
    project = copy_sample_project(tmp_path / "work")
    before = run_tests(project)
    assert before.returncode != 0 and "test_ties_in_alphabetical_order" in before.stderr

    edits = [b for b in all_tool_uses(load_scenario("default").turns) if b.name == "Edit"]
    edit = edits[0]
    assert all(other == edit for other in edits), "every path makes the same edit"
    target = Path(edit.input["file_path"].replace("{workspace}", str(project)))
    text = target.read_text()
    assert text.count(edit.input["old_string"]) == 1
    target.write_text(text.replace(edit.input["old_string"], edit.input["new_string"]))

    after = run_tests(project)
    assert after.returncode == 0, after.stderr
