"""Compaction through the real loop, the demo model's SSE and the real SDK: when it happens,
what the conversation keeps, the too-long retry, PreCompact hooks, resuming after it."""

from __future__ import annotations

import asyncio
import io
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import eventually, make_services

from core.access.context import ToolPermissionContext
from core.agent.compaction import (
    COMPACTED_HEADER,
    SUMMARY_PROMPT_START,
    compacted_conversation,
    threshold_of,
)
from core.agent.compactor import Compactor
from core.agent.demo import DEMO_MODEL, DemoModel, copy_sample_project
from core.agent.events import (
    Compacted,
    Compacting,
    CompactionFailed,
    ContextMeasured,
    TurnError,
)
from core.agent.headless import HeadlessOptions, run_headless
from core.agent.instructions import Instructions, InstructionSet
from core.agent.loop import AgentLoop
from core.agent.model import ModelClient, RetryPolicy
from core.agent.scenario import parse_scenario
from core.agent.skills import session_skills
from core.agent.transcript import Transcript, transcribing
from core.agent.transcript_replay import past_events
from core.agent.transcript_resume import messages_from, restored_state
from core.app_state import AppState, AppStateStore
from core.events import EngineEvent, EventRecorder
from core.hook_runner import CommandHookRunner
from core.registry import assemble_tool_pool
from core.session_services import SessionServices
from core.settings.values import HookCommand, HookEntry
from core.tool import ToolContext, ToolOptions
from core.tools.skill import SKILLS
from core.tools.todo_write import Todo

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)
SUMMARY = "1. What was asked: count lines. 5. Files that matter: textstats/counts.py."
BIG = "cat -n textstats/*.py tests/*.py textstats/*.py tests/*.py textstats/*.py tests/*.py"


@dataclass
class Rig:
    loop: AgentLoop
    demo: DemoModel
    recorder: EventRecorder
    requests: list[dict[str, Any]]

    def of(self, kind: type[EngineEvent]) -> list[Any]:
        return [e for e in self.recorder.events if isinstance(e, kind)]


def rig(
    tmp_path: Path,
    *turns: Any,
    compactor: Compactor,
    refuse_above: int | None = None,
    permission_context: ToolPermissionContext = BYPASS,
    todos: tuple[Todo, ...] = (),
    transcript: Transcript | None = None,
    hooks: Any = None,
    skills: bool = False,
) -> Rig:
    scenario = {"name": "t", "turns": list(turns), "summary": SUMMARY}
    if refuse_above is not None:
        scenario["context_window"] = refuse_above
    demo = DemoModel(
        parse_scenario(json.dumps(scenario)),
        workspace=copy_sample_project(tmp_path / "workspace"),
        speed=0,
    )
    requests: list[dict[str, Any]] = []
    serve = demo.handle

    async def handle(request: Any) -> Any:
        if request.url.path.endswith("/v1/messages"):
            requests.append(json.loads(request.content))
        return await serve(request)

    demo.handle = handle  # type: ignore[method-assign]
    session_dir = tmp_path / "session"
    state = AppState(permission_context=permission_context, todos=todos)
    session_services = SessionServices()
    if skills:
        session_services.provide(SKILLS, session_skills(demo.workspace))
    context = ToolContext(
        cwd=demo.workspace,
        app_state=AppStateStore(state),
        options=ToolOptions(
            tools=assemble_tool_pool(permission_context),
            model=DEMO_MODEL,
            session_dir=session_dir,
            services=session_services,
        ),
    )
    recorder = EventRecorder()
    services = make_services(recorder, session_dir=session_dir, hooks=hooks)
    if transcript is not None:
        services = replace(services, sink=transcribing(transcript, recorder))
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        services,
        context,
        retry=RetryPolicy(max_attempts=2, base_delay_s=0),
        transcript=transcript,
        compactor=compactor,
    )
    return Rig(loop, demo, recorder, requests)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def bash(command: str) -> dict[str, Any]:
    return {"type": "tool_use", "name": "Bash", "input": {"command": command}}


def summary_requests(r: Rig) -> list[dict[str, Any]]:
    def asks(body: dict[str, Any]) -> bool:
        last = body["messages"][-1]["content"]
        return isinstance(last, list) and last[-1].get("text", "").startswith(SUMMARY_PROMPT_START)

    return [body for body in r.requests if asks(body)]


