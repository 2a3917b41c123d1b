"""Bash: output and exit codes, the directory that carries over, timeouts and interrupts that
take the whole process group down, sibling cancellation, and a gigabyte of output that never
reaches memory."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import (
    HANG_BOUND_S,
    LoopClock,
    ScriptedPort,
    close_sessions,
    eventually,
    hold_process_starts,
    make_context,
    make_services,
    outcomes_of,
    text_of,
)
from pydantic import ValidationError

from core.abort import AbortController
from core.access.context import ToolPermissionContext
from core.access.sandbox_policy import ReadOnly
from core.access.targets import CommandTarget
from core.events import EventRecorder, OutputProgress, ResultPersisted
from core.executor import StreamingToolExecutor, ToolCall, run_tool_use
from core.tool import ToolContext, ToolResult
from core.tools.bash import Bash, BashOutput
from core.tools.shells.session import ShellSession

ROOT = Path(__file__).resolve().parents[3]
TOOL = Bash()
BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


@pytest.fixture(autouse=True)
async def quick_shells(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(ShellSession, "kill_grace_s", 0.5)
    monkeypatch.setattr(ShellSession, "poll_interval_s", 0.02)
    yield
    await close_sessions()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "project" / "sub").mkdir(parents=True)
    return tmp_path / "project"


def context_in(project: Path, abort: AbortController | None = None) -> ToolContext:
    context = make_context([TOOL], project, permission_context=BYPASS, abort=abort)
    session_dir = project.parent / "session"
    return context.replace(options=replace(context.options, session_dir=session_dir))


async def run(
    context: ToolContext,
    command: str,
    tool_use_id: str = "toolu_1",
    events: list[Any] | None = None,
    **more: Any,
) -> tuple[ToolResult, str, list[Any]]:
    events = [] if events is None else events
    parsed = TOOL.parse_input({"command": command, **more})
    result = await TOOL.call(parsed, context.replace(tool_use_id=tool_use_id), events.append)
    content = TOOL.result_block(result, tool_use_id)["content"]
    assert isinstance(content, str)
    return result, content, events


def gone(pid: int) -> bool:
    """The process has ended: no longer in the table, or a zombie nobody has reaped yet."""
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


def processes_running(needle: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if needle.encode() in cmdline and not gone(int(name)):
                found.append(int(name))
    return found


# -- output and exit codes -------------------------------------------------------------------


async def test_output_and_errors_come_back_together_with_a_non_zero_exit(project: Path):
    result, text, _ = await run(context_in(project), "echo out; echo err >&2; exit 3")
    assert result.is_error
    assert text == "out\nerr\nExit code 3"
    assert isinstance(result.data, BashOutput) and result.data.exit_code == 3


async def test_a_successful_command_is_not_an_error(project: Path):
    result, text, _ = await run(context_in(project), "printf 'a\\nb\\n'")
    assert not result.is_error
    assert text == "a\nb"


async def test_a_command_killed_by_a_signal_says_so(project: Path):
    result, text, _ = await run(context_in(project), "kill -9 $$")
    assert result.is_error
    assert text == "Exit code 137 (killed by SIGKILL)"


async def test_the_command_gets_no_stdin(project: Path):
    result, text, _ = await run(context_in(project), "cat; echo done")
    assert not result.is_error and text == "done"


# -- the working directory -------------------------------------------------------------------


async def test_a_cd_carries_over_and_an_export_does_not(project: Path):
    context = context_in(project)
    await run(context, "cd sub && export GREETING=hello")
    _, text, _ = await run(context, "pwd; echo ${GREETING:-unset}")
    assert text == f"{project / 'sub'}\nunset"


async def test_a_cd_before_exit_still_counts_but_a_syntax_error_moves_nothing(project: Path):
    context = context_in(project)
    result, _, _ = await run(context, "cd sub; exit 4")
    assert result.is_error
    _, text, _ = await run(context, "pwd")
    assert text == str(project / "sub")
    result, text, _ = await run(context, "cd ..; if then")
    assert result.is_error and "syntax error" in text
    _, text, _ = await run(context, "pwd")
    assert text == str(project / "sub")


async def test_a_deleted_directory_falls_back_to_the_project_with_a_note(project: Path):
    context = context_in(project)
    (project / "gone").mkdir()
    await run(context, "cd gone")
    (project / "gone").rmdir()
    result, text, _ = await run(context, "pwd")
    assert not result.is_error
    assert text == f"The working directory {project / 'gone'} no longer exists; this ran in " + (
        f"{project}.\n{project}"
    )


async def test_each_session_keeps_its_own_directory(project: Path):
    first, second = context_in(project), context_in(project)
    await run(first, "cd sub")
    _, text, _ = await run(second, "pwd")
    assert text == str(project)


# -- timeouts, interrupts, cancellation ------------------------------------------------------


async def run_into_timeout(
    project: Path, monkeypatch: pytest.MonkeyPatch, command: str, pidfile: Path
) -> tuple[ToolResult, str]:
    """Run `command` (which prints, then writes `pidfile`) with a 60.5 s timeout that expires
    once both have happened, on a loop clock the test moves forward."""
    clock = LoopClock(monkeypatch)
    events: list[Any] = []
    task = asyncio.ensure_future(run(context_in(project), command, events=events, timeout=60_500))
    # Output is reported while the command runs under its timeout: the deadline is set.
    await eventually(lambda: events and lines_in(pidfile), "the command's start")
    clock.advance(60.5)
    result, text, _ = await asyncio.wait_for(task, HANG_BOUND_S)
    return result, text


async def test_a_timeout_stops_the_command_and_everything_it_started(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    pidfile = project / "pid"
    command = f"echo partial; sleep 3600 & echo $! > {pidfile}; wait"
    result, text = await run_into_timeout(project, monkeypatch, command, pidfile)
    assert result.is_error
    assert text == "partial\nCommand timed out after 60.5 s and was stopped."
    assert isinstance(result.data, BashOutput) and result.data.timed_out
    assert gone(int(pidfile.read_text()))


async def test_a_group_that_ignores_sigterm_is_killed(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    pidfile = project / "pid"
    command = f"trap '' TERM; echo trapped; sleep 3600 & echo $! > {pidfile}; wait"
    result, text = await run_into_timeout(project, monkeypatch, command, pidfile)
    assert result.is_error and "timed out after 60.5 s" in text
    assert gone(int(pidfile.read_text()))


async def test_cancelling_the_call_stops_the_group_and_reraises(project: Path):
    pidfile = project / "pid"
    task = asyncio.ensure_future(
        run(context_in(project), f"sleep 100 & echo $! > {pidfile}; echo $$ >> {pidfile}; wait")
    )
    await wait_for(pidfile, lines=2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert all(gone(int(pid)) for pid in pidfile.read_text().split())
    assert not list((project.parent / "session" / "shells").glob("*.txt"))


async def test_cancelling_the_call_while_bash_starts_stops_the_group(
    project: Path, monkeypatch: pytest.MonkeyPatch
):
    """The cancel arrives after bash has started (and started a child) but before the call
    has its process (a busy machine makes this window wide): everything is stopped all the
    same."""
    pidfile = project / "pid"
    release = hold_process_starts(monkeypatch, "create_subprocess_exec")
    task = asyncio.ensure_future(
        run(context_in(project), f"sleep 3600 & echo $! > {pidfile}; echo $$ >> {pidfile}; wait")
    )
    await wait_for(pidfile, lines=2)
    task.cancel()  # while the call waits for its process
    release.set()
    pids = [int(pid) for pid in pidfile.read_text().split()]
    try:
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, HANG_BOUND_S)
        assert all(gone(pid) for pid in pids)
    finally:
        for pid in pids:  # a failure must not leave them behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


async def test_an_aborted_signal_stops_the_command_with_an_interrupted_result(project: Path):
    abort = AbortController()
    pidfile = project / "pid"
    task = asyncio.ensure_future(
        run(context_in(project, abort), f"sleep 100 & echo $! > {pidfile}; wait")
    )
    await wait_for(pidfile)
    abort.abort("interrupt")
    result, text, _ = await task
    assert result.is_error and text == "Command was interrupted and stopped."
    assert gone(int(pidfile.read_text()))


async def test_an_interrupt_through_the_executor_kills_the_group(project: Path):
    turn = AbortController()
    recorder = EventRecorder()
    context = context_in(project)
    executor = StreamingToolExecutor(make_services(recorder), context, abort=turn.signal)
    pidfile = project / "pid"
    executor.add_tool(
        ToolCall("toolu_i", "Bash", {"command": f"sleep 100 & echo $! > {pidfile}; wait"})
    )
    await wait_for(pidfile)
    turn.abort("interrupt")
    [outcome] = outcomes_of([u async for u in executor.get_remaining_results()])
    assert outcome.cancelled == "user_interrupted"
    assert gone(int(pidfile.read_text()))


async def test_a_failing_command_cancels_a_running_sibling_and_kills_it(project: Path):
    recorder = EventRecorder()
    executor = StreamingToolExecutor(make_services(recorder), context_in(project))
    # Both are read-only, so they run side by side; the odd duration finds the sleeper.
    executor.add_tool(ToolCall("toolu_sleep", "Bash", {"command": "sleep 97.4321"}))
    for _ in range(2000):
        if processes_running("sleep 97.4321"):
            break
        await asyncio.sleep(0.01)
    assert processes_running("sleep 97.4321")
    executor.add_tool(ToolCall("toolu_fail", "Bash", {"command": "ls /no/such/dir"}))
    sleeper, failure = outcomes_of([u async for u in executor.get_remaining_results()])
    assert failure.is_error and "Exit code 2" in text_of(failure)
    assert sleeper.cancelled == "sibling_error"
    assert processes_running("sleep 97.4321") == []


async def test_a_command_that_arrives_after_a_sibling_failed_never_runs(project: Path):
    """`mkdir` fails, then the model's next command streams in: it must not touch the disk."""
    recorder = EventRecorder()
    executor = StreamingToolExecutor(make_services(recorder), context_in(project))
    executor.add_tool(ToolCall("toolu_mkdir", "Bash", {"command": "mkdir /no/such/dir/out"}))
    await eventually(lambda: "completed" in recorder.kinds("toolu_mkdir"), "mkdir's failure")
    executor.add_tool(ToolCall("toolu_touch", "Bash", {"command": "touch copied"}))
    failure, late = outcomes_of([u async for u in executor.get_remaining_results()])
    assert failure.is_error and failure.cancelled is None
    assert late.cancelled == "sibling_error"
    assert "Bash(mkdir /no/such/dir/out)" in text_of(late)
    assert not (project / "copied").exists()
    assert recorder.kinds("toolu_touch") == ["queued", "cancelled"]


