"""Carrying a session on shows its past: prompts, the assistant's words, tool lines whose
results open as they did live, the todo list, the mode and the tokens so far."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until, write_scenario
from textual.widgets import Markdown

from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import EventRecorder
from tui.app import LaunchOptions, ProctorApp
from tui.widgets.conversation import Notice, PromptBlock, ToolRun

TODO = {"content": "Check a.txt", "status": "in_progress", "activeForm": "Checking a.txt"}
TURNS = [
    [
        text("Reading a.txt first."),
        {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/a.txt"}},
        {"type": "tool_use", "name": "TodoWrite", "input": {"todos": [TODO]}},
    ],
    [text("It says **alpha**.")],
    [text("Carried on.")],
]


pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    return folder


async def earlier_session(project: Path) -> str:
    """One turn in plan mode, run and closed as a person's session would be."""
    scenario = write_scenario(project, TURNS)
    options = SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    prepared = prepare_session(options)
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        live.set_mode("plan")
        await live.send("what does a.txt say?")
    finally:
        await live.close()
    return prepared.session.id


def resumed_app(project: Path, session_id: str) -> ProctorApp:
    scenario = project / ".scenario.json"
    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=session_id
    )
    return ProctorApp(LaunchOptions(prepare_session(options), trust=True))


def pane_order(app: ProctorApp) -> list[str]:
    """What the conversation shows, top to bottom, one word per piece."""
    order: list[str] = []
    for child in app.conversation.children:
        if isinstance(child, PromptBlock):
            order.append(f"prompt:{child.text}")
        elif isinstance(child, Markdown):
            order.append(f"text:{child.source.strip()}")
        elif isinstance(child, ToolRun):
            order += [f"call:{app.book.calls[i].tool_name}" for i in child.call_ids]
        elif isinstance(child, Notice):
            order.append(f"notice:{child.text}")
    return order


async def test_resuming_draws_the_earlier_turn_and_restores_todos_mode_and_tokens(project: Path):
    session_id = await earlier_session(project)
    app = resumed_app(project, session_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session to open")
        await pilot.pause()
        order = pane_order(app)
        drawn = [o for o in order if not o.startswith("notice:")]
        assert drawn == [
            "prompt:what does a.txt say?",
            "text:Reading a.txt first.",
            "call:Read",
            "call:TodoWrite",
            "text:It says **alpha**.",
        ]
        # the mode change made in that session is part of its story, and it is back
        assert any(o.startswith("notice:mode → plan mode") for o in order)
        assert order[-1].startswith(f"notice:carrying on session {session_id}: 1 earlier turn")
        assert app.live is not None and app.live.mode == "plan"
        assert app.status_bar.mode == "plan"
        # the Read's line ended done, and opens on the result the model got
        (read,) = [
            line for line in app.conversation.tool_lines() if line.record.tool_name == "Read"
        ]
        assert read.state == "done"
        read.expanded = True
        await pilot.pause()
        assert read.detail is not None and "alpha" in str(read.detail.result.render())
        # the todo list as the session left it
        assert [t.content for t in app.todo_list.todos] == ["Check a.txt"]
        # the tokens the earlier requests used are the session's so far
        assert app.status_bar.input_tokens > 0 and app.status_bar.output_tokens > 0
        assert "0 in" not in str(app.status_bar.query_one("#status-tokens").render())


async def test_a_resumed_session_carries_on_below_its_past(project: Path):
    session_id = await earlier_session(project)
    app = resumed_app(project, session_id)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session to open")
        before = app.status_bar.input_tokens
        app.prompt_input.value = "and now?"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.book.turns) == 2 and turn_over(app), "the new turn")
        await until(pilot, lambda: "text:Carried on." in pane_order(app), "the new answer")
        order = [o for o in pane_order(app) if not o.startswith("notice:")]
        assert order[-2:] == ["prompt:and now?", "text:Carried on."]
        assert order[0] == "prompt:what does a.txt say?"
        assert app.status_bar.input_tokens > before


async def test_a_new_session_draws_no_past(project: Path):
    app = make_app(project, [[text("Fresh.")]], prompt=None)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session to open")
        await pilot.pause()
        assert not any(isinstance(c, PromptBlock | ToolRun) for c in app.conversation.children)
        assert not any("carrying on" in o for o in pane_order(app))
