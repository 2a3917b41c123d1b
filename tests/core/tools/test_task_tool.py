"""The Task tool: sub-agents run through the same loop and executor, driven by the demo model."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine_helpers import HANG_BOUND_S, ScriptedPort, eventually, make_services

from core.access.context import ToolPermissionContext
from core.agent.demo import DEMO_MODEL, DemoModel, copy_sample_project
from core.agent.loop import AgentLoop, TextDelta, TurnEnded
from core.agent.model import ModelClient, RetryPolicy
from core.agent.scenario import parse_scenario
from core.agent.subagents import SessionSubAgents, subagent_pool
from core.agent.transcript_records import event_record
from core.app_state import AppState, AppStateStore
from core.events import (
    EventRecorder,
    SubAgentEvent,
    ToolCancelled,
    ToolCompleted,
    ToolEvent,
    ToolStarted,
)
from core.ports import PermissionRequest
from core.registry import all_base_tools, assemble_tool_pool
from core.tool import ToolContext, ToolOptions
from core.tools.task import SUBAGENTS, Task

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


@dataclass
class Rig:
    loop: AgentLoop
    demo: DemoModel
    recorder: EventRecorder
    context: ToolContext
    workspace: Path

    def tool_events(self) -> list[ToolEvent]:
        return [e for e in self.recorder.events if isinstance(e, ToolEvent)]

    def result_of(self, tool_use_id: str) -> dict[str, Any]:
        for message in self.loop.messages:
            if message["role"] != "user":
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result" and block["tool_use_id"] == tool_use_id:
                    return dict(block)
        raise AssertionError(f"no result for {tool_use_id}")


def rig(
    tmp_path: Path,
    *turns: Any,
    permission_context: ToolPermissionContext = BYPASS,
    register: bool = True,
    **services: Any,
) -> Rig:
    scenario = parse_scenario(json.dumps({"name": "t", "turns": list(turns)}))
    workspace = copy_sample_project(tmp_path / "workspace")
    demo = DemoModel(scenario, workspace=workspace, speed=0)
    session_dir = tmp_path / "session"
    pool = assemble_tool_pool(permission_context, base_tools=[*all_base_tools(), Task()])
    store = AppStateStore(AppState(permission_context=permission_context))
    context = ToolContext(
        cwd=workspace,
        app_state=store,
        options=ToolOptions(tools=pool, model=DEMO_MODEL, session_dir=session_dir),
    )
    recorder = EventRecorder()
    model = ModelClient(demo.client(max_retries=0), model=DEMO_MODEL)
    retry = RetryPolicy(max_attempts=2, base_delay_s=0)
    parent_services = make_services(recorder, session_dir=session_dir, **services)
    loop = AgentLoop(model, parent_services, context, max_turns=10, retry=retry)
    if register:
        context.options.services.provide(SUBAGENTS, SessionSubAgents(model, parent_services, retry))
    return Rig(loop, demo, recorder, context, workspace)


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool(name: str, **tool_input: Any) -> dict[str, Any]:
    return {"type": "tool_use", "name": name, "input": tool_input}


def task(
    prompt: str,
    agent_turns: list[Any],
    *,
    subagent_type: str = "Explore",
    description: str = "look at things",
    **more: Any,
) -> dict[str, Any]:
    block = tool(
        "Task", description=description, prompt=prompt, subagent_type=subagent_type, **more
    )
    block["agent_turns"] = agent_turns
    return block


async def test_two_tasks_run_in_parallel_and_return_their_final_text(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            text("Two explorers."),
            task(
                "Find the README.",
                [
                    [tool("Glob", pattern="*.md")],
                    [text("The README is README.md.")],
                ],
            ),
            task(
                "Find the package.",
                [
                    [tool("Read", file_path="{workspace}/pyproject.toml")],
                    [text("The package is textstats.")],
                ],
            ),
        ],
        [text("Done.")],
    )
    ended = await r.loop.send("explore")
    assert ended.stop_reason == "end_turn"
    first, second = "toolu_demo_0_1", "toolu_demo_0_2"  # block 0 is text

    readme = r.result_of(first)
    assert not readme.get("is_error")
    assert readme["content"].startswith("The README is README.md.")
    assert "1 tool call" in readme["content"]
    assert r.result_of(second)["content"].startswith("The package is textstats.")

    # Both Task calls started before either finished: they ran side by side.
    task_events = [e for e in r.tool_events() if e.tool_use_id in (first, second)]
    started = [i for i, e in enumerate(task_events) if isinstance(e, ToolStarted)]
    completed = [i for i, e in enumerate(task_events) if isinstance(e, ToolCompleted)]
    assert len(started) == 2 and len(completed) == 2
    assert max(started) < min(completed)

    # The sub-agents' own tool calls are tagged with their Task call's id.
    sub_events = [e for e in r.tool_events() if e.parent_tool_use_id is not None]
    by_parent = {e.parent_tool_use_id: e.tool_name for e in sub_events}
    assert by_parent == {first: "Glob", second: "Read"}
    assert all(
        e.parent_tool_use_id is None for e in r.tool_events() if e.tool_use_id in (first, second)
    )

    # Their loop events arrive wrapped, so the main text stays the main agent's.
    wrapped = [e for e in r.recorder.events if isinstance(e, SubAgentEvent)]
    assert {e.parent_tool_use_id for e in wrapped} == {first, second}
    assert any(isinstance(e.event, TurnEnded) for e in wrapped)
    main_text = "".join(e.text for e in r.recorder.events if isinstance(e, TextDelta))
    assert "README" not in main_text
    record = event_record(wrapped[0])
    assert record["kind"] == "subagent"
    assert record["agent_id"] in (first, second)
    assert record["event_kind"] == "user_message"

    # The sub-agents saw their own prompt only, with the role prompt in their system text.
    served = {s.conversation for s in r.demo.served}
    assert {"main", first, second} <= served


async def test_explore_pool_is_read_only_and_general_purpose_has_no_task() -> None:
    pool = assemble_tool_pool(BYPASS, base_tools=[*all_base_tools(), Task()])
    explore = set(subagent_pool(pool, "Explore").names)
    assert explore == {"Bash", "Glob", "Grep", "Read", "ToolSearch", "WebFetch"}
    assert not {"Edit", "Write", "NotebookEdit"} & explore
    assert set(subagent_pool(pool, "Plan").names) == explore
    general = set(subagent_pool(pool, "general-purpose").names)
    assert {"Edit", "Write", "Bash"} <= general
    assert not {"Task", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion"} & general


async def test_explore_agent_cannot_call_edit(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            task(
                "Change the README.",
                [
                    [
                        tool(
                            "Edit",
                            file_path="{workspace}/README.md",
                            old_string="a",
                            new_string="b",
                        )
                    ],
                    [text("I could not edit.")],
                ],
            )
        ],
        [text("ok")],
    )
    await r.loop.send("go")
    edit = [e for e in r.tool_events() if e.tool_name == "Edit"]
    assert edit and all(e.parent_tool_use_id == "toolu_demo_0_0" for e in edit)
    failed = [e for e in edit if isinstance(e, ToolCompleted)]
    assert failed and failed[0].is_error
    assert r.result_of("toolu_demo_0_0")["content"].startswith("I could not edit.")


async def test_max_turns_bounds_the_sub_agent(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            task(
                "Keep looking.",
                [[tool("Glob", pattern="*")] for _ in range(5)] + [[text("never")]],
                max_turns=2,
            )
        ],
        [text("ok")],
    )
    await r.loop.send("go")
    result = r.result_of("toolu_demo_0_0")
    assert result["is_error"] is True
    assert "used all 2 of its turns" in result["content"]
    assert "2 requests, 2 tool calls, max_turns" in result["content"]
    agent_requests = [s for s in r.demo.served if s.conversation == "toolu_demo_0_0"]
    assert len(agent_requests) == 2


async def test_a_sub_agent_permission_prompt_is_labelled(tmp_path: Path) -> None:
    port = ScriptedPort()
    r = rig(
        tmp_path,
        [
            task(
                "Write a note.",
                [
                    [tool("Write", file_path="{workspace}/NOTE.md", content="hello\n")],
                    [text("Wrote the note.")],
                ],
                subagent_type="general-purpose",
                description="write a note",
            )
        ],
        [text("ok")],
        permission_context=ToolPermissionContext(mode="default"),
        permission_port=port,
    )
    await r.loop.send("go")
    asked: list[PermissionRequest] = port.requests
    assert [q.tool_name for q in asked] == ["Write"]
    assert asked[0].agent_label == "general-purpose agent: write a note"
    assert (r.workspace / "NOTE.md").read_text() == "hello\n"
    assert r.result_of("toolu_demo_0_0")["content"].startswith("Wrote the note.")


async def test_a_sub_agents_decisions_are_audited_under_its_label(tmp_path: Path) -> None:
    """The audit log names the agent whose call was decided: the main agent's Task call by
    null, the sub-agent's Write by the same label its question carried."""
    from core.permissions.audit import AuditLog
    from core.permissions.decide import DecisionChain

    log = AuditLog(tmp_path / "audit.jsonl")
    r = rig(
        tmp_path,
        [
            task(
                "Write a note.",
                [[tool("Write", file_path="{workspace}/NOTE.md", content="hi\n")], [text("ok")]],
                subagent_type="general-purpose",
                description="write a note",
            )
        ],
        [text("ok")],
        permission_context=ToolPermissionContext(mode="default"),
        permission_port=ScriptedPort(),
        permissions=DecisionChain(audit=log),
    )
    await r.loop.send("go")
    log.close()
    records = [json.loads(line) for line in (tmp_path / "audit.jsonl").read_text().splitlines()]
    label = "general-purpose agent: write a note"
    assert [(r["kind"], r["tool"], r["agent"]) for r in records] == [
        ("decision", "Task", None),
        ("decision", "Write", label),
        ("answer", "Write", label),
    ]


