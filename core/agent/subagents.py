"""Sub-agents: how the Task tool's agents are assembled and run, in the foreground or not.

A sub-agent is an `AgentLoop` like the main one, driven by the same model client and the same
executor services, with three differences:

- its messages start empty: it sees the Task `prompt`, not the parent's conversation; its
  system prompt has its role and the project's instructions as the parent has them in use
  (read once by the session, not again per sub-agent: `InstructionSet.fork`), and what it
  reads below the working directory brings that directory's files to it as to the parent;
- its tool pool is the parent's filtered by agent type (`SUBAGENT_ACCESS`): Explore and Plan
  get read-only tools only, general-purpose everything except Task itself (no recursion) and
  the tools that belong to the user's session (plan mode, questions to the user);
- its services carry `parent_tool_use_id` (the Task call's id), so every tool event it causes
  nests under the Task call, and `agent_label`, so a permission prompt says which sub-agent
  asks. Its own loop events (text deltas, messages, turn ends) carry no such field; they reach
  the parent's sink wrapped in a `SubAgentEvent` instead, so no front end mistakes a
  sub-agent's words for the main agent's.

A session provides one `SessionSubAgents` as the service `core.tools.task.SUBAGENTS` (the
tool cannot reach the model client itself). It also keeps the session's background agents
(`run_in_background`), under ids `agent_1`, `agent_2`..., which TaskOutput reads, and stops
them when the session closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..abort import AbortSignal
from ..access.context import SkillScope
from ..app_state import AppState, AppStateStore, Updater
from ..events import EngineEvent, EventSink, SubAgentEvent, ToolEvent
from ..executor import ExecutorServices
from ..tool import SubagentAccess, ToolContext, ToolPool, ToolResult
from ..tools.task import AGENT_ID_PREFIX, AgentRun, BackgroundStarted, TaskInput
from .instructions import InstructionSet
from .loop import AgentLoop

AgentStatus = Literal["running", "completed", "failed"]

WIND_DOWN_S = 10.0
"""How long a cancelled Task waits for its interrupted sub-agent to end its turn."""

SUBAGENT_ACCESS: dict[str, frozenset[SubagentAccess]] = {
    "Explore": frozenset({"every"}),
    "Plan": frozenset({"every"}),
    "general-purpose": frozenset({"every", "general-purpose"}),
}
"""Which tools each type of sub-agent gets, by what each tool says of itself
(`Tool.subagents`): Explore and Plan only the tools every sub-agent may use (reading,
searching, and Bash, whose commands that are not read-only ask like the parent's would,
with the sub-agent's label); general-purpose also the rest, but never the tools that belong
to the person's session (Task itself, plan mode, questions to the user)."""

ROLE_PROMPTS: dict[str, str] = {
    "general-purpose": (
        "You are a sub-agent started by the main agent with the Task tool. Do the task in the "
        "user message autonomously with the tools you have; nobody will answer questions. "
        "When done, reply with a concise report of what you found or did: that reply is all "
        "the main agent sees of your work, so include the file paths and facts it needs."
    ),
    "Explore": (
        "You are an Explore sub-agent started by the main agent with the Task tool: a fast, "
        "read-only explorer of the codebase. Find files, search code and read it to answer "
        "the question in the user message. Do not change anything: you have read-only tools "
        "only. When done, reply with a concise answer naming the relevant files and lines; "
        "that reply is all the main agent sees of your work."
    ),
    "Plan": (
        "You are a Plan sub-agent started by the main agent with the Task tool: a software "
        "architect. Explore the code read-only and design an implementation plan for the "
        "task in the user message: the steps, the files to change, the risks. Do not change "
        "anything. When done, reply with the plan; that reply is all the main agent sees."
    ),
}


class SessionSubAgents:
    """One session's sub-agent runner (`core.tools.task.SubAgents`) and background agents."""

    def __init__(
        self,
        model: Any,
        services: ExecutorServices,
        retry: Any = None,
        instructions: InstructionSet | None = None,
    ) -> None:
        self.model = model
        """The session's `ModelClient`."""
        self.services = services
        """The parent's services; a sub-agent gets a copy tagged with its Task call."""
        self.retry = retry
        """A `RetryPolicy` for the sub-agents' requests; None for the default."""
        self.instructions = instructions
        """The session's project instructions: each sub-agent starts with those in use."""
        self.background = AgentTasks()

    async def run(self, input: TaskInput, context: ToolContext) -> AgentRun:
        return await run_subagent(build_subagent(self, input, context), input, context.abort)

    def start(self, input: TaskInput, context: ToolContext) -> BackgroundStarted:
        # It outlives the turn that started it, and with it the skills narrowing that turn:
        # they go on narrowing its calls, or a skill's limits would end by going background.
        scopes = context.permission_context.skill_scopes
        if scopes:
            context = context.replace(app_state=ScopedStore(context.app_state, scopes))
        agent = self.background.start(build_subagent(self, input, context), input)
        return BackgroundStarted(agent.id, input.subagent_type, input.description)

    async def output(self, task_id: str, *, block: bool, timeout_s: float) -> ToolResult[str]:
        tasks = self.background
        agent = tasks.get(task_id)
        if agent is None:
            return ToolResult(
                f"No background agent has the id {task_id!r}. {tasks.describe()}", is_error=True
            )
        waited = 0.0
        if block and agent.status == "running":
            waited = 0.0 if await agent.wait(timeout_s) else timeout_s
        lines = [
            f"<task_id>{agent.id}</task_id>",
            f"<agent>{agent.agent_type}: {agent.description}</agent>",
            f"<status>{agent.status}</status>",
        ]
        if waited:
            lines.append(f"Still running after waiting {waited:g} s.")
        result = agent.result
        lines.append(f"<output>\n{result}\n</output>" if result else "<output></output>")
        return ToolResult("\n".join(lines))

    async def close(self) -> None:
        await self.background.close()


class ScopedStore(AppStateStore):
    """The session's state as a background sub-agent sees it: shared (a mode switch reaches
    it at once), with the skill scopes that were in force when it started always in force."""

    __slots__ = ("_scopes", "_shared")

    def __init__(self, shared: AppStateStore, scopes: tuple[SkillScope, ...]) -> None:
        super().__init__()
        self._shared, self._scopes = shared, scopes

    def get(self) -> AppState:
        state = self._shared.get()
        permissions = state.permission_context
        missing = tuple(s for s in self._scopes if s not in permissions.skill_scopes)
        if not missing:
            return state
        scopes = (*permissions.skill_scopes, *missing)
        return state.with_permission_context(replace(permissions, skill_scopes=scopes))

    def set(self, updater: Updater) -> AppState:
        self._shared.set(updater)
        return self.get()


def tagging_sink(sink: EventSink, parent_tool_use_id: str, agent_label: str) -> EventSink:
    def emit(event: EngineEvent) -> None:
        if isinstance(event, ToolEvent):
            sink(event)  # tagged with parent_tool_use_id by the sub-agent's services
        else:
            sink(
                SubAgentEvent(
                    at=event.at,
                    agent_id=parent_tool_use_id,
                    agent_label=agent_label,
                    event_kind=event.kind,
                    event=event,
                )
            )

    return emit


def subagent_pool(parent: ToolPool | None, subagent_type: str) -> ToolPool:
    """The parent's tools this type of sub-agent may use, in the parent's order."""
    allowed = SUBAGENT_ACCESS.get(subagent_type, SUBAGENT_ACCESS["Explore"])
    return (parent or ToolPool()).filtered(lambda tool: tool.subagents in allowed)


def agent_label(input: TaskInput) -> str:
    return f"{input.subagent_type} agent: {input.description}"


def build_subagent(runtime: SessionSubAgents, input: TaskInput, context: ToolContext) -> AgentLoop:
    """The sub-agent's `AgentLoop`, not yet started."""
    parent_id = context.tool_use_id
    label = agent_label(input)
    services = replace(
        runtime.services,
        sink=tagging_sink(runtime.services.sink, parent_id, label),
        parent_tool_use_id=parent_id,
        agent_label=label,
    )
    sub_context = context.replace(
        agent_id=parent_id,
        agent_label=label,
        messages=(),
        read_file_state=context.read_file_state.copy(),
        options=replace(
            context.options, tools=subagent_pool(context.options.tools, input.subagent_type)
        ),
    )
    instructions = runtime.instructions.fork() if runtime.instructions is not None else None
    given = instructions.start.prompt_text() if instructions is not None else ""
    return AgentLoop(
        runtime.model,
        services,
        sub_context,
        max_turns=input.max_turns,
        retry=runtime.retry,
        extra_prompt="\n\n".join(p for p in (ROLE_PROMPTS[input.subagent_type], given) if p),
        instructions=instructions,
    )


async def run_subagent(
    loop: AgentLoop, input: TaskInput, abort: AbortSignal | None = None
) -> AgentRun:
    """Run `loop` on the task's prompt; `abort` (the Task call's signal) interrupts it."""
    remove = abort.add_listener(lambda _reason: loop.interrupt()) if abort is not None else None
    send = asyncio.ensure_future(loop.send(input.prompt))
    try:
        ended = await asyncio.shield(send)
    except asyncio.CancelledError:
        # The parent's call is cancelled (Esc): let the sub-agent end its turn the way an
        # interrupted main agent does (a result for each of its calls, TurnEnded), for a
        # bounded time, so its events in the front end end truthfully.
        if loop.running:
            loop.interrupt()
            await asyncio.wait({send}, timeout=WIND_DOWN_S)
        if not send.done():
            send.cancel()
        raise
    finally:
        if remove is not None:
            remove()
    return AgentRun(
        agent_type=input.subagent_type,
        description=input.description,
        text=final_text(loop.messages),
        stop_reason=ended.stop_reason,
        requests=ended.requests,
        tool_calls=count_tool_calls(loop.messages),
        max_turns=input.max_turns,
    )


def final_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """The text of the last assistant message (empty when it has none)."""
    for message in reversed(messages):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content.strip()
        parts = [
            str(b.get("text", ""))
            for b in content or ()
            if isinstance(b, Mapping) and b.get("type") == "text"
        ]
        return "\n".join(p for p in parts if p).strip()
    return ""


def count_tool_calls(messages: Sequence[Mapping[str, Any]]) -> int:
    return sum(
        1
        for m in messages
        if m.get("role") == "assistant" and not isinstance(m.get("content"), str)
        for b in m.get("content") or ()
        if isinstance(b, Mapping) and b.get("type") == "tool_use"
    )


# -- background agents --------------------------------------------------------------------


@dataclass
class BackgroundAgent:
    id: str
    agent_type: str
    description: str
    loop: AgentLoop
    task: asyncio.Task[AgentRun] | None = None
    run: AgentRun | None = None
    error: str | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def status(self) -> AgentStatus:
        if not self.done.is_set():
            return "running"
        return "completed" if self.run is not None and not self.run.is_error else "failed"

    @property
    def result(self) -> str:
        """The agent's result for the model: its report, or why there is none."""
        if self.run is not None:
            return self.run.render()
        if self.error is not None:
            return f"The {self.agent_type} agent failed: {self.error}"
        return ""

    async def wait(self, timeout_s: float | None = None) -> bool:
        """Wait up to `timeout_s` (None: no limit) for the agent to end; whether it has."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.done.wait(), timeout_s)
        return self.done.is_set()

    def stop(self) -> None:
        """Interrupt the agent (its loop keeps a valid conversation and ends)."""
        self.loop.interrupt()


class AgentTasks:
    """One session's background agents."""

    def __init__(self) -> None:
        self.agents: dict[str, BackgroundAgent] = {}
        self._ids = itertools.count(1)

    def get(self, agent_id: str) -> BackgroundAgent | None:
        return self.agents.get(agent_id)

    def start(self, loop: AgentLoop, input: TaskInput) -> BackgroundAgent:
        agent = BackgroundAgent(
            f"{AGENT_ID_PREFIX}{next(self._ids)}", input.subagent_type, input.description, loop
        )
        self.agents[agent.id] = agent
        agent.task = asyncio.create_task(self._run(agent, input), name=f"proctor-{agent.id}")
        return agent

    async def _run(self, agent: BackgroundAgent, input: TaskInput) -> AgentRun:
        try:
            agent.run = await run_subagent(agent.loop, input)
            return agent.run
        except asyncio.CancelledError:
            agent.error = "cancelled"
            raise
        except Exception as error:  # the loop catches model errors; this is a bug's safety net
            agent.error = f"{type(error).__name__}: {error}"
            raise
        finally:
            agent.done.set()

    def describe(self) -> str:
        if not self.agents:
            return "No background agents have been started."
        listed = ", ".join(f"{a.id} ({a.status})" for a in self.agents.values())
        return f"Background agents: {listed}."

    async def close(self, grace_s: float = 5.0) -> None:
        """Interrupt every running agent, wait a little, then cancel what is left."""
        running = [a for a in self.agents.values() if a.task is not None and not a.task.done()]
        for agent in running:
            agent.stop()
        tasks = [a.task for a in running if a.task is not None]
        if not tasks:
            return
        _, pending = await asyncio.wait(tasks, timeout=grace_s)
        for task in pending:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
