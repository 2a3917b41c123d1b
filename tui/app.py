"""The proctor app.

For now the engine (tool model, registry, executor, result persistence) is all there is, so
the app says so and what comes next; the supervision screens replace this as they land.
"""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer, Header, Markdown

from core import __version__
from core.executor.services import max_tool_use_concurrency
from core.registry import all_base_tools
from themes import APP_STYLESHEET

WELCOME = """\
# proctor {version}

The engine is in place: {tools} built-in tools, the permission rules and modes, the
streaming executor (safe calls in parallel, unsafe ones alone, up to {cap} at once), the
agent loop, sessions on disk and the offline demo model.

Try it outside this screen: `proctor --demo` plays the demo in the terminal,
`proctor check Bash 'git push'` explains what your rules would do. The supervision screens
(tool queue, approvals, the plan-mode key, the saved-output viewer) come next.

Press **q** to quit.
"""


class ProctorApp(App[None]):
    TITLE = "proctor"
    CSS_PATH = APP_STYLESHEET
    BINDINGS = [Binding("q", "quit", "Quit")]

    def compose(self) -> ComposeResult:
        yield Header()
        yield Markdown(
            WELCOME.format(
                version=__version__,
                cap=max_tool_use_concurrency(),
                tools=len(all_base_tools()),
            ),
            id="welcome",
        )
        yield Footer()