def first_text(messages: list[dict[str, Any]]) -> str:
    return str(messages[0]["content"][0]["text"])


# -- when ------------------------------------------------------------------------------------


def test_the_setting_sets_the_threshold() -> None:
    assert threshold_of(None) == threshold_of(True) == 0.9
    assert threshold_of(False) is None
    assert threshold_of(75) == 0.75


async def test_past_the_threshold_the_loop_compacts_and_carries_on(tmp_path: Path) -> None:
    # The tool definitions alone fill most of a 10,000-token window.
    r = rig(
        tmp_path,
        [text("Listing."), bash(BIG)],
        [text("Done, from the summary.")],
        compactor=Compactor(10_000, 0.9),
    )
    ended = await r.loop.send("count the lines")
    assert ended.stop_reason == "end_turn"
    [compacted] = r.of(Compacted)
    assert compacted.trigger == "auto" and compacted.summary.startswith(SUMMARY)
    [started] = r.of(Compacting)  # said before the summary is asked for, for the gauge
    assert started.trigger == "auto"
    assert r.recorder.events.index(started) < r.recorder.events.index(compacted)
    assert compacted.tokens_before >= 9_000
    # The request after it carries the summary, not the listing.
    after = r.requests[-1]["messages"]
    assert first_text(after).startswith(COMPACTED_HEADER) and SUMMARY in first_text(after)
    assert "cat -n" not in json.dumps(after)
    assert r.loop.messages[-1]["content"][0]["text"] == "Done, from the summary."
    measured = r.of(ContextMeasured)
    assert measured[-1].tokens < compacted.tokens_before and measured[-1].window == 10_000


async def test_below_the_threshold_or_with_it_off_nothing_is_compacted(tmp_path: Path) -> None:
    turns = ([text("Listing."), bash(BIG)], [text("Done.")])
    below = rig(tmp_path / "a", *turns, compactor=Compactor(200_000, 0.9))
    off = rig(tmp_path / "b", *turns, compactor=Compactor(10_000, threshold_of(False)))
    for r in (below, off):
        assert (await r.loop.send("count")).stop_reason == "end_turn"
        assert r.of(Compacted) == [] and summary_requests(r) == []
        assert "cat -n" in json.dumps(r.requests[-1]["messages"])


async def test_compaction_that_cannot_get_under_the_threshold_runs_once_and_says_why(
    tmp_path: Path,
) -> None:
    # At 10,000 tokens and 50% the tools and system prompt alone sit above the threshold:
    # compacting cannot help, so it is not tried before every request; it is said once in
    # plain words, and the session carries on.
    r = rig(
        tmp_path,
        [text("Listing."), bash("ls")],
        [text("Again."), bash("ls textstats")],
        [text("Done.")],
        [text("Second turn done.")],
        compactor=Compactor(10_000, 0.5),
    )
    assert (await r.loop.send("look around")).stop_reason == "end_turn"
    assert (await r.loop.send("and again")).stop_reason == "end_turn"
    assert len(summary_requests(r)) <= 1 and len(r.of(Compacted)) <= 1
    [told] = [f for f in r.of(CompactionFailed) if "compaction cannot help" in f.message]
    assert "instructions and tools alone fill" in told.message
    assert f"{r.loop.compactor.prefix_percent}% of the window" in told.message
    assert r.loop.compactor.prefix_percent >= 50
    assert r.loop.messages[-1]["content"][0]["text"] == "Second turn done."
    assert r.of(TurnError) == []


async def test_a_lone_prompt_over_the_threshold_is_not_summarised(tmp_path: Path) -> None:
    # A resumed context past the threshold and a fresh prompt: there is nothing to summarise
    # but the prompt itself, so the person is told and the request goes out as it is.
    r = rig(tmp_path, [text("Hello back.")], compactor=Compactor(10_000, 0.5))
    r.loop.compactor.resume(r.loop, 9_000)
    assert (await r.loop.send("hello")).stop_reason == "end_turn"
    assert summary_requests(r) == [] and r.of(Compacted) == []
    assert any("compaction cannot help" in f.message for f in r.of(CompactionFailed))
    assert r.requests[-1]["messages"][0]["content"] == [text("hello")]


