"""Every kind of audit record, every field, exact values: the audit log answers "why was this
allowed?" after the fact, so a record that drops what decided, names the wrong mode or loses
the words the person read is a wrong answer, not a cosmetic one.

Decisions are made by the real chain on the real built-in tools; answers go through the real
executor with a scripted port (the person), and the rules they keep are then seen deciding.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from engine_helpers import ScriptedPort, make_context, make_services, outcomes_of

from core.access.context import PermissionMode, ToolPermissionContext
from core.access.rules import parse_rule
from core.executor import StreamingToolExecutor, ToolCall
from core.hooks import PreToolUseOutcome
from core.permissions.audit import AuditLog
from core.permissions.decide import PLAN_MODE_MESSAGE, DecisionChain
from core.permissions.sandboxing import SandboxView
from core.ports import Approve, PermissionAnswer, Reject
from core.registry import all_base_tools
from core.sandbox.support import SandboxSupport
from core.settings.sandbox import SandboxSettings

TOOLS = {tool.name: tool for tool in all_base_tools()}
NO_HOOK = PreToolUseOutcome()
HOOK = "hook `./guard.sh` from /p/.proctor/settings.json"
NO_SANDBOX = {"sandbox": "none", "sandbox_why": "this session has no sandbox"}
DECISION_KEYS = {
    *("at", "kind", "tool_use_id", "tool", "input", "behavior", "decided_by", "message"),
    *("mode", "agent", "sandbox", "sandbox_why"),
}
"""Every decision record has every one of these keys, null where one does not apply."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "app"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text("x = 1\n")
    return root


class FixedSandbox:
    """The session's sandbox as the chain asks about it, with the settings under test."""

    def __init__(self, settings: SandboxSettings, available: bool = True) -> None:
        problem = None if available else "Landlock is not offered by this kernel"
        self._view = SandboxView(settings, SandboxSupport(landlock_abi=7, problem=problem))

    async def view(self) -> SandboxView:
        return self._view


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def untimed(record: dict[str, Any], since: float) -> dict[str, Any]:
    """The record without its timestamp, once the timestamp is shown to be when it was made."""
    at = record.pop("at")
    assert isinstance(at, float) and since <= at <= time.time(), at
    return record


def permissions(mode: PermissionMode = "default", *rules: str) -> ToolPermissionContext:
    parsed = tuple(
        parse_rule(text.split(" ", 1)[1], text.split(" ", 1)[0], source="cli")  # type: ignore[arg-type]
        for text in rules
    )
    return ToolPermissionContext(mode=mode, rules=parsed, bypass_available=True)


async def decision_record(
    tmp_path: Path,
    project: Path,
    tool_name: str,
    raw: dict[str, Any],
    mode: PermissionMode = "default",
    *,
    rules: tuple[str, ...] = (),
    hook: PreToolUseOutcome = NO_HOOK,
    sandbox: FixedSandbox | None = None,
    tool: Any = None,
) -> dict[str, Any]:
    """The one record the chain writes for one call, with the fields every decision has
    checked here: the whole key set, the call's id, its tool, its input as given, the agent
    (the main one), and a sandbox of null for a tool that runs in none."""
    log = AuditLog(tmp_path / "audit.jsonl")
    chain = DecisionChain(audit=log, sandbox=sandbox)
    tool = tool or TOOLS[tool_name]
    context = make_context(
        TOOLS.values(), project, permission_context=permissions(mode, *rules)
    ).for_call("toolu_audit", make_context([]).abort)
    since = time.time()
    await chain.decide(tool, tool.parse_input(raw), context, hook)
    log.close()
    [record] = read_log(tmp_path / "audit.jsonl")
    assert set(record) == DECISION_KEYS
    record = untimed(record, since)
    assert record.pop("kind") == "decision"
    assert record.pop("tool_use_id") == "toolu_audit"
    assert record.pop("tool") == tool_name
    assert record.pop("input") == raw
    assert record.pop("agent") is None
    if not tool.sandboxable:
        assert (record.pop("sandbox"), record.pop("sandbox_why")) == (None, None)
    return record


# --- automatic decisions --------------------------------------------------------------------


async def test_a_read_inside_the_project_is_allowed_by_the_mode(tmp_path: Path, project: Path):
    record = await decision_record(tmp_path, project, "Read", {"file_path": "src/main.py"})
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "mode", "detail": "a read-only call inside the working directories"},
        "message": None,
        "mode": "default",
    }


