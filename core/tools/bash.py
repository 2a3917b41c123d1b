"""Bash: run a shell command in the session's working directory, or start it in the background.

The process work (directory tracking, spooling, process groups, background shells) lives in
shells/; this module is the tool's face: its input, its questions to the engine, and how a
finished command reads to the model.

Output is spooled to a file by the child itself, so a command may print a gigabyte. A small
output comes back inline; a large one is never read into memory: the spool file is moved to
where the engine keeps persisted results (`<session dir>/tool-results/<tool_use_id>.txt`)
and the model gets the same `<persisted-output>` block, with a preview read from the file's
first few KB, that core/results.py would have built. That text is small, so the engine's own
persistence leaves it alone.

A non-zero exit, a timeout and an interrupt are all errors: Bash declares
`cancels_siblings_on_error`, so a failing command stops the other commands of its turn.

Bash is `sandboxable`: the decision chain picks a sandbox policy for each call and the
executor puts it on the context (`context.sandbox`). A read-only or workspace policy runs the
command inside the session's kernel fence (core/sandbox/); if that fence cannot be built,
the command does not run at all. A result the sandbox probably stopped says so, and how to
ask to run outside it (`dangerously_disable_sandbox`, which always asks the user).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from pydantic import Field

from ..access.sandbox_policy import ReadOnly, SandboxKind, SandboxPolicy, Unsandboxed, Workspace
from ..access.targets import CommandTarget, RuleTarget
from ..bash import analyze
from ..permissions.session_sandbox import SANDBOX
from ..results import PREVIEW_BUDGET_BYTES, ResultStore, persisted_output, preview
from ..sandbox.blocked import explain
from ..sandbox.fence import git_runs_no_code
from ..tool import (
    Progress,
    SavedOutput,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
    ValidationResult,
)
from .shells.foreground import Finished
from .shells.process import exit_code_of
from .shells.session import FenceFactory, shell_session
from .shells.spools import decode_output, read_head, remove_quietly

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_RESULT_SIZE_CHARS = 30_000
# Output this many bytes or fewer is read to see whether it fits inline (4 bytes at most per
# character, so nothing that could fit is persisted only because it is multi-byte).
_INLINE_READ_BYTES = 4 * MAX_RESULT_SIZE_CHARS

PROMPT = """\
Run a bash command and return its output (stdout and stderr together) and exit code.

- The working directory carries over from one call to the next: after `cd sub`, later \
commands start in `sub`. Nothing else does: variables, aliases and functions set by one \
command are gone by the next. Prefer absolute paths to moving around with `cd`.
- Each command runs in a fresh non-interactive bash without your profile, with stdin \
closed. Commands that wait for input or open an editor will hang until the timeout; pass \
flags that make them non-interactive.
- `timeout` is in milliseconds: 120000 (2 minutes) unless you give one, 600000 (10 \
minutes) at most. A command that runs longer is stopped, with everything it started.
- Output over 30000 characters is saved to a file; you get its path and the beginning, and \
can read the rest with Read.
- A non-zero exit code is reported as an error and cancels the other Bash calls of the same \
response, so run independent commands as separate parallel calls, and chain dependent ones \
with `&&` in one call.
- For long-running things (servers, watchers, long builds) set `run_in_background`: you get \
a shell id at once; read the output with TaskOutput and stop it with KillShell.
- Quote paths that contain spaces: cd "my dir".
- Do not use Bash to read, search or edit files (cat, head, tail, grep, find, sed, awk, \
echo >): the Read, Grep, Glob, Edit and Write tools do that better.
- `description` is a short, plain statement of what the command does, shown to the user.
- Be careful with anything irreversible: do not force-push, reset --hard, delete branches \
or rewrite history, and do not commit or push, unless the user asked for exactly that.
- Commands that run without the user's approval run in a sandbox: a read-only command may \
not write files, reach the network or read outside the project. If the sandbox stops \
something the task really needs, the result says so; then set \
`dangerously_disable_sandbox` to true and the user is asked to approve running it outside."""


class BashInput(ToolInput):
    command: str = Field(description="The bash command to run")
    timeout: int = Field(
        default=DEFAULT_TIMEOUT_MS,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description="Timeout in milliseconds (at most 600000); 120000 when not given",
    )
    description: str = Field(default="", description="What the command does, in five to ten words")
    run_in_background: bool = Field(
        default=False,
        description="Start the command in the background and return its shell id at once",
    )
    dangerously_disable_sandbox: bool = Field(
        default=False,
        description=(
            "Set to true to dangerously override sandbox mode and run commands without "
            "sandboxing; the user is always asked first"
        ),
    )


