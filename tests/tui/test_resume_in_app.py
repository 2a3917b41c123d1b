"""`/resume` carries an earlier session on in the same window, typed as a person would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until

from tui.screens.permission import PermissionScreen
from tui.screens.sessions import SessionsScreen
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


def notices(app) -> str:
    return "\n".join(str(notice.render()) for notice in app.conversation.query(Notice))


def drawn(app) -> list[str]:
    """The prompts and the model's texts the conversation shows, top to bottom."""
    from textual.widgets import Markdown

    from tui.widgets.conversation import PromptBlock

    return [
        child.text if isinstance(child, PromptBlock) else child.source.strip()
        for child in app.conversation.children
        if isinstance(child, PromptBlock | Markdown)
    ]


async def first_session(project: Path) -> str:
    """A session that ran one turn and ended, as if the person had quit."""
    app = make_app(project, [[text("The first answer.")]], prompt="first question")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        return app.prepared.session.id


def messages_text(app) -> str:
    return json.dumps(app.live.loop.messages)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


async def test_resume_with_an_id_switches_the_window_to_that_session(project: Path):
    first = await first_session(project)
    app = make_app(project, [[text("The second answer.")]], prompt="second question")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        second = app.prepared.session.id
        old_transcript = app.prepared.session.transcript_path
        await pilot.press(*f"/resume {first[:8]}", "enter")  # both ids start so: ambiguous
        await until(pilot, lambda: "give more of the id; nothing changed" in notices(app))
        await pilot.press(*f"/resume {first}", "enter")
        await until(pilot, lambda: app.live is not None and app.prepared.session.id == first)
        await until(pilot, lambda: f"carrying on session {first}" in notices(app))
        # The window shows the first session's past, not the second's.
        await until(pilot, lambda: drawn(app) == ["first question", "The first answer."])
        assert "first question" in messages_text(app) and "The first answer." in messages_text(app)
        assert "second question" not in messages_text(app)
        assert [t.prompt for t in app.book.turns] == ["first question"]
        assert app.status_bar.session_id == first
        # The second session was closed as quitting closes it: a clean end in its transcript.
        ends = [json.loads(line) for line in old_transcript.read_text().splitlines()]
        assert ends[-1].get("type") == "end" and ends[-1].get("reason") == "resumed another session"
        assert second != first


async def test_an_unknown_id_is_said_and_nothing_is_lost(project: Path):
    await first_session(project)
    app = make_app(project, [[text("Kept.")]], prompt="keep me")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        running, live = app.prepared.session.id, app.live
        await pilot.press(*"/resume zzzz-nosuch", "enter")
        await until(pilot, lambda: "nothing changed" in notices(app))
        assert "/resume:" in notices(app) and "zzzz-nosuch" in notices(app)
        assert app.live is live and app.prepared.session.id == running
        assert "keep me" in messages_text(app)
        await pilot.press(*f"/resume {running}", "enter")
        await until(pilot, lambda: "is the one running here" in notices(app))
        assert app.live is live


async def test_resume_waits_for_a_running_turn(project: Path):
    from tui.slash import handle_line

    first = await first_session(project)
    app = make_app(project, [[bash("touch asked")], [text("Done.")]], prompt="go")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen))
        assert handle_line(app, f"/resume {first}") is None
        await until(pilot, lambda: "press esc to stop it first" in notices(app))
        assert app.prepared.session.id != first
        await pilot.press("escape")
        await until(pilot, lambda: turn_over(app))
        await pilot.press(*f"/resume {first}", "enter")
        await until(pilot, lambda: app.live is not None and app.prepared.session.id == first)


async def test_resume_without_an_id_picks_from_the_list(project: Path):
    first = await first_session(project)
    app = make_app(project, [[text("ok")]], prompt="second")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        await pilot.press(*"/resume", "enter")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen.summaries)
        screen = app.screen
        assert screen.pick and [s.id for s in screen.summaries][1] == first
        await pilot.press("down", "enter")  # the newest is this one; the next is the first
        await until(pilot, lambda: app.live is not None and app.prepared.session.id == first)
        await until(pilot, lambda: f"carrying on session {first}" in notices(app))


async def test_resuming_a_demo_whose_scratch_copy_is_gone_leaves_no_session_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """Preparing it makes a new session (the copy cannot be carried on); refused, that
    session must not stay behind as an empty one in the list."""
    import shutil

    from core.agent.demo_workspace import sample_dir
    from core.agent.live import SessionOptions, prepare_session
    from core.agent.sessions import project_dir
    from tui.app import ProctorApp
    from tui.launch import LaunchOptions

    scratch = tmp_path / "temp"
    scratch.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(scratch))
    options = SessionOptions(cwd=tmp_path, demo=True, scenario="quick", demo_speed=0)
    gone = prepare_session(options)
    shutil.rmtree(gone.cwd)  # its scratch copy was removed (the system's temp cleaner, say)
    app = ProctorApp(LaunchOptions(prepare_session(options), trust=True, first_prompt=None))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        sessions = project_dir(sample_dir())
        before = sorted(path.name for path in sessions.iterdir() if path.is_dir())
        await pilot.press(*f"/resume {gone.session.id}", "enter")
        await until(pilot, lambda: "scratch workspace is gone" in notices(app))
        assert "nothing changed" in notices(app)
        assert sorted(path.name for path in sessions.iterdir() if path.is_dir()) == before
        assert gone.session.id in before and app.prepared.session.id in before
