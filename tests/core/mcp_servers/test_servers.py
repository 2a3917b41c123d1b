"""MCP servers as tools, against real stdio servers written with the SDK."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.access.context import ToolPermissionContext
from core.events import EventRecorder
from core.executor import ToolCall, run_tool_use
from core.registry import assemble_tool_pool
from tests.engine_helpers import LoopClock, close_sessions, eventually, make_context, make_services

from .helpers import fixture_config, servers, states

pytestmark = pytest.mark.asyncio


@pytest.fixture(autouse=True)
async def _close_sessions():
    yield
    await close_sessions()


async def test_a_server_s_tools_join_the_pool_after_the_built_ins(tmp_path: Path) -> None:
    mcp, recorder = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        pool = await mcp.extend(
            assemble_tool_pool(ToolPermissionContext()), ToolPermissionContext()
        )
    finally:
        await mcp.close()
    names = list(pool.names)
    mcp_names = [n for n in names if n.startswith("mcp__")]
    assert mcp_names == sorted(mcp_names)
    assert "mcp__fx__add" in mcp_names and "mcp__fx__echo" in mcp_names
    first_mcp = names.index(mcp_names[0])
    assert all(not n.startswith("mcp__") for n in names[:first_mcp])
    assert states(recorder, "fx") == ["connecting", "ready", "closed"]


async def test_a_call_runs_through_the_whole_lifecycle(tmp_path: Path) -> None:
    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        tools = mcp.tools()
        context = make_context(tools, tmp_path)
        recorder = EventRecorder()
        outcome = await run_tool_use(
            ToolCall("t1", "mcp__fx__add", {"a": 2, "b": 40}), make_services(recorder), context
        )
        assert outcome.block["content"] == "42"
        assert not outcome.block.get("is_error")
        bad = await run_tool_use(
            ToolCall("t2", "mcp__fx__add", {"a": "two", "b": 40}), make_services(), context
        )
        assert bad.block.get("is_error")
        assert "does not match the server's schema" in str(bad.block["content"])
        assert "`a`" in str(bad.block["content"])
    finally:
        await mcp.close()


async def _run(context, name: str, arguments: dict, **services):
    recorder = EventRecorder()
    outcome = await run_tool_use(
        ToolCall("t", name, arguments), make_services(recorder, **services), context
    )
    return outcome, recorder


async def test_content_maps_text_images_and_resources(tmp_path: Path) -> None:
    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx"))
        picture, _ = await _run(context, "mcp__fx__picture", {})
        blocks = picture.block["content"]
        assert isinstance(blocks, list)
        assert blocks[0] == {"type": "text", "text": "one red pixel"}
        assert blocks[1]["type"] == "image"
        assert blocks[1]["source"]["media_type"] == "image/png"
        document, _ = await _run(context, "mcp__fx__document", {})
        assert document.block["content"] == "[resource file:///notes.txt]\nnotes"
    finally:
        await mcp.close()


async def test_an_error_result_is_an_error_the_model_reads(tmp_path: Path) -> None:
    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx"))
        outcome, _ = await _run(context, "mcp__fx__fail", {"message": "the disk is full"})
        assert outcome.block.get("is_error") is True
        assert "the disk is full" in str(outcome.block["content"])
        assert outcome.failed_stage == "call"
        # The server is still there for the next call.
        again, _ = await _run(context, "mcp__fx__echo", {"text": "still here"})
        assert again.block["content"] == "still here"
    finally:
        await mcp.close()


async def test_a_server_that_crashes_mid_call_fails_that_call_and_restarts_on_next_use(
    tmp_path: Path,
) -> None:
    mcp, recorder = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx"))
        first_pid, _ = await _run(context, "mcp__fx__pid", {})
        crashed, _ = await _run(context, "mcp__fx__crash", {})
        assert crashed.block.get("is_error") is True
        assert "stopped before answering" in str(crashed.block["content"])
        assert states(recorder, "fx")[-1] == "crashed"
        second_pid, _ = await _run(context, "mcp__fx__pid", {})
        assert not second_pid.block.get("is_error"), second_pid.block
        assert second_pid.block["content"] != first_pid.block["content"]
        assert states(recorder, "fx")[-2:] == ["connecting", "ready"]
    finally:
        await mcp.close()


async def test_a_server_that_exits_at_start_is_failed_with_what_it_said(tmp_path: Path) -> None:
    mcp, recorder = servers(
        fixture_config("broken", "exit"), fixture_config("fx"), log_dir=tmp_path
    )
    try:
        await mcp.ready()
        assert [t.name for t in mcp.tools() if t.server == "broken"] == []
        assert any(t.name == "mcp__fx__add" for t in mcp.tools())
        failed = [e for e in recorder.events if getattr(e, "state", "") == "failed"]
        assert [e.server for e in failed] == ["broken"]
        assert "cannot find its configuration" in failed[0].detail
    finally:
        await mcp.close()


async def test_a_missing_command_is_failed_in_words(tmp_path: Path) -> None:
    from core.settings.mcp_servers import McpServerConfig

    config = McpServerConfig("ghost", "stdio", "user", command="/nonexistent/mcp-server")
    mcp, recorder = servers(config, log_dir=tmp_path)
    try:
        await mcp.ready()
    finally:
        await mcp.close()
    failed = [e for e in recorder.events if getattr(e, "state", "") == "failed"]
    assert failed and "not found" in failed[0].detail


async def test_a_hanging_server_fails_after_its_timeout_without_holding_up_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = LoopClock(monkeypatch)
    mcp, recorder = servers(
        fixture_config("slow", "hang"),
        fixture_config("fx"),
        log_dir=tmp_path,
        startup_timeout_s=600.0,
    )
    try:
        mcp.start()
        await eventually(lambda: "ready" in states(recorder, "fx"), "the good server starting")
        assert mcp.starting == ("slow",)
        log = tmp_path / "slow.log"
        await eventually(
            lambda: log.exists() and "thinking" in log.read_text(), "the hanging server's words"
        )
        clock.advance(601.0)
        await mcp.ready()
        assert states(recorder, "slow") == ["connecting", "failed"]
        failed = next(e for e in recorder.events if getattr(e, "state", "") == "failed")
        assert "did not start within 600 s" in failed.detail
        assert "thinking very hard" in failed.detail
    finally:
        await mcp.close()
    assert states(recorder, "fx")[-1] == "closed"


async def test_a_huge_result_is_saved_like_a_built_in_s(tmp_path: Path) -> None:
    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx"))
        outcome, _ = await _run(context, "mcp__fx__huge", {"n": 300_000}, session_dir=tmp_path)
    finally:
        await mcp.close()
    content = str(outcome.block["content"])
    assert len(content) < 20_000
    assert outcome.saved is not None
    saved = outcome.saved.path.read_text()
    assert len(saved) == 300_000 and saved.startswith("line 000000")


async def test_a_tool_named_like_a_built_in_keeps_its_prefix_and_the_built_in_wins(
    tmp_path: Path,
) -> None:
    mcp, _ = servers(fixture_config("fs", "collide"), log_dir=tmp_path)
    try:
        pool = await mcp.extend(
            assemble_tool_pool(ToolPermissionContext()), ToolPermissionContext()
        )
    finally:
        await mcp.close()
    assert pool.find("Read") is not None and not pool.find("Read").is_mcp
    assert pool.find("mcp__fs__Read").is_mcp
    assert pool.names.count("Read") == 1


async def test_tools_proctor_cannot_offer_are_skipped_and_said_not_the_server(
    tmp_path: Path,
) -> None:
    mcp, recorder = servers(fixture_config("odd", "bad-tools"), log_dir=tmp_path)
    try:
        await mcp.ready()
        names = {t.name for t in mcp.tools()}
    finally:
        await mcp.close()
    assert "mcp__odd__add" in names
    assert not any(n.endswith(("has space", "broken_schema")) for n in names)
    assert not any("xxxx" in n for n in names)
    ready = next(e for e in recorder.events if getattr(e, "state", "") == "ready")
    assert ready.tools == len(names)
    for skipped in ("has space", "broken_schema", "x" * 70):
        assert skipped in ready.detail
    assert "not valid JSON Schema" in ready.detail and "64 characters" in ready.detail


def _allowing(rule: str) -> ToolPermissionContext:
    from core.access.rules import parse_rule

    return ToolPermissionContext().with_rules(parse_rule(rule, "allow"))


async def test_esc_cancels_a_call_the_server_is_still_working_on(tmp_path: Path) -> None:
    from core.abort import AbortController
    from core.executor.streaming import StreamingToolExecutor

    mcp, _ = servers(fixture_config("fx"), log_dir=tmp_path)
    try:
        await mcp.ready()
        turn = AbortController()
        context = make_context(
            mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx"), abort=turn
        )
        recorder = EventRecorder()
        executor = StreamingToolExecutor(make_services(recorder), context)
        executor.add_tool(ToolCall("w", "mcp__fx__wait", {}))
        await eventually(lambda: "started" in recorder.kinds("w"), "the call starting")
        turn.abort("interrupt")
        updates = [u async for u in executor.get_remaining_results()]
        (outcome,) = [u.outcome for u in updates if hasattr(u, "outcome")]
        assert outcome.cancelled == "user_interrupted"
        # The server itself carries on for the next call.
        after, _ = await _run(
            make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__fx")),
            "mcp__fx__echo",
            {"text": "still serving"},
        )
        assert after.block["content"] == "still serving"
    finally:
        await mcp.close()


async def test_closing_stops_every_server_process(tmp_path: Path) -> None:
    import os

    mcp, recorder = servers(fixture_config("a"), fixture_config("b"), log_dir=tmp_path)
    await mcp.ready()
    context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__a"))
    pid_a, _ = await _run(context, "mcp__a__pid", {})
    context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__b"))
    pid_b, _ = await _run(context, "mcp__b__pid", {})
    await mcp.close()
    for pid in (int(str(pid_a.block["content"])), int(str(pid_b.block["content"]))):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert states(recorder, "a")[-1] == "closed" and states(recorder, "b")[-1] == "closed"


async def test_a_streamable_http_server_by_url_with_its_headers(tmp_path: Path) -> None:
    import asyncio
    import socket
    import subprocess
    import sys

    from core.settings.mcp_servers import McpServerConfig

    from .helpers import FIXTURE

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        str(FIXTURE),
        "http",
        str(port),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def listening() -> bool:
        with socket.socket() as attempt:
            return attempt.connect_ex(("127.0.0.1", port)) == 0

    try:
        await eventually(listening, "the HTTP server listening")
        config = McpServerConfig(
            "web",
            "http",
            "user",
            url=f"http://127.0.0.1:{port}/mcp",
            headers={"X-Team": "proctor"},
        )
        mcp, recorder = servers(config, log_dir=tmp_path)
        try:
            await mcp.ready()
            assert states(recorder, "web") == ["connecting", "ready"]
            context = make_context(mcp.tools(), tmp_path, permission_context=_allowing("mcp__web"))
            added, _ = await _run(context, "mcp__web__add", {"a": 20, "b": 22})
            assert added.block["content"] == "42"
            team, _ = await _run(context, "mcp__web__header", {"name": "x-team"})
            assert team.block["content"] == "proctor"
        finally:
            await mcp.close()
    finally:
        server.terminate()
        await server.wait()