# -- progress and large output ---------------------------------------------------------------


async def test_output_streams_as_progress_while_the_command_runs(project: Path):
    go = project / "go"
    seen: list[Any] = []

    def progress(event: Any) -> None:
        seen.append(event)
        if "first" in event.text:
            go.touch()  # the command goes on only once its first line has been reported

    command = f"echo first; until [ -e {go} ]; do sleep 0.01; done; echo second"
    result = await TOOL.call(TOOL.parse_input({"command": command}), context_in(project), progress)
    assert TOOL.result_block(result, "t")["content"] == "first\nsecond"
    first = seen[0]
    assert isinstance(first, OutputProgress)
    assert (first.text, first.total_bytes) == ("first\n", 6)
    # where the viewer follows a running command's output (removed once the command ends)
    assert first.spool.parent == project.parent / "session" / "shells"


async def test_large_output_is_saved_to_the_results_directory_with_a_preview(project: Path):
    result, text, _ = await run(context_in(project), "seq 1 100000; exit 1", "toolu_big")
    saved = project.parent / "session" / "tool-results" / "toolu_big.txt"
    assert result.is_error
    assert text.startswith(
        f"<persisted-output>\nOutput too large (575.1 KB). Full output saved to: {saved}\n\n"
        "Preview (first 2.0 KB):\n1\n2\n3\n"
    )
    assert text.endswith("\n...\n</persisted-output>\nExit code 1")
    assert len(text) < 3000
    assert saved.read_text() == "".join(f"{i}\n" for i in range(1, 100001))
    assert not list((project.parent / "session" / "shells").iterdir())


