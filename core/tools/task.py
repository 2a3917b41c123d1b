"""Task: run a sub-agent, with its own conversation and a restricted tool set.

This module is the tool the model calls: its input, what a run returns, and the interface
of the session's sub-agent runner (`SubAgents`). How a sub-agent is assembled and run (its
loop, its filtered tool pool, its tagged events, background agents) is the agent layer's
business: `core/agent/subagents.py`, provided to each session as the service `SUBAGENTS`.

Why the Task call itself is read-only and concurrency-safe (as seed 001 has it): the call
changes nothing by itself; every call the sub-agent makes goes through the permission chain
on its own, with the session's mode and rules (a general-purpose sub-agent started in plan
mode has its edits refused like the parent's would be). So several Tasks in one turn run in
parallel, under the executor's concurrency cap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from pydantic import Field

from ..session_services import ServiceKey
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
)

SubagentType = Literal["general-purpose", "Explore", "Plan"]

DEFAULT_MAX_TURNS = 20
MAX_MAX_TURNS = 100
AGENT_ID_PREFIX = "agent_"
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


# -- the session's runner -------------------------------------------------------------------


class SubAgents(Protocol):
    """Runs the sub-agents of one session (core/agent/subagents.py)."""

    async def run(self, input: TaskInput, context: ToolContext) -> AgentRun:
        """Run a sub-agent for this Task call to its end; cancelling the call interrupts it."""
        ...

    def start(self, input: TaskInput, context: ToolContext) -> BackgroundStarted:
        """Start a sub-agent in the background and say which id TaskOutput reads it by."""
        ...

    async def output(self, task_id: str, *, block: bool, timeout_s: float) -> ToolResult[str]:
        """TaskOutput's answer for a background agent's id."""
        ...


SUBAGENTS: ServiceKey[SubAgents] = ServiceKey("sub-agents", close_stage=0)
"""Where a session keeps its sub-agent runner; without one, Task says it cannot run."""


# -- the tool --------------------------------------------------------------------------------


class Task(Tool[TaskInput, AgentRun | BackgroundStarted]):
    name = "Task"
    headline_field = "description"
    subagents = "none"
    search_hint = "launch sub-agent explore plan parallel tasks"
    input_model = TaskInput
    description = "Launches a sub-agent for a multi-step task"
    interrupt_behavior = "cancel"

    instructions = PROMPT

    def is_read_only(self, input: TaskInput) -> bool:
        return True  # the sub-agent's own calls each pass the permission chain

    def is_concurrency_safe(self, input: TaskInput) -> bool:
        return True

    async def call(
        self, input: TaskInput, context: ToolContext, progress: Progress
    ) -> ToolResult[AgentRun | BackgroundStarted]:
        subagents = context.options.services.get(SUBAGENTS)
        if subagents is None:
            return ToolResult(
                "Task is not available in this session: it has no way to run sub-agents, so "
                "none can be started. Do the work yourself with the other tools.",
                is_error=True,
            )
        if context.agent_id is not None:
            return ToolResult("A sub-agent cannot start sub-agents of its own.", is_error=True)
        if input.run_in_background:
            return ToolResult(subagents.start(input, context))
        run = await subagents.run(input, context)
        return ToolResult(run, is_error=run.is_error)

    def render(self, output: AgentRun | BackgroundStarted) -> ToolContent:
        return output.render()
