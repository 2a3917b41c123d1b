"""EnterPlanMode, and where the plan goes: plan first, change things only once the user agrees.

Plan mode itself is a permission mode (core/access/modes.py, core/permissions/decide.py): in
it the decision chain refuses every call that is not read-only, except writes to the one plan
file. Two tools move the session in and out of it, a module each:

- EnterPlanMode (here) switches the app state's permission context into plan mode
  (remembering the mode it came from) and names the plan file, `<session_dir>/plan.md`
  (`plan_file_path`). It never asks: it only takes permissions away.
- ExitPlanMode (exit_plan_mode.py) reads the plan from that file and puts it before the user
  for approval; only their approval leaves plan mode.

Both tools say they are read-only. That is not a shortcut: they never touch the project,
and ExitPlanMode must be callable *in* plan mode, where the chain refuses anything that is not
read-only. The one real grant, leaving plan mode, happens inside the call and only on the
user's own approval through the port.
"""

from __future__ import annotations

import asyncio
import tempfile
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from ..access.context import PermissionMode
from ..access.modes import MODE_LABELS, switch_mode
from ..app_state import AppState
from ..events import ModeChanged
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
)

PLAN_FILE_NAME = "plan.md"


def plan_file_path(context: ToolContext) -> Path:
    """The plan file in force, else `<session_dir>/plan.md`, else one in a temp directory."""
    named = context.permission_context.plan_file
    if named is not None:
        return named
    session_dir = context.options.session_dir
    base = session_dir if session_dir is not None else _process_plan_dir()
    return base / PLAN_FILE_NAME


@cache
def _process_plan_dir() -> Path:
    # No session directory (a test, an embedding): one private directory per process, so two
    # concurrent proctor processes never share a plan.
    return Path(tempfile.mkdtemp(prefix="proctor-plan-"))


# -- EnterPlanMode -----------------------------------------------------------------------------


class EnterPlanModeInput(ToolInput):
    pass


ENTER_PROMPT = """\
Switch to plan mode before starting work that is not trivial, so the user can agree to your \
approach before anything changes.

Use it when the task:
- adds a feature or makes a change that touches several files;
- can be done in more than one reasonable way, or involves a design choice;
- is unclear enough that exploring first would change what you do.
Do not use it for small, obvious fixes, or for questions and research that change nothing.

In plan mode you may only read and explore (Read, Glob, Grep, read-only commands). Every \
change is refused, except writing the plan file whose path this tool returns. Write your \
plan there, then call ExitPlanMode to ask the user to approve it."""


@dataclass(frozen=True, slots=True)
class EnteredPlanMode:
    plan_file: Path
    previous: PermissionMode
    already: bool
    plan_exists: bool


class EnterPlanMode(Tool[EnterPlanModeInput, EnteredPlanMode]):
    name = "EnterPlanMode"
    subagents = "none"
    search_hint = "plan mode design approach before making changes"
    input_model = EnterPlanModeInput
    description = "Switches to plan mode: explore read-only, then present a plan."

    instructions = ENTER_PROMPT

    def is_read_only(self, input: EnterPlanModeInput) -> bool:
        return True  # it only takes permissions away; the project is untouched

    async def call(
        self, input: EnterPlanModeInput, context: ToolContext, progress: Progress
    ) -> ToolResult[EnteredPlanMode]:
        if context.agent_id is not None:
            return ToolResult(
                "EnterPlanMode cannot be used by a sub-agent: plan mode belongs to the user's "
                "session. Do the task you were given within the current permissions.",
                is_error=True,
            )
        path = plan_file_path(context)
        before = context.permission_context
        already = before.mode == "plan"
        context.set_app_state(lambda state: _into_plan(state, path))
        if not already:
            context.emit(
                ModeChanged(
                    mode="plan", previous=before.mode, why="the agent entered plan mode", by="agent"
                ),
            )
        exists = await asyncio.to_thread(path.exists)
        return ToolResult(EnteredPlanMode(path, before.mode, already, exists))

    def render(self, output: EnteredPlanMode) -> ToolContent:
        return _render_entered(output)


def _into_plan(state: AppState, path: Path) -> AppState:
    # Worked out from the state at the moment of the update, not from a copy read earlier.
    permissions = state.permission_context
    moved = switch_mode(permissions, "plan")  # never raises for plan
    return state.with_permission_context(replace(moved, plan_file=path))


def _render_entered(data: EnteredPlanMode) -> str:
    if data.already:
        head = "You are already in plan mode."
    else:
        head = f"Plan mode is on (you were in {MODE_LABELS[data.previous]} mode)."
    existing = (
        " A plan file from earlier is already there: read it before changing it."
        if data.plan_exists
        else ""
    )
    return (
        f"{head} Explore the code and design your approach; only reading and exploring is "
        "allowed, and any other change will be refused. Do not edit project files or run "
        "commands that change anything.\n\n"
        f"Write your plan to {data.plan_file} (the one file you may write now).{existing} "
        "Say what you will change, in which files, in what order, and how you will check it. "
        "When the plan is ready, call ExitPlanMode so the user can review and approve it. If "
        "you need to clear something up first, ask the user (AskUserQuestion)."
    )
