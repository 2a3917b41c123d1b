"""ExitPlanMode: the plan put before the user; plan mode is left only on their approval.

The tool reads the plan file EnterPlanMode named (plan_mode.py) and puts the plan before the
user through the engine's `UserPort`. The user either approves it, picking the mode to continue
in, or keeps the agent planning with feedback. With nobody to review (headless), plan mode
stays on. Like EnterPlanMode it says it is read-only, so that it can be called in plan mode
(plan_mode.py says why that is safe).

`allowedPrompts` ask for kinds of shell commands the plan will need. A prompt that is a
literal command prefix ("npm test") becomes the session rule `Bash(npm test:*)` on approval;
one that describes an action ("run the tests") cannot be matched against commands, so it is
kept out and the model is told its commands will ask as usual. Failing closed, a prefix that
would amount to running anything (a shell, `sudo`, a bare interpreter) is kept out too. The
user sees the prompts in the review before approving.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from ..access.call_outcome import PLAN_KEPT_OPENING
from ..access.context import PermissionMode, PermissionRule, ToolPermissionContext
from ..access.modes import MODE_LABELS, ModeUnavailable, switch_mode
from ..access.rules import RuleSyntaxError, parse_rule
from ..app_state import AppState
from ..bash.runners import runs_code
from ..bash.wrappers import WRAPPERS
from ..events import ModeChanged
from ..ports import AllowedPrompt, KeepPlanning, PlanApproved, PlanRequest
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
)
from .plan_mode import plan_file_path

MAX_PLAN_BYTES = 1_000_000
"""A plan is a page or two; a file this large is not one the user can review."""


class AllowedPromptInput(ToolInput):
    tool: Literal["Bash"] = Field(description="The tool the permission is for (only Bash).")
    prompt: str = Field(
        min_length=1,
        description='The command prefix the plan needs to run, such as "npm test" or '
        '"cargo build".',
    )


class ExitPlanModeInput(ToolInput):
    # Unknown fields stay an error (extra="forbid"): the seed's remote-session fields have no
    # meaning here, and a silently ignored parameter is worse than a clear error.
    # populate_by_name: the engine re-validates inputs it dumped by field name.
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    allowed_prompts: list[AllowedPromptInput] = Field(
        default_factory=list,
        alias="allowedPrompts",
        max_length=20,
        description="Shell commands the plan needs to run, granted for the session if the user "
        'approves. Give literal command prefixes ("npm test"), not descriptions.',
    )


EXIT_PROMPT = """\
Ask the user to approve your plan and leave plan mode. Call it once the plan is written to \
the plan file that EnterPlanMode named; the tool reads the plan from that file (do not pass \
the plan as a parameter).

The user either approves, choosing the permission mode to continue in, or asks you to keep \
planning and says what to change. Only call this when the plan is for work that changes \
code or files; for research or questions, just answer.