async def test_once_compaction_cannot_help_a_too_long_refusal_is_still_said_not_looped(
    tmp_path: Path,
) -> None:
    # The threshold rests (the tools fill half the window); the listing then takes the
    # conversation past what the API accepts: the refusal compacts once and retries once.
    r = rig(
        tmp_path,
        [text("Listing."), bash("ls")],
        [text("More."), bash(BIG)],
        [text("Done.")],
        compactor=Compactor(10_000, 0.5),
        refuse_above=10_000,
    )
    ended = await r.loop.send("look around")
    told = [f for f in r.of(CompactionFailed) if "compaction cannot help" in f.message]
    assert len(told) == 1
    # One compaction by the threshold (which then rests), one for the refusal, then done.
    outcomes = [s.outcome for s in r.demo.served]
    assert outcomes == ["played", "summary", "played", "summary", "played"]
    assert ended.stop_reason == "end_turn" and r.of(TurnError) == []
    assert len(r.of(Compacted)) == 2


# -- what stays --------------------------------------------------------------------------------


async def test_todos_plan_file_persisted_outputs_and_the_cached_prefix_stay(
    tmp_path: Path,
) -> None:
    plan = tmp_path / "plan.md"
    todos = (Todo(content="Fix the ties", status="in_progress", active_form="Fixing"),)
    r = rig(
        tmp_path,
        [text("Reading."), {"type": "tool_use", "name": "Read", "input": {"file_path": "x"}}],
        [text("Planned.")],
        compactor=Compactor(200_000, 0.9),
        permission_context=ToolPermissionContext(mode="plan", plan_file=plan),
        todos=todos,
    )
    assert (await r.loop.send("plan it")).stop_reason == "end_turn"
    before = r.requests[-1]
    # A persisted output in the conversation, as results.py writes it.
    r.loop.messages[1]["content"].append(
        {
            "type": "tool_result",
            "tool_use_id": "toolu_big",
            "content": "<persisted-output>\nFull output saved to: /tmp/s/results/big.txt\n",
        }
    )
    assert await r.loop.compact()
    assert r.loop.context.permission_context.mode == "plan"
    [kept] = r.loop.messages
    said = kept["content"][0]["text"]
    assert "[in_progress] Fix the ties" in said
    assert f"The plan file: {plan}" in said
    assert "/tmp/s/results/big.txt" in said and "<persisted-output>" not in said
    await r.loop.send("go on")
    after = r.requests[-1]
    # The cacheable prefix (tools, then the stable system block) is byte for byte the same.
    assert json.dumps(after["tools"]) == json.dumps(before["tools"])
    assert json.dumps(after["system"][0]) == json.dumps(before["system"][0])


def test_a_prompt_not_yet_answered_follows_the_summary() -> None:
    prompt = [text("and now the tests")]
    [message] = compacted_conversation("S", replaced=[], pending_prompt=prompt)
    assert message["content"][-1] == prompt[0]


async def test_subdirectories_instructions_survive_compaction(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [text("Reading."), {"type": "tool_use", "name": "Read", "input": {"file_path": "P"}}],
        [text("Read.")],
        compactor=Compactor(200_000, 0.9),
    )
    workspace = r.demo.workspace
    (workspace / "textstats" / "CLAUDE.md").write_text("Counts stay integers.\n")
    r.loop.instructions = InstructionSet(workspace, Instructions())
    # The scripted Read names the file by its real path.
    r.demo.scenario.turns[0].blocks[1].input["file_path"] = str(  # type: ignore[union-attr]
        workspace / "textstats" / "counts.py"
    )
    await r.loop.send("read it")
    assert "Counts stay integers." in json.dumps(r.loop.messages)
    assert await r.loop.compact()
    assert "Counts stay integers." in json.dumps(r.loop.messages)


