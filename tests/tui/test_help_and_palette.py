"""F1 help generated from the bindings, the palette's screenshot, and the sessions dialog."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until
from textual.binding import Binding
from textual.command import CommandList, CommandPalette
from textual.dom import DOMNode
from textual.widgets import OptionList, Static

import tui
from tui.screens.help import HelpScreen
from tui.screens.sessions import SessionsScreen
from tui.screenshot import save_screenshot

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def classes_with_bindings() -> list[type[DOMNode]]:
    """Every class in `tui` that declares bindings of its own."""
    found: list[type[DOMNode]] = []
    for module_info in pkgutil.walk_packages(tui.__path__, "tui."):
        if module_info.name == "tui.__main__":
            continue
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, DOMNode)
                and value.__module__ == module.__name__
                and value.__dict__.get("BINDINGS")
            ):
                found.append(value)
    return found


def help_text(screen: HelpScreen) -> str:
    return "\n".join(str(static.render()) for static in screen.query(Static))


async def open_palette_command(app, pilot, words: str) -> None:
    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette))
    await pilot.press(*words)
    await until(
        pilot,
        lambda: app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count,
        "the palette to find the command",
    )
    await pilot.press("enter")


# -- F1 -------------------------------------------------------------------------------------------


async def test_f1_help_lists_every_binding_of_every_screen_and_widget(project: Path):
    owners = classes_with_bindings()
    names = {owner.__name__ for owner in owners}
    # the discovery itself works: the app, the main screen's widgets and the dialogs are found
    assert {"KeyActions", "PromptInput", "ToolQueue", "PermissionScreen", "HelpScreen"} <= names
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        shown = help_text(app.screen)
        lines = shown.splitlines()
        missing = []
        for owner in owners:
            for binding in Binding.make_bindings(owner.__dict__["BINDINGS"]):
                if not binding.description:
                    continue
                key = app.get_key_display(binding)
                if not any(key in line and binding.description in line for line in lines):
                    missing.append(f"{owner.__name__}: {key} {binding.description}")
        assert not missing, missing
        assert "Command palette" in shown and "^c" in shown


async def test_help_scrolls_on_a_small_terminal_and_closes_with_esc_f1_or_q(project: Path):
    app = make_app(project, [[text("hi")]], prompt=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen))
        body = app.screen.query_one("#body")
        assert body.max_scroll_y > 0
        await pilot.press("pagedown", "end")
        await until(pilot, lambda: body.scroll_y == body.max_scroll_y, "the help to scroll")
        await pilot.press("escape")
        for key in ("escape", "f1", "q"):
            await pilot.press("f1")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen))
            await pilot.press(key)
            await until(pilot, lambda: not isinstance(app.screen, HelpScreen), f"{key} to close")
        assert app.prompt_input.value == ""  # q closed the help; it was not typed


# -- the palette's screenshot --------------------------------------------------------------------


async def test_the_palette_screenshot_goes_to_the_session_folder_and_says_where(project: Path):
    app = make_app(project, [[text("Hello there.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        session_dir = app.prepared.session.directory
        await open_palette_command(app, pilot, "screenshot")
        await until(pilot, lambda: list(session_dir.glob("proctor-screenshot-*.svg")))
        (saved,) = session_dir.glob("proctor-screenshot-*.svg")
        await until(pilot, lambda: any(str(saved) in str(n.message) for n in app._notifications))
        svg = saved.read_text()
        assert svg.startswith("<svg") and "Hello" in svg
        assert "Search for commands" not in svg  # the palette had left the screen
        assert not any("failed" in str(n.message).lower() for n in app._notifications)


def test_a_screenshot_falls_back_to_the_current_then_a_temp_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    blocked = tmp_path / "a-file-not-a-folder"
    blocked.write_text("")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    first = save_screenshot("<svg/>", blocked / "session", now=0)
    assert isinstance(first, Path) and first.parent == cwd and first.read_text() == "<svg/>"
    second = save_screenshot("<svg/>", None, now=0)  # the same second: a new name
    assert isinstance(second, Path) and second != first and second.parent == cwd
    monkeypatch.chdir(blocked.parent)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "temp"))
    monkeypatch.setattr("pathlib.Path.cwd", lambda: blocked / "cwd")
    third = save_screenshot("<svg/>", blocked / "session", now=0)
    assert isinstance(third, Path) and third.parent == tmp_path / "temp"
    monkeypatch.setattr("tempfile.tempdir", str(blocked / "temp"))
    nowhere = save_screenshot("<svg/>", blocked / "session", now=0)
    assert isinstance(nowhere, str) and "Could not save the screenshot" in nowhere
    assert str(blocked / "session") in nowhere and str(blocked / "temp") in nowhere


# -- sessions ------------------------------------------------------------------------------------


async def test_sessions_marks_the_running_one_and_enter_works_on_the_first_row(project: Path):
    earlier = make_app(project, [[text("Hello there.")]], prompt="the earlier one")
    async with earlier.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(earlier))
        await pilot.press("ctrl+q")
    app = make_app(project, [[text("Hi again.")]], prompt="this one")
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        await open_palette_command(app, pilot, "sessions")
        await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
        dialog = app.screen
        options = dialog.query_one(OptionList)
        await until(pilot, lambda: options.option_count == 2, "the sessions to be listed")
        rows = [str(options.get_option_at_index(i).prompt) for i in range(2)]
        running = app.prepared.session.id
        assert running in rows[0] and "running now" in rows[0] and "1 turn " in rows[0]
        assert "did not end cleanly" not in rows[0]
        assert "the earlier one" in rows[1] and "running" not in rows[1]
        assert "1 turn " in rows[1] and "turns" not in rows[1]
        await pilot.press("enter")  # at once, on the first row
        # (a scripted session carries on only with its script: the command says so)
        resume = f"proctor --demo --scenario {app.prepared.options.scenario} --resume"
        assert app.clipboard == f"{resume} {running}"
        await pilot.press("down", "enter")
        assert app.clipboard == f"{resume} {rows[1].split()[2]}"
