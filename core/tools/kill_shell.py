"""KillShell: stop a background shell and everything it started.

The shell's whole session gets SIGTERM, then SIGKILL after the grace period (shells/). A
shell that has already finished is reported as such, not as a failure: the model wanted it
gone, and it is. Only an id the session does not know is an error.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from ..tool import (
    Progress,
    Tool,
    ToolContent,
    ToolContext,
    ToolInput,
    ToolResult,
)
from .shells.session import ShellStatus, shell_session

PROMPT = """\
Stop a background shell started with Bash `run_in_background`, together with every process \
it started.
- `shell_id` is the id Bash returned (such as bash_1).
- Use it for servers and watchers you no longer need, or a command that is stuck. Its \
output so far stays readable with TaskOutput."""


class KillShellInput(ToolInput):
    shell_id: str = Field(description="The id of the background shell to stop")


@dataclass(frozen=True, slots=True)
class KillShellOutput:
    shell_id: str
    killed: bool
    """False when the shell had already finished by itself."""
    status: ShellStatus
    exit_code: int | None
    command: str


class KillShell(Tool[KillShellInput, KillShellOutput]):
    name = "KillShell"
    headline_field = "shell_id"
    search_hint = "stop kill a background shell"
    input_model = KillShellInput
    description = "Stop a background shell"

    instructions = PROMPT

    def is_concurrency_safe(self, input: KillShellInput) -> bool:
        return True

    async def call(
        self, input: KillShellInput, context: ToolContext, progress: Progress
    ) -> ToolResult[KillShellOutput]:
        session = shell_session(context)
        shell = session.shells.get(input.shell_id)
        if shell is None:
            return ToolResult(
                f"No background shell has the id {input.shell_id!r}. {session.describe_shells()}",
                is_error=True,
            )
        killed = await shell.kill(session.kill_grace_s)
        return ToolResult(
            KillShellOutput(shell.id, killed, shell.status, shell.exit_code, shell.command)
        )

    def render(self, output: KillShellOutput) -> ToolContent:
        return render(output)


def render(data: KillShellOutput) -> str:
    if data.killed and data.status == "completed":
        return (
            f"Background shell {data.shell_id} had already finished with exit code "
            f"{data.exit_code}; the processes it left running were stopped."
        )
    if data.killed:
        return f"Killed background shell {data.shell_id} ({data.command})."
    if data.status == "killed":
        return f"Background shell {data.shell_id} had already been killed."
    return (
        f"Background shell {data.shell_id} had already finished with exit code "
        f"{data.exit_code}; there was nothing to kill."
    )
