"""Task: run a sub-agent, with its own conversation and a restricted tool set.

A sub-agent is an `AgentLoop` like the main one, driven by the same model client and the same
executor services, with three differences:

- its messages start empty: it sees the Task `prompt`, not the parent's conversation;
- its tool pool is the parent's filtered by agent type (`SUBAGENT_TOOLS`): Explore and Plan
  get read-only tools only, general-purpose everything except Task itself (no recursion) and
  the tools that belong to the user's session (plan mode, questions to the user);
- its services carry `parent_tool_use_id` (the Task call's id), so every tool event it causes
  nests under the Task call, and `agent_label`, so a permission prompt says which sub-agent
  asks. Its own loop events (text deltas, messages, turn ends) carry no such field; they reach
  the parent's sink wrapped in a `SubAgentEvent` instead, so no front end mistakes a
  sub-agent's words for the main agent's.

Why the Task call itself is read-only and concurrency-safe (as seed 001 has it): the call
changes nothing by itself; every call the sub-agent makes goes through the permission chain
on its own, with the session's mode and rules (a general-purpose sub-agent started in plan
mode has its edits refused like the parent's would be). So several Tasks in one turn run in
parallel, under the executor's concurrency cap.

A tool cannot reach the model client, so the session registers its runtime once
(`register_runtime(store, AgentRuntime(model, services))`); keyed by the session's
`AppStateStore`, as `SHELLS` is. Background agents (`run_in_background`) live in `AGENTS`,
keyed the same way, under ids `agent_1`, `agent_2`...; TaskOutput reads them through
`agent_output`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pydantic import Field

from ..app_state import AppStateStore
from ..events import EngineEvent, EventSink, SubAgentEvent, ToolEvent
from ..executor import ExecutorServices
from ..registry import ToolPool
from ..tool import (
    Progress,
    Tool,
    ToolContext,
    ToolInput,
    ToolResult,
    ToolResultBlock,
)

SubagentType = Literal["general-purpose", "Explore", "Plan"]
AgentStatus = Literal["running", "completed", "failed"]

DEFAULT_MAX_TURNS = 20
MAX_MAX_TURNS = 100
AGENT_ID_PREFIX = "agent_"
WIND_DOWN_S = 10.0
"""How long a cancelled Task waits for its interrupted sub-agent to end its turn."""

READ_ONLY_TOOLS = frozenset({"Read", "Glob", "Grep", "Bash", "WebFetch", "ToolSearch"})
"""Explore and Plan. Bash is here for read-only commands (ls, git log, tests that only
read); any other command asks, like the parent's would, with the sub-agent's label."""

SESSION_ONLY_TOOLS = frozenset({"Task", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion"})
"""Never given to a sub-agent: no nested sub-agents; plan mode and questions to the user
belong to the user's session (EnterPlanMode refuses a sub-agent anyway)."""

SUBAGENT_TOOLS: dict[str, frozenset[str] | None] = {
    "Explore": READ_ONLY_TOOLS,
    "Plan": READ_ONLY_TOOLS,
    "general-purpose": None,  # everything but SESSION_ONLY_TOOLS
}

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

PROMPT = """\
Launch a new agent to handle complex, multi-step tasks autonomously.

The Task tool launches a sub-agent with its own conversation and a restricted set of tools. \
Available agent types:
- general-purpose: researching complex questions, searching for code and executing \
multi-step tasks. Has every tool except Task, plan mode and questions to the user.
- Explore: fast, read-only exploration of the codebase: finding files by pattern, \
searching code for keywords, answering questions about it (Read, Glob, Grep, Bash, \
WebFetch). Say how thorough it should be: "quick", "medium" or "very thorough".
- Plan: a software architect that explores read-only and returns an implementation plan.

When NOT to use the Task tool:
- To read a specific file path, use Read or Glob instead.
- To find a specific definition like "class Foo", use Glob or Grep instead.
- To search within a specific file or two or three files, use Read instead.

Usage notes:
- Always include a short description (3-5 words) of what the agent will do.
- Launch several agents in one message whenever they are independent: they run in parallel.
- When the agent is done it returns a single message to you; the user does not see it, so \
tell the user what matters in it.
- With `run_in_background` the call returns an agent id (such as agent_1) at once; read the \
agent's result with TaskOutput.
- `max_turns` (default 20) bounds the agent's model requests.
- The agent starts with no knowledge of this conversation: give it a clear, detailed, \
self-contained prompt, and say whether it should write code or only research."""


