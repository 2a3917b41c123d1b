"""The command hook runner, driven with real hook scripts in a temporary directory."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import (
    HANG_BOUND_S,
    LoopClock,
    close_sessions,
    eventually,
    hold_process_starts,
    make_context,
    make_services,
)

from core.access.context import ToolPermissionContext
from core.executor import ToolCall, run_tool_use
from core.hook_runner import CommandHookRunner
from core.hooks import (
    NO_PRE_OUTCOME,
    EventHookOutcome,
    HookCall,
    HookEvent,
    HookRunner,
)
from core.settings.values import HookCommand, HookEntry, SettingsSource
from core.tools.bash import Bash
from core.tools.read import Read
from core.tools.write import Write

SETTINGS = Path("/p/.proctor/settings.json")
BASH_CALL = HookCall("Bash", {"command": "ls"}, "toolu_1")


def script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return str(path)


def decision(permission: str, reason: str = "", **extra: Any) -> str:
    output = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": permission,
            "permissionDecisionReason": reason,
            **extra,
        }
    }
    return f"cat > /dev/null\necho '{json.dumps(output)}'\n"


def entry(
    event: HookEvent,
    matcher: str | None,
    *commands: str,
    source: SettingsSource = "user",
    timeout: float = 10,
) -> HookEntry:
    path = SETTINGS if source != "cli" else None
    return HookEntry(event, matcher, tuple(HookCommand(c, timeout, source, path) for c in commands))


def runner(tmp_path: Path, *entries: HookEntry, trusted: bool = True) -> CommandHookRunner:
    return CommandHookRunner(
        entries,
        session_id="session-1",
        transcript_path=tmp_path / "transcript.jsonl",
        cwd=tmp_path,
        permission_mode=lambda: "plan",
        trusted=trusted,
    )


def alive(pid: int) -> bool:
    """Whether `pid` runs; a zombie nobody reaped yet counts as dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def test_the_runner_steers_real_calls_through_the_executor(tmp_path: Path) -> None:
    """What a person who wrote these three hooks sees: the shell command is stopped with the
    hook's words, the linter's complaint reaches the model beside the write, and the failed
    read is reported to the failure hook."""
    project = tmp_path / "project"
    project.mkdir()
    failures = tmp_path / "failures.jsonl"
    hooks: HookRunner = CommandHookRunner(
        [
            entry(
                "PreToolUse",
                "Bash",
                script(tmp_path, "no.sh", "echo 'no shell today' >&2\nexit 2\n"),
            ),
            entry(
                "PostToolUse",
                "Write",
                script(tmp_path, "lint.sh", "echo 'lint: 3 errors' >&2\nexit 2\n"),
            ),
            entry("PostToolUseFailure", "Read", script(tmp_path, "log.sh", f"cat >> {failures}\n")),
        ],
        session_id="session-1",
        transcript_path=None,
        cwd=project,
        permission_mode=lambda: "bypassPermissions",
        trusted=True,
    )
    bypass = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)
    context = make_context([Bash(), Write(), Read()], project, permission_context=bypass)
    services = make_services(hooks=hooks)
    written = project / "notes.txt"
    calls = [
        ToolCall("t1", "Bash", {"command": f"touch {project / 'made'}"}),
        ToolCall("t2", "Write", {"file_path": str(written), "content": "hello\n"}),
        ToolCall("t3", "Read", {"file_path": str(project / "missing.txt")}),
    ]
    try:
        shell, write, read = [
            await run_tool_use(call, services, context.for_call(call.id, context.abort))
            for call in calls
        ]
    finally:
        await close_sessions()

    assert shell.is_error and shell.denied_by is not None and shell.denied_by.kind == "hook"
    assert "no shell today" in str(shell.block["content"])
    assert not (project / "made").exists()
    assert not write.is_error and written.read_text() == "hello\n"
    assert write.additional_context == ("lint: 3 errors",)
    assert read.is_error
    (failure,) = [json.loads(line) for line in failures.read_text().splitlines()]
    assert failure["hook_event_name"] == "PostToolUseFailure"
    assert failure["tool_name"] == "Read" and failure["tool_use_id"] == "t3"
    assert "missing.txt" in failure["error"]


