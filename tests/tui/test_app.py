"""The app's own keys and commands: help, todos, the palette, themes, quitting cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until
from textual.command import CommandList, CommandPalette

from core.agent.sessions import list_sessions
from tui.screens.help import HelpScreen


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PROCTOR_CONFIG_DIR", str(tmp_path / "config"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def palette_hits(app) -> int:
    lists = app.screen.query(CommandList)
    return lists.first().option_count if lists else 0


async def test_f1_shows_the_keys_and_ctrl_t_hides_the_todos(project: Path):
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        shown = " ".join(str(s.render()) for s in app.screen.query("Static"))
        assert "shift+tab" in shown.lower() or "⇧" in shown
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        assert app.todo_list.display
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert not app.todo_list.display
        await pilot.press("ctrl+t")
        await pilot.pause()
        assert app.todo_list.display


async def test_the_palette_switches_the_permission_mode(project: Path):
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"plan mode")
        await until(pilot, lambda: palette_hits(app) > 0, "the palette to find the command")
        await pilot.press("enter")
        await until(pilot, lambda: app.live.mode == "plan")
        assert app.status_bar.mode == "plan"


async def test_an_unknown_theme_falls_back_and_says_so(project: Path):
    from core.agent.live import SessionOptions, prepare_session
    from tui.app import LaunchOptions, ProctorApp

    prepared = prepare_session(SessionOptions(cwd=project, demo=True, scenario="quick"))
    app = ProctorApp(LaunchOptions(prepared, theme="no-such-theme"))
    assert app.theme == "proctor-dark"
    assert any("no-such-theme" in problem for problem in app.theme_problems)
    app = ProctorApp(LaunchOptions(prepared, theme="proctor-high-contrast"))
    assert app.theme == "proctor-high-contrast"


async def test_quitting_closes_the_session_cleanly(project: Path):
    app = make_app(project, [[text("Hello there.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    (summary,) = list_sessions(project)
    assert summary.ended_cleanly and summary.title == "go"


async def test_a_session_that_cannot_be_set_up_ends_the_app_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    from core.agent.options import SessionOptions
    from tui.app import LaunchOptions, ProctorApp

    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory should be")
    monkeypatch.setenv("PROCTOR_DATA_DIR", str(blocker))
    app = ProctorApp(LaunchOptions(SessionOptions(cwd=tmp_path, demo=True, scenario="quick")))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.return_code is not None, "the app to give up")
    assert app.return_code == 2


async def test_a_settings_file_that_is_not_there_ends_the_app_with_the_reason(tmp_path: Path):
    from core.agent.options import SessionOptions
    from tui.app import LaunchOptions, ProctorApp

    missing = tmp_path / "ci-settings.json"
    options = SessionOptions(cwd=tmp_path, demo=True, scenario="quick", settings_file=missing)
    app = ProctorApp(LaunchOptions(options))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.return_code is not None, "the app to give up")
    assert app.return_code == 2
    assert app.live is None  # nothing started without the file's rules
