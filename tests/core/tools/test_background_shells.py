"""Background shells: Bash `run_in_background` starts one, TaskOutput reads it, KillShell ends
it, and closing the registry leaves no process behind."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import close_sessions, make_context

from core.access.context import ToolPermissionContext
from core.tool import Tool, ToolContext, ToolResult
from core.tools.bash import Bash
from core.tools.kill_shell import KillShell
from core.tools.shells.session import ShellSession
from core.tools.task_output import TaskOutput, TaskOutputData

BASH, TASK_OUTPUT, KILL_SHELL = Bash(), TaskOutput(), KillShell()
BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


@pytest.fixture(autouse=True)
async def quick_shells(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(ShellSession, "kill_grace_s", 0.5)
    yield
    await close_sessions()


@pytest.fixture
def context(tmp_path: Path) -> ToolContext:
    context = make_context([BASH, TASK_OUTPUT, KILL_SHELL], tmp_path, permission_context=BYPASS)
    return context.replace(options=replace(context.options, session_dir=tmp_path / "session"))


async def call(tool: Tool[Any, Any], context: ToolContext, **input: Any) -> tuple[ToolResult, str]:
    result = await tool.call(tool.parse_input(input), context, lambda _event: None)
    content = tool.result_block(result, "toolu_x")["content"]
    assert isinstance(content, str)
    return result, content


def gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat[stat.rfind(")") + 2] in "ZX"


def lines_in(path: Path) -> list[str]:
    try:
        return path.read_text().split()
    except FileNotFoundError:
        return []


async def wait_for(path: Path, lines: int = 1) -> str:
    """The file's first line once it has `lines` lines."""
    # A bound only so that a broken test fails rather than hangs; not a speed check.
    for _ in range(2000):
        found = lines_in(path)
        if len(found) >= lines:
            return found[0]
        await asyncio.sleep(0.01)
    raise AssertionError(f"{path} never appeared")


async def test_a_background_command_returns_an_id_and_its_output_can_be_awaited(
    context: ToolContext,
):
    result, text = await call(
        BASH, context, command="echo started; sleep 0.2; echo done; exit 3", run_in_background=True
    )
    assert not result.is_error
    assert text.startswith("Started in the background with id bash_1.")
    result, text = await call(TASK_OUTPUT, context, task_id="bash_1")
    assert not result.is_error
    assert text == (
        "<task_id>bash_1</task_id>\n<command>echo started; sleep 0.2; echo done; exit 3</command>\n"
        "<status>completed</status>\n<exit_code>3</exit_code>\n<output>\nstarted\ndone\n</output>"
    )


async def test_ids_count_up_and_a_background_cd_does_not_move_the_session(context: ToolContext):
    (context.cwd / "sub").mkdir()
    await call(BASH, context, command="cd sub; pwd", run_in_background=True)
    _, text = await call(BASH, context, command="cd sub; pwd", run_in_background=True)
    assert "bash_2" in text
    _, text = await call(TASK_OUTPUT, context, task_id="bash_2")
    assert f"<output>\n{context.cwd / 'sub'}\n</output>" in text
    _, text = await call(BASH, context, command="pwd")
    assert text == str(context.cwd)


async def test_a_running_shell_can_be_checked_without_waiting_and_then_killed(
    context: ToolContext,
):
    pidfile = context.cwd / "pid"
    await call(
        BASH,
        context,
        command=f"echo ready; sleep 100 & echo $! > {pidfile}; wait",
        run_in_background=True,
    )
    pid = int(await wait_for(pidfile))
    result, text = await call(TASK_OUTPUT, context, task_id="bash_1", block=False)
    assert not result.is_error
    assert "<status>running</status>" in text and "<exit_code>" not in text
    assert "<output>\nready\n</output>" in text

    result, text = await call(KILL_SHELL, context, shell_id="bash_1")
    assert not result.is_error
    assert text.startswith("Killed background shell bash_1 (echo ready;")
    assert gone(pid)
    _, text = await call(TASK_OUTPUT, context, task_id="bash_1")
    assert "<status>killed</status>" in text
    result, text = await call(KILL_SHELL, context, shell_id="bash_1")
    assert not result.is_error and text == "Background shell bash_1 had already been killed."


