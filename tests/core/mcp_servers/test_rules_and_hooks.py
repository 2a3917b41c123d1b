"""MCP tools under the permission rules, the modes, hooks and deferred loading."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.access.context import ToolPermissionContext
from core.access.rules import parse_rule
from core.executor import ToolCall, run_tool_use
from core.hook_runner import CommandHookRunner
from core.registry import assemble_tool_pool
from core.settings.values import HookCommand, HookEntry
from tests.engine_helpers import ScriptedPort, close_sessions, make_context, make_services

from .helpers import fixture_config, servers

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
async def _close_sessions():
    yield
    await close_sessions()


@pytest.fixture
async def fx(tmp_path: Path):
    mcp, _recorder = servers(fixture_config("fx"), log_dir=tmp_path / "logs")
    await mcp.ready()
    yield mcp
    await mcp.close()


def _permissions(*rules: tuple[str, str], mode: str = "default") -> ToolPermissionContext:
    parsed = tuple(parse_rule(text, behavior) for behavior, text in rules)  # type: ignore[arg-type]
    return ToolPermissionContext(mode=mode, rules=parsed)  # type: ignore[arg-type]


async def _decide(mcp, tmp_path: Path, name: str, arguments: dict, permissions, port=None):
    context = make_context(mcp.tools(), tmp_path, permission_context=permissions)
    port = port or ScriptedPort()
    services = make_services(permission_port=port)
    outcome = await run_tool_use(ToolCall("t", name, arguments), services, context)
    return outcome, port


@pytest.mark.parametrize(
    "rule", ["mcp__fx", "mcp__fx__*", "mcp__fx__echo"], ids=["server", "server-star", "tool"]
)
async def test_allow_rules_name_a_server_or_one_tool(fx, tmp_path: Path, rule: str) -> None:
    outcome, port = await _decide(
        fx, tmp_path, "mcp__fx__echo", {"text": "hi"}, _permissions(("allow", rule))
    )
    assert outcome.block["content"] == "hi"
    assert port.requests == []


async def test_a_tool_rule_does_not_cover_its_sibling(fx, tmp_path: Path) -> None:
    outcome, port = await _decide(
        fx, tmp_path, "mcp__fx__wipe", {"target": "x"}, _permissions(("allow", "mcp__fx__echo"))
    )
    assert len(port.requests) == 1  # asked, then approved by the scripted port
    assert outcome.block["content"] == "wiped x"


async def test_without_a_rule_a_tool_asks_and_a_read_only_one_does_not(fx, tmp_path: Path) -> None:
    _, asked = await _decide(fx, tmp_path, "mcp__fx__echo", {"text": "hi"}, _permissions())
    assert [r.tool_name for r in asked.requests] == ["mcp__fx__echo"]
    added, silent = await _decide(fx, tmp_path, "mcp__fx__add", {"a": 1, "b": 1}, _permissions())
    assert added.block["content"] == "2" and silent.requests == []


async def test_ask_beats_allow_and_deny_beats_both(fx, tmp_path: Path) -> None:
    _, port = await _decide(
        fx,
        tmp_path,
        "mcp__fx__add",
        {"a": 1, "b": 1},
        _permissions(("allow", "mcp__fx"), ("ask", "mcp__fx__add")),
    )
    assert len(port.requests) == 1
    denied, port = await _decide(
        fx,
        tmp_path,
        "mcp__fx__echo",
        {"text": "hi"},
        _permissions(("allow", "mcp__fx"), ("deny", "mcp__fx__echo")),
    )
    assert denied.block.get("is_error") and port.requests == []
    assert "hi" not in str(denied.block["content"])


async def test_plan_mode_runs_read_only_tools_and_refuses_the_rest(fx, tmp_path: Path) -> None:
    added, _ = await _decide(
        fx, tmp_path, "mcp__fx__add", {"a": 2, "b": 2}, _permissions(mode="plan")
    )
    assert added.block["content"] == "4"
    echoed, port = await _decide(
        fx, tmp_path, "mcp__fx__echo", {"text": "hi"}, _permissions(mode="plan")
    )
    assert echoed.block.get("is_error") and port.requests == []


async def test_a_blanket_deny_hides_a_server_s_tools_from_the_model(fx) -> None:
    permissions = _permissions(("deny", "mcp__fx"))
    pool = await fx.extend(assemble_tool_pool(permissions), permissions)
    assert not [name for name in pool.names if name.startswith("mcp__fx")]
    one = _permissions(("deny", "mcp__fx__wipe"))
    pool = await fx.extend(assemble_tool_pool(one), one)
    assert "mcp__fx__wipe" not in pool.names and "mcp__fx__echo" in pool.names


async def test_hints_decide_what_may_run_together(fx) -> None:
    tools = {tool.name: tool for tool in fx.tools()}
    arguments = tools["mcp__fx__add"].parse_input({"a": 1, "b": 2})
    assert tools["mcp__fx__add"].is_read_only(arguments)
    assert tools["mcp__fx__add"].is_concurrency_safe(arguments)
    wipe = tools["mcp__fx__wipe"].parse_input({"target": "x"})
    assert not tools["mcp__fx__wipe"].is_read_only(wipe)
    assert not tools["mcp__fx__wipe"].is_concurrency_safe(wipe)
    echo = tools["mcp__fx__echo"].parse_input({"text": "x"})
    assert not tools["mcp__fx__echo"].is_read_only(echo)
    assert tools["mcp__fx__echo"].is_concurrency_safe(echo)


def _hook(tmp_path: Path, event: str, matcher: str, script: str) -> HookEntry:
    program = tmp_path / f"{event}.py"
    program.write_text(script)
    command = HookCommand(f"{sys.executable} {program}", 30, "user", None)
    return HookEntry(event, matcher, (command,))  # type: ignore[arg-type]


def _hooks(tmp_path: Path, *entries: HookEntry) -> CommandHookRunner:
    return CommandHookRunner(
        list(entries),
        session_id="s",
        transcript_path=None,
        cwd=tmp_path,
        permission_mode=lambda: "default",
        trusted=True,
    )


async def test_hooks_match_mcp_names_and_may_replace_the_output(fx, tmp_path: Path) -> None:
    seen = tmp_path / "seen.jsonl"
    post = _hook(
        tmp_path,
        "PostToolUse",
        "mcp__fx__.*",
        "import json, sys\n"
        "payload = json.load(sys.stdin)\n"
        f"open({str(seen)!r}, 'a').write(json.dumps(payload) + '\\n')\n"
        "print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse',\n"
        "    'updatedMCPToolOutput': [{'type': 'text', 'text': 'redacted by a hook'}]}}))\n",
    )
    context = make_context(
        fx.tools(), tmp_path, permission_context=_permissions(("allow", "mcp__fx"))
    )
    services = make_services(hooks=_hooks(tmp_path, post))
    outcome = await run_tool_use(
        ToolCall("t", "mcp__fx__echo", {"text": "a secret"}), services, context
    )
    assert outcome.block["content"] == "redacted by a hook"
    payload = json.loads(seen.read_text().splitlines()[0])
    assert payload["tool_name"] == "mcp__fx__echo"
    assert payload["tool_input"] == {"text": "a secret"}
    assert payload["tool_response"] == [{"type": "text", "text": "a secret"}]


async def test_a_pre_tool_use_hook_can_block_an_mcp_tool(fx, tmp_path: Path) -> None:
    pre = _hook(
        tmp_path,
        "PreToolUse",
        "mcp__fx__wipe",
        "import sys\nprint('wiping is not allowed here', file=sys.stderr)\nsys.exit(2)\n",
    )
    context = make_context(
        fx.tools(), tmp_path, permission_context=_permissions(("allow", "mcp__fx"))
    )
    services = make_services(hooks=_hooks(tmp_path, pre))
    outcome = await run_tool_use(
        ToolCall("t", "mcp__fx__wipe", {"target": "all"}), services, context
    )
    assert outcome.block.get("is_error")
    assert "wiping is not allowed here" in str(outcome.block["content"])
    echoed = await run_tool_use(ToolCall("t2", "mcp__fx__echo", {"text": "ok"}), services, context)
    assert echoed.block["content"] == "ok"


async def test_many_tools_are_deferred_behind_tool_search(tmp_path: Path) -> None:
    from core.tools.tool_search import ToolSearch

    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path, defer_threshold_chars=100)
    try:
        permissions = _permissions(("allow", "mcp__fx"))
        pool = await mcp.extend(assemble_tool_pool(permissions), permissions)
        deferred = {tool.name for tool in pool.deferred()}
        assert "mcp__fx__echo" in deferred
        assert all(not tool.should_defer for tool in pool if not tool.is_mcp)
        context = make_context(pool, tmp_path, permission_context=permissions)
        found = await run_tool_use(
            ToolCall("s", ToolSearch.name, {"query": "echo text back"}), make_services(), context
        )
        assert "mcp__fx__echo" in str(found.block["content"])
        assert found.context_modifier is not None
        loaded = found.context_modifier(context)
        assert "mcp__fx__echo" in loaded.options.discovered_tools
    finally:
        await mcp.close()
    few, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        pool = await few.extend(assemble_tool_pool(permissions), permissions)
        assert not pool.deferred()
    finally:
        await few.close()