async def test_a_running_skills_narrowing_survives_compaction_and_is_said_again(
    tmp_path: Path,
) -> None:
    def read(path: str) -> dict[str, Any]:
        return {"type": "tool_use", "name": "Read", "input": {"file_path": path}}

    r = rig(
        tmp_path,
        [{"type": "tool_use", "name": "Skill", "input": {"skill": "run-tests"}}],
        [text("Reading."), read("P1"), read("P2"), read("P3")],
        [bash("touch made-after-the-summary")],
        [text("Done.")],
        compactor=Compactor(10_000, 0.9),
        skills=True,
    )
    workspace = r.demo.workspace
    blocks = r.demo.scenario.turns[1].blocks[1:]
    for block, name in zip(blocks, ("counts", "readability", "tokenize"), strict=True):
        block.input["file_path"] = str(workspace / "textstats" / f"{name}.py")  # type: ignore[union-attr]
    ended = await r.loop.send("run the tests")
    assert ended.stop_reason == "end_turn"
    assert [c.trigger for c in r.of(Compacted)] == ["auto"]
    first = json.dumps(r.loop.messages[0])
    assert first.count("Base directory for this skill") == 0  # the loading message is gone
    assert "The skill 'run-tests' loaded before this summary is still running" in first
    assert "only these tools may run: Read, Grep, Glob, Bash(python -m unittest:*)" in first
    # And the narrowing itself held: the call after the summary was refused.
    assert not (workspace / "made-after-the-summary").exists()
    assert "the skill 'run-tests' is active" in json.dumps(r.loop.messages)
    assert r.loop.context.permission_context.skill_scopes == ()  # ended with the turn


# -- refused as too long -----------------------------------------------------------------------


async def test_a_request_refused_as_too_long_is_compacted_and_retried_once(
    tmp_path: Path,
) -> None:
    # No threshold: only the API's refusal (the demo's, past 10,000 tokens) makes it compact.
    r = rig(
        tmp_path,
        [text("Listing."), bash(BIG)],
        [text("Done after the retry.")],
        compactor=Compactor(200_000, None),
        refuse_above=10_000,
    )
    ended = await r.loop.send("count")
    assert ended.stop_reason == "end_turn"
    assert [c.trigger for c in r.of(Compacted)] == ["auto"]
    assert r.of(TurnError) == []
    outcomes = [s.outcome for s in r.demo.served]
    assert outcomes.count("summary") == 1
    assert r.loop.messages[-1]["content"][0]["text"] == "Done after the retry."


async def test_a_prompt_too_long_even_to_summarise_is_kept_and_said(tmp_path: Path) -> None:
    r = rig(tmp_path, [text("never")], compactor=Compactor(200_000, None), refuse_above=1_000)
    ended = await r.loop.send("hello there")
    assert ended.stop_reason == "error"
    assert r.of(CompactionFailed) and "prompt is kept" in r.of(TurnError)[0].message
    assert r.loop.messages == [{"role": "user", "content": [text("hello there")]}]
    # One compaction attempt, then it stopped: no loop of refusals.
    assert len(r.of(CompactionFailed)) == 1


# -- hooks ------------------------------------------------------------------------------------


async def test_precompact_hooks_run_with_the_trigger_and_instructions(tmp_path: Path) -> None:
    seen = tmp_path / "seen.json"
    never = tmp_path / "never.json"
    entries = [
        HookEntry("PreCompact", "manual", (HookCommand(f"cat > {seen}", timeout_s=10),)),
        HookEntry("PreCompact", "auto", (HookCommand(f"cat > {never}", timeout_s=10),)),
    ]
    runner = CommandHookRunner(
        entries,
        session_id="s",
        transcript_path=None,
        cwd=tmp_path,
        permission_mode=lambda: "default",
        trusted=True,
    )
    r = rig(tmp_path, [text("Hi.")], compactor=Compactor(200_000, 0.9), hooks=runner)
    await r.loop.send("hello")
    assert await r.loop.compact("keep the test names")
    payload = json.loads(seen.read_text())
    assert payload["hook_event_name"] == "PreCompact"
    assert payload["trigger"] == "manual"
    assert payload["custom_instructions"] == "keep the test names"
    assert not never.exists()
    assert "keep the test names" in json.dumps(summary_requests(r)[-1]["messages"][-1])


