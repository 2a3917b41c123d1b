"""A slash command in the conversation: the line the person typed, the text the model got
folded under it, opened by a click or enter, and the same again in a resumed session."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until

from core.agent.live import SessionOptions, prepare_session
from tui.app import LaunchOptions, ProctorApp
from tui.widgets.conversation import PromptBlock

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py

BODY = "Review $1 closely.\nCheck its tests too.\nThen say what you found.\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    commands = folder / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text(f"---\ndescription: Review a file\n---\n{BODY}")
    return folder


def shown(block: PromptBlock) -> str:
    return str(block.render())


async def test_the_typed_line_shows_and_the_expansion_folds_under_it(project: Path):
    app = make_app(project, [[text("Reviewed.")], [text("Again.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None)
        await pilot.press(*"/review app.py", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 1)
        # The model got the command's text...
        assert "Review app.py closely." in json.dumps(app.live.loop.messages[0]["content"])
        # ...the person sees what they typed, and a folded line for the rest.
        [block] = app.conversation.query(PromptBlock)
        assert shown(block).splitlines()[0] == "/review app.py"
        assert "sent to the model as 3 lines" in shown(block)
        assert "Review app.py closely." not in shown(block)
        assert app.book.turns[0].prompt == "/review app.py"
        # Wait for the fold to change rather than for a fixed number of frames.
        await settled(pilot, block)
        await pilot.click(block)
        await until(pilot, lambda: "Review app.py closely.\nCheck its tests too." in shown(block))
        await pilot.click(block)
        await until(pilot, lambda: "Review app.py closely." not in shown(block))
        block.focus()
        await pilot.press("enter")
        await until(pilot, lambda: "Then say what you found." in shown(block))
        # A plain prompt is only its text, and takes no focus.
        app.prompt_input.focus()
        await pilot.press(*"hello", "enter")
        await until(pilot, lambda: turn_over(app) and len(app.book.turns) == 2)
        plain = app.conversation.query(PromptBlock)[-1]
        assert shown(plain) == "hello" and not plain.can_focus
        session_id = app.live.session.id

    resumed = resumed_app(project, session_id)
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: len(resumed.conversation.query(PromptBlock)) == 2, "the past")
        first, second = resumed.conversation.query(PromptBlock)
        assert shown(first).splitlines()[0] == "/review app.py"
        assert "Review app.py closely." not in shown(first)
        await settled(pilot, first)
        await pilot.click(first)
        await until(pilot, lambda: "Review app.py closely." in shown(first), "the fold to open")
        assert shown(second) == "hello"


async def settled(pilot: Any, widget: Any) -> None:
    """Wait until `widget` is on screen and stays where it is from one frame to the next: a
    resumed session draws its past in several passes, and a click aimed at where the block
    was a moment ago lands on whatever moved there."""
    last = None
    for _ in range(1500):
        await pilot.pause(0.02)
        if widget.region.area and widget.region == last:
            return
        last = widget.region
    raise AssertionError(f"{widget} never settled on screen")


def resumed_app(project: Path, session_id: str) -> Any:
    scenario = project / ".scenario.json"
    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=session_id
    )
    return ProctorApp(LaunchOptions(prepare_session(options), trust=True))