async def test_no_matching_hook_is_no_outcome(tmp_path: Path) -> None:
    hooks = runner(tmp_path, entry("PreToolUse", "Edit", "false"))
    assert await hooks.pre_tool_use(BASH_CALL) is NO_PRE_OUTCOME


@pytest.mark.parametrize("permission", ["allow", "deny", "ask"])
async def test_a_hook_decides(tmp_path: Path, permission: str) -> None:
    command = script(tmp_path, "check.sh", decision(permission, f"because {permission}"))
    outcome = await runner(tmp_path, entry("PreToolUse", "Bash", command)).pre_tool_use(BASH_CALL)
    assert outcome.permission == permission
    assert outcome.reason == f"because {permission}"
    assert outcome.source == f"hook `{command}` from {SETTINGS}"
    assert outcome.messages == ()


async def test_exit_2_denies_with_stderr_as_the_reason(tmp_path: Path) -> None:
    command = script(tmp_path, "block.sh", "echo 'no rm, please' >&2\nexit 2\n")
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert outcome.permission == "deny"
    assert outcome.reason == "no rm, please"
    assert command in outcome.source


async def test_another_exit_code_is_a_non_blocking_error(tmp_path: Path) -> None:
    command = script(tmp_path, "broken.sh", "echo 'something broke' >&2\nexit 3\n")
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert outcome.permission is None
    (message,) = outcome.messages
    assert "failed (exit 3): something broke" in message
    assert command in message


async def test_a_hook_that_cannot_be_found_is_a_non_blocking_error(tmp_path: Path) -> None:
    hooks = runner(tmp_path, entry("PreToolUse", None, str(tmp_path / "missing.sh")))
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.permission is None
    assert "failed (exit 127)" in outcome.messages[0]


