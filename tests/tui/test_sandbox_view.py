"""The sandbox as a person sees it: the status bar, the queue's badges, the conversation's
lines and the permission dialog, on the real app with the real kernel sandbox (or, for the
fallback, a kernel that says it has none)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until
from sandbox_helpers import SUPPORT, needs_sandbox, repository_running
from test_dialogs import answer, bash_request, text_of

from core.access.decision import DecidedBy
from core.permissions import session_sandbox as sandbox_session
from core.ports import Approve
from core.sandbox.support import SandboxSupport
from tui.screens.permission import PermissionScreen
from tui.widgets.conversation import Notice
from tui.widgets.status_bar import StatusBar

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello\n")
    return folder


def status_text(app) -> str:
    bar = app.screen.query_one(StatusBar)
    return str(bar.query_one("#status-sandbox").render())


@needs_sandbox
async def test_the_status_bar_queue_and_conversation_say_how_commands_ran(project: Path):
    outside = project.parent / "escaped"
    repository_running(project, f"touch {outside}")
    turns = [[text("Looking at the repository."), bash("git status")], [text("Done.")]]
    app = make_app(project, turns)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        expected = f"sandbox: {SUPPORT.strength()}"
        await until(pilot, lambda: status_text(app) == expected, "the status")
        [record] = app.book.calls.values()
        assert record.sandbox == "read-only"
        assert not outside.exists()
        queue_rows = app.tool_queue.rows_text()
        assert any("Bash ro git status" in " ".join(row.split()) for row in queue_rows)
        [line] = app.conversation.tool_lines()
        assert "read-only sandbox" in line.text


async def test_without_a_sandbox_the_app_says_so_once(project: Path, monkeypatch):
    missing = SandboxSupport(problem="this kernel has no Landlock (test)")
    monkeypatch.setattr(sandbox_session, "probe", lambda: missing)
    app = make_app(project, [[bash("cat notes.txt")], [text("Done.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        await until(pilot, lambda: "off" in status_text(app), "the status")
        assert status_text(app) == "sandbox: off — this kernel has no Landlock (test)"
        bar = app.screen.query_one(StatusBar).query_one("#status-sandbox")
        assert bar.has_class("-off")
        notices = [str(n.render()) for n in app.conversation.query(Notice)]
        assert sum("The sandbox is off" in n for n in notices) == 1, notices
        [record] = app.book.calls.values()
        assert record.sandbox == "none" and record.state == "done"


async def test_the_dialog_says_how_the_command_will_run():
    request = bash_request()
    workspace = replace(
        request, sandbox="in the workspace sandbox (writes only inside the project)"
    )
    approved = await answer(PermissionScreen(workspace, cwd=Path("/project")), ["y"])
    assert approved == [Approve("once")]
    leaving = replace(
        request,
        message="It asks to run WITHOUT the sandbox (dangerously_disable_sandbox).",
        decided_by=DecidedBy("sandbox", "the command asks to run without the sandbox"),
        sandbox="outside the sandbox",
    )
    screen = PermissionScreen(leaving, cwd=Path("/project"))
    from test_dialogs import Host

    app = Host(screen)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.pause()
        assert text_of(app.screen, "#sandbox") == "If you say yes, it runs outside the sandbox."
        assert app.screen.query_one("#sandbox").has_class("-leaving")
        assert "WITHOUT the sandbox" in text_of(app.screen, "#message")
        assert "the sandbox settings" in text_of(app.screen, "#why")
