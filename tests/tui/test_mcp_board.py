"""What the app says about MCP servers, decided without a screen: the board the call book
keeps, the words for each state, the notice, and an MCP tool's name where space is short."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from core.events import McpServerChanged, ToolCompleted, ToolQueued
from tui.calls import CallBook
from tui.mcp_board import ServerStatus, headline, notice_for, state_words
from tui.widgets.queue_layout import fit_tool_name


def changed(server: str, state, tools: int = 0, detail: str = "") -> McpServerChanged:
    return McpServerChanged(server=server, state=state, tools=tools, detail=detail)


def test_the_book_keeps_each_server_s_latest_state_and_counts_the_ready_ones():
    book = CallBook()
    assert not book.servers.configured and book.servers.summary() == ""
    assert book.servers.health() == "none"
    book.apply(changed("github", "connecting"))
    book.apply(changed("docs", "connecting"))
    assert book.servers.summary() == "MCP 0/2" and book.servers.health() == "connecting"
    book.apply(changed("github", "ready", tools=12))
    assert book.servers.summary() == "MCP 1/2" and book.servers.health() == "connecting"
    book.apply(changed("docs", "failed", detail="did not start"))
    assert book.servers.summary() == "MCP 1/2" and book.servers.health() == "failed"
    assert [s.name for s in book.servers.sorted()] == ["docs", "github"]
    book.apply(changed("docs", "ready", tools=1))
    assert book.servers.summary() == "MCP 2/2" and book.servers.health() == "ready"
    assert not book.calls  # servers are not calls


def test_a_server_not_started_is_neither_ready_nor_a_failure():
    book = CallBook()
    book.apply(changed("github", "ready", tools=3))
    book.apply(changed("project-tools", "skipped", detail="the project is not trusted"))
    assert book.servers.summary() == "MCP 1/2"
    assert book.servers.health() == "partial"


def test_each_state_in_words():
    def words(state, tools: int = 0) -> str:
        return state_words(ServerStatus("x", state, tools))

    assert words("ready", 12) == "ready · 12 tools"
    assert words("ready", 1) == "ready · 1 tool"
    assert words("ready", 0) == "ready · no tools"
    assert words("connecting") == "connecting…"
    assert words("failed") == "failed"
    assert words("crashed") == "crashed — restarts on next use"
    assert words("skipped") == "not started: project not trusted"


def test_the_headline_of_a_detail_takes_the_line_it_introduces():
    detail = "did not start within 30 s; it wrote:\nfixture: thinking hard\nmore\n"
    assert headline(detail) == "did not start within 30 s; it wrote: fixture: thinking hard"
    assert headline("its command was not found (npx)") == "its command was not found (npx)"
    assert headline("") == ""


def test_a_failure_or_a_crash_is_a_notice_and_other_states_are_not():
    failed = notice_for(changed("gh", "failed", detail="its command was not found (npx)\nx"))
    assert failed == (
        "MCP server `gh` failed to start: its command was not found (npx) (ctrl+s for details)",
        "error",
    )
    crashed = notice_for(changed("gh", "crashed", detail="it stopped during a call"))
    assert crashed is not None and crashed[1] == "warning"
    assert crashed[0].startswith("MCP server `gh` crashed: it stopped during a call;")
    for state in ("connecting", "ready", "skipped", "closed"):
        assert notice_for(changed("gh", state)) is None


def test_an_mcp_tool_s_name_gives_up_its_server_before_its_own_name():
    name = "mcp__github__create_issue"
    assert fit_tool_name(name, 40) == "github › create_issue"
    assert fit_tool_name(name, 21) == "github › create_issue"
    assert fit_tool_name(name, 20) == "gith… › create_issue"
    assert fit_tool_name(name, 16) == "create_issue"
    assert fit_tool_name(name, 8) == "create_…"
    assert fit_tool_name("WebFetch", 5) == "WebF…"


def test_a_record_and_a_saved_output_name_an_mcp_tool_as_people_read_it(tmp_path: Path):
    from tui.saved_entries import saved_output_entries

    book = CallBook()
    ids = {"tool_use_id": "a", "tool_name": "mcp__github__list_issues", "batch_id": "b1"}
    book.apply(ToolQueued(input={}, summary="open", concurrency_safe=True, **ids))
    saved = tmp_path / "tool-results" / "a.txt"
    saved.parent.mkdir()
    saved.write_text("issue 1\n")
    book.apply(ToolCompleted(duration_s=0.1, is_error=False, content="…", **ids))
    book.calls["a"].persisted = saved
    assert book.calls["a"].display_name == "github › list_issues"
    assert book.calls["a"].tool_name == "mcp__github__list_issues"  # the name rules match
    (entry,) = saved_output_entries(tmp_path, book)
    assert entry.tool_name == "github › list_issues"


def test_the_app_and_its_servers_screen_do_not_load_the_mcp_sdk():
    """The SDK costs over half a second; the first frame must not wait for it."""
    code = (
        "import sys, tui.app, tui.screens.mcp; "
        "print(any(m == 'mcp' or m.startswith('mcp.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