# -- the runtime a session registers ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AgentRuntime:
    """What a sub-agent needs that a tool context does not carry."""

    model: Any
    """The session's `ModelClient` (typed loosely: core.agent imports the tools)."""
    services: ExecutorServices
    """The parent's services; a sub-agent gets a copy tagged with its Task call."""
    retry: Any = None
    """A `RetryPolicy` for the sub-agent's requests; None for the default."""


_RUNTIMES: dict[AppStateStore, AgentRuntime] = {}


def register_runtime(app_state: AppStateStore, runtime: AgentRuntime) -> None:
    """Make `runtime` the one Task calls of this session use (once per session)."""
    _RUNTIMES[app_state] = runtime


def unregister_runtime(app_state: AppStateStore) -> None:
    _RUNTIMES.pop(app_state, None)


def runtime_for(context: ToolContext) -> AgentRuntime | None:
    return _RUNTIMES.get(context.app_state)


# -- events ----------------------------------------------------------------------------------


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


# -- input and result ------------------------------------------------------------------------


class TaskInput(ToolInput):
    description: str = Field(min_length=1, description="A short (3-5 word) description of the task")
    prompt: str = Field(min_length=1, description="The task for the agent to perform")
    subagent_type: SubagentType = Field(description="The type of agent to use")
    run_in_background: bool = Field(
        default=False,
        description="Run the agent in the background; read its result later with TaskOutput",
    )
    max_turns: int = Field(
        default=DEFAULT_MAX_TURNS,
        ge=1,
        le=MAX_MAX_TURNS,
        description="The most model requests the agent may make",
    )


@dataclass(frozen=True, slots=True)
class AgentRun:
    """How a sub-agent's run ended."""

    agent_type: str
    description: str
    text: str
    """Its final reply (its last assistant message's text)."""
    stop_reason: str
    requests: int
    tool_calls: int
    max_turns: int

    @property
    def is_error(self) -> bool:
        if self.stop_reason in ("end_turn", "stop_sequence"):
            return False
        # max_turns, an error, an interrupt, a hook's stop, or a reply cut at max_tokens
        # with no words: the task was not finished.
        return self.stop_reason != "max_tokens" or not self.text

    def render(self) -> str:
        calls = f"{self.tool_calls} tool call{'s' if self.tool_calls != 1 else ''}"
        turns = f"{self.requests} request{'s' if self.requests != 1 else ''}"
        if self.stop_reason == "max_turns":
            head = (
                f"The {self.agent_type} agent used all {self.max_turns} of its turns without "
                "finishing."
            )
            body = f"{head} Its last words:\n{self.text}" if self.text else head
        elif self.stop_reason in ("error", "interrupted"):
            head = f"The {self.agent_type} agent stopped ({self.stop_reason}) before finishing."
            body = f"{head} Its last words:\n{self.text}" if self.text else head
        else:
            body = self.text or f"(The {self.agent_type} agent finished without a reply.)"
        return f"{body}\n\n[{self.agent_type} agent: {turns}, {calls}, {self.stop_reason}]"


@dataclass(frozen=True, slots=True)
class BackgroundStarted:
    agent_id: str
    agent_type: str
    description: str

    def render(self) -> str:
        return (
            f"Started the {self.agent_type} agent ({self.description}) in the background as "
            f"{self.agent_id}. Read its result with TaskOutput (task_id {self.agent_id!r})."
        )


# -- the tool --------------------------------------------------------------------------------


