"""MCP servers on screen: the status bar's count, the servers screen, the conversation's
notice, and MCP calls named `server › tool`, driven through the real app.

Server states reach the app the one way the engine sends them: as events on the session's
sink (the transcript's, then the bridge's), whether a test puts them there or real stdio
servers (the fixture server of tests/core/mcp_servers) started by the session code do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until
from textual.app import App
from textual.color import Color
from textual.widget import Widget
from textual.widgets import Label

from core.events import EngineEvent, McpServerChanged, ToolCompleted, ToolQueued, ToolStarted
from tests.core.mcp_servers.helpers import fixture_config
from tui.screens.mcp import McpServersScreen
from tui.screens.permission import PermissionScreen
from tui.widgets.conversation import Notice

SMALL = (80, 24)
SIZES = pytest.mark.parametrize("size", [SIZE, SMALL], ids=["120x40", "80x24"])
DETAIL = (
    "did not start within 30 s; it wrote:\n"
    "docs-server: listening on :8080\n"
    "docs-server: cannot reach the index"
)


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def screen_text(app: App[Any]) -> str:
    """What the terminal shows, as plain text rows."""
    return "\n".join(
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    )


def status_line(app: Any) -> str:
    """The status bar's row as drawn (read with no dialog open)."""
    return screen_text(app).splitlines()[app.status_bar.region.y]


def emit(app: Any, *events: EngineEvent) -> None:
    """Into the session's one sink, where the engine puts every event."""
    for event in events:
        app.live.context.options.events(event)


def changed(server: str, state: Any, **more: Any) -> McpServerChanged:
    return McpServerChanged(server=server, state=state, **more)


def settled(app: Any) -> bool:
    return app.bridge.pending == 0


def colour(app: Any, widget: Widget, variable: str) -> bool:
    """Whether the widget's text is in the theme's `variable` colour."""
    return widget.styles.color == Color.parse(app.theme_variables[variable])


def mcp_segment(app: Any) -> Label:
    return app.status_bar.query_one("#status-mcp", Label)


def notices(app: Any) -> list[str]:
    return [notice.text for notice in app.conversation.query(Notice)]


def servers_screen(app: Any) -> bool:
    return isinstance(app.screen, McpServersScreen)


@SIZES
async def test_without_servers_there_is_no_segment_and_the_screen_says_how_to_add_one(
    project: Path, size: tuple[int, int]
):
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.live is not None and "idle" in status_line(app))
        assert "MCP" not in status_line(app)
        await pilot.press("ctrl+s")
        await until(pilot, lambda: servers_screen(app), "the servers screen")
        await pilot.pause()
        shown = screen_text(app)
        assert "No MCP servers are configured" in shown
        assert ".mcp.json" in shown and '"mcpServers"' in shown
        await pilot.press("escape")
        await until(pilot, lambda: not servers_screen(app))


@SIZES
async def test_server_states_reach_the_status_bar_the_open_screen_and_the_conversation(
    project: Path, size: tuple[int, int]
):
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.live is not None)
        emit(
            app,
            changed("github", "connecting"),
            changed("docs", "connecting", transport="http"),
            changed("local", "skipped", detail="the project is not trusted"),
        )
        await until(pilot, lambda: "MCP 0/3" in status_line(app), "the MCP segment")
        assert "idle" in status_line(app)  # the line still fits, what is going on included
        assert colour(app, mcp_segment(app), "text-warning")

        await pilot.press("ctrl+s")
        await until(pilot, lambda: servers_screen(app), "the servers screen")
        await pilot.pause()
        shown = screen_text(app)
        assert shown.count("connecting…") == 2
        assert "not started: project not trusted" in shown

        # While the screen is open, one server becomes ready and another fails.
        emit(
            app,
            changed("github", "ready", tools=12),
            changed("docs", "failed", detail=DETAIL, transport="http"),
        )
        await until(pilot, lambda: "ready · 12 tools" in screen_text(app), "the live update")
        await pilot.pause()
        shown = screen_text(app)
        assert "connecting…" not in shown
        assert "1 of 3 ready" in shown
        for line in DETAIL.splitlines():
            assert line in shown
        screen = app.screen
        assert isinstance(screen, McpServersScreen)
        assert colour(app, screen.rows["docs"].state, "text-error")
        assert colour(app, screen.rows["github"].state, "text-success")
        await pilot.press("escape")
        await until(pilot, lambda: not servers_screen(app))

        await until(pilot, lambda: "MCP 1/3" in status_line(app))
        assert colour(app, mcp_segment(app), "text-error")
        failed = [n for n in notices(app) if "`docs`" in n]
        assert failed == [
            "MCP server `docs` failed to start: did not start within 30 s; it wrote: "
            "docs-server: listening on :8080 (ctrl+s for details)"
        ]

        # A restart that fails as the start did is not news; a crash is.
        emit(
            app,
            changed("docs", "connecting", transport="http"),
            changed("docs", "failed", detail=DETAIL, transport="http"),
            changed("github", "crashed", detail="it stopped during a call"),
        )
        await until(pilot, lambda: settled(app) and any("crashed" in n for n in notices(app)))
        assert len([n for n in notices(app) if "`docs`" in n]) == 1
        (crash,) = [n for n in notices(app) if "`github`" in n]
        assert crash.startswith("MCP server `github` crashed: it stopped during a call")
        await until(pilot, lambda: "MCP 0/3" in status_line(app))
        await pilot.click("#status-mcp")  # the segment opens the screen too
        await until(pilot, lambda: servers_screen(app), "the screen, from a click")


