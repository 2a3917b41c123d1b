"""TaskOutput: the status and output of a background shell, waiting for it if asked to.

It returns the output from the shell's start, cut to its last ~28 KB (the spool file is read
from its end, never whole), with the spool's path when more was printed than is shown: the
model can Read the rest. Waiting is bounded by `timeout` and is cancelled on interrupt; a
shell still running when the wait ends is reported as running, not as an error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from ..results import format_size
from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
)
from .shells.session import ShellStatus, shell_session
from .shells.spools import decode_output, file_size, read_tail
from .task import AGENT_ID_PREFIX, SUBAGENTS

DEFAULT_WAIT_MS = 30_000
MAX_WAIT_MS = 600_000
TAIL_BYTES = 28_000
"""Leaves room under the 30,000-character result limit for the status lines."""

PROMPT = """\
Get the status and output of a background shell started with Bash `run_in_background`, or
the result of a background sub-agent started with Task `run_in_background`.
- `task_id` is the id Bash or Task returned (such as bash_1 or agent_1).
- With `block` true (the default) it waits until the shell finishes or `timeout` \
milliseconds pass (30000 by default, 600000 at most); with `block` false it answers at once.
- Returns the status (running, completed with its exit code, or killed) and the output \
since the shell started; when that is long, only its end, with the path of the full output \
for Read."""


class TaskOutputInput(ToolInput):
    task_id: str = Field(
        description="The id of the background shell or agent, as Bash or Task returned it"
    )
    block: bool = Field(default=True, description="Wait for the shell to finish")
    timeout: int = Field(
        default=DEFAULT_WAIT_MS,
        ge=0,
        le=MAX_WAIT_MS,
        description="How long to wait, in milliseconds, when block is true",
    )


@dataclass(frozen=True, slots=True)
class TaskOutputData:
    task_id: str
    command: str
    status: ShellStatus
    exit_code: int | None
    output: str
    output_bytes: int
    output_path: Path
    truncated: bool
    waited_ms: int = 0
    """How long it waited and gave up with the shell still running (0 when it did not)."""


class TaskOutput(Tool[TaskOutputInput, TaskOutputData]):
    name = "TaskOutput"
    headline_field = "task_id"
    search_hint = "read background shell or agent output and status"
    input_model = TaskOutputInput
    description = "Read a background shell's or sub-agent's output and status"
    interrupt_behavior = "cancel"
    max_result_size_chars = 30_000

    instructions = PROMPT

    def is_read_only(self, input: TaskOutputInput) -> bool:
        return True

    def is_concurrency_safe(self, input: TaskOutputInput) -> bool:
        return True

    async def call(
        self, input: TaskOutputInput, context: ToolContext, progress: Progress
    ) -> ToolResult[TaskOutputData]:
        if input.task_id.startswith(AGENT_ID_PREFIX):  # a background sub-agent (Task)
            subagents = context.options.services.get(SUBAGENTS)
            if subagents is None:
                return ToolResult(
                    f"No background agent has the id {input.task_id!r}: this session runs "
                    "no sub-agents.",
                    is_error=True,
                )
            answer = await subagents.output(
                input.task_id, block=input.block, timeout_s=input.timeout / 1000
            )
            return ToolResult(answer.data, is_error=answer.is_error)
        session = shell_session(context)
        shell = session.shells.get(input.task_id)
        if shell is None:
            return ToolResult(
                f"No background shell has the id {input.task_id!r}. {session.describe_shells()}",
                is_error=True,
            )
        waited = 0
        if input.block and shell.status == "running":
            finished = await shell.wait(input.timeout / 1000)
            waited = 0 if finished else input.timeout
        status, exit_code = shell.status, shell.exit_code
        size = file_size(shell.spool)
        data, cut = read_tail(shell.spool, TAIL_BYTES) if size else (b"", False)
        return ToolResult(
            TaskOutputData(
                shell.id,
                shell.command,
                status,
                exit_code,
                decode_output(data, cut_in_front=cut).rstrip("\n"),
                size,
                shell.spool,
                cut,
                waited,
            )
        )

    def render(self, output: TaskOutputData) -> ToolContent:
        return render(output)


def render(data: TaskOutputData) -> str:
    lines = [
        f"<task_id>{data.task_id}</task_id>",
        f"<command>{data.command}</command>",
        f"<status>{data.status}</status>",
    ]
    if data.exit_code is not None:
        lines.append(f"<exit_code>{data.exit_code}</exit_code>")
    if data.waited_ms:
        lines.append(f"Still running after waiting {data.waited_ms / 1000:g} s.")
    if data.truncated:
        lines.append(
            f"Only the end of the output is shown ({format_size(data.output_bytes)} in all); "
            f"the full output is in {data.output_path}"
        )
    lines.append(f"<output>\n{data.output}\n</output>" if data.output else "<output></output>")
    return "\n".join(lines)