async def test_an_edit_in_accept_edits_mode_names_that_mode(tmp_path: Path, project: Path):
    raw = {"file_path": "src/new.py", "content": "y = 2\n"}
    record = await decision_record(tmp_path, project, "Write", raw, "acceptEdits")
    assert record == {
        "behavior": "allow",
        "decided_by": {
            "kind": "mode",
            "detail": "accept edits mode (inside the working directories)",
        },
        "message": None,
        "mode": "acceptEdits",
    }


async def test_plan_mode_refuses_a_change_in_the_words_the_model_reads(
    tmp_path: Path, project: Path
):
    raw = {"file_path": "src/new.py", "content": "y = 2\n"}
    record = await decision_record(tmp_path, project, "Write", raw, "plan")
    assert record == {
        "behavior": "deny",
        "decided_by": {"kind": "mode", "detail": "plan mode"},
        "message": PLAN_MODE_MESSAGE.format(tool="Write"),
        "mode": "plan",
    }
    assert record["message"].startswith("Plan mode is on, so only reading and exploring")


async def test_bypass_mode_allows_a_command_and_says_it_runs_unsandboxed(
    tmp_path: Path, project: Path
):
    record = await decision_record(
        tmp_path, project, "Bash", {"command": "touch made"}, "bypassPermissions"
    )
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "mode", "detail": "bypass permissions mode"},
        "message": None,
        "mode": "bypassPermissions",
        **NO_SANDBOX,
    }


async def test_dont_ask_mode_refuses_what_would_ask(tmp_path: Path, project: Path):
    record = await decision_record(tmp_path, project, "Bash", {"command": "touch made"}, "dontAsk")
    assert record == {
        "behavior": "deny",
        "decided_by": {"kind": "mode", "detail": "don't ask mode"},
        "message": "`touch made` is not a read-only command. This session does not ask, "
        "so it was not run.",
        "mode": "dontAsk",
        "sandbox": None,  # refused: it runs in no sandbox, and the key says so
        "sandbox_why": None,
    }


async def test_an_allow_rule_is_named_with_where_it_came_from(tmp_path: Path, project: Path):
    raw = {"file_path": "src/new.py", "content": "y = 2\n"}
    record = await decision_record(tmp_path, project, "Write", raw, rules=("allow Edit(src/**)",))
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "rule", "detail": "the allow rule Edit(src/**) (cli)"},
        "message": None,
        "mode": "default",
    }


async def test_a_deny_rule_refuses_and_says_which(tmp_path: Path, project: Path):
    record = await decision_record(
        tmp_path, project, "Bash", {"command": "rm -rf build"}, rules=("deny Bash(rm:*)",)
    )
    assert record == {
        "behavior": "deny",
        "decided_by": {"kind": "rule", "detail": "the deny rule Bash(rm:*) (cli)"},
        "message": "Bash was denied by the deny rule Bash(rm:*) (cli).",
        "mode": "default",
        "sandbox": None,
        "sandbox_why": None,
    }


async def test_an_ask_rule_asks_and_says_which(tmp_path: Path, project: Path):
    record = await decision_record(
        tmp_path, project, "Read", {"file_path": "src/main.py"}, rules=("ask Read(src/**)",)
    )
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "rule", "detail": "the ask rule Read(src/**) (cli)"},
        "message": "The ask rule Read(src/**) (cli) asks before this call.",
        "mode": "default",
    }


async def test_the_analysis_asks_about_a_command_that_changes_things(tmp_path: Path, project: Path):
    record = await decision_record(tmp_path, project, "Bash", {"command": "touch made"})
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "analysis", "detail": "`touch made` is not a read-only command"},
        "message": "`touch made` is not a read-only command.",
        "mode": "default",
        **NO_SANDBOX,
    }


async def test_a_write_outside_the_working_directories_says_so(tmp_path: Path, project: Path):
    outside = tmp_path / "elsewhere.txt"
    raw = {"file_path": str(outside), "content": "z\n"}
    record = await decision_record(tmp_path, project, "Write", raw, "acceptEdits")
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "default", "detail": "no rule allows it"},
        "message": f"Write would change {outside}, outside the working directories.",
        "mode": "acceptEdits",
    }


async def test_a_write_inside_asks_without_saying_outside(tmp_path: Path, project: Path):
    raw = {"file_path": "src/new.py", "content": "y = 2\n"}
    record = await decision_record(tmp_path, project, "Write", raw)
    assert record["message"] == f"Write would change {project / 'src' / 'new.py'}."
    assert record["decided_by"] == {"kind": "default", "detail": "no rule allows it"}