@SIZES
async def test_an_mcp_call_reads_server_then_tool_in_the_queue_and_the_conversation(
    project: Path, size: tuple[int, int]
):
    app = make_app(project, [[text("hi")]], prompt=None)
    ids = {"tool_use_id": "t1", "tool_name": "mcp__github__create_issue", "batch_id": "b1"}
    async with app.run_test(size=size) as pilot:
        await until(pilot, lambda: app.live is not None)
        emit(
            app,
            ToolQueued(
                input={"title": "Ties sort wrong"},
                summary="Ties sort wrong",
                concurrency_safe=False,
                **ids,
            ),
        )
        await until(pilot, lambda: app.conversation.tool_line("t1") is not None)
        await pilot.pause()
        assert any("github › create_issue" in row for row in app.tool_queue.rows_text())
        emit(
            app,
            ToolStarted(**ids),
            ToolCompleted(duration_s=0.2, is_error=False, content="issue #7", **ids),
        )
        await until(pilot, lambda: app.book.calls["t1"].state == "done" and settled(app))
        await pilot.pause()
        (row,) = [r for r in app.tool_queue.rows_text() if "create_issue" in r]
        assert "github › create_issue" in row
        line = app.conversation.tool_line("t1")
        assert line is not None and "github › create_issue" in line.text
        assert "mcp__" not in screen_text(app)


async def test_real_servers_one_ready_one_failing_and_a_call_to_one_of_them(project: Path):
    """Real stdio servers, started by the session code and reporting on the session's sink."""
    from core.mcp.servers import MCP, McpServers

    call = {"type": "tool_use", "name": "mcp__fx__echo", "input": {"text": "hello"}}
    app = make_app(project, [[call], [text("Echoed.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        live = app.live
        assert live is not None
        # The settings cannot name servers yet; the session's own service is swapped for one
        # that has two, before the first prompt (which waits for them).
        servers = McpServers(
            [fixture_config("fx"), fixture_config("broken", "exit")],
            cwd=project,
            log_dir=live.session.directory / "mcp",
            emit=live.context.options.events,
        )
        live.context.options.services.provide(MCP, servers)
        servers.start()
        board = app.book.servers
        await until(pilot, lambda: board.ready == 1 and board.health() == "failed", "the starts")
        await until(pilot, lambda: "MCP 1/2" in status_line(app))
        (notice,) = [n for n in notices(app) if "`broken`" in n]
        assert notice.startswith("MCP server `broken` failed to start: ")
        assert "cannot find its configuration" in notice  # its own last words, from stderr

        await pilot.press("ctrl+s")
        await until(pilot, lambda: servers_screen(app))
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, McpServersScreen)
        fx, broken = screen.rows["fx"], screen.rows["broken"]
        assert "fixture_server.py normal" in str(fx.head.render())
        tools = board.servers["fx"].tools
        assert tools > 0 and str(fx.state.render()) == f"ready · {tools} tools"
        assert str(broken.state.render()) == "failed"
        assert "cannot find its configuration" in str(broken.detail.render())
        log = live.session.directory / "mcp" / "broken.log"
        assert log.exists()
        assert f"log: {log}" in str(broken.where.render())
        await pilot.press("escape")
        await until(pilot, lambda: not servers_screen(app))

        await pilot.press(*"say hello")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        await pilot.pause()
        shown = screen_text(app)
        assert "fx › echo wants permission" in shown
        assert "fx › echo can change things" in shown
        dialog = app.screen
        assert isinstance(dialog, PermissionScreen)
        assert dialog.rule == "mcp__fx__echo"  # a rule keeps the name it matches
        assert "don't ask again for mcp__fx__echo" in shown
        await pilot.press("y")
        await until(pilot, lambda: turn_over(app), "the turn to end")
        await pilot.pause()
        (record,) = app.book.calls.values()
        assert record.state == "done" and record.result == "hello"
        assert any("fx › echo" in row for row in app.tool_queue.rows_text())
        line = app.conversation.tool_line(record.tool_use_id)
        assert line is not None and "fx › echo" in line.text
        await pilot.press("ctrl+q")  # closes the session, and with it the server
    assert servers.connections["fx"].state == "closed"