@dataclass(frozen=True, slots=True)
class BashOutput:
    """What one Bash call produced."""

    command: str
    exit_code: int | None
    """As a shell reports it (128 + N when killed by signal N); None for a background start."""
    output: str
    """The output inline, or only its preview when `output_path` is set."""
    output_path: Path | None = None
    """Where the full output was saved, when it was too large to return inline."""
    output_bytes: int = 0
    cwd: Path | None = None
    """The directory the command ran in."""
    signal: str | None = None
    timed_out: bool = False
    timeout_ms: int = 0
    interrupted: bool = False
    background_id: str | None = None
    notes: tuple[str, ...] = ()
    sandbox: SandboxKind = "none"
    """The sandbox the command ran in ("none": outside it)."""
    sandbox_note: str | None = None
    """What the sandbox probably stopped, and how to run outside it."""
    sandbox_failure: str | None = None
    """Why the sandbox could not be set up (the command never ran)."""

    @property
    def failed(self) -> bool:
        return (
            self.timed_out or self.interrupted or bool(self.exit_code) or bool(self.sandbox_failure)
        )


class Bash(Tool[BashInput, BashOutput]):
    name = "Bash"
    headline_field = "command"
    subagents = "every"
    search_hint = "run shell commands in a terminal"
    input_model = BashInput
    description = "Run a shell command"
    interrupt_behavior = "cancel"
    cancels_siblings_on_error = True
    sandboxable = True
    max_result_size_chars = MAX_RESULT_SIZE_CHARS

    instructions = PROMPT

    def is_read_only(self, input: BashInput) -> bool:
        try:
            return analyze(input.command).read_only
        except Exception:
            return False

    def is_concurrency_safe(self, input: BashInput) -> bool:
        return self.is_read_only(input)

    def shell_directory(self, context: ToolContext) -> Path | None:
        directory = shell_session(context).cwd
        return directory if directory.is_dir() else None

    def rule_target(self, input: BashInput, cwd: Path) -> RuleTarget | None:
        return CommandTarget(input.command)

    async def validate_input(self, input: BashInput, context: ToolContext) -> ValidationResult:
        if not input.command.strip():
            return ValidationResult.failed("The command is empty; give a command to run.")
        if "\x00" in input.command:
            return ValidationResult.failed("The command contains a NUL character.")
        return ValidationResult.passed()

    async def call(
        self, input: BashInput, context: ToolContext, progress: Progress
    ) -> ToolResult[BashOutput]:
        session = shell_session(context)
        session_dir = context.options.session_dir
        policy = context.sandbox
        fence = _fence_factory(policy, context)
        # No sandbox here, and no person approved it: still switch off what git could run.
        judged = isinstance(policy, Unsandboxed) and policy.judged_read_only
        env_changes = git_runs_no_code(os.environ) if judged else None
        kind: SandboxKind = policy.kind if policy is not None else "none"
        if input.run_in_background:
            shell = await session.start_background(
                input.command,
                input.description,
                fallback_cwd=context.cwd,
                session_dir=session_dir,
                fence=fence,
                env_changes=env_changes,
            )
            data = BashOutput(
                input.command, None, "", cwd=session.cwd, background_id=shell.id, sandbox=kind
            )
            return ToolResult(data)
        finished = await session.run(
            input.command,
            fallback_cwd=context.cwd,
            session_dir=session_dir,
            timeout_s=input.timeout / 1000,
            abort=context.abort,
            progress=progress,
            name=context.tool_use_id,
            fence=fence,
            env_changes=env_changes,
        )
        data = collect_output(
            input.command, input.timeout, finished, context.tool_use_id, session_dir
        )
        data = replace(data, sandbox=kind)
        if finished.sandbox_failure is not None:
            data = replace(data, output="", sandbox_failure=finished.sandbox_failure)
        elif policy is not None:
            data = replace(data, sandbox_note=explain(data.output, policy))
        saved = None
        if data.output_path is not None:
            saved = SavedOutput(data.output_path, data.output_bytes)
        return ToolResult(data, is_error=data.failed, saved=saved)

    def hook_response(self, input: BashInput, data: Any) -> Any:
        """The seeds' system's shape (`stdout`, `stderr`, `interrupted`, `isImage`); proctor
        runs bash with both streams on one pipe, so all output is `stdout`."""
        if not isinstance(data, BashOutput):
            return data
        response: dict[str, Any] = {
            "stdout": data.output,
            "stderr": "",
            "interrupted": data.interrupted or data.timed_out,
            "isImage": False,
            "exitCode": data.exit_code,
            "cwd": str(data.cwd) if data.cwd is not None else None,
            "sandbox": data.sandbox,
        }
        if data.background_id is not None:
            response["backgroundTaskId"] = data.background_id
        if data.output_path is not None:
            response["persistedOutputPath"] = str(data.output_path)
        return response

    def render(self, output: BashOutput) -> ToolContent:
        return render(output)