class Task(Tool[TaskInput]):
    name = "Task"
    search_hint = "launch sub-agent explore plan parallel tasks"
    input_model = TaskInput
    description = "Launches a sub-agent for a multi-step task"
    interrupt_behavior = "cancel"

    instructions = PROMPT

    def is_read_only(self, input: TaskInput) -> bool:
        return True  # the sub-agent's own calls each pass the permission chain

    def is_concurrency_safe(self, input: TaskInput) -> bool:
        return True

    async def call(self, input: TaskInput, context: ToolContext, progress: Progress) -> ToolResult:
        runtime = runtime_for(context)
        if runtime is None:
            return ToolResult(
                "Task is not available in this session: no agent runtime is registered, so "
                "no sub-agent can be started. Do the work yourself with the other tools.",
                is_error=True,
            )
        if context.agent_id is not None:
            return ToolResult("A sub-agent cannot start sub-agents of its own.", is_error=True)
        loop = build_subagent(runtime, input, context)
        if input.run_in_background:
            agent = AGENTS.session_for(context).start(loop, input)
            return ToolResult(BackgroundStarted(agent.id, input.subagent_type, input.description))
        run = await run_subagent(loop, input, context.abort)
        return ToolResult(run, is_error=run.is_error)

    def map_result_to_tool_result_block(self, data: Any, tool_use_id: str) -> ToolResultBlock:
        content = data.render() if isinstance(data, AgentRun | BackgroundStarted) else str(data)
        return {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}


def subagent_pool(parent: ToolPool | None, subagent_type: str) -> ToolPool:
    """The parent's tools this type of sub-agent may use, in the parent's order."""
    allowed = SUBAGENT_TOOLS.get(subagent_type, READ_ONLY_TOOLS)
    tools = parent or ()
    return ToolPool(
        t
        for t in tools
        if t.name not in SESSION_ONLY_TOOLS and (allowed is None or t.name in allowed)
    )


def agent_label(input: TaskInput) -> str:
    return f"{input.subagent_type} agent: {input.description}"


def build_subagent(runtime: AgentRuntime, input: TaskInput, context: ToolContext) -> Any:
    """The sub-agent's `AgentLoop`, not yet started."""
    from ..agent.loop import AgentLoop  # core.agent imports the tools: import late

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
        messages=(),
        read_file_state=context.read_file_state.copy(),
        options=replace(
            context.options, tools=subagent_pool(context.options.tools, input.subagent_type)
        ),
    )
    return AgentLoop(
        runtime.model,
        services,
        sub_context,
        max_turns=input.max_turns,
        retry=runtime.retry,
        extra_prompt=ROLE_PROMPTS[input.subagent_type],
    )


async def run_subagent(loop: Any, input: TaskInput, abort: Any = None) -> AgentRun:
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


# -- background agents -----------------------------------------------------------------------


@dataclass
class BackgroundAgent:
    id: str
    agent_type: str
    description: str
    loop: Any
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

    def start(self, loop: Any, input: TaskInput) -> BackgroundAgent:
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


class AgentRegistry:
    """Every session's background agents, found from any context of the session."""

    def __init__(self) -> None:
        self._sessions: dict[AppStateStore, AgentTasks] = {}

    def session_for(self, context: ToolContext) -> AgentTasks:
        return self.for_store(context.app_state)

    def for_store(self, store: AppStateStore) -> AgentTasks:
        tasks = self._sessions.get(store)
        if tasks is None:
            tasks = self._sessions[store] = AgentTasks()
        return tasks

    def get(self, context: ToolContext, agent_id: str) -> BackgroundAgent | None:
        return self.session_for(context).get(agent_id)

    async def close(self, store: AppStateStore) -> None:
        tasks = self._sessions.pop(store, None)
        if tasks is not None:
            await tasks.close()

    async def close_all(self) -> None:
        for store in list(self._sessions):
            await self.close(store)


AGENTS = AgentRegistry()


async def agent_output(
    context: ToolContext, task_id: str, *, block: bool, timeout_s: float
) -> ToolResult:
    """TaskOutput's answer for a background agent's id."""
    tasks = AGENTS.session_for(context)
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