allowedPrompts: list the shell commands your plan will need, as literal command prefixes \
(tool "Bash", prompt "npm test"); once the plan is approved, commands starting with them \
run without asking for the rest of the session. Descriptions ("run the tests") cannot be \
granted; their commands will ask as usual. Do not ask the user "is this plan OK?" in your \
reply: this tool is how you ask."""


@dataclass(frozen=True, slots=True)
class PlanOutcome:
    approved: bool
    plan: str
    plan_file: Path
    mode: PermissionMode = "plan"
    feedback: str = ""
    rules: tuple[str, ...] = ()
    """Session allow rules added from allowedPrompts."""
    not_granted: tuple[str, ...] = ()
    """allowedPrompts that could not become rules."""
    note: str = ""


class ExitPlanMode(Tool[ExitPlanModeInput, PlanOutcome]):
    name = "ExitPlanMode"
    subagents = "none"

    def summarize_input(self, input: ExitPlanModeInput) -> str:
        """What the plan asks to run, not the raw JSON of it."""
        wanted = ", ".join(p.prompt for p in input.allowed_prompts)
        return f"the plan, asking to run: {wanted}" if wanted else "the plan"

    search_hint = "present plan for user approval leave plan mode"
    input_model = ExitPlanModeInput
    description = "Presents the plan for the user's approval and leaves plan mode."
    # Esc during the review ends the wait; the mode changes only after the answer, with no
    # await in between, so a cancelled review never leaves plan mode half-way.
    interrupt_behavior = "cancel"

    instructions = EXIT_PROMPT

    def is_read_only(self, input: ExitPlanModeInput) -> bool:
        # Must be callable in plan mode, where the chain refuses anything else; the real
        # grant (leaving plan mode) waits for the user's approval inside `call`.
        return True

    async def call(
        self, input: ExitPlanModeInput, context: ToolContext, progress: Progress
    ) -> ToolResult[PlanOutcome]:
        if context.permission_context.mode != "plan":
            return ToolResult(
                "You are not in plan mode, so there is no plan to approve. Carry on with the "
                "task (call EnterPlanMode first if you want the user to approve a plan).",
                is_error=True,
            )
        path = plan_file_path(context)
        plan = await asyncio.to_thread(_read_plan, path)
        if not isinstance(plan, _Plan):
            return ToolResult(plan, is_error=True)
        port = context.options.user_port
        if port is None or context.permission_context.avoid_prompts:
            return ToolResult(
                "Nobody can review the plan in this session, so it cannot be approved and plan "
                "mode stays on: nothing may be changed. Present the plan in your reply and "
                "stop there.",
                is_error=True,
            )
        prompts = tuple(AllowedPrompt(p.tool, p.prompt) for p in input.allowed_prompts)
        request = PlanRequest(
            tool_use_id=context.tool_use_id, plan=plan.text, plan_path=path, allowed_prompts=prompts
        )
        try:
            answer = await port.review_plan(request)
        except Exception as error:
            return ToolResult(
                f"The plan could not be shown to the user ({type(error).__name__}: {error}). "
                "You are still in plan mode; try ExitPlanMode again, or present the plan in "
                "your reply.",
                is_error=True,
            )
        if isinstance(answer, KeepPlanning):
            return ToolResult(PlanOutcome(False, plan.text, path, feedback=answer.feedback))
        if isinstance(answer, PlanApproved):
            return ToolResult(_approve(context, plan.text, path, answer.mode, prompts))
        # Closed set of answers: anything else is not an approval.
        return ToolResult(
            "The plan review gave no recognisable answer, so the plan was not approved. You "
            "are still in plan mode.",
            is_error=True,
        )

    def render(self, output: PlanOutcome) -> ToolContent:
        return _render_outcome(output)


@dataclass(frozen=True, slots=True)
class _Plan:
    text: str


def _read_plan(path: Path) -> _Plan | str:
    """The plan, or what the model must do about it (blocking)."""
    write_it = f"Write your plan to {path} first (with Write), then call ExitPlanMode again."
    try:
        size = os.stat(path).st_size
        if size > MAX_PLAN_BYTES:
            return (
                f"The plan file {path} is {size:,} bytes, too long for the user to review. "
                "Shorten it to the decisions and steps that matter, then call ExitPlanMode again."
            )
        text = path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return f"There is no plan yet. {write_it}"
    except (OSError, ValueError) as error:
        return f"The plan file {path} could not be read ({error}). {write_it}"
    if not text.strip():
        return f"The plan file {path} is empty. {write_it}"
    return _Plan(text)


def _approve(
    context: ToolContext,
    plan: str,
    path: Path,
    chosen: PermissionMode,
    prompts: tuple[AllowedPrompt, ...],
) -> PlanOutcome:
    before = context.permission_context
    mode, note = _mode_after_plan(before, chosen)
    rules: list[PermissionRule] = []
    not_granted: list[str] = []
    for wanted in prompts:
        rule = prompt_rule(wanted, context.cwd)
        if rule is None:
            not_granted.append(wanted.prompt)
        elif str(rule) not in {str(r) for r in rules}:
            rules.append(rule)

    def leave_plan(state: AppState) -> AppState:
        permissions = state.permission_context
        try:
            moved = switch_mode(permissions, mode)
        except ModeUnavailable:
            moved = switch_mode(permissions, "default")
        held = {str(r) for r in moved.rules_with("allow")}
        return state.with_permission_context(
            moved.with_rules(*(r for r in rules if str(r) not in held))
        )

    context.set_app_state(leave_plan)
    after = context.permission_context
    context.emit(
        ModeChanged(
            mode=after.mode,
            previous=before.mode,
            why="the user approved the plan",
            by="plan approval",
        ),
    )
    return PlanOutcome(
        True,
        plan,
        path,
        mode=after.mode,
        rules=tuple(str(r) for r in rules),
        not_granted=tuple(not_granted),
        note=note,
    )


def _mode_after_plan(
    permissions: ToolPermissionContext, chosen: PermissionMode
) -> tuple[PermissionMode, str]:
    """The mode to continue in, and a note when it is not the one chosen."""
    if chosen == "plan":
        back = permissions.pre_plan_mode or "default"
        back = back if back != "plan" else "default"
        return back, f"Plan mode cannot continue after approval; back to {MODE_LABELS[back]} mode."
    if chosen == "bypassPermissions" and not permissions.bypass_available:
        return "default", (
            "Bypass permissions is not available in this session (it must be enabled when the "
            "session starts), so the session continues in default mode."
        )
    return chosen, ""


# Command prefixes that would allow running anything at all: shells and the like always,
# interpreters and rm when nothing follows them.
_RUNS_ANYTHING = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "eval", "source", ".", "exec"}
    | set(WRAPPERS)
)
_TOO_BROAD_ALONE = frozenset(
    {"python", "python3", "node", "perl", "ruby", "php", "deno", "bun", "lua", "rm", "sudo"}
)
# Programs whose subcommands range from reading to publishing: never granted without one.
_LAUNCHERS = frozenset(
    {"git", "npx", "bunx", "pnpx", "npm", "pnpm", "yarn", "uv", "uvx", "pip", "pipx", "cargo",
     "go", "make", "docker", "podman", "kubectl", "gh", "awk", "gawk", "sed", "find", "dd",
     "xargs", "ssh", "scp", "rsync", "curl", "wget", "tar", "cp", "mv", "chmod", "chown", "ln",
     "java", "dotnet", "gradle", "mvn"}
)  # fmt: skip
_COMMAND_WORD = re.compile(r"[A-Za-z0-9_./@%+=:,-]+")
# Words that make a prompt a sentence about commands rather than a command.
_PROSE_WORDS = (
    "a an the all any and or to of for with in on from into my our your this that these those "
    "some every"
)
_PROSE = frozenset(_PROSE_WORDS.split())


def prompt_rule(wanted: AllowedPrompt, cwd: Path) -> PermissionRule | None:
    """The session allow rule for an allowed prompt, or None when it is not a command prefix.

    A prefix must be plain words (no quotes, operators, globs or variables), start with a
    program that exists (on PATH, or a file such as ./gradlew), read like a command rather
    than prose, and not amount to running anything (`bash`, `sudo`, a bare `python`)."""
    if wanted.tool != "Bash":
        return None
    text = wanted.prompt.strip().strip("`").strip()
    for suffix in (":*", " *"):
        text = text.removesuffix(suffix).rstrip()
    words = text.split()
    if not words or len(words) > 8 or not all(_COMMAND_WORD.fullmatch(w) for w in words):
        return None
    program = words[0]
    if any(w.lower() in _PROSE for w in words) or program.endswith(":"):
        return None
    name = os.path.basename(program)
    if name in _RUNS_ANYTHING or (len(words) == 1 and name in _TOO_BROAD_ALONE):
        return None
    if words[-1].startswith("-") or runs_code(name, tuple(words)):
        return None  # `rm -rf`, `git -c`, `python3 -c`: anything at all may follow
    if len(words) == 1 and name in _LAUNCHERS:
        return None  # `git`, `npx`, `npm`: every subcommand, publishing and pushing included
    if not _program_exists(program, cwd):
        return None
    try:
        return parse_rule(f"Bash({' '.join(words)}:*)", "allow", source="session")
    except RuleSyntaxError:
        return None


def _program_exists(program: str, cwd: Path) -> bool:
    if "/" in program:
        path = Path(program)
        return (path if path.is_absolute() else cwd / path).is_file()
    return shutil.which(program) is not None


def _render_outcome(data: PlanOutcome) -> str:
    if not data.approved:
        feedback = (
            f"Their feedback:\n{data.feedback.strip()}"
            if data.feedback.strip()
            else "They did not say what to change: ask them."
        )
        return (
            f"{PLAN_KEPT_OPENING} and wants you to keep planning. You are "
            f"still in plan mode. {feedback}\n\nRevise the plan in {data.plan_file}, then call "
            "ExitPlanMode again."
        )
    parts = [
        f"The user approved your plan; continue in {MODE_LABELS[data.mode]} mode and carry it "
        "out. Keep the todo list up to date as you go."
    ]
    if data.note:
        parts.append(data.note)
    if data.rules:
        parts.append(
            "For this session, commands matching these rules run without asking: "
            + ", ".join(data.rules)
            + "."
        )
    if data.not_granted:
        listed = ", ".join(repr(p) for p in data.not_granted)
        parts.append(
            f"Not granted (not a literal command prefix, or too broad): {listed}. Commands for "
            "these will ask for approval as usual."
        )
    parts.append(f"The approved plan (saved in {data.plan_file}):\n\n{data.plan}")
    return "\n\n".join(parts)
