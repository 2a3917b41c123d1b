"""Keys as a person's hands expect them: ctrl+c by state, stray keys reaching the prompt,
the side panes folding on a narrow terminal and coming back with F2, the footer at 80×24.

The real app on a scripted model, driven through Pilot.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until
from textual import events
from textual.widgets import Footer

from core.agent.sessions import list_sessions
from tui.screens.main import FOLD_WIDTH
from tui.screens.permission import PermissionScreen
from tui.widgets.prompt_input import IDLE_PLACEHOLDER, QUIT_PLACEHOLDER
from tui.widgets.tool_queue import ToolQueue

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def notices(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


# -- ctrl+c --------------------------------------------------------------------------------------


async def test_ctrl_c_interrupts_a_running_turn_like_esc(project: Path):
    app = make_app(project, [[bash("sleep 30")], [text("never")]], allow=["Bash(sleep:*)"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: any(r.state == "running" for r in app.book.calls.values()))
        app.prompt_input.value = "typed while it ran"
        await pilot.press("ctrl+c")
        await until(pilot, lambda: turn_over(app), "the turn to stop")
        assert app.book.current_turn.stop_reason == "interrupted"
        assert app.return_code is None  # still running: ctrl+c stopped the turn, not the app
        assert app.prompt_input.value == "typed while it ran"  # and kept the prompt


async def test_ctrl_c_clears_the_prompt_then_warns_then_quits(project: Path):
    app = make_app(project, [[text("Hello.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        prompt = app.prompt_input
        await pilot.press(*"half a thought")
        await pilot.press("ctrl+c")
        assert prompt.value == ""
        assert app.return_code is None
        await pilot.press("up")  # the cleared prompt is one key away
        assert prompt.value == "half a thought"
        await pilot.press("ctrl+c")  # clears again: not yet armed to quit
        assert prompt.value == "" and prompt.placeholder == IDLE_PLACEHOLDER

        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.return_code is None
        assert prompt.placeholder == QUIT_PLACEHOLDER
        assert any("ctrl+c again to quit" in n for n in notices(app))

        await pilot.press("x", "backspace")  # any other key: ctrl+c starts over
        assert prompt.placeholder == IDLE_PLACEHOLDER
        await pilot.press("ctrl+c")
        assert app.return_code is None
        await pilot.press("ctrl+c")
        await until(pilot, lambda: app.return_code is not None, "the app to quit")
    assert app.return_code == 0
    (summary,) = list_sessions(project)
    assert summary.ended_cleanly  # quit the same way ctrl+q quits


async def test_ctrl_c_copies_selected_prompt_text_instead(project: Path):
    app = make_app(project, [[text("Hello.")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        await pilot.press(*"keep me")
        await pilot.press("shift+home")
        await pilot.press("ctrl+c")
        assert app.prompt_input.value == "keep me"
        assert app.clipboard == "keep me"


async def test_a_dialog_keeps_its_own_keys_on_ctrl_c(project: Path):
    app = make_app(project, [[bash("touch made.txt")], [text("done")]])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, PermissionScreen), "the question")
        dialog = app.screen
        await pilot.press("ctrl+c", "ctrl+c", "ctrl+c")
        assert app.screen is dialog and app.return_code is None
        assert app.book.current_turn is not None and not app.book.current_turn.finished
        await pilot.press("y")
        await until(pilot, lambda: turn_over(app))
        assert (project / "made.txt").exists()


# -- keys typed while the prompt has no focus -----------------------------------------------------


async def test_printable_keys_typed_elsewhere_reach_the_prompt(project: Path):
    app = make_app(project, [[bash("echo hi")], [text("done")]], allow=["Bash(echo:*)"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app))
        prompt = app.prompt_input
        await pilot.press(*"draft ")
        queue = app.tool_queue
        queue.focus()
        await pilot.pause()
        await pilot.press("j")  # the queue's own key: moves its cursor, types nothing
        assert app.focused is queue and prompt.value == "draft "
        await pilot.press("m", "o", "r", "e")
        assert app.focused is prompt
        assert prompt.value == "draft more"  # added at the cursor: the draft is not replaced
        app.conversation.focus()
        await pilot.press("space", "!")
        assert app.focused is prompt and prompt.value == "draft more !"
        queue.focus()
        await pilot.pause()
        app.post_message(events.Paste(" pasted"))  # as the terminal delivers a paste
        await until(pilot, lambda: prompt.value == "draft more ! pasted", "the paste")
        assert app.focused is prompt


# -- narrow terminals -----------------------------------------------------------------------------


async def test_side_panes_fold_below_100_columns_and_f2_brings_them_back(project: Path):
    app = make_app(project, [[bash("echo hi")], [text("done")]], allow=["Bash(echo:*)"])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: turn_over(app))
        side = app.main_screen.query_one("#side")
        assert FOLD_WIDTH > 80 and not side.display
        assert app.conversation.size.width >= 76  # the conversation has the width
        await pilot.press("f2")
        await pilot.pause()
        assert side.display and app.tool_queue.size.width > 0
        assert "echo hi" in "".join(app.tool_queue.rows_text())
        app.tool_queue.focus()
        await pilot.press("f2")  # folded again; focus does not stay on a hidden pane
        await pilot.pause()
        assert not side.display and app.focused is app.prompt_input

        await pilot.press("ctrl+t")  # the todos, asked for while folded: the panes come back
        await pilot.pause()
        assert side.display and app.todo_list.display
        await pilot.press("f2")
        await pilot.pause()
        assert not side.display

        await pilot.resize_terminal(120, 30)  # wide: the panes come back by themselves
        await pilot.pause()
        assert side.display
        await pilot.resize_terminal(90, 30)  # and narrow again: they fold
        await pilot.pause()
        assert not side.display


async def test_the_footer_at_80_columns_shows_the_keys_that_matter(project: Path):
    app = make_app(project, [[bash("echo hi")], [text("Hello.")]], allow=["Bash(echo:*)"])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: turn_over(app))
        footer = app.main_screen.query_one(Footer)
        await pilot.press("f2")
        for focused in (app.prompt_input, app.tool_queue):  # the queue has keys of its own
            focused.focus()
            await pilot.pause()
            await pilot.pause()
            strips = app.screen._compositor.render_strips()
            line = "".join(s.text for s in strips[footer.region.y])
            for words in ("esc Interrupt", "shift+tab Mode", "f1 Help", "f2 Panes", "^q Quit"):
                assert words in line, line
            assert line.rstrip().endswith("^p palette")


async def test_tool_queue_names_are_whole_even_with_panes_back_at_80(project: Path):
    app = make_app(
        project,
        [[bash("echo one"), {"type": "tool_use", "name": "TodoWrite", "input": {"todos": []}}]],
        allow=["Bash(echo:*)"],
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: turn_over(app))
        await pilot.press("f2")
        await pilot.pause()
        rows = app.main_screen.query_one(ToolQueue).rows_text()
        assert any(" TodoWrite " in row for row in rows), rows
