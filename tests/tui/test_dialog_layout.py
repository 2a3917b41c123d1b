"""Every dialog at 80×24 and up: the body scrolls, the choices stay on screen.

A newcomer at 80×24 saw an Edit dialog with only `y Yes` and a plan dialog with none of
1/2/3, and neither PageDown nor tab brought them back. Each dialog here holds more than fits
(a long command, diff, file, input, plan, list of questions, findings, servers), and the
tests check what a person would: every choice is on screen and not covered (the screen's
own hit test answers "what is drawn here?"), PageDown and PageUp scroll the body even while
the choices have focus, and the border says so. The snapshots pin each one at 80×24.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dialog_helpers import PLAN, Host, bash_request, edit_request, question_request
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Button, OptionList, Static

from core.access.decision import DecidedBy
from core.events import McpServerChanged
from core.ports import (
    AllowedPrompt,
    PermissionRequest,
    PlanRequest,
    Question,
    QuestionOption,
    QuestionRequest,
)
from core.tools.files import write_preview
from tui.mcp_board import McpBoard, ServerSetup
from tui.screens.dialog import SCROLL_HINT
from tui.screens.mcp import McpServersScreen
from tui.screens.permission import PermissionScreen
from tui.screens.plan import PlanScreen
from tui.screens.question import QuestionScreen
from tui.screens.trust import TrustScreen

SMALL = (80, 24)
SIZES = [SMALL, (100, 30), (140, 45)]

Dialog = Callable[[Path], Screen[Any]]


def long_bash(project: Path) -> Screen[Any]:
    command = "\n".join(f"echo line {n}" for n in range(60))
    request = PermissionRequest(
        "toolu_9",
        "Bash",
        {"command": command},
        "echo",
        "The command runs `echo` sixty times, which is more than fits.",
        DecidedBy("default", ""),
        suggestions=("Bash(echo:*)",),
        command=command,
        sandbox="outside the sandbox",
    )
    return PermissionScreen(request, cwd=project, waiting=2)


def long_edit(project: Path) -> Screen[Any]:
    (project / "src").mkdir(exist_ok=True)
    (project / "src" / "numbers.py").write_text("".join(f"n{i} = {i}\n" for i in range(60)))
    old = "".join(f"n{i} = {i}\n" for i in range(10, 30))
    new = "".join(f"n{i} = {i * 2}\n" for i in range(10, 30))
    request = edit_request("src/numbers.py", old, new, cwd=project)
    return PermissionScreen(request, cwd=project)


def long_write(project: Path) -> Screen[Any]:
    content = "".join(f"- note {n}\n" for n in range(40))
    input = {"file_path": "notes.md", "content": content}
    request = PermissionRequest(
        "toolu_10",
        "Write",
        input,
        "notes.md",
        "Write would create notes.md.",
        DecidedBy("default", "no rule allows it"),
        suggestions=("Write(notes.md)",),
        preview=write_preview("notes.md", content, project),
    )
    return PermissionScreen(request, cwd=project)


def long_webfetch(project: Path) -> Screen[Any]:
    prompt = "\n".join(f"Summarise section {n} of the page." for n in range(25))
    request = PermissionRequest(
        "toolu_11",
        "WebFetch",
        {"url": "https://example.com/a/long/page", "prompt": prompt},
        "example.com",
        "WebFetch reaches example.com, outside the working directories.",
        DecidedBy("default", "reaches example.com"),
        ("WebFetch(domain:example.com)",),
        agent_label="explorer",
        risk="high",
    )
    return PermissionScreen(request, cwd=project)


def long_mcp_tool(project: Path) -> Screen[Any]:
    body = "\n".join(f"Step {n}: something to do." for n in range(25))
    request = PermissionRequest(
        "toolu_12",
        "mcp__github__create_issue",
        {"title": "Greetings are unfriendly", "body": body},
        "create_issue",
        "mcp__github__create_issue is an MCP tool; no rule allows it.",
        DecidedBy("default", "no rule allows it"),
        ("mcp__github__create_issue",),
    )
    return PermissionScreen(request, cwd=project)


def long_plan(project: Path) -> Screen[Any]:
    steps = "\n".join(f"{n}. Step {n}, which the plan spells out." for n in range(4, 40))
    request = PlanRequest(
        "toolu_4",
        PLAN + steps,
        Path("/plans/friendly-greetings.md"),
        (AllowedPrompt("Bash", "run tests"),),
    )
    return PlanScreen(request)


def many_questions(project: Path) -> Screen[Any]:
    third = Question(
        "Where should the changelog live?",
        "Changelog",
        (QuestionOption("CHANGELOG.md"), QuestionOption("docs/changes.md")),
    )
    return QuestionScreen(QuestionRequest("toolu_5", (*question_request().questions, third)))


def many_findings(project: Path) -> Screen[Any]:
    findings = [f".proctor/hooks/{n}.json: 1 hook (PreToolUse)" for n in range(15)]
    return TrustScreen(Path("/work/cloned"), findings)


def many_servers(project: Path) -> Screen[Any]:
    board = McpBoard()
    for n in range(8):
        board.apply(McpServerChanged(server=f"server{n}", state="ready", tools=n))
    setups = {f"server{n}": ServerSetup("stdio", f"npx server-{n}") for n in range(8)}
    return McpServersScreen(board, lambda: setups)


DIALOGS: dict[str, Dialog] = {
    "bash": long_bash,
    "edit": long_edit,
    "write": long_write,
    "webfetch": long_webfetch,
    "mcp_tool": long_mcp_tool,
    "plan": long_plan,
    "question": many_questions,
    "trust": many_findings,
    "mcp_servers": many_servers,
}


def choices_of(screen: Screen[Any]) -> list[tuple[Widget, int]]:
    """What a person answers with: each choice's widget and how many rows it must show."""
    lists = list(screen.query("#choices").results(OptionList))
    buttons = list(screen.query("#footer Button").results(Button))
    keys = list(screen.query("#footer #keys, #footer #hint").results(Widget))
    found = [(choices, choices.option_count) for choices in lists]
    return found + [(widget, 1) for widget in (*buttons, *keys)]