def _fence_factory(policy: SandboxPolicy | None, context: ToolContext) -> FenceFactory | None:
    """How to fence this call's command; raises when a sandbox was decided but there is none
    to apply (the command must then not run)."""
    if not isinstance(policy, ReadOnly | Workspace):
        return None
    sandbox = context.options.services.get(SANDBOX)
    if sandbox is None:
        raise OSError(
            f"this command was allowed to run {policy.describe()}, but the session has no "
            "sandbox to run it in, so it did not run"
        )
    permissions = context.permission_context
    return lambda spool: sandbox.fence(policy, permissions, spool)


def collect_output(
    command: str,
    timeout_ms: int,
    finished: Finished,
    tool_use_id: str,
    session_dir: Path | None,
) -> BashOutput:
    """The result of a finished command; inline when it fits, otherwise persisted."""
    exit_code, signal_name = (None, None)
    if finished.returncode is not None:
        exit_code, signal_name = exit_code_of(finished.returncode)
    data = BashOutput(
        command,
        exit_code,
        "",
        output_bytes=finished.size_bytes,
        cwd=finished.cwd,
        signal=signal_name,
        timed_out=finished.stopped == "timeout",
        timeout_ms=timeout_ms,
        interrupted=finished.stopped == "aborted",
        notes=finished.notes,
    )
    spool = finished.spool
    if not spool.exists():  # the command removed its own output file
        return replace(data, notes=(*data.notes, "(The output file went missing.)"))
    if finished.size_bytes <= _INLINE_READ_BYTES:
        text = decode_output(read_head(spool, _INLINE_READ_BYTES)).rstrip("\n")
        inline = replace(data, output=text)
        if len(render(inline)) <= MAX_RESULT_SIZE_CHARS:
            remove_quietly(spool)
            return inline
    path = _persist(spool, tool_use_id, session_dir)
    head, _ = preview(decode_output(read_head(path, 2 * PREVIEW_BUDGET_BYTES)))
    return replace(data, output=head, output_path=path)


def _persist(spool: Path, tool_use_id: str, session_dir: Path | None) -> Path:
    """Move the spool to where persisted results go; leave it where it is if that fails."""
    if session_dir is None or not tool_use_id:
        return spool
    try:
        target = ResultStore(session_dir).path_for(tool_use_id)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(spool, target)
    except OSError:
        return spool
    return target


def render(data: BashOutput) -> str:
    """The text the model reads."""
    if data.background_id is not None:
        return (
            f"Started in the background with id {data.background_id}. Read its output with "
            f'TaskOutput (task_id "{data.background_id}"); stop it with KillShell.'
        )
    if data.sandbox_failure is not None:
        return (
            f"The sandbox could not be set up ({data.sandbox_failure}), so the command did not "
            "run. Tell the user; running it outside the sandbox needs "
            '"dangerously_disable_sandbox": true and their approval.'
        )
    parts = list(data.notes)
    if data.output_path is not None:
        parts.append(persisted_output(data.output_bytes, data.output_path, data.output))
    elif data.output:
        parts.append(data.output)
    if data.timed_out:
        parts.append(f"Command timed out after {_duration(data.timeout_ms)} and was stopped.")
    elif data.interrupted:
        parts.append("Command was interrupted and stopped.")
    elif data.exit_code:
        killed = f" (killed by {data.signal})" if data.signal else ""
        parts.append(f"Exit code {data.exit_code}{killed}")
    if data.sandbox_note:
        parts.append(data.sandbox_note)
    return "\n".join(parts)


def _duration(ms: int) -> str:
    seconds = ms / 1000
    return f"{seconds:g} s"
