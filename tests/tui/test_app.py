"""The app as a person sees it, driven through Textual's Pilot."""

from __future__ import annotations

from textual.widgets import Markdown

from core import __version__
from tui.app import ProctorApp


async def test_the_app_starts_says_what_it_is_and_quits_on_q():
    app = ProctorApp()
    async with app.run_test(size=(100, 30)) as pilot:
        welcome = app.query_one("#welcome", Markdown)
        assert f"proctor {__version__}" in welcome.source
        assert "up to 10 at once" in welcome.source
        assert "16 built-in tools" in welcome.source
        await pilot.press("q")
    assert app.return_code == 0