async def test_output_up_to_the_limit_stays_inline(project: Path):
    result, text, _ = await run(context_in(project), "head -c 29999 /dev/zero | tr '\\0' x")
    assert not result.is_error and text == "x" * 29999
    _, text, _ = await run(context_in(project), "head -c 30001 /dev/zero | tr '\\0' x")
    assert text.startswith("<persisted-output>")


async def test_the_engine_does_not_persist_bash_output_a_second_time(project: Path):
    tool_results = project.parent / "session" / "tool-results"
    executor = StreamingToolExecutor(
        make_services(session_dir=project.parent / "session"), context_in(project)
    )
    executor.add_tool(ToolCall("toolu_seq", "Bash", {"command": "seq 1 100000"}))
    [outcome] = outcomes_of([u async for u in executor.get_remaining_results()])
    assert not outcome.is_error and outcome.persisted is None
    assert f"Full output saved to: {tool_results / 'toolu_seq.txt'}" in text_of(outcome)
    assert [p.name for p in tool_results.iterdir()] == ["toolu_seq.txt"]


async def test_empty_output_gets_the_engine_placeholder(project: Path):
    executor = StreamingToolExecutor(make_services(), context_in(project))
    executor.add_tool(ToolCall("toolu_true", "Bash", {"command": "true"}))
    [outcome] = outcomes_of([u async for u in executor.get_remaining_results()])
    assert text_of(outcome) == "(Bash completed with no output)"