async def test_waiting_gives_up_after_the_timeout_and_reports_running(context: ToolContext):
    await call(BASH, context, command="sleep 100", run_in_background=True)
    result, text = await call(TASK_OUTPUT, context, task_id="bash_1", timeout=200)
    assert not result.is_error
    assert "<status>running</status>\nStill running after waiting 0.2 s." in text


async def test_killing_a_finished_shell_says_there_was_nothing_to_kill(context: ToolContext):
    await call(BASH, context, command="true", run_in_background=True)
    await call(TASK_OUTPUT, context, task_id="bash_1")
    result, text = await call(KILL_SHELL, context, shell_id="bash_1")
    assert not result.is_error
    assert text == (
        "Background shell bash_1 had already finished with exit code 0; there was nothing to kill."
    )


async def test_unknown_ids_are_errors_that_list_the_known_shells(context: ToolContext):
    result, text = await call(TASK_OUTPUT, context, task_id="bash_9")
    assert result.is_error
    assert text == (
        "<tool_use_error>No background shell has the id 'bash_9'. There are no background "
        "shells in this session.</tool_use_error>"
    )
    await call(BASH, context, command="sleep 100", run_in_background=True)
    result, text = await call(KILL_SHELL, context, shell_id="nope")
    assert result.is_error
    assert text == (
        "<tool_use_error>No background shell has the id 'nope'. Known shells: bash_1 "
        "(running).</tool_use_error>"
    )


async def test_long_output_shows_its_end_and_where_the_rest_is(context: ToolContext):
    await call(BASH, context, command="seq 1 100000", run_in_background=True)
    result, text = await call(TASK_OUTPUT, context, task_id="bash_1")
    assert isinstance(result.data, TaskOutputData) and result.data.truncated
    spool = context.cwd / "session" / "shells" / "bash_1.txt"
    assert f"(575.1 KB in all); the full output is in {spool}" in text
    assert text.endswith("\n99999\n100000\n</output>")
    assert len(text) < 30_000


async def test_closing_the_session_stops_every_background_shell(context: ToolContext):
    pidfile = context.cwd / "pid"
    await call(
        BASH, context, command=f"sleep 100 & echo $! > {pidfile}; wait", run_in_background=True
    )
    pid = int(await wait_for(pidfile))
    await close_sessions()
    assert gone(pid)
    result, _ = await call(TASK_OUTPUT, context, task_id="bash_1")
    assert result.is_error  # a new session state: the closed one's shells are gone with it


def test_the_tools_answers_to_the_engine():
    output = TASK_OUTPUT.parse_input({"task_id": "bash_1"})
    assert output.block and output.timeout == 30_000
    assert TASK_OUTPUT.is_read_only(output) and TASK_OUTPUT.is_concurrency_safe(output)
    kill = KILL_SHELL.parse_input({"shell_id": "bash_1"})
    assert KILL_SHELL.is_concurrency_safe(kill) and not KILL_SHELL.is_read_only(kill)
    with pytest.raises(ValueError):
        TASK_OUTPUT.parse_input({"task_id": "bash_1", "timeout": 600_001})


async def test_killing_a_finished_shell_stops_what_it_left_running(context: ToolContext):
    pidfile = context.cwd / "pid"
    await call(
        BASH, context, command=f"sleep 100 & echo $! > {pidfile}; echo done", run_in_background=True
    )
    _, text = await call(TASK_OUTPUT, context, task_id="bash_1")
    assert "<status>completed</status>" in text
    pid = int(await wait_for(pidfile))
    assert not gone(pid)
    result, text = await call(KILL_SHELL, context, shell_id="bash_1")
    assert not result.is_error
    assert text == (
        "Background shell bash_1 had already finished with exit code 0; "
        "the processes it left running were stopped."
    )
    assert gone(pid)


async def test_two_sessions_in_one_process_never_see_each_others_shells(
    context: ToolContext, tmp_path: Path
):
    await call(BASH, context, command="sleep 30", run_in_background=True)
    other = make_context([BASH, TASK_OUTPUT, KILL_SHELL], tmp_path, permission_context=BYPASS)
    result, text = await call(TASK_OUTPUT, other, task_id="bash_1", block=False)
    assert result.is_error and "There are no background shells" in text
    killed, _ = await call(KILL_SHELL, other, shell_id="bash_1")
    assert killed.is_error
    mine, text = await call(TASK_OUTPUT, context, task_id="bash_1", block=False)
    assert not mine.is_error and "<status>running</status>" in text
