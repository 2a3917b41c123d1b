"""Headless runs: every shipped scenario end to end through the real engine, no screen."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from core.agent.headless import HeadlessOptions, run_headless
from core.agent.scenario import list_scenarios


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


async def headless(**options) -> tuple[int, list[dict]]:
    out = io.StringIO()
    defaults = {
        "prompt": None,
        "cwd": Path.cwd(),
        "output_format": "stream-json",
        "demo": True,
        "demo_speed": 0.0,
    }
    status = await run_headless(HeadlessOptions(**{**defaults, **options}), out)
    return status, [json.loads(line) for line in out.getvalue().splitlines()]


async def test_stream_json_tells_the_whole_story(tmp_path: Path):
    status, records = await headless(scenario="quick")
    assert status == 0
    init, result = records[0], records[-1]
    assert init["type"] == "system" and init["subtype"] == "init"
    assert "Bash" in init["tools"] and init["mode"] == "default"
    assert result["type"] == "result" and result["session_id"] == init["session_id"]
    assert result["is_error"] is False and result["num_turns"] >= 2
    tool_events = [r for r in records if r["type"] == "tool_event"]
    assert {r["kind"] for r in tool_events} >= {"queued", "started", "completed"}
    for record in tool_events:
        assert record["tool_use_id"] and record["name"] and isinstance(record["timestamp"], float)
    roles = [r["type"] for r in records if r["type"] in ("assistant", "user")]
    assert roles[0] == "user" and "assistant" in roles
    results = [
        b
        for r in records
        if r["type"] == "user"
        for b in r["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(results) == len({r["tool_use_id"] for r in tool_events})


async def test_json_prints_one_result(tmp_path: Path):
    status, records = await headless(scenario="quick", output_format="json")
    assert status == 0 and len(records) == 1 and records[0]["type"] == "result"
    assert "textstats" in records[0]["result"]


@pytest.mark.parametrize("name", list_scenarios())
async def test_every_shipped_scenario_runs_headless(name: str):
    status, records = await headless(scenario=name)
    result = records[-1]
    assert result["type"] == "result", name
    # Every shipped script plays to its end, denials included: a run that errs or is cut short
    # exits 1, and a script or CI step calling `proctor -p` would see a failure.
    assert (status, result["stop_reason"], result["is_error"]) == (0, "end_turn", False), result
    assert result["result"].strip(), "the run ends with the script's last words"
    # A headless run has nobody to ask: nothing waits forever, every call ends.
    ended = {r["tool_use_id"] for r in records if r.get("kind") in ("completed", "cancelled")}
    queued = {r["tool_use_id"] for r in records if r.get("kind") == "queued"}
    assert queued == ended


async def test_without_a_key_it_says_how_to_get_one(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_AUTH_TOKEN", raising=False)
    status, records = await headless(demo=False, prompt="hello", output_format="text")
    assert status == 1 and records == []
    message = capsys.readouterr().err
    assert "ANTHROPIC_API_KEY" in message and "--demo" in message


async def test_continue_carries_on_the_latest_session_with_its_conversation(tmp_path: Path):
    scenario = tmp_path / "here.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "here",
                "description": "two answers",
                "workspace": "cwd",
                "turns": [
                    [{"type": "text", "text": "First answer."}],
                    [{"type": "text", "text": "Second answer."}],
                ],
            }
        )
    )
    status, first = await headless(scenario=str(scenario), prompt="one", cwd=tmp_path)
    assert status == 0
    status, second = await headless(
        scenario=str(scenario), prompt="two", cwd=tmp_path, continue_latest=True
    )
    assert status == 0
    assert second[0]["session_id"] == first[0]["session_id"]
    # The demo plays turn 2 because the request carried turn 1's conversation.
    assert "Second answer." in second[-1]["result"]
    status, _ = await headless(scenario=str(scenario), prompt="x", cwd=tmp_path, resume="nope")
    assert status == 2


async def test_an_unwritable_data_directory_is_a_clear_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory should be")
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(blocker))
    status, records = await headless(scenario="quick", output_format="text")
    assert status == 2 and records == []
    assert "the session cannot be set up" in capsys.readouterr().err


def _shown(record: dict) -> object:
    """A stream-json line and a transcript record of the same thing compare equal."""
    if record["type"] in ("user", "assistant"):
        return ("message", record["type"], record["message"]["content"])
    if record["type"] == "message":
        return ("message", record["role"], record["content"])
    return record


def _transcript_of(tmp_path: Path, session_id: str) -> list[dict]:
    (path,) = [p for p in (tmp_path / "data").rglob("transcript.jsonl") if session_id in str(p)]
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("name", list_scenarios())
async def test_the_transcript_holds_every_event_stream_json_showed(name: str, tmp_path: Path):
    """Todo changes, mode changes and sub-agents' events too, in the same order."""
    _, records = await headless(scenario=name)
    shown = [
        _shown(r)
        for r in records
        if r["type"] in ("user", "assistant", "tool_event", "engine_event")
        and r.get("kind") != "progress"
    ]
    kept = [
        _shown(r)
        for r in _transcript_of(tmp_path, records[0]["session_id"])
        if r["type"] in ("message", "tool_event", "engine_event")
    ]
    assert shown == kept


async def test_text_narration_names_an_mcp_tool_as_server_then_tool(tmp_path: Path, capsys):
    call = {"type": "tool_use", "name": "mcp__github__create_issue", "input": {"title": "x"}}
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "mcp",
                "description": "one call to a server the session does not have",
                "prompt": "file it",
                "workspace": "cwd",
                "turns": [[call], [{"type": "text", "text": "No such tool."}]],
            }
        )
    )
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=None, cwd=tmp_path, output_format="text", demo=True, scenario=str(scenario)
    )
    await run_headless(options, out)
    narrated = capsys.readouterr().err
    assert "  github › create_issue" in narrated
    assert " — not run: there is no such tool" in narrated
    assert "mcp__github__create_issue" not in narrated


async def test_text_narration_says_a_call_nobody_could_approve_was_denied(tmp_path: Path, capsys):
    call = {"type": "tool_use", "name": "Bash", "input": {"command": "rm -rf build"}}
    scenario = tmp_path / "scenario.json"
    scenario.write_text(
        json.dumps(
            {
                "name": "rm",
                "description": "a command that asks, with nobody to answer",
                "prompt": "clean up",
                "workspace": "cwd",
                "turns": [[call], [{"type": "text", "text": "Not allowed."}]],
            }
        )
    )
    options = HeadlessOptions(
        prompt=None, cwd=tmp_path, output_format="text", demo=True, scenario=str(scenario)
    )
    await run_headless(options, io.StringIO())
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "rm -rf build" in line]
    assert "denied" in line and "failed" not in line