@pytest.fixture
def leftovers() -> Any:
    """Pids a test started; whatever of them still runs when it ends (it failed) is killed."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def read_pid(pid_file: Path) -> int | None:
    text = pid_file.read_text().strip() if pid_file.exists() else ""
    return int(text) if text else None


async def pid_in(pid_file: Path, leftovers: list[int]) -> int:
    await eventually(lambda: read_pid(pid_file) is not None, "the pid file")
    pid = read_pid(pid_file)
    assert pid is not None
    leftovers.append(pid)
    return pid


async def test_a_timed_out_hook_is_killed_with_its_process_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leftovers: list[int]
) -> None:
    pid_file, ready = tmp_path / "child.pid", tmp_path / "ready"
    # The child ignores SIGTERM, so only the SIGKILL to the whole group ends it.
    child = (
        f"{sys.executable} -c 'import pathlib, signal, time; "
        f'signal.signal(signal.SIGTERM, signal.SIG_IGN); pathlib.Path("{ready}").touch(); '
        "time.sleep(3600)'"
    )
    # The hook reads its payload to the end first: the runner's timeout, which covers the
    # writing of the payload, is running by then.
    body = f"cat > /dev/null\n{child} &\necho $! > {pid_file}\nwait\n"
    command = script(tmp_path, "slow.sh", body)
    hooks = runner(tmp_path, entry("PreToolUse", None, command, timeout=60.5))
    hooks.kill_grace_s = 0.2
    clock = LoopClock(monkeypatch)
    task = asyncio.create_task(hooks.pre_tool_use(BASH_CALL))
    pid = await pid_in(pid_file, leftovers)
    await eventually(ready.exists, "the child ignoring SIGTERM")
    clock.advance(60.5)  # the timeout expires once the child is ready, not before
    outcome = await asyncio.wait_for(task, HANG_BOUND_S)
    assert outcome.permission == "ask"  # a guard that did not finish: the call asks
    (message,) = outcome.messages
    assert "timed out after 60.5 s" in message
    await eventually(lambda: not alive(pid), "the child's end")  # SIGKILL is asynchronous


async def test_a_cancelled_run_kills_the_hook(tmp_path: Path, leftovers: list[int]) -> None:
    pid_file = tmp_path / "child.pid"
    command = script(tmp_path, "slow.sh", f"sleep 3600 &\necho $! > {pid_file}\nwait\n")
    hooks = runner(tmp_path, entry("PreToolUse", None, command, timeout=3600))
    task = asyncio.create_task(hooks.pre_tool_use(BASH_CALL))
    pid = await pid_in(pid_file, leftovers)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_BOUND_S)
    await eventually(lambda: not alive(pid), "the hook's child's end")


async def test_a_run_cancelled_while_the_hook_starts_kills_the_hook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, leftovers: list[int]
) -> None:
    """The cancel arrives after the hook has started but before the runner has its process
    (a busy machine makes this window wide): its group is killed all the same."""
    pid_file = tmp_path / "child.pid"
    command = script(tmp_path, "slow.sh", f"sleep 3600 &\necho $! > {pid_file}\nwait\n")
    release = hold_process_starts(monkeypatch, "create_subprocess_shell")
    hooks = runner(tmp_path, entry("PreToolUse", None, command, timeout=3600))
    task = asyncio.create_task(hooks.pre_tool_use(BASH_CALL))
    pid = await pid_in(pid_file, leftovers)
    task.cancel()  # while the runner waits for its process
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, HANG_BOUND_S)
    await eventually(lambda: not alive(pid), "the hook's child's end")


@pytest.mark.parametrize(
    ("output", "complaint"),
    [
        ("{not json", "not valid JSON"),
        ('{"hookSpecificOutput": {"permissionDecision": "maybe"}}', "permissionDecision"),
        ('{"continue": "no"}', "continue must be bool"),
        ('{"hookSpecificOutput": {"updatedInput": "ls"}}', "updatedInput must be dict"),
        ('{"hookSpecificOutput": []}', "hookSpecificOutput must be dict"),
    ],
)
async def test_garbage_output_from_a_guard_makes_the_call_ask(
    tmp_path: Path, output: str, complaint: str
) -> None:
    command = script(tmp_path, "garbage.sh", f"cat <<'EOF'\n{output}\nEOF\n")
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert outcome.permission == "ask"
    assert outcome.reason and "instead of running unguarded" in outcome.reason
    (message,) = outcome.messages
    assert complaint in message
    assert command in message


async def test_plain_text_output_is_ignored_for_tool_events(tmp_path: Path) -> None:
    command = script(tmp_path, "chatty.sh", "echo hello\n")
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert (outcome.permission, outcome.messages, outcome.additional_context) == (None, (), ())


async def test_updated_input_and_context(tmp_path: Path) -> None:
    body = decision("allow", "safer", updatedInput={"command": "ls -la"}, additionalContext="ctx")
    command = script(tmp_path, "rewrite.sh", body)
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert outcome.permission == "allow"
    assert outcome.updated_input == {"command": "ls -la"}
    assert outcome.additional_context == ("ctx",)


async def test_continue_false_stops_and_system_message_is_shown(tmp_path: Path) -> None:
    output = {"continue": False, "stopReason": "enough for today", "systemMessage": "bye"}
    command = script(tmp_path, "stop.sh", f"echo '{json.dumps(output)}'\n")
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert outcome.prevent_continuation
    assert outcome.stop_reason == "enough for today"
    assert outcome.messages == ("bye",)
    assert outcome.permission is None


async def test_legacy_decision_block_denies(tmp_path: Path) -> None:
    command = script(
        tmp_path, "old.sh", """echo '{"decision": "block", "reason": "old style"}'\n"""
    )
    outcome = await runner(tmp_path, entry("PreToolUse", None, command)).pre_tool_use(BASH_CALL)
    assert (outcome.permission, outcome.reason) == ("deny", "old style")


async def test_hooks_run_in_parallel_and_deny_beats_allow(tmp_path: Path) -> None:
    # Each hook waits for the other's flag: run one after the other, both would time out.
    def rendezvous(mine: str, theirs: str, permission: str) -> str:
        wait = (
            f"touch {tmp_path / mine}\n"
            f"i=0; while [ ! -e {tmp_path / theirs} ] && [ $i -lt 400 ]; do\n"
            "  sleep 0.02; i=$((i+1)); done\n"
            f"[ -e {tmp_path / theirs} ] || exit 1\n"
        )
        return wait + decision(permission, f"{permission} said so")

    allow = script(tmp_path, "allow.sh", rendezvous("a.flag", "b.flag", "allow"))
    deny = script(tmp_path, "deny.sh", rendezvous("b.flag", "a.flag", "deny"))
    hooks = runner(tmp_path, entry("PreToolUse", "Bash", allow), entry("PreToolUse", None, deny))
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.messages == ()
    assert outcome.permission == "deny"
    assert outcome.reason == "deny said so"
    assert outcome.source == f"hook `{deny}` from {SETTINGS}"


async def test_ask_beats_allow_and_keeps_the_last_updated_input(tmp_path: Path) -> None:
    first = script(tmp_path, "one.sh", decision("allow", "a", updatedInput={"command": "1"}))
    second = script(tmp_path, "two.sh", decision("ask", "b", updatedInput={"command": "2"}))
    third = script(tmp_path, "three.sh", decision("ask", "c"))
    hooks = runner(tmp_path, entry("PreToolUse", None, first, second, third))
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.permission == "ask"
    assert outcome.reason == "b\nc"
    assert outcome.updated_input == {"command": "2"}
    assert second in outcome.source and third in outcome.source and first not in outcome.source


async def test_a_deny_drops_updated_input(tmp_path: Path) -> None:
    first = script(tmp_path, "one.sh", decision("allow", "a", updatedInput={"command": "1"}))
    second = script(tmp_path, "two.sh", decision("deny", "no"))
    outcome = await runner(tmp_path, entry("PreToolUse", None, first, second)).pre_tool_use(
        BASH_CALL
    )
    assert (outcome.permission, outcome.updated_input) == ("deny", None)


async def test_untrusted_project_hooks_are_skipped_and_said_once(tmp_path: Path) -> None:
    project_hook = script(tmp_path, "project.sh", decision("deny", "project"))
    user_hook = script(tmp_path, "user.sh", decision("allow", "user"))
    entries = (
        entry("PreToolUse", None, project_hook, source="project"),
        entry("PreToolUse", None, project_hook + " ", source="claude-local"),
        entry("PreToolUse", None, user_hook, source="user"),
    )
    hooks = runner(tmp_path, *entries, trusted=False)
    first = await hooks.pre_tool_use(BASH_CALL)
    assert first.permission == "allow"
    (message,) = first.messages
    assert "not trusted" in message
    second = await hooks.pre_tool_use(BASH_CALL)
    assert second.permission == "allow"
    assert second.messages == ()
    trusted = await runner(tmp_path, *entries, trusted=True).pre_tool_use(BASH_CALL)
    assert trusted.permission == "deny"


async def test_the_same_command_runs_once(tmp_path: Path) -> None:
    log = tmp_path / "log"
    command = script(tmp_path, "count.sh", f"echo run >> {log}\n")
    hooks = runner(
        tmp_path,
        entry("PreToolUse", "Bash", command, source="local"),
        entry("PreToolUse", None, command, source="claude-project"),
    )
    await hooks.pre_tool_use(BASH_CALL)
    assert log.read_text() == "run\n"


@pytest.mark.parametrize(
    ("matcher", "tool", "matches"),
    [
        (None, "Bash", True),
        ("", "Read", True),
        ("*", "mcp__x__y", True),
        ("Bash", "Bash", True),
        ("Bash", "BashOutput", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Edit", True),
        ("Edit|Write", "MultiEdit", False),
        ("mcp__.*", "mcp__github__create_issue", True),
        ("mcp__.*", "Bash", False),
        ("mcp__github__create_issue", "mcp__github__create_issue", True),
        ("Notebook.*", "NotebookEdit", True),
    ],
)
async def test_matcher_forms(tmp_path: Path, matcher: str | None, tool: str, matches: bool) -> None:
    command = script(tmp_path, "allow.sh", decision("allow"))
    hooks = runner(tmp_path, entry("PreToolUse", matcher, command))
    outcome = await hooks.pre_tool_use(HookCall(tool, {}, "toolu_2"))
    assert (outcome.permission == "allow") is matches


async def test_an_invalid_regex_matches_nothing_and_is_reported_once(tmp_path: Path) -> None:
    command = script(tmp_path, "allow.sh", decision("allow"))
    hooks = runner(tmp_path, entry("PreToolUse", "Bash(", command))
    first = await hooks.pre_tool_use(BASH_CALL)
    assert first.permission is None
    (message,) = first.messages
    assert "'Bash(' is not a valid regular expression" in message
    second = await hooks.pre_tool_use(BASH_CALL)
    assert second.messages == ()


async def test_the_payload_on_stdin(tmp_path: Path) -> None:
    dump = tmp_path / "stdin.json"
    command = script(tmp_path, "dump.sh", f"cat > {dump}\npwd > {tmp_path / 'cwd'}\n")
    hooks = runner(
        tmp_path,
        entry("PreToolUse", None, command),
        entry("PostToolUse", None, command),
        entry("PostToolUseFailure", None, command),
    )
    call = HookCall("Bash", {"command": "ls", "timeout": 5}, "toolu_9")
    await hooks.pre_tool_use(call)
    payload = json.loads(dump.read_text())
    assert payload == {
        "session_id": "session-1",
        "transcript_path": str(tmp_path / "transcript.jsonl"),
        "cwd": str(tmp_path),
        "permission_mode": "plan",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls", "timeout": 5},
        "tool_use_id": "toolu_9",
    }
    assert (tmp_path / "cwd").read_text().strip() == str(tmp_path)  # tmp_path is resolved

    await hooks.post_tool_use(call, {"stdout": "a\nb", "path": Path("/x")})
    payload = json.loads(dump.read_text())
    assert payload["hook_event_name"] == "PostToolUse"
    assert payload["tool_response"] == {"stdout": "a\nb", "path": "/x"}

    await hooks.post_tool_use_failure(call, "it broke")
    payload = json.loads(dump.read_text())
    assert payload["hook_event_name"] == "PostToolUseFailure"
    assert payload["error"] == "it broke"


async def test_post_tool_use_exit_2_feeds_the_model(tmp_path: Path) -> None:
    command = script(tmp_path, "lint.sh", "echo 'lint: 3 errors' >&2\nexit 2\n")
    hooks = runner(tmp_path, entry("PostToolUse", "Edit|Write", command))
    outcome = await hooks.post_tool_use(HookCall("Write", {}, "t"), {"ok": True})
    assert outcome.additional_context == ("lint: 3 errors",)
    assert outcome.messages == ()


async def test_post_tool_use_json_output(tmp_path: Path) -> None:
    output = {
        "continue": False,
        "stopReason": "tests failed",
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "see the log",
            "updatedMCPToolOutput": {"redacted": True},
        },
    }
    command = script(tmp_path, "post.sh", f"echo '{json.dumps(output)}'\n")
    hooks = runner(tmp_path, entry("PostToolUse", None, command))
    plain = await hooks.post_tool_use(BASH_CALL, "out")
    assert plain.additional_context == ("see the log",)
    assert plain.prevent_continuation and plain.stop_reason == "tests failed"
    assert plain.updated_output is None  # only an MCP tool's output may be replaced
    mcp = await hooks.post_tool_use(HookCall("mcp__s__t", {}, "t"), "secret")
    assert mcp.updated_output == {"redacted": True}


async def test_event_hooks(tmp_path: Path) -> None:
    block = script(tmp_path, "block.sh", "echo 'no secrets in prompts' >&2\nexit 2\n")
    context = script(tmp_path, "context.sh", "echo 'branch: main'\n")
    stop = script(tmp_path, "stop.sh", """echo '{"decision": "block", "reason": "tests"}'\n""")
    hooks = runner(
        tmp_path,
        entry("UserPromptSubmit", None, block),
        entry("SessionStart", "startup", context),
        entry("SessionStart", "resume", block),
        entry("Stop", None, stop),
    )
    submitted = await hooks.run_event("UserPromptSubmit", {"prompt": "my key is ..."})
    assert submitted == EventHookOutcome(blocked=True, reason="no secrets in prompts")
    started = await hooks.run_event("SessionStart", {"source": "startup"})
    assert started == EventHookOutcome(additional_context=("branch: main",))
    stopping = await hooks.run_event("Stop", {"stop_hook_active": False})
    assert (stopping.blocked, stopping.reason) == (True, "tests")


async def test_event_payload_includes_the_callers_fields(tmp_path: Path) -> None:
    dump = tmp_path / "stdin.json"
    command = script(tmp_path, "dump.sh", f"cat > {dump}\n")
    hooks = runner(tmp_path, entry("UserPromptSubmit", None, command))
    assert await hooks.run_event("UserPromptSubmit", {"prompt": "hi"}) == EventHookOutcome()
    payload = json.loads(dump.read_text())
    assert payload["prompt"] == "hi"
    assert payload["hook_event_name"] == "UserPromptSubmit"
    assert payload["session_id"] == "session-1"


async def test_the_runner_never_raises(tmp_path: Path) -> None:
    def broken_mode() -> str:
        raise RuntimeError("no mode")

    command = script(tmp_path, "allow.sh", decision("allow"))
    hooks = CommandHookRunner(
        [entry("PreToolUse", None, command)],
        session_id="s",
        transcript_path=None,
        cwd=tmp_path / "does-not-exist",
        permission_mode=broken_mode,
        trusted=True,
    )
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.permission == "ask"
    assert outcome.messages and "could not start" in outcome.messages[0]


async def test_hooks_do_not_wait_for_each_other_sequentially(tmp_path: Path) -> None:
    # A second check of parallelism without timing: several hooks block on a shared
    # barrier file count; if any ran alone the others would never see all flags.
    count = 4
    body = (
        "touch {flag}\n"
        "i=0; while [ $(ls {dir} | wc -l) -lt {count} ] && [ $i -lt 400 ]; do\n"
        "  sleep 0.02; i=$((i+1)); done\n"
        "[ $(ls {dir} | wc -l) -ge {count} ] || exit 1\n"
    )
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    commands = [
        script(tmp_path, f"h{i}.sh", body.format(flag=barrier / str(i), dir=barrier, count=count))
        for i in range(count)
    ]
    outcome = await runner(tmp_path, entry("Stop", None, *commands)).run_event("Stop", {})
    assert outcome == EventHookOutcome()


async def test_the_exec_form_runs_the_program_with_its_words_and_no_shell(tmp_path: Path) -> None:
    marker = tmp_path / "not-a-shell"
    hook = HookCommand(
        sys.executable,
        args=("-c", "import sys, json; json.load(sys.stdin); print('{}')", f"; touch {marker}"),
    )
    hooks = runner(tmp_path, HookEntry("PreToolUse", None, (hook,)))
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.permission is None and outcome.messages == ()
    assert not marker.exists()


async def test_a_guard_proctor_cannot_read_makes_its_calls_ask(tmp_path: Path) -> None:
    settings_file = tmp_path / ".proctor" / "settings.json"
    settings_file.parent.mkdir()
    settings_file.write_text(
        json.dumps(
            {"hooks": {"PreToolUse": [
                {"matcher": "Bash", "if": "tool_input.command ~= rm",
                 "hooks": [{"type": "command", "command": "true"}]}
            ]}}
        )
    )  # fmt: skip
    from core.settings.read import load_settings

    settings = load_settings(tmp_path)
    assert any("fields proctor does not understand: if" in str(p) for p in settings.problems)
    hooks = runner(tmp_path, *settings.hooks)
    outcome = await hooks.pre_tool_use(BASH_CALL)
    assert outcome.permission == "ask"
    assert outcome.reason and "does not understand" in outcome.reason