async def test_background_agent_returns_an_id_and_its_result_later(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            task(
                "Look in the background.",
                [[tool("Glob", pattern="*.md")], [text("Found README.md.")]],
                run_in_background=True,
            )
        ],
        [text("Started it.")],
    )
    await r.loop.send("go")
    started = r.result_of("toolu_demo_0_0")
    assert not started.get("is_error")
    assert "agent_1" in started["content"]

    subagents = r.context.options.services.get(SUBAGENTS)
    assert isinstance(subagents, SessionSubAgents)
    agent = subagents.background.get("agent_1")
    assert agent is not None
    assert await agent.wait(HANG_BOUND_S)
    assert agent.status == "completed"
    assert agent.result.startswith("Found README.md.")

    output = await subagents.output("agent_1", block=True, timeout_s=1)
    assert "<status>completed</status>" in output.data
    assert "Found README.md." in output.data
    missing = await subagents.output("agent_9", block=False, timeout_s=0)
    assert missing.is_error and "agent_1 (completed)" in missing.data
    await r.context.options.services.close()


async def test_without_a_sub_agent_runner_task_says_so(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [task("Anything.", [[text("never")]])],
        [text("ok")],
        register=False,
    )
    await r.loop.send("go")
    result = r.result_of("toolu_demo_0_0")
    assert result["is_error"] is True
    assert "no way to run sub-agents" in result["content"]
    assert all(s.conversation == "main" for s in r.demo.served)