async def test_a_read_outside_the_working_directories_says_where_it_reaches(
    tmp_path: Path, project: Path
):
    outside = tmp_path / "notes.txt"
    outside.write_text("private\n")
    record = await decision_record(tmp_path, project, "Read", {"file_path": str(outside)})
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "default", "detail": f"reaches {outside}"},
        "message": f"Read reaches {outside}, outside the working directories.",
        "mode": "default",
    }


async def test_a_protected_path_asks_and_says_it_is_protected(tmp_path: Path, project: Path):
    raw = {"file_path": ".git/config", "content": "[core]\n"}
    record = await decision_record(tmp_path, project, "Write", raw, "acceptEdits")
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "default", "detail": ".git is protected"},
        "message": f"Write would change {project / '.git' / 'config'}, and .git is protected.",
        "mode": "acceptEdits",
    }


async def test_a_hook_that_refuses_is_named(tmp_path: Path, project: Path):
    hook = PreToolUseOutcome(permission="deny", reason="no touching", source=HOOK)
    record = await decision_record(tmp_path, project, "Bash", {"command": "touch made"}, hook=hook)
    assert record == {
        "behavior": "deny",
        "decided_by": {"kind": "hook", "detail": HOOK},
        "message": "no touching",
        "mode": "default",
        "sandbox": None,
        "sandbox_why": None,
    }


async def test_a_hook_that_allows_is_named_with_the_sandbox_it_runs_in(
    tmp_path: Path, project: Path
):
    hook = PreToolUseOutcome(permission="allow", source=HOOK)
    record = await decision_record(
        tmp_path,
        project,
        "Bash",
        {"command": "touch made"},
        hook=hook,
        sandbox=FixedSandbox(SandboxSettings()),
    )
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "hook", "detail": HOOK},
        "message": None,
        "mode": "default",
        "sandbox": "none",
        "sandbox_why": f"allowed by {HOOK}",
    }


async def test_a_read_only_command_runs_in_the_read_only_sandbox(tmp_path: Path, project: Path):
    record = await decision_record(
        tmp_path, project, "Bash", {"command": "ls"}, sandbox=FixedSandbox(SandboxSettings())
    )
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "mode", "detail": "a read-only call inside the working directories"},
        "message": None,
        "mode": "default",
        "sandbox": "read-only",
        "sandbox_why": "judged read-only by the analysis",
    }


async def test_the_sandbox_policy_allows_what_would_ask_when_told_to(tmp_path: Path, project: Path):
    settings = SandboxSettings(auto_allow_bash_if_sandboxed=True)
    record = await decision_record(
        tmp_path, project, "Bash", {"command": "touch made"}, sandbox=FixedSandbox(settings)
    )
    why = "sandbox.autoAllowBashIfSandboxed (it runs in the workspace sandbox)"
    assert record == {
        "behavior": "allow",
        "decided_by": {"kind": "sandbox", "detail": why},
        "message": None,
        "mode": "default",
        "sandbox": "workspace",
        "sandbox_why": why,
    }


async def test_the_sandbox_policy_refuses_when_it_is_required_and_missing(
    tmp_path: Path, project: Path
):
    settings = SandboxSettings(fail_if_unavailable=True)
    record = await decision_record(
        tmp_path,
        project,
        "Bash",
        {"command": "ls"},
        sandbox=FixedSandbox(settings, available=False),
    )
    assert record == {
        "behavior": "deny",
        "decided_by": {"kind": "sandbox", "detail": "sandbox.failIfUnavailable"},
        "message": "Commands cannot run here: the settings require the sandbox "
        "(sandbox.failIfUnavailable) and it is unavailable "
        "(Landlock is not offered by this kernel).",
        "mode": "default",
        "sandbox": None,
        "sandbox_why": None,
    }


async def test_leaving_the_sandbox_always_asks_and_says_so(tmp_path: Path, project: Path):
    raw = {"command": "ls", "dangerously_disable_sandbox": True}
    record = await decision_record(
        tmp_path,
        project,
        "Bash",
        raw,
        "acceptEdits",
        sandbox=FixedSandbox(SandboxSettings()),
    )
    assert record == {
        "behavior": "ask",
        "decided_by": {
            "kind": "sandbox",
            "detail": "the command asks to run without the sandbox",
        },
        "message": "It asks to run WITHOUT the sandbox (dangerously_disable_sandbox), "
        "which always asks.",
        "mode": "acceptEdits",
        "sandbox": "none",
        "sandbox_why": "approved to leave the sandbox",
    }


