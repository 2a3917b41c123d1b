"""A custom command's `@path` includes read and its !`cmd` runs run, as its turn starts.

Both put text in front of the model without the model asking, so neither may go round what
the person decided:

- An include is read as a Read call would be judged: a file a Read deny *or ask* rule covers
  is left out (nobody is asked here, so an ask is a no), so is one outside the project and
  its added working directories once links are followed (`@~/.ssh/id_rsa`, `@$1` given
  `../../etc/passwd`, a link to a key), and anything that is not a regular text file of a
  sane size (a FIFO would hang the turn). The file's text goes at the end of the prompt.
- A run is a Bash call through the whole chain (the executor: hooks, rules, mode, sandbox,
  the person's dialog, the audit log), shown in the queue like the model's calls; esc
  cancels it as it would the model's, and then nothing is sent. The
  command's `allowed-tools` already narrows its turn (commands.py), so a run they do not
  cover is refused; and, as in the seeds' system, they are the command's grant for its own
  runs: allow rules seen by those calls alone (`_GrantingStore`), never by anything else.
  Deny and ask rules still win over them, as over any allow rule. That grant is only for a
  command the person can vouch for: their own, or a project's in a directory they trusted.
  A project command in an untrusted directory runs nothing at all, granted or not.

Whatever was left out or not run is said to the person (`CommandNotice`) and marked in the
prompt, so the model does not take a missing output for an empty one. Nothing here is read
for parts again (command_parts.py says why).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..abort import AbortSignal
from ..access.call_outcome import call_outcome, result_text
from ..access.context import PermissionRule
from ..app_state import AppState, AppStateStore, Updater
from ..executor.calls import ResultUpdate, ToolCall
from ..executor.streaming import StreamingToolExecutor
from ..permissions.call import prepare
from ..permissions.decide import find_rule
from ..tools.read import Read, ReadInput
from .command_parts import Include, Run, Text
from .events import CommandNotice

if TYPE_CHECKING:
    from ..executor.services import ExecutorServices
    from ..tool import ToolContext
    from .commands import CommandPrompt

MAX_INCLUDE_BYTES = 256 * 1024
"""A larger file is not something a command should paste into every prompt: left out."""


@dataclass(frozen=True, slots=True)
class CommandSession:
    """What preparing a command needs of the live session."""

    cwd: Path
    services: ExecutorServices
    context: Callable[[], ToolContext]
    """The loop's context now (its tools, the app state)."""
    directory_trusted: bool
    abort: AbortSignal
    """Esc while the lines run: the running one is cancelled and nothing is sent."""


async def prepared_prompt(prompt: CommandPrompt, session: CommandSession) -> str | None:
    """The text to send: includes read, runs run (or each marked as left out); None when
    the person interrupted (nothing is sent)."""
    command = prompt.command
    if command is None or not any(not isinstance(p, Text) for p in prompt.parts):
        return str(prompt)
    name = f"/{command.name}"
    notes: list[str] = []
    out: list[str] = []
    files: list[str] = []
    grant = _grant(prompt) if command.scope != "project" or session.directory_trusted else None
    for part in prompt.parts:
        match part:
            case Text():
                out.append(part.text)
            case Include():
                out.append(f"@{part.path}")
                text, why = _include(part.path, session)
                if why is not None:
                    notes.append(f"@{part.path} was not included: {why}")
                elif text not in files:
                    files.append(text)
            case Run():
                if part.refused is not None:
                    notes.append(f"!`{part.command}` was not run: {part.refused}")
                    out.append(f"[!`{part.command}` was not run: {part.refused}]")
                    continue
                if grant is None:
                    why = "the project is not trusted, so its commands run nothing"
                    notes.append(f"!`{part.command}` was not run: {why}")
                    out.append(f"[!`{part.command}` was not run: {why}]")
                    continue
                output, ran = await _run(part.command, name, session, grant)
                if session.abort.aborted:
                    return None
                if not ran:
                    notes.append(f"!`{part.command}` was not run: {output}")
                    out.append(f"[!`{part.command}` was not run: {output}]")
                else:
                    out.append(output)
    for note in notes:
        session.services.emit(CommandNotice(text=f"{name}: {note}"))
    return "".join(out) + "".join(f"\n\n{text}" for text in files)


def _grant(prompt: CommandPrompt) -> tuple[PermissionRule, ...]:
    """The command's allowed-tools as allow rules for its runs (none listed: none)."""
    return prompt.narrowing.rules if prompt.narrowing is not None else ()


class _GrantingStore(AppStateStore):
    """The session's state as one run sees it: the command's grant added to the rules.

    Only reads through this view see the grant, so nothing else (a background sub-agent, the
    next turn) ever does; every change (a "don't ask again", a mode switch) goes to the
    session's own store, as it would from any call."""

    __slots__ = ("_grant", "_real")

    def __init__(self, real: AppStateStore, grant: tuple[PermissionRule, ...]) -> None:
        super().__init__()
        self._real = real
        self._grant = grant

    def get(self) -> AppState:
        state = self._real.get()
        permissions = state.permission_context
        granted = replace(permissions, rules=permissions.rules + self._grant)
        return state.with_permission_context(granted)

    def set(self, updater: Updater) -> AppState:
        self._real.set(updater)
        return self.get()


async def _run(
    command: str, name: str, session: CommandSession, grant: tuple[PermissionRule, ...]
) -> tuple[str, bool]:
    """(the output, True) when the command ran; (why not, False) when it did not."""
    context = session.context()
    context = context.replace(app_state=_GrantingStore(context.app_state, grant))
    call = ToolCall(
        id=f"toolu_command_{uuid.uuid4().hex[:16]}",
        name="Bash",
        input={"command": command, "description": f"{name}: a line of the command's file"},
    )
    block = None
    executor = StreamingToolExecutor(session.services, context, abort=session.abort)
    executor.add_tool(call)
    async for update in executor.get_remaining_results():
        if isinstance(update, ResultUpdate):
            block = update.outcome.block
    outcome = call_outcome(block, "Bash")
    text = result_text(block) if block is not None else "it got no result"
    if outcome == "denied":
        return text, False
    return text, True  # a command that failed ran: its output says how


def _include(raw: str, session: CommandSession) -> tuple[str, str | None]:
    """(the file's text for the prompt, None) or ("", why it is left out)."""
    cwd = session.cwd.resolve()
    path = Path(raw).expanduser()
    path = path if path.is_absolute() else cwd / path
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as error:
        return "", f"it cannot be found ({error})"
    permissions = session.context().permission_context
    inside = (cwd, *(_resolved(d) for d in permissions.additional_working_directories))
    if not any(resolved.is_relative_to(d) for d in inside):
        return "", "it is outside the project"
    read = Read()
    for candidate in dict.fromkeys((path, resolved)):
        call = prepare(read, ReadInput(file_path=str(candidate)), cwd, permissions)
        for behavior in ("deny", "ask"):
            if found := find_rule(call, behavior):
                return "", f"{found[0].describe()} covers it"
    if not resolved.exists():
        return "", "there is no such file"
    if not resolved.is_file():
        return "", "it is not a regular file"
    try:
        if resolved.stat().st_size > MAX_INCLUDE_BYTES:
            return "", f"it is larger than {MAX_INCLUDE_BYTES // 1024} KB"
        text = resolved.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return "", f"it cannot be read as text ({error})"
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return f"Contents of {raw}:\n{fence}\n{text.rstrip()}\n{fence}", None


def _longest_backtick_run(text: str) -> int:
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path
