"""The model's thinking on screen: streamed from the demo model (the real SDK parsing its
SSE), folded to one line, opened by the thinking key or a click, and drawn again on resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import SIZE, make_app, text, turn_over, until, write_scenario
from textual.app import App, ComposeResult
from textual.pilot import Pilot

from core.agent.events import TextDelta, ThinkingDelta, TurnEnded
from core.agent.live import SessionOptions, open_session, prepare_session
from core.events import EventRecorder
from tui.app import LaunchOptions, ProctorApp
from tui.calls import CallBook
from tui.theme_vars import THEME_VARIABLE_DEFAULTS
from tui.widgets.conversation import AssistantText, Conversation
from tui.widgets.thinking import THINKING_KEY, ThinkingView

THOUGHT = "The file is short, so one Read is enough before I answer."
TURNS = [
    [
        {"type": "thinking", "thinking": THOUGHT},
        text("Reading a.txt."),
        {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/a.txt"}},
    ],
    [{"type": "thinking", "thinking": "It says alpha."}, text("It says **alpha**.")],
    [text("Carried on.")],
]


pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("alpha\n")
    return folder


def shown(view: ThinkingView) -> str:
    return str(view.render())


async def test_thinking_is_folded_opened_by_the_key_and_by_a_click(project: Path) -> None:
    app = make_app(project, TURNS)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        views = app.conversation.thinking_views()
        await until(pilot, lambda: len(views) == 2 and not views[1].streaming, "both thoughts")
        first, second = views
        # Folded: one line each, with the size and the key, none of the thought itself.
        assert shown(first) == f"∴ Thought · 12 words · {THINKING_KEY} to open"
        assert THOUGHT not in shown(first) and first.size.height == 1
        # Above the text it came before, as it streamed.
        children = list(app.conversation.children)
        assert children.index(first) < children.index(second)

        await pilot.press(THINKING_KEY)
        await pilot.pause()
        assert shown(first) == f"∴ Thought · 12 words\n{THOUGHT}"
        assert "It says alpha." in shown(second)
        assert first.size.height > 1

        await pilot.press(THINKING_KEY)
        await pilot.pause()
        assert all(THOUGHT not in shown(v) for v in views)

        await pilot.click(first)
        await pilot.pause()
        assert THOUGHT in shown(first) and "alpha" not in shown(second)

        # The next request carried both thoughts back (the demo model would have refused it
        # otherwise). That they count in the output tokens: test_thinking.py.
        assert app.live is not None
        assert [m["content"][0]["type"] for m in app.live.loop.messages[1::2]] == [
            "thinking",
            "thinking",
        ]


async def test_a_resumed_session_shows_its_thinking_folded_and_carries_on(project: Path) -> None:
    scenario = write_scenario(project, TURNS)
    prepared = prepare_session(
        SessionOptions(cwd=project, demo=True, scenario=str(scenario), demo_speed=0)
    )
    live = await open_session(prepared, sink=EventRecorder(), trusted=True)
    try:
        await live.send("what does a.txt say?")
    finally:
        await live.close()
    options = SessionOptions(
        cwd=project, demo=True, scenario=str(scenario), demo_speed=0, resume=prepared.session.id
    )
    app = ProctorApp(LaunchOptions(prepare_session(options), trust=True))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.live is not None, "the session to open")
        views = app.conversation.thinking_views()
        await until(pilot, lambda: len(views) == 2, "the past thoughts")
        assert shown(views[0]).startswith("∴ Thought · 12 words")
        await pilot.press(THINKING_KEY)
        await pilot.pause()
        assert THOUGHT in shown(views[0])
        # Carrying on sends the resumed thoughts back with their signatures: accepted.
        app.prompt_input.value = "and now?"
        await pilot.press("enter")
        await until(pilot, lambda: len(app.book.turns) == 2 and turn_over(app), "the new turn")
        assert app.live is not None and app.live.loop.messages[-1]["role"] == "assistant"
        assert app.live.loop.messages[-1]["content"] == [{"type": "text", "text": "Carried on."}]


async def test_a_retried_stream_withdraws_its_thought_so_it_reads_once(project: Path) -> None:
    broken = {
        "blocks": [{"type": "thinking", "thinking": THOUGHT}, text("Hello.")],
        "fault": {"kind": "drop", "after_blocks": 1},
    }
    app = make_app(project, [broken])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        await pilot.pause()
        views = app.conversation.thinking_views()
        assert [v.text for v in views] == [THOUGHT]
        assert [v for v in app.conversation.children if isinstance(v, ThinkingView)] == views
        assert not views[0].streaming


class ThinkingHost(App[None]):
    """The conversation alone, fed two thoughts around an answer, the second one opened."""

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Conversation(id="conversation")

    def on_mount(self) -> None:
        pane = self.query_one(Conversation)
        book = CallBook()
        pane.add_prompt("Why do ties come out in the wrong order?")
        pane.apply(
            [
                ThinkingDelta(text=THOUGHT),
                TextDelta(text="Ties are sorted in reverse."),
                ThinkingDelta(text="The fix is a key of (-count, word)."),
                TextDelta(text=" The fix: sort by `(-count, word)`."),
                TurnEnded(stop_reason="end_turn", requests=1, usage={}),
            ],
            book,
        )
        pane.thinking_views()[1].set_expanded(True)


async def settle(pilot: Pilot[Any]) -> None:
    await pilot.pause()
    for block in pilot.app.query(AssistantText):
        await block.wait_finished()
    await pilot.pause()


async def test_the_snapshot_shows_one_folded_and_one_open_thought() -> None:
    app = ThinkingHost()
    async with app.run_test(size=(80, 16)) as pilot:
        await settle(pilot)
        first, second = app.query_one(Conversation).thinking_views()
        assert shown(first).startswith("∴ Thought · 12 words · ctrl+r to open")
        assert shown(second) == "∴ Thought · 8 words\nThe fix is a key of (-count, word)."


def test_snapshot_thinking_folded_and_open(snap_compare: Any) -> None:
    assert snap_compare(ThinkingHost(), terminal_size=(80, 16), run_before=settle)


async def test_a_redacted_block_reads_as_such_opens_to_nothing_and_goes_back(
    project: Path,
) -> None:
    turns = [
        [
            {"type": "redacted_thinking"},
            text("Reading a.txt."),
            {"type": "tool_use", "name": "Read", "input": {"file_path": "{workspace}/a.txt"}},
        ],
        [text("It says alpha.")],
    ]
    app = make_app(project, turns)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn to end")
        (view,) = app.conversation.thinking_views()
        assert shown(view) == "∴ Thinking (redacted)" and view.redacted
        await pilot.press(THINKING_KEY)  # nothing to open: the line stays as it is
        await pilot.pause()
        assert shown(view) == "∴ Thinking (redacted)" and view.size.height == 1
        # The block went back with the tool result exactly as it came (the demo model
        # checks its data, as the API does): the second request was played.
        assert app.live is not None
        sent = app.live.loop.messages[1]["content"][0]
        assert sent["type"] == "redacted_thinking" and sent["data"]
        assert app.live.loop.messages[-1]["content"] == [text("It says alpha.")]