async def test_a_tools_own_check_is_named(tmp_path: Path, project: Path):
    """No built-in tool has a check of its own today; a tool that does (a plugin's, say) must
    still be named in the record as what decided."""
    from permission_tools import Opaque

    from core.tool import PermissionResult

    class Guarded(Opaque):
        name = "Guarded"

        async def check_permissions(self, input: Any, context: Any) -> PermissionResult:
            if input.command == "refuse":
                return PermissionResult("deny", "Guarded never runs this.")
            return PermissionResult("ask", "Guarded wants a look first.")

    refused = await decision_record(
        tmp_path, project, "Guarded", {"command": "refuse"}, tool=Guarded()
    )
    assert refused == {
        "behavior": "deny",
        "decided_by": {"kind": "tool", "detail": "Guarded's own check"},
        "message": "Guarded never runs this.",
        "mode": "default",
    }
    (tmp_path / "audit.jsonl").unlink()
    asks = await decision_record(tmp_path, project, "Guarded", {"command": "go"}, tool=Guarded())
    assert asks == {
        "behavior": "ask",
        "decided_by": {"kind": "tool", "detail": "Guarded's own check"},
        "message": "Guarded wants a look first.",
        "mode": "default",
    }


def mcp_tool(name: str, *, read_only: bool) -> Any:
    from mcp.types import Tool as ListedTool
    from mcp.types import ToolAnnotations

    from core.mcp.tool import McpTool

    listed = ListedTool(
        name=name,
        inputSchema={"type": "object", "properties": {"title": {"type": "string"}}},
        annotations=ToolAnnotations(readOnlyHint=read_only),
    )
    # The connection is only used to call the tool, which deciding never does.
    return McpTool(listed, SimpleNamespace(name="tracker"))  # type: ignore[arg-type]


async def test_an_mcp_tool_that_changes_things_asks_under_its_full_name(
    tmp_path: Path, project: Path
):
    tool = mcp_tool("create_issue", read_only=False)
    record = await decision_record(
        tmp_path, project, "mcp__tracker__create_issue", {"title": "bug"}, tool=tool
    )
    assert record == {
        "behavior": "ask",
        "decided_by": {"kind": "default", "detail": "no rule allows it"},
        "message": "mcp__tracker__create_issue can change things and no rule allows it.",
        "mode": "default",
    }


async def test_an_mcp_server_rule_allows_its_tools(tmp_path: Path, project: Path):
    tool = mcp_tool("create_issue", read_only=False)
    record = await decision_record(
        tmp_path,
        project,
        "mcp__tracker__create_issue",
        {"title": "bug"},
        rules=("allow mcp__tracker",),
        tool=tool,
    )
    assert record["behavior"] == "allow" and record["mode"] == "default"
    assert record["decided_by"] == {"kind": "rule", "detail": "the allow rule mcp__tracker (cli)"}


# --- the person's answers, and the rules they keep ------------------------------------------


async def run_asked(
    tmp_path: Path,
    project: Path,
    answers: list[PermissionAnswer],
    calls: list[tuple[str, dict[str, Any]]],
    mode: PermissionMode = "default",
    agent_label: str | None = None,
) -> tuple[list[dict[str, Any]], list[str], ScriptedPort]:
    """Calls through the executor, one after another, with the person answering from
    `answers`: the audit records (timestamps checked and removed) and the rules kept."""
    log = AuditLog(tmp_path / "audit.jsonl")
    kept: list[str] = []

    def remember(rule: str) -> Path:
        kept.append(rule)
        return project / ".proctor" / "settings.local.json"

    port = ScriptedPort(list(answers))
    services = make_services(
        permissions=DecisionChain(audit=log, remember=remember),
        permission_port=port,
        agent_label=agent_label,
    )
    context = make_context(TOOLS.values(), project, permission_context=permissions(mode))
    since = time.time()
    for index, (name, raw) in enumerate(calls):
        executor = StreamingToolExecutor(services, context)
        executor.add_tool(ToolCall(f"toolu_{index}", name, raw))
        outcomes_of([u async for u in executor.get_remaining_results()])
    log.close()
    return [untimed(r, since) for r in read_log(tmp_path / "audit.jsonl")], kept, port


def write(project: Path, name: str) -> tuple[str, dict[str, Any]]:
    return ("Write", {"file_path": str(project / "src" / name), "content": "y = 2\n"})


