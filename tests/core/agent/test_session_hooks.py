"""UserPromptSubmit and Stop hooks around the loop, with real hook scripts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from core.agent.demo import DEMO_MODEL, DemoModel
from core.agent.loop import AgentLoop, HookNotice
from core.agent.model import ModelClient
from core.agent.scenario import parse_scenario
from core.agent.transcript import Transcript, transcribing
from core.app_state import AppState, AppStateStore
from core.events import EventRecorder, HookRan
from core.executor import ExecutorServices
from core.hook_runner import CommandHookRunner
from core.settings.values import HookCommand, HookEntry
from core.tool import ToolContext, ToolOptions, ToolPool

TWO_ANSWERS = json.dumps(
    {
        "name": "two",
        "description": "two answers",
        "workspace": "cwd",
        "turns": [[{"type": "text", "text": "First."}], [{"type": "text", "text": "Second."}]],
    }
)


def hook(tmp_path: Path, event: str, body: str) -> CommandHookRunner:
    script = tmp_path / f"{event}.sh"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    entry = HookEntry(event, None, (HookCommand(str(script), timeout_s=10),))  # type: ignore[arg-type]
    return CommandHookRunner(
        [entry],
        session_id="s",
        transcript_path=None,
        cwd=tmp_path,
        permission_mode=lambda: "default",
        trusted=True,
    )


def loop_with(tmp_path: Path, runner: CommandHookRunner) -> tuple[AgentLoop, EventRecorder]:
    demo = DemoModel(parse_scenario(TWO_ANSWERS, source="test"), workspace=tmp_path, speed=0)
    recorder = EventRecorder()
    context = ToolContext(
        cwd=tmp_path, app_state=AppStateStore(AppState()), options=ToolOptions(tools=ToolPool([]))
    )
    loop = AgentLoop(
        ModelClient(demo.client(max_retries=0), model=DEMO_MODEL),
        ExecutorServices(sink=recorder, hooks=runner),
        context,
    )
    return loop, recorder


async def test_a_blocking_prompt_hook_stops_the_prompt_before_the_model_sees_it(tmp_path):
    loop, recorder = loop_with(
        tmp_path, hook(tmp_path, "UserPromptSubmit", 'echo "no secrets in prompts" >&2\nexit 2\n')
    )
    ended = await loop.send("here is my password")
    assert ended.stop_reason == "blocked_by_hook" and loop.requests == 0
    assert loop.messages == []
    assert any(isinstance(e, HookNotice) and "no secrets" in e.text for e in recorder.events)


async def test_a_prompt_hook_can_add_context(tmp_path):
    loop, _ = loop_with(
        tmp_path, hook(tmp_path, "UserPromptSubmit", "echo 'today is release day'\n")
    )
    await loop.send("hello")
    texts = [b["text"] for b in loop.messages[0]["content"]]
    assert texts[0] == "hello" and any("release day" in t for t in texts[1:])


async def test_a_stop_hook_sends_the_agent_back_to_work_once(tmp_path):
    marker = tmp_path / "asked"
    body = (
        f'if [ -e "{marker}" ]; then exit 0; fi\ntouch "{marker}"\n'
        'echo "run the tests first" >&2\nexit 2\n'
    )
    loop, _ = loop_with(tmp_path, hook(tmp_path, "Stop", body))
    ended = await loop.send("do it")
    assert ended.stop_reason == "end_turn" and loop.requests == 2
    followed = [b["text"] for m in loop.messages if m["role"] == "user" for b in m["content"]]
    assert "[Stop hook] run the tests first" in followed


async def test_what_hooks_decided_is_in_the_transcript(tmp_path):
    """The session's one sink reaches the hooks too: a blocked prompt is on record."""
    runner = hook(tmp_path, "UserPromptSubmit", 'echo "no secrets in prompts" >&2\nexit 2\n')
    loop, recorder = loop_with(tmp_path, runner)
    path = tmp_path / "transcript.jsonl"
    with Transcript(path) as transcript:
        loop.services = replace(loop.services, sink=transcribing(transcript, recorder))
        await loop.send("here is my password")
    (ran,) = [e for e in recorder.events if isinstance(e, HookRan)]
    assert ran.hook_event == "UserPromptSubmit" and ran.outcome.blocked
    records = [json.loads(line) for line in path.read_text().splitlines()]
    (record,) = [r for r in records if r.get("kind") == "hook"]
    assert record["hook_event"] == "UserPromptSubmit"
    assert record["outcome"]["blocked"] is True
    assert "no secrets" in record["outcome"]["reason"]