async def test_interrupting_the_parent_interrupts_the_sub_agent(tmp_path: Path) -> None:
    r = rig(
        tmp_path,
        [
            task(
                "Sleep a while.",
                [[tool("Bash", command="sleep 600")], [text("woke")]],
                subagent_type="general-purpose",
            )
        ],
        [text("ok")],
    )
    running = asyncio.create_task(r.loop.send("go"))
    await eventually(
        lambda: any(e.tool_name == "Bash" and isinstance(e, ToolStarted) for e in r.tool_events()),
        "the sub-agent's Bash call's start",
    )
    r.loop.interrupt()
    ended = await asyncio.wait_for(running, HANG_BOUND_S)
    assert ended.stop_reason == "interrupted"
    sub_ends = [
        e.event
        for e in r.recorder.events
        if isinstance(e, SubAgentEvent) and isinstance(e.event, TurnEnded)
    ]
    assert [e.stop_reason for e in sub_ends] == ["interrupted"]
    bash = [e for e in r.tool_events() if e.tool_name == "Bash"]
    assert bash[-1].parent_tool_use_id == "toolu_demo_0_0"
    assert isinstance(bash[-1], ToolCancelled)
    assert isinstance(r.tool_events()[-1], ToolCancelled)  # the Task call itself


async def test_a_sub_agent_shares_its_session_s_services(tmp_path: Path) -> None:
    """Its commands run in the session's sandbox and its background shells are the
    session's: a sub-agent never gets services of its own."""
    from core.agent.subagents import build_subagent
    from core.tools.task import TaskInput

    r = rig(tmp_path, [text("ok")])
    subagents = r.context.options.services.get(SUBAGENTS)
    assert isinstance(subagents, SessionSubAgents)
    task = TaskInput(description="d", prompt="p", subagent_type="Explore")
    loop = build_subagent(subagents, task, r.context.replace(tool_use_id="toolu_task"))
    assert loop.context.options.services is r.context.options.services
    assert loop.context.options.tools is not None and "Edit" not in loop.context.options.tools.names


async def test_a_background_agent_stays_within_the_skill_that_started_it(tmp_path: Path) -> None:
    # Red team: the turn that started it ends (and with it the skill's scope in the shared
    # state), but the background agent runs on: its calls must stay inside the skill's list.
    from dataclasses import replace

    from core.access.context import PermissionRule, SkillScope
    from core.tools.task import TaskInput

    write = tool("Write", file_path="{workspace}/escaped.txt", content="x")
    r = rig(
        tmp_path,
        [
            task(
                "Write in the background.",
                [[write], [text("Tried.")]],
                subagent_type="general-purpose",
                run_in_background=True,
            )
        ],
    )
    only_reads = SkillScope("reader", (PermissionRule("Read", None, "allow", source="skill"),))
    store = r.context.app_state
    store.set(
        lambda s: s.with_permission_context(
            replace(s.permission_context, skill_scopes=(only_reads,))
        )
    )
    subagents = r.context.options.services.get(SUBAGENTS)
    assert isinstance(subagents, SessionSubAgents)
    started = subagents.start(
        TaskInput(
            description="look at things",
            prompt="Write in the background.",
            subagent_type="general-purpose",
            run_in_background=True,
        ),
        r.context.replace(tool_use_id="toolu_task"),
    )
    # The turn ends before the agent makes its first call (the loop's end_skills).
    store.set(lambda s: s.with_permission_context(replace(s.permission_context, skill_scopes=())))
    agent = subagents.background.get(started.agent_id)
    assert agent is not None and await agent.wait(HANG_BOUND_S)
    assert not (r.workspace / "escaped.txt").exists()
    ends = [e for e in r.tool_events() if isinstance(e, ToolCompleted) and e.tool_name == "Write"]
    assert [e.denied_by.kind if e.denied_by else None for e in ends] == ["skill"]
    await r.context.options.services.close()