def drawn_at(screen: Screen[Any], x: int, y: int) -> Widget:
    widget, _ = screen.get_widget_at(x, y)
    return widget


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("name", list(DIALOGS))
async def test_every_choice_is_on_screen_and_uncovered(name: str, size: Any, tmp_path: Path):
    app = Host(DIALOGS[name](tmp_path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = app.screen
        width, height = size
        choices = choices_of(screen)
        assert choices, "a dialog with nothing to answer with"
        for widget, rows in choices:
            region = widget.region
            assert region.height >= rows, (widget, region)
            assert region.x >= 0 and region.right <= width, (widget, region)
            assert region.y >= 0 and region.bottom <= height, (widget, region)
            for y in range(region.y, region.y + rows):  # every row, not only the first
                under = drawn_at(screen, region.x + region.width // 2, y)
                assert under is widget or widget in under.ancestors, (widget, y, under)


@pytest.mark.parametrize("name", list(DIALOGS))
async def test_page_down_scrolls_the_body_whatever_has_focus(name: str, tmp_path: Path):
    app = Host(DIALOGS[name](tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        screen = app.screen
        body = screen.query_one("#body", VerticalScroll)
        focused = screen.focused
        assert body.max_scroll_y > 0, "the content should be more than fits"
        assert screen.query_one("#dialog").border_subtitle == SCROLL_HINT
        assert body.scroll_y == 0
        await pilot.press("pagedown")
        await pilot.pause()
        assert body.scroll_y > 0
        assert screen.focused is focused  # and the highlight did not move
        while body.scroll_y < body.max_scroll_y:
            before = body.scroll_y
            await pilot.press("pagedown")
            await pilot.pause()
            assert body.scroll_y > before
        await pilot.press("pageup")
        await pilot.pause()
        assert body.scroll_y < body.max_scroll_y
        assert app.results == []  # scrolling answers nothing


async def test_tab_reaches_the_body_and_the_arrows_scroll_it(tmp_path: Path):
    app = Host(long_edit(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#body", VerticalScroll)
        await pilot.press("tab")
        assert body.has_focus
        await pilot.press("down", "down")
        await pilot.pause()
        assert body.scroll_y == 2
        await pilot.press("shift+tab", "n")  # back on the choices, which still answer
        assert app.screen.query_one("#feedback").has_focus


async def test_a_short_dialog_stays_short_and_says_nothing_of_scrolling():
    app = Host(PermissionScreen(bash_request(), cwd=Path("/project")))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        body = app.screen.query_one("#body", VerticalScroll)
        assert body.max_scroll_y == 0
        assert app.screen.query_one("#dialog").region.height < SMALL[1] - 4
        assert app.screen.query_one("#dialog").border_subtitle == ""


@pytest.mark.parametrize("name", list(DIALOGS))
def test_snapshot_at_80x24(name: str, snap_compare, tmp_path: Path):
    assert snap_compare(Host(DIALOGS[name](tmp_path)), terminal_size=SMALL)


async def test_a_plan_asking_for_many_commands_still_shows_the_plan(tmp_path: Path):
    prompts = tuple(
        AllowedPrompt("Bash", f"run the integration suite number {n} against staging")
        for n in range(20)
    )
    app = Host(PlanScreen(PlanRequest("toolu_4", PLAN, Path("/plans/p.md"), prompts)))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        screen = app.screen
        body = screen.query_one("#body", VerticalScroll)
        assert body.region.height >= 8  # the plan is not squeezed out by the list
        plan = screen.query_one("#plan-markdown").region
        assert body.region.y <= plan.y < body.region.bottom  # the plan opens on screen
        assert "20 kinds of command" in str(screen.query_one("#prompts", Static).render())
        listed = str(screen.query_one("#prompts-list", Static).render())
        assert all(f"number {n} against" in listed for n in range(20))
        choices = screen.query_one("#choices", OptionList)
        assert choices.region.bottom <= SMALL[1] and choices.region.height == 3


async def test_a_plan_asking_for_a_few_commands_says_them_beside_the_choices(tmp_path: Path):
    app = Host(long_plan(tmp_path))
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert "run tests (Bash)" in str(app.screen.query_one("#prompts", Static).render())
        assert not app.screen.query("#prompts-list")
