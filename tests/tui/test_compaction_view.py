"""Compaction as a person sees it: the context gauge in the status bar, the palette entry,
the mark in the conversation and in the queue's turn line."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import SIZE, bash, make_app, text, turn_over, until
from textual.command import CommandList, CommandPalette
from textual.widgets import Label

from core.agent.events import ContextMeasured
from tui.screens.compact import CompactScreen
from tui.widgets.conversation import Notice

pytestmark = pytest.mark.usefixtures("isolated_dirs")  # tests/tui/conftest.py


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def notices(app) -> list[str]:
    return [str(n.render()) for n in app.conversation.query(Notice)]


async def test_the_palette_compacts_and_the_screen_marks_it(project: Path) -> None:
    app = make_app(project, [[text("Looking."), bash("ls")], [text("Done.")]], allow=["Bash"])
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: turn_over(app), "the first turn")
        gauge = app.status_bar.query_one("#status-context", Label)
        await until(pilot, lambda: "context " in str(gauge.render()), "the context gauge")
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"compact the")
        await until(
            pilot,
            lambda: (
                app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count
            ),
            "the palette to find the entry",
        )
        await pilot.press("enter")
        # It asks what the summary must keep; esc changes nothing.
        await until(pilot, lambda: isinstance(app.screen, CompactScreen), "the question")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, CompactScreen))
        assert len(app.live.loop.messages) == 4 and app.live.loop.compactor.compactions == 0
        await pilot.press("ctrl+p")
        await until(pilot, lambda: isinstance(app.screen, CommandPalette))
        await pilot.press(*"compact the")
        await until(
            pilot,
            lambda: (
                app.screen.query(CommandList) and app.screen.query_one(CommandList).option_count
            ),
            "the palette to find the entry again",
        )
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, CompactScreen), "the question")
        await pilot.press(*"the ls output", "enter")
        await until(
            pilot,
            lambda: any("conversation compacted on request" in n for n in notices(app)),
            "the compaction mark",
        )
        assert len(app.live.loop.messages) == 1  # the summary, and nothing else
        records = [r for r in app.live.transcript.records() if r["type"] == "compaction"]
        assert [r["instructions"] for r in records] == ["the ls output"]
        turn_line = app.book.summary(app.book.turns[-1]).describe()
        assert "compacted" in turn_line
        assert str(gauge.render()).startswith("context ")  # measured again, still shown


async def test_past_the_threshold_the_gauge_turns_to_a_warning(project: Path) -> None:
    app = make_app(project, [[text("Hi.")]])
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn")
        bar = app.status_bar
        bar.apply([ContextMeasured(tokens=95, window=100, threshold=0.9)], app.book)
        await pilot.pause()
        gauge = bar.query_one("#status-context", Label)
        assert str(gauge.render()) == "context 95%" and gauge.has_class("-full")
        # At 80 columns it stays on the line while the less wanted segments give way.
        assert gauge.display
        bar.apply([ContextMeasured(tokens=40, window=100, threshold=0.9)], app.book)
        await pilot.pause()
        assert str(gauge.render()) == "context 40%" and not gauge.has_class("-full")


async def test_past_the_whole_window_the_gauge_says_100_plus_and_then_compacting(
    project: Path,
) -> None:
    from core.agent.events import Compacted, Compacting, CompactionFailed

    app = make_app(project, [[text("Hi.")]])
    async with app.run_test(size=(100, 24)) as pilot:
        await until(pilot, lambda: turn_over(app), "the turn")
        bar = app.status_bar
        gauge = bar.query_one("#status-context", Label)

        async def shown(*events) -> str:
            bar.apply(list(events), app.book)
            await pilot.pause()
            return str(gauge.render())

        assert await shown(ContextMeasured(tokens=104, window=100, threshold=0.9)) == (
            "context 100%+"
        )
        assert gauge.has_class("-full")
        assert await shown(Compacting(trigger="auto")) == "context 100%+ · compacting"
        assert await shown(CompactionFailed(message="no")) == "context 100%+"
        # With auto-compaction off the figure past the window is still flagged.
        assert await shown(ContextMeasured(tokens=230, window=200, threshold=None)) == (
            "context 100%+"
        )
        assert gauge.has_class("-full")
        await shown(Compacting(trigger="manual"))
        summary = Compacted(trigger="manual", tokens_before=230, messages_replaced=4, summary="s")
        assert await shown(summary) == "context 100%+"
        assert await shown(ContextMeasured(tokens=30, window=200, threshold=None)) == (
            "context 15%"
        )
        assert not gauge.has_class("-full")