def asked(tool_use_id: str, tool: str, raw: dict[str, Any], message: str) -> dict[str, Any]:
    return {
        "kind": "decision",
        "tool_use_id": tool_use_id,
        "tool": tool,
        "input": raw,
        "behavior": "ask",
        "decided_by": {"kind": "default", "detail": "no rule allows it"},
        "message": message,
        "mode": "default",
        "agent": None,
        "sandbox": None,
        "sandbox_why": None,
    }


def answer(tool_use_id: str, tool: str, **fields: Any) -> dict[str, Any]:
    return {
        "kind": "answer",
        "tool_use_id": tool_use_id,
        "tool": tool,
        "answer": "approve",
        "scope": "once",
        "rule": None,
        "feedback": None,
        "agent": None,
        "sandbox": None,
        **fields,
    }


async def test_allow_once_is_recorded_and_the_next_call_asks_again(tmp_path: Path, project: Path):
    records, kept, _ = await run_asked(
        tmp_path,
        project,
        [Approve("once"), Approve("once")],
        [write(project, "a.py"), write(project, "b.py")],
    )
    assert records == [
        asked(
            "toolu_0", "Write", write(project, "a.py")[1], f"Write would change {project}/src/a.py."
        ),
        answer("toolu_0", "Write"),
        asked(
            "toolu_1", "Write", write(project, "b.py")[1], f"Write would change {project}/src/b.py."
        ),
        answer("toolu_1", "Write"),
    ]
    assert kept == [] and (project / "src" / "b.py").exists()


async def test_a_session_grant_is_recorded_and_then_decides_by_its_rule(
    tmp_path: Path, project: Path
):
    records, kept, port = await run_asked(
        tmp_path,
        project,
        [Approve("session", rule="Edit(src/**)")],
        [write(project, "a.py"), write(project, "b.py")],
    )
    assert records == [
        asked(
            "toolu_0", "Write", write(project, "a.py")[1], f"Write would change {project}/src/a.py."
        ),
        answer("toolu_0", "Write", scope="session", rule="Edit(src/**)"),
        {
            "kind": "decision",
            "tool_use_id": "toolu_1",
            "tool": "Write",
            "input": write(project, "b.py")[1],
            "behavior": "allow",
            "decided_by": {"kind": "rule", "detail": "the allow rule Edit(src/**) (session)"},
            "message": None,
            "mode": "default",
            "agent": None,
            "sandbox": None,
            "sandbox_why": None,
        },
    ]
    assert kept == [] and len(port.requests) == 1


async def test_allow_always_is_recorded_with_the_rule_kept_in_the_settings(
    tmp_path: Path, project: Path
):
    records, kept, _ = await run_asked(
        tmp_path,
        project,
        [Approve("always", rule="Edit(src/**)")],
        [write(project, "a.py"), write(project, "b.py")],
    )
    assert records[1] == answer("toolu_0", "Write", scope="always", rule="Edit(src/**)")
    assert records[2]["behavior"] == "allow"
    assert records[2]["decided_by"] == {
        "kind": "rule",
        "detail": "the allow rule Edit(src/**) (session)",
    }
    assert kept == ["Edit(src/**)"]


async def test_a_grant_without_a_rule_records_the_rule_it_kept(tmp_path: Path, project: Path):
    """An answer that names no rule keeps the request's first suggestion: the record says
    which rule that was, not "none"."""
    records, kept, _ = await run_asked(
        tmp_path, project, [Approve("always")], [write(project, "a.py"), write(project, "b.py")]
    )
    assert kept == ["Edit(src/**)"]
    assert records[1] == answer("toolu_0", "Write", scope="always", rule="Edit(src/**)")
    assert records[2]["decided_by"]["detail"] == "the allow rule Edit(src/**) (session)"


async def test_a_no_is_recorded_with_what_the_person_said_instead(tmp_path: Path, project: Path):
    records, kept, _ = await run_asked(
        tmp_path, project, [Reject(feedback="put it in lib/ instead")], [write(project, "a.py")]
    )
    assert records == [
        asked(
            "toolu_0", "Write", write(project, "a.py")[1], f"Write would change {project}/src/a.py."
        ),
        answer("toolu_0", "Write", answer="reject", scope=None, feedback="put it in lib/ instead"),
    ]
    assert kept == [] and not (project / "src" / "a.py").exists()


