"""A sub-agent's thinking on screen: the Task line says it is thinking while it streams; the
opened Task call shows each thought folded, as the main agent's are, opened by the thinking
key or a click; a retry withdraws a broken stream's thought; a resumed session shows them.
Driven by the real app on the demo model (the real SDK parsing its SSE) where the result is
what a person sees at the end, and by the pane alone where the moment mid-stream matters."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until
from test_conversation import Host, ids, queued
from test_thinking_view import shown

from core.agent.events import AssistantMessage, Retrying, TextDelta, ThinkingDelta, TurnEnded
from core.agent.live import SessionOptions, prepare_session
from core.events import EngineEvent, SubAgentEvent, ToolStarted
from tui.app import LaunchOptions, ProctorApp
from tui.widgets.conversation_items import ToolLineDetail
from tui.widgets.thinking import THINKING_KEY, ThinkingView

FIRST = "Markdown files first: a Glob finds them all at once."
SECOND = "One file came back, so that is the answer."
AGAIN = "Again: markdown first."
TASK_ID = "toolu_demo_0_1"  # block 0 is the main agent's text

TURNS = [
    [
        text("Asking an explorer."),
        {
            "type": "tool_use",
            "name": "Task",
            "input": {
                "description": "find the docs",
                "prompt": "Find the README.",
                "subagent_type": "Explore",
            },
            "agent_turns": [
                [
                    {"type": "thinking", "thinking": FIRST},
                    {"type": "tool_use", "name": "Glob", "input": {"pattern": "*.md"}},
                ],
                [
                    {"type": "thinking", "thinking": SECOND},
                    {"type": "redacted_thinking"},
                    text("README.md."),
                ],
            ],
        },
    ],
    [text("The explorer found README.md.")],
]

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "README.md").write_text("# hello\n")
    return folder


def opened_task(app: ProctorApp) -> ToolLineDetail:
    line = app.conversation.tool_line(TASK_ID)
    assert line is not None
    line.expanded = True
    detail = app.conversation.detail_of(TASK_ID)
    assert detail is not None
    return detail


async def test_a_sub_agents_thoughts_are_folded_in_its_opened_task_call(project: Path) -> None:
    app = make_app(project, TURNS)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        # The main agent did not think: the sub-agent's thoughts are not in the pane.
        assert app.conversation.thinking_views() == []
        detail = opened_task(app)
        await until(pilot, lambda: len(detail.thinking_views()) == 3, "the three thoughts")
        first, second, redacted = detail.thinking_views()
        assert shown(first) == f"∴ Thought · 10 words · {THINKING_KEY} to open"
        assert FIRST not in shown(first) and first.size.height == 1
        assert shown(second).startswith("∴ Thought · 9 words")
        assert shown(redacted) == "∴ Thinking (redacted)"
        assert "README.md." in shown(detail.agent_text)

        await pilot.press(THINKING_KEY)  # opens them as it opens the main agent's
        await pilot.pause()
        assert shown(first) == f"∴ Thought · 10 words\n{FIRST}"
        assert SECOND in shown(second)
        await pilot.press(THINKING_KEY)
        await pilot.pause()
        assert FIRST not in shown(first)
        await pilot.click(second)
        await pilot.pause()
        assert SECOND in shown(second) and FIRST not in shown(first)

        # Closed and opened again, the call shows them again, as the key left them.
        line = app.conversation.tool_line(TASK_ID)
        assert line is not None
        line.expanded = False
        await pilot.pause()
        await pilot.press(THINKING_KEY)
        detail = opened_task(app)
        await until(pilot, lambda: len(detail.thinking_views()) == 3, "the thoughts again")
        assert FIRST in shown(detail.thinking_views()[0])


async def test_a_resumed_session_shows_a_sub_agents_thoughts(project: Path) -> None:
    app = make_app(project, TURNS)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        session_id = app.live.session.id if app.live is not None else ""
    scenario = project / ".scenario.json"
    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=session_id
    )
    resumed = ProctorApp(LaunchOptions(prepare_session(options), trust=True))
    async with resumed.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: resumed.conversation.tool_line(TASK_ID), "the Task line")
        detail = opened_task(resumed)
        await until(pilot, lambda: len(detail.thinking_views()) == 3, "the past thoughts")
        assert [v.redacted for v in detail.thinking_views()] == [False, False, True]
        assert detail.thinking_views()[0].text == FIRST
        assert not any(v.streaming for v in detail.thinking_views())


def sub(event: EngineEvent) -> SubAgentEvent:
    return SubAgentEvent(
        at=event.at, agent_id="task1", agent_label="Explore", event_kind=event.kind, event=event
    )


async def test_the_task_line_says_the_sub_agent_is_thinking_and_a_retry_withdraws_it() -> None:
    app = Host()
    async with app.run_test(size=(100, 30)) as pilot:
        app.send("explore")
        app.feed(
            queued(app, "task1", "Task", "Explore: find the docs", {"description": "d"}),
            ToolStarted(at=app.at(), **ids("task1", "Task")),
            sub(ThinkingDelta(text="Markdown files ")),
            sub(ThinkingDelta(text="first.")),
        )
        await pilot.pause()
        line = app.pane.tool_line("task1")
        assert line is not None
        assert line.rows_text()[1].strip() == "agent: ∴ thinking… 3 words"
        line.expanded = True
        await pilot.pause()
        detail = app.pane.detail_of("task1")
        assert detail is not None
        (view,) = detail.thinking_views()
        assert view.streaming and shown(view).startswith("∴ Thinking… 3 words")

        # The stream broke: the thought goes, and the retry's thought is the one shown.
        app.feed(
            sub(Retrying(attempt=1, delay_s=0, error="the connection dropped")),
            sub(ThinkingDelta(text=AGAIN)),
            sub(TextDelta(text="Looking.")),
        )
        await pilot.pause()
        await pilot.pause()
        assert [v.text for v in detail.thinking_views()] == [AGAIN]
        assert not detail.thinking_views()[0].streaming  # text after it ended it
        assert line.rows_text()[1].strip() == "agent: Looking."

        app.feed(
            sub(
                AssistantMessage(
                    content=(
                        {"type": "thinking", "thinking": AGAIN, "signature": "s"},
                        {"type": "text", "text": "Looking."},
                    ),
                    stop_reason="end_turn",
                )
            ),
            sub(TurnEnded(stop_reason="end_turn", requests=2, usage={})),
        )
        await pilot.pause()
        # The message the thought streamed in adds no second copy of it.
        assert len(detail.thinking_views()) == 1
        assert not app.pane.query(ThinkingView).filter(".-open")