GIGABYTE_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from pathlib import Path
    from core.tool import ToolContext, ToolOptions
    from core.tools.bash import Bash

    def hwm_kb():
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])

    async def main(session_dir, size):
        tool = Bash()
        context = ToolContext(
            cwd=Path(session_dir), options=ToolOptions(session_dir=Path(session_dir)),
            tool_use_id="toolu_gb",
        )
        line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc"
        command = f"yes {line} | head -c {size}"
        events = []
        before = hwm_kb()
        result = await tool.call(tool.parse_input({"command": command}), context, events.append)
        after = hwm_kb()
        text = tool.result_block(result, "toolu_gb")["content"]
        print(json.dumps({
            "growth_mb": (after - before) / 1024, "text": text, "is_error": result.is_error,
            "path": str(result.data.output_path), "progress_events": len(events),
        }))

    asyncio.run(main(sys.argv[1], int(sys.argv[2])))
    """
)


def test_a_gigabyte_of_output_keeps_memory_flat_and_is_saved(tmp_path: Path):
    size = 1_000_000_000
    done = subprocess.run(
        [sys.executable, "-c", GIGABYTE_CHILD, str(tmp_path), str(size)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    saved = Path(report["path"])
    try:
        assert saved == tmp_path / "tool-results" / "toolu_gb.txt"
        assert saved.stat().st_size == size
        assert not report["is_error"]
        line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abc"
        assert report["text"].startswith(
            f"<persisted-output>\nOutput too large (953.7 MB). Full output saved to: {saved}\n\n"
            f"Preview (first 1.9 KB):\n{line}\n{line}\n"
        )
        assert len(report["text"]) < 3000
        assert report["growth_mb"] < 150
    finally:
        saved.unlink(missing_ok=True)


# -- the tool's answers to the engine --------------------------------------------------------


def test_read_only_commands_may_run_in_parallel_and_others_may_not():
    assert TOOL.is_read_only(TOOL.parse_input({"command": "ls -la"}))
    assert TOOL.is_concurrency_safe(TOOL.parse_input({"command": "git status"}))
    assert not TOOL.is_read_only(TOOL.parse_input({"command": "rm -rf build"}))
    assert not TOOL.is_concurrency_safe(TOOL.parse_input({"command": "echo hi > f"}))
    assert TOOL.rule_target(TOOL.parse_input({"command": "npm test"}), Path("/")) == (
        CommandTarget("npm test")
    )
    assert TOOL.interrupt_behavior == "cancel" and TOOL.cancels_siblings_on_error


def test_bad_input_is_refused_by_the_schema():
    with pytest.raises(ValidationError):
        TOOL.parse_input({"command": "ls", "timeout": 600_001})
    with pytest.raises(ValidationError):
        TOOL.parse_input({"command": "ls", "timeout": 0})
    with pytest.raises(ValidationError):
        TOOL.parse_input({"command": "ls", "cwd": "/"})
    assert TOOL.parse_input({"command": "ls"}).timeout == 120_000


async def test_an_empty_command_is_refused_before_it_runs(project: Path):
    executor = StreamingToolExecutor(make_services(), context_in(project))
    executor.add_tool(ToolCall("toolu_empty", "Bash", {"command": "  "}))
    [outcome] = outcomes_of([u async for u in executor.get_remaining_results()])
    assert outcome.is_error and outcome.failed_stage == "validate"
    assert "The command is empty" in text_of(outcome)


async def test_output_bash_saves_itself_is_announced_like_any_persisted_result(project: Path):
    """Front ends learn where a result went from the event, never from the model's text."""
    recorder = EventRecorder()
    context = context_in(project)
    services = make_services(recorder, session_dir=project.parent / "session")
    command = "yes 0123456789abcdef | head -c 300000"
    outcome = await run_tool_use(
        ToolCall("toolu_big", "Bash", {"command": command}), services, context
    )
    (saved,) = [e for e in recorder.events if isinstance(e, ResultPersisted)]
    assert saved.tool_use_id == "toolu_big" and saved.path.is_file()
    assert saved.size_chars == 300000 == saved.path.stat().st_size
    assert str(saved.path) in text_of(outcome)


async def test_the_permission_dialog_gets_the_command_from_the_engine(project: Path):
    port = ScriptedPort()
    context = make_context([TOOL], project)  # default mode: a write asks
    services = make_services(permission_port=port)
    await run_tool_use(ToolCall("toolu_ask", "Bash", {"command": "touch made"}), services, context)
    (request,) = port.requests
    assert request.command == "touch made" and request.preview is None


async def test_a_command_decided_for_a_sandbox_never_runs_in_a_session_without_one(project: Path):
    """The sandbox is a session service: a context whose session has none (a copy built
    outside the session, say) must not fall back to running the command unfenced."""
    context = context_in(project).replace(sandbox=ReadOnly("test"))
    with pytest.raises(OSError, match="no sandbox to run it in, so it did not run"):
        await TOOL.call(TOOL.parse_input({"command": "touch made"}), context, lambda _: None)
    assert not (project / "made").exists()