async def test_a_sub_agents_question_is_recorded_with_the_agent_that_asked(
    tmp_path: Path, project: Path
):
    records, _, port = await run_asked(
        tmp_path, project, [Approve("once")], [write(project, "a.py")], agent_label="Explore #2"
    )
    assert port.requests[0].agent_label == "Explore #2"
    assert records[1] == answer("toolu_0", "Write", agent="Explore #2")


async def test_a_remembered_rule_decides_in_the_next_session_and_names_its_file(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
):
    """ "Always" writes the rule to the project's local settings; a session built from those
    settings decides by it, and the record says which file the rule came from."""
    from core.permissions.setup import permission_context_from
    from core.settings.read import load_settings
    from core.settings.write import remember_allow_rule

    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))
    path = remember_allow_rule(project, "Edit(src/**)")
    context, _ = permission_context_from(load_settings(project))
    [rule] = context.rules_with("allow")
    log = AuditLog(tmp_path / "audit.jsonl")
    tool = TOOLS["Write"]
    call = make_context(TOOLS.values(), project, permission_context=context).for_call(
        "toolu_next", make_context([]).abort
    )
    raw = {"file_path": "src/c.py", "content": "c\n"}
    await DecisionChain(audit=log).decide(tool, tool.parse_input(raw), call, NO_HOOK)
    log.close()
    [record] = read_log(tmp_path / "audit.jsonl")
    assert record["behavior"] == "allow"
    assert record["decided_by"] == {
        "kind": "rule",
        "detail": f"the allow rule Edit(src/**) in {path}",
    }
    assert str(rule) == "Edit(src/**)"


async def test_a_write_outside_asks_the_person_in_those_words(tmp_path: Path, project: Path):
    outside = tmp_path / "elsewhere.txt"
    _, _, port = await run_asked(
        tmp_path,
        project,
        [Reject()],
        [("Write", {"file_path": str(outside), "content": "z\n"})],
    )
    [request] = port.requests
    assert request.message == f"Write would change {outside}, outside the working directories."
    assert request.risk == "high"


# --- the file itself --------------------------------------------------------------------------


def test_each_record_is_one_line_written_once_and_kept_across_reopening(tmp_path: Path):
    from core.access.decision import Allow, DecidedBy

    path = tmp_path / "deep" / "audit.jsonl"
    first = AuditLog(path)
    decision = Allow(DecidedBy("mode", "bypass permissions mode"))
    first.decision("toolu_a", "Read", {"file_path": "naïve.txt"}, decision, permissions())
    # Flushed per line: readable before the log is closed (a crash loses nothing written).
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    first.close()
    second = AuditLog(path)
    second.decision("toolu_b", "Read", {"file_path": "b"}, decision, permissions("plan"))
    second.close()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["tool_use_id"] for line in lines] == ["toolu_a", "toolu_b"]
    assert "naïve.txt" in lines[0]  # written as the person reads it, not \u-escaped
    assert [json.loads(line)["mode"] for line in lines] == ["default", "plan"]
    assert second.error is None


def test_a_log_that_cannot_be_written_says_why_and_stops_nothing(tmp_path: Path):
    from core.access.decision import Allow, DecidedBy

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    log = AuditLog(blocker / "audit.jsonl")
    log.decision("toolu_a", "Read", {}, Allow(DecidedBy("mode", "x")), permissions())
    assert log.error is not None
    assert log.error.startswith(f"the audit log {blocker / 'audit.jsonl'} could not be written:")


async def test_a_call_nobody_can_answer_is_recorded_as_refused_and_why(
    tmp_path: Path, project: Path
):
    """Headless runs and background agents: the record says the call was refused because
    nobody was there, not that it asked (which no answer would ever follow)."""
    from dataclasses import replace

    log = AuditLog(tmp_path / "audit.jsonl")
    unattended = replace(permissions(), avoid_prompts=True)
    context = make_context(TOOLS.values(), project, permission_context=unattended).for_call(
        "toolu_alone", make_context([]).abort
    )
    tool = TOOLS["Bash"]
    decision = await DecisionChain(audit=log).decide(
        tool, tool.parse_input({"command": "touch made"}), context, NO_HOOK
    )
    log.close()
    [record] = read_log(tmp_path / "audit.jsonl")
    assert record["behavior"] == decision.behavior == "deny"
    assert record["decided_by"] == {"kind": "default", "detail": "nobody was there to approve it"}
    assert record["message"] == (
        "Bash needs approval (`touch made` is not a read-only command.) and nobody is here "
        "to give it, so it was not run."
    )