async def test_compact_refuses_while_a_turn_runs_and_with_nothing_to_compact(
    tmp_path: Path,
) -> None:
    r = rig(tmp_path, [text("Hi.")], compactor=Compactor(200_000, 0.9))
    assert not await r.loop.compact()
    assert "no conversation" in r.of(CompactionFailed)[0].message
    r.loop._abort = object()  # type: ignore[assignment]
    with pytest.raises(RuntimeError):
        await r.loop.compact()


async def test_esc_while_the_summary_is_written_leaves_the_conversation_as_it_was(
    tmp_path: Path,
) -> None:
    r = rig(tmp_path, [text("Hi.")], compactor=Compactor(200_000, 0.9))
    await r.loop.send("hello")
    before = [dict(m) for m in r.loop.messages]
    r.demo.speed = 100  # the summary's first token would take half a minute
    compacting = asyncio.ensure_future(r.loop.compact())
    await eventually(lambda: summary_requests(r), "the summary request")
    r.loop.interrupt()
    assert await compacting is False
    assert "interrupted" in r.of(CompactionFailed)[0].message
    assert r.loop.messages == before and not r.of(Compacted)


# -- resume -----------------------------------------------------------------------------------


async def test_resume_rebuilds_the_compacted_conversation(tmp_path: Path) -> None:
    with Transcript(tmp_path / "t.jsonl") as transcript:
        r = rig(
            tmp_path,
            [text("Listing."), bash(BIG)],
            [text("Done.")],
            [text("And again.")],
            compactor=Compactor(10_000, 0.9),
            transcript=transcript,
        )
        await r.loop.send("count")
        await r.loop.send("once more")
        records = list(transcript.records())
    assert r.of(Compacted)
    # The transcript keeps everything, the compaction record marks the place.
    assert any("cat -n" in json.dumps(rec) for rec in records if rec["type"] == "message")
    assert [rec["trigger"] for rec in records if rec["type"] == "compaction"] == ["auto"]
    assert messages_from(records) == r.loop.messages
    # A resumed screen draws the mark again, and the gauge.
    past = past_events(records).events
    assert [e.trigger for e in past if isinstance(e, Compacted)] == ["auto"]
    assert any(isinstance(e, ContextMeasured) and e.window == 10_000 for e in past)
    # The resumed engine starts from the last measure, not from nothing.
    assert restored_state(records).context_tokens == r.loop.compactor.tokens > 0


def test_the_context_a_transcript_left_is_its_last_measure() -> None:
    def said(tokens: int) -> dict[str, Any]:
        usage = {"input_tokens": tokens, "cache_read_input_tokens": 1, "output_tokens": 2}
        return {"type": "message", "role": "assistant", "content": "x", "usage": usage}

    context = {"type": "engine_event", "kind": "context", "tokens": 77, "window": 100}
    assert restored_state([]).context_tokens is None
    assert restored_state([said(10), said(500)]).context_tokens == 503
    assert restored_state([said(500), {"type": "clear"}]).context_tokens == 0
    assert (
        restored_state([said(500), {"type": "compaction", "messages": []}]).context_tokens is None
    )
    assert restored_state([said(500), {"type": "compaction"}, context]).context_tokens == 77


# -- the demo ---------------------------------------------------------------------------------


async def test_the_long_scenario_compacts_and_carries_on_headless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    out = io.StringIO()
    options = HeadlessOptions(
        prompt=None,
        cwd=tmp_path,
        output_format="stream-json",
        demo=True,
        scenario="long",
        demo_speed=0.0,
    )
    assert await run_headless(options, out) == 0
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [r.get("kind") for r in records]
    assert kinds.count("compacted") == 1
    # It carried on: calls ran after the compaction, and the script reached its end.
    assert "completed" in kinds[kinds.index("compacted") :]
    assert "top_words" in records[-1]["result"] and "demo" not in records[-1]["result"][:40]
    context = [r for r in records if r.get("kind") == "context"]
    assert context[-1]["window"] == 12_000
    assert any(c["tokens"] >= 0.9 * 12_000 for c in context)


async def test_headless_text_says_where_it_compacted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    options = HeadlessOptions(
        prompt=None, cwd=tmp_path, output_format="text", demo=True, scenario="long", demo_speed=0
    )
    assert await run_headless(options, io.StringIO()) == 0
    assert "proctor: conversation compacted" in capsys.readouterr().err
