"""PostToolUse hooks written for the seeds' system read `tool_response` in its shape: Bash's
`stdout`/`stderr`/`interrupted`/`isImage`, Write's and Edit's `filePath`, `structuredPatch`
and `originalFile`, TodoWrite's `oldTodos`/`newTodos`. Driven through the executor with the
real tools and a real hook program that saves what it was given."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from engine_helpers import close_sessions, make_context, make_services

from core.access.context import ToolPermissionContext
from core.executor import ToolCall, run_tool_use
from core.hook_runner import CommandHookRunner
from core.settings.values import HookCommand, HookEntry
from core.tools.bash import Bash
from core.tools.edit import Edit
from core.tools.read import Read
from core.tools.todo_write import TodoWrite
from core.tools.write import Write

BYPASS = ToolPermissionContext(mode="bypassPermissions", bypass_available=True)


def saving_hook(tmp_path: Path) -> tuple[HookEntry, Path]:
    """A PostToolUse hook (a real program) that appends each input it reads to a file."""
    saved = tmp_path / "hook-inputs.jsonl"
    program = tmp_path / "save.py"
    program.write_text(
        "import sys\n"
        f"with open({str(saved)!r}, 'a') as out:\n"
        "    out.write(sys.stdin.read().replace('\\n', ' ') + '\\n')\n"
    )
    command = f"{sys.executable} {program}"
    return HookEntry("PostToolUse", None, (HookCommand(command, 30, "user", None),)), saved


async def run_all(tmp_path: Path, calls: list[ToolCall]) -> list[dict[str, Any]]:
    project = tmp_path / "project"
    project.mkdir()
    entry, saved = saving_hook(tmp_path)
    hooks = CommandHookRunner(
        [entry],
        session_id="s",
        transcript_path=None,
        cwd=project,
        permission_mode=lambda: "bypassPermissions",
        trusted=True,
    )
    tools = [Bash(), Write(), Edit(), Read(), TodoWrite()]
    context = make_context(tools, project, permission_context=BYPASS)
    services = make_services(hooks=hooks)
    try:
        for call in calls:
            outcome = await run_tool_use(call, services, context.for_call(call.id, context.abort))
            assert not outcome.is_error, outcome.block
            if outcome.context_modifier is not None:
                context = outcome.context_modifier(context)
    finally:
        await close_sessions()
    return [json.loads(line) for line in saved.read_text().splitlines()]


async def test_post_tool_use_hooks_get_the_seed_systems_tool_response(tmp_path: Path):
    path = str(tmp_path / "project" / "notes.txt")
    todo = {"content": "Ship it", "status": "in_progress", "activeForm": "Shipping it"}
    inputs = await run_all(
        tmp_path,
        [
            ToolCall("t1", "Bash", {"command": "echo hello"}),
            ToolCall("t2", "Write", {"file_path": path, "content": "one\ntwo\n"}),
            ToolCall("t3", "Edit", {"file_path": path, "old_string": "two", "new_string": "2"}),
            ToolCall("t4", "TodoWrite", {"todos": [todo]}),
        ],
    )
    by_tool = {payload["tool_name"]: payload for payload in inputs}
    assert {p["hook_event_name"] for p in inputs} == {"PostToolUse"}

    bash = by_tool["Bash"]["tool_response"]
    assert bash["stdout"].strip() == "hello"
    assert bash["stderr"] == "" and bash["interrupted"] is False and bash["isImage"] is False

    write = by_tool["Write"]["tool_response"]
    assert write["type"] == "create" and write["filePath"] == path
    assert write["content"] == "one\ntwo\n" and write["originalFile"] is None

    edit = by_tool["Edit"]["tool_response"]
    assert edit["filePath"] == path and edit["originalFile"] == "one\ntwo\n"
    assert (edit["oldString"], edit["newString"], edit["replaceAll"]) == ("two", "2", False)
    (hunk,) = edit["structuredPatch"]
    assert hunk["oldStart"] == 1 and hunk["oldLines"] == 2 and hunk["newLines"] == 2
    assert hunk["lines"] == [" one", "-two", "+2"]

    todos = by_tool["TodoWrite"]["tool_response"]
    assert todos == {"oldTodos": [], "newTodos": [todo]}
