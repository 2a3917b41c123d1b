"""What the dialog tests share: a host app that pushes one dialog and records its answer,
and the requests the engine would send, as it builds them."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Static

from core.access.decision import DecidedBy
from core.ports import (
    AllowedPrompt,
    PermissionRequest,
    PlanRequest,
    Question,
    QuestionOption,
    QuestionRequest,
)
from core.tools.edit import Edit
from themes import APP_STYLESHEET
from tui.screens.main import MAIN_SCREEN_STYLESHEET
from tui.screens.permission import PermissionScreen
from tui.screens.plan import PlanScreen
from tui.theme_vars import THEME_VARIABLE_DEFAULTS

SIZE = (100, 34)


class Host(App[None]):
    """Pushes one dialog at start and records what it dismissed with. It loads the app's
    stylesheets, as proctor does: a dialog must hold its shape under them."""

    CSS_PATH = [APP_STYLESHEET, MAIN_SCREEN_STYLESHEET]
    BINDINGS = [Binding("f1", "help", "Help"), Binding("ctrl+q", "quit", "Quit")]

    def __init__(self, dialog: Screen[Any] | None) -> None:
        super().__init__()
        self.dialog = dialog
        self.results: list[Any] = []

    def get_theme_variable_defaults(self) -> dict[str, str]:
        return dict(THEME_VARIABLE_DEFAULTS)

    def compose(self) -> ComposeResult:
        yield Static("the session behind the dialog")

    def on_mount(self) -> None:
        if self.dialog is not None:
            self.push_screen(self.dialog, self.results.append)


async def answer(
    dialog: Screen[Any], keys: Iterable[str], size: tuple[int, int] = SIZE
) -> list[Any]:
    app = Host(dialog)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for key in keys:
            await pilot.press(key)
        await pilot.pause()
    return app.results


def text_of(screen: Screen[Any], selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


def bash_request(suggestions: tuple[str, ...] = ("Bash(npm test:*)",)) -> PermissionRequest:
    return PermissionRequest(
        tool_use_id="toolu_1",
        tool_name="Bash",
        input={"command": "npm test -- --watch=false", "description": "Run the test suite"},
        summary="npm test -- --watch=false",
        message="The command runs `npm`, which this check does not treat as read-only.",
        decided_by=DecidedBy("analysis", "the command runs `npm`"),
        suggestions=suggestions,
        command="npm test -- --watch=false",  # as the engine sets it from the rule target
    )


def bash_dialog(**kwargs: Any) -> PermissionScreen:
    return PermissionScreen(bash_request(**kwargs), cwd=Path("/project"))


def edit_request(
    path: str, old: str, new: str, cwd: Path | None = None, **extra: Any
) -> PermissionRequest:
    """As the engine asks: with the diff the Edit tool works out (when given the project)."""
    input = {"file_path": path, "old_string": old, "new_string": new, **extra}
    preview = Edit().change_preview(Edit().parse_input(input), cwd) if cwd is not None else None
    return PermissionRequest(
        tool_use_id="toolu_2",
        tool_name="Edit",
        input=input,
        summary=path,
        message=f"Edit would change {path}.",
        decided_by=DecidedBy("default", "no rule allows it"),
        suggestions=("Edit(src/**)",),
        preview=preview,
    )


PLAN = """\
# Make greetings friendlier

1. Change `greet` to say *Hello, name!*
2. Update the tests in `tests/test_greet.py`.
3. Run the test suite.
"""


def plan_dialog() -> PlanScreen:
    return PlanScreen(
        PlanRequest(
            "toolu_4",
            PLAN,
            Path("/plans/friendly-greetings.md"),
            (AllowedPrompt("Bash", "run tests"),),
        )
    )


def question_request() -> QuestionRequest:
    return QuestionRequest(
        "toolu_5",
        (
            Question(
                "Which test runner should the project use?",
                "Test runner",
                (
                    QuestionOption("pytest", "the usual"),
                    QuestionOption("unittest", "no extra deps"),
                ),
            ),
            Question(
                "Which checks should run in CI?",
                "CI checks",
                (QuestionOption("ruff"), QuestionOption("mypy"), QuestionOption("pytest")),
                multi_select=True,
            ),
        ),
    )
